package dirwatch

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

var prefixes = []string{"skills/", "listings/", "subagents/", "files/", "agent-skills.yaml"}

func write(t *testing.T, root, key, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func start(t *testing.T, root string) *Watcher {
	t.Helper()
	w, err := New(root, Options{Prefixes: prefixes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// seen gathers batches until every key in want was reported (or, with
// resync, a Resync batch came), and returns all keys reported and whether
// any batch asked to resync. The deadline only keeps a broken watcher
// from hanging the test.
func seen(t *testing.T, w *Watcher, resync bool, want ...string) (map[string]bool, bool) {
	t.Helper()
	got, resynced := map[string]bool{}, false
	deadline := time.After(30 * time.Second)
	for {
		done := !resync || resynced
		for _, k := range want {
			done = done && got[k]
		}
		if done {
			return got, resynced
		}
		select {
		case b, ok := <-w.Batches():
			if !ok {
				t.Fatal("Batches closed")
			}
			for _, k := range b.Keys {
				got[k] = true
			}
			resynced = resynced || b.Resync
		case <-deadline:
			t.Fatalf("never reported %v (resync %v); got %v", want, resync, got)
		}
	}
}

func TestWatcherReportsChangedKeys(t *testing.T) {
	root := t.TempDir()
	write(t, root, "skills/a.md", "a")
	w := start(t, root)

	write(t, root, "skills/b.md", "b")
	write(t, root, "skills/a.md", "a2")
	write(t, root, "agent-skills.yaml", "version: 1\n")
	seen(t, w, false, "skills/a.md", "skills/b.md", "agent-skills.yaml")

	if err := os.Remove(filepath.Join(root, "skills", "b.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "skills", "a.md"), filepath.Join(root, "skills", "c.md")); err != nil {
		t.Fatal(err)
	}
	seen(t, w, false, "skills/b.md", "skills/a.md", "skills/c.md")
}

func TestWatcherFollowsNewDirectories(t *testing.T) {
	root := t.TempDir()
	write(t, root, "skills/a.md", "a")
	w := start(t, root)

	// A skill folder and a top-level prefix that did not exist, with files
	// written before their watches can have been added.
	write(t, root, "skills/team/deploy/SKILL.md", "x")
	write(t, root, "listings/partner/skills/p.md", "p")
	seen(t, w, false, "skills/team/deploy/SKILL.md", "listings/partner/skills/p.md")

	// Later changes inside them are reported too.
	write(t, root, "skills/team/deploy/scripts/run.sh", "#!/bin/sh\n")
	write(t, root, "listings/partner/skills/q.md", "q")
	seen(t, w, false, "skills/team/deploy/scripts/run.sh", "listings/partner/skills/q.md")
}

func TestWatcherIgnoresWhatIsNotASourceKey(t *testing.T) {
	root := t.TempDir()
	write(t, root, "skills/a.md", "a")
	w := start(t, root)
	for _, key := range []string{
		"catalog/catalog.json", "blobs/sha256/00", ".skilldrop/tmp/x", "skills/.DS_Store",
		"skills/.hidden/SKILL.md", "agent-skills.yaml.bak", "README.md",
	} {
		write(t, root, key, "ignored")
	}
	write(t, root, "skills/sentinel.md", "s") // reported after everything above
	got, _ := seen(t, w, false, "skills/sentinel.md")
	delete(got, "skills/sentinel.md")
	if len(got) > 0 {
		t.Errorf("reported keys that are not source keys: %v", slices.Sorted(maps.Keys(got)))
	}
}

func TestWatcherAsksToResyncWhenADirectoryGoes(t *testing.T) {
	root := t.TempDir()
	write(t, root, "skills/team/a/SKILL.md", "a")
	write(t, root, "skills/team/b/SKILL.md", "b")
	w := start(t, root)
	if err := os.Rename(filepath.Join(root, "skills", "team"), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	seen(t, w, true)
	// Changes in the moved tree are no longer reported under the old path.
	write(t, root, "moved/a/SKILL.md", "a2")
	write(t, root, "skills/sentinel.md", "s")
	if got, _ := seen(t, w, false, "skills/sentinel.md"); got["skills/team/a/SKILL.md"] {
		t.Error("a change in the moved directory was reported under its old path")
	}
}

// TestWatcherReportsADirectoryItCannotWatch: when a new directory's watch
// cannot be added (as at the inotify watch limit), a batch says so with
// ErrUnwatched, and asks to resync.
func TestWatcherReportsADirectoryItCannotWatch(t *testing.T) {
	root := t.TempDir()
	write(t, root, "skills/a.md", "a")
	full := errors.New("no space left on device")
	w, err := newWatcher(root, Options{Prefixes: prefixes}, func(fw *fsnotify.Watcher, p string) error {
		if filepath.Base(p) == "new" {
			return full
		}
		return fw.Add(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	write(t, root, "skills/new/SKILL.md", "x")
	deadline := time.After(30 * time.Second)
	for {
		select {
		case b := <-w.Batches():
			if b.Err != nil {
				if !b.Resync || !errors.Is(b.Err, ErrUnwatched) || !errors.Is(b.Err, full) {
					t.Fatalf("batch %+v, want a resync with ErrUnwatched and the cause", b)
				}
				return
			}
		case <-deadline:
			t.Fatal("no batch reported the unwatched directory")
		}
	}
}

func TestCloseClosesBatches(t *testing.T) {
	w, err := New(t.TempDir(), Options{Prefixes: prefixes})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w.Batches(); ok {
		t.Error("Batches still open after Close")
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestNewFailsOnAMissingRoot(t *testing.T) {
	if _, err := New(filepath.Join(t.TempDir(), "absent"), Options{Prefixes: prefixes}); err == nil {
		t.Error("New watched a directory that does not exist")
	}
}

// TestPendingCoalescesBursts pins the batching rule on a fake clock: a
// burst is one batch, due Quiet after its last change, but never later
// than MaxDelay after its first.
func TestPendingCoalescesBursts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	quiet, maxDelay := 150*time.Millisecond, time.Second
	var p pending
	if !p.empty() {
		t.Fatal("zero pending not empty")
	}
	for i := range 5 {
		p.add("skills/k"+strings.Repeat("x", i)+".md", t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	p.add("skills/k.md", t0.Add(400*time.Millisecond)) // again
	if due := p.due(quiet, maxDelay); !due.Equal(t0.Add(550 * time.Millisecond)) {
		t.Errorf("due %v after the first change, want quiet after the last (550ms)", due.Sub(t0))
	}
	if b := p.batch(); len(b.Keys) != 5 || !slices.IsSorted(b.Keys) || b.Resync {
		t.Errorf("batch %+v, want the 5 distinct keys sorted", b)
	}
	for i := 5; i < 30; i++ {
		p.add("skills/more.md", t0.Add(time.Duration(i)*100*time.Millisecond))
	}
	if due := p.due(quiet, maxDelay); !due.Equal(t0.Add(maxDelay)) {
		t.Errorf("a steady stream is due %v after its start, want MaxDelay", due.Sub(t0))
	}
	first := errors.New("overflow")
	p.resync(first, t0)
	p.resync(errors.New("later"), t0)
	if b := p.batch(); !b.Resync || !errors.Is(b.Err, first) {
		t.Errorf("batch %+v, want a resync with the first error", b)
	}
	p.clear()
	if !p.empty() || len(p.batch().Keys) != 0 {
		t.Error("clear left something")
	}
}
