package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func TestWatchPassesReconcileWhatChanged(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var known map[string]string
	pass := func() {
		t.Helper()
		if err := e.ix.watchOnce(ctx, &known); err != nil {
			t.Fatal(err)
		}
	}
	e.put("skills/a.md", skillDoc("a", "1", "A."))
	pass() // the first pass re-indexes
	e.live(catalog.KindSkill, "a")
	steps := []struct {
		name  string
		do    func()
		check func() bool
	}{
		{"a new key", func() { e.put("skills/b.md", skillDoc("b", "1", "B.")) },
			func() bool { return e.skill("b") != nil && e.skill("b").Live() }},
		{"changed bytes", func() { e.put("skills/a.md", skillDoc("a", "2", "A two.")) },
			func() bool { return e.skill("a").Latest == "2" }},
		{"a deleted key", func() { e.del("skills/b.md") },
			func() bool { return !e.skill("b").Live() }},
		{"a config", func() {
			e.put("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: a\n    visibility: authenticated\n"))
		},
			func() bool { return e.skill("a").Visibility == catalog.Authenticated }},
	}
	for _, s := range steps {
		s.do()
		rev := e.catalog().Revision
		pass()
		if !s.check() {
			t.Fatalf("%s: not picked up; catalog %s", s.name, dump(e.catalog()))
		}
		if e.catalog().Revision != rev+1 {
			t.Fatalf("%s: %d writes, want 1", s.name, e.catalog().Revision-rev)
		}
	}
	rev := e.catalog().Revision
	pass()
	if e.catalog().Revision != rev {
		t.Fatal("a pass with nothing changed wrote the catalog")
	}
}

// watching runs Watch over e until the test ends. interval is the fallback
// listing interval; with an hour, only notifications can find a change.
func watching(t *testing.T, e *env, interval time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.ix.Watch(ctx, interval) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
}

// eventually polls cond; the deadline only keeps a broken build from
// hanging, it is not the figure under test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened", what)
		}
	}
}

// copyIn writes a file into the directory directly, as cp does.
func copyIn(t *testing.T, e *env, key string, body []byte) {
	t.Helper()
	skilltest.WriteFiles(t, e.st.(*store.Dir).Path(), map[string]string{key: string(body)})
}

func (e *env) isLive(name string) bool {
	en := e.skill(name)
	return en != nil && en.Live()
}

// indexedLines counts the "indexed" log lines: one per Reindex or Reconcile.
func (e *env) indexedLines() int { return strings.Count(e.logs.String(), `"msg":"indexed"`) }

// TestWatchReconcilesWhatTheFilesystemReports: with a listing interval of an
// hour, a copied-in file, a new skill folder, an overwrite and a delete are
// each picked up from notifications alone.
func TestWatchReconcilesWhatTheFilesystemReports(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Now = time.Now })
	e.put("skills/a.md", skillDoc("a", "1", "A."))
	watching(t, e, time.Hour)
	eventually(t, "the first pass indexes", func() bool { return e.isLive("a") })

	copyIn(t, e, "skills/copied.md", skillDoc("copied", "1", "Copied in."))
	eventually(t, "a copied-in file is published", func() bool { return e.isLive("copied") })

	copyIn(t, e, "skills/folder/SKILL.md", skillDoc("folder", "1", "In a new folder."))
	eventually(t, "a new skill folder is published", func() bool { return e.isLive("folder") })

	copyIn(t, e, "skills/folder/SKILL.md", skillDoc("folder", "2", "Edited."))
	eventually(t, "an edit in the new folder is published", func() bool { return e.isLive("folder") && e.skill("folder").Latest == "2" })

	e.del("skills/copied.md")
	eventually(t, "a deleted file is withdrawn", func() bool { return !e.isLive("copied") })

	if err := os.RemoveAll(filepath.Join(e.st.(*store.Dir).Path(), "skills", "folder")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a removed folder is withdrawn", func() bool { return !e.isLive("folder") })
}

// TestWatchCoalescesABurst: 200 files copied in at once are published in a
// few reconciliations (catalog writes), not one each.
func TestWatchCoalescesABurst(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Now = time.Now })
	watching(t, e, time.Hour)
	copyIn(t, e, "skills/first.md", skillDoc("first", "1", "First."))
	eventually(t, "the first file", func() bool { return e.isLive("first") })
	before := e.catalog().Revision
	files := map[string]string{}
	for i := range 200 {
		name := fmt.Sprintf("burst-%03d", i)
		files["skills/"+name+".md"] = string(skillDoc(name, "1", "One of a burst."))
	}
	skilltest.WriteFiles(t, e.st.(*store.Dir).Path(), files)
	eventually(t, "every file of the burst", func() bool { return len(e.catalog().Skills) == 201 })
	writes := e.catalog().Revision - before
	t.Logf("200 files published in %d catalog writes", writes)
	if writes > 10 {
		t.Errorf("%d catalog writes for a burst of 200 files, want a few", writes)
	}
}

// TestWatchStartsFromTheCatalog: after a Reindex, Watch does not re-index
// again (one "indexed" line for the start, as `skilldrop serve` logs it),
// yet what changed between the two (a new key, a deleted one, the config)
// is reconciled, in one round.
func TestWatchStartsFromTheCatalog(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Now = time.Now })
	e.put("skills/a.md", skillDoc("a", "1", "A."))
	e.put("skills/gone.md", skillDoc("gone", "1", "Deleted before Watch started."))
	e.reindex()
	copyIn(t, e, "skills/between.md", skillDoc("between", "1", "Written before Watch started."))
	e.del("skills/gone.md")
	copyIn(t, e, "agent-skills.yaml", []byte("version: 1\nskills:\n  - name: a\n    visibility: authenticated\n"))
	watching(t, e, time.Hour)
	eventually(t, "the changes made before Watch started", func() bool {
		return e.isLive("between") && !e.isLive("gone") && e.skill("a").Visibility == catalog.Authenticated
	})
	copyIn(t, e, "skills/after.md", skillDoc("after", "1", "Written after."))
	eventually(t, "a change after it", func() bool { return e.isLive("after") })
	// Its line comes last: a second re-index would have logged before it.
	eventually(t, "the change after it logged", func() bool { return e.indexedLines() >= 3 })
	if n := e.indexedLines(); n != 3 {
		t.Errorf("%d indexed lines, want 3 (the re-index, the changes between, the change after)\n%s", n, e.logs)
	}
}

// TestWatchOverAnUnchangedCatalogWritesNothing: started over a catalog
// that records the bucket as it is, Watch's first pass reconciles nothing.
// The change after it is the sign that the first pass is done.
func TestWatchOverAnUnchangedCatalogWritesNothing(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Now = time.Now })
	e.put("skills/a.md", skillDoc("a", "1", "A."))
	e.put("skills/bad.txt", []byte("not a skill"))
	e.put("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: a\n    visibility: authenticated\n"))
	e.reindex()
	rev := e.catalog().Revision
	watching(t, e, time.Hour)
	// Renamed into place: the first pass may list it or not, but never
	// half-written.
	e.put("skills/after.md", skillDoc("after", "1", "Written after."))
	eventually(t, "a change after it", func() bool { return e.isLive("after") })
	eventually(t, "the change after it logged", func() bool { return e.indexedLines() >= 2 })
	if n, r := e.indexedLines(), e.catalog().Revision; n != 2 || r != rev+1 {
		t.Errorf("%d indexed lines and revision %d after %d; want 2 (the re-index, the change) and one write\n%s", n, r, rev, e.logs)
	}
}

// TestWatchListsWhereItCannotBeNotified: over a store that is not a local
// directory, Watch re-indexes, then finds changes by listing every interval.
func TestWatchListsWhereItCannotBeNotified(t *testing.T) {
	e := newEnvOn(t, store.NewMemory(), func(c *Config) { c.Now = time.Now })
	e.put("skills/a.md", skillDoc("a", "1", "A."))
	watching(t, e, 20*time.Millisecond)
	eventually(t, "the first pass re-indexes", func() bool { return e.isLive("a") })
	e.put("skills/b.md", skillDoc("b", "1", "B."))
	eventually(t, "a listing finds a new key", func() bool { return e.isLive("b") })
}
