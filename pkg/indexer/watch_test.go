package indexer

import (
	"context"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
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
		{"a config", func() { e.put("agent-skills.yaml", []byte("skills:\n  - name: a\n    visibility: authenticated\n")) },
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

// TestWatchPicksUpAChange runs Watch at the interval `skilldrop serve`
// uses and reports how long a change took to be served; the pass/fail
// criterion is only that it is picked up at all.
func TestWatchPicksUpAChange(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Now = time.Now })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.ix.Watch(ctx, time.Second) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	}()
	start := time.Now()
	e.put("skills/w.md", skillDoc("w", "1", "Watched."))
	for en := e.skill("w"); en == nil || !en.Live(); en = e.skill("w") {
		if time.Since(start) > 30*time.Second {
			t.Fatal("Watch never picked up the new key")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("picked up after %v at a 1s interval", time.Since(start).Round(time.Millisecond))
}
