package indexer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCatchUpReadsOnlyWhatChanged is serve's start: over a bucket with no
// catalog it indexes everything; over an indexed one it reads only what a
// listing shows to differ, and a rejected upload it judged once is not
// read again by the next catch-up (its ETag is recorded).
func TestCatchUpReadsOnlyWhatChanged(t *testing.T) {
	e := newEnv(t)
	for i := range 20 {
		e.put(fmt.Sprintf("skills/u%02d.md", i), skillDoc(fmt.Sprintf("u%02d", i), "1", "Fine."))
	}
	res, err := e.ix.CatchUp(context.Background())
	if err != nil || len(res.Published) != 20 {
		t.Fatalf("a first catch-up published %d of 20 (%v)", len(res.Published), err)
	}

	reads := &readCounter{Store: e.st}
	e.ix.store = reads
	read := func() []string {
		defer func() { reads.keys = nil }()
		return slices.DeleteFunc(slices.Clone(reads.gets()), func(k string) bool { return !strings.HasPrefix(k, "skills/") })
	}
	steps := []struct {
		name      string
		change    func()
		published int
		rejected  int
		reads     []string
	}{
		// An edit that keeps the label is rejected, and nothing else changes.
		{"a rejected edit", func() { e.put("skills/u03.md", skillDoc("u03", "1", "Edited.")) }, 0, 1, []string{"skills/u03.md"}},
		// Judged once: its ETag is recorded though no entry changed.
		{"nothing", func() {}, 0, 0, nil},
		{"a new skill", func() { e.put("skills/new.md", skillDoc("new", "1", "New.")) }, 1, 0, []string{"skills/new.md"}},
		{"nothing again", func() {}, 0, 0, nil},
	}
	for _, st := range steps {
		st.change()
		read()
		res, err := e.ix.CatchUp(context.Background())
		if err != nil || len(res.Published) != st.published || len(res.Rejected) != st.rejected {
			t.Fatalf("%s: %s (%v)", st.name, dump(res), err)
		}
		if got := slices.Compact(slices.Sorted(slices.Values(read()))); !slices.Equal(got, st.reads) {
			t.Errorf("%s: the catch-up read %v, want %v", st.name, got, st.reads)
		}
	}
}
