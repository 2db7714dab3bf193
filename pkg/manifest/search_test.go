package manifest

import (
	"slices"
	"sync"
	"testing"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// TestSearchIndexIsBuiltLazilyAndShared: nothing is indexed before the
// first search of a collection, and concurrent searches of both kinds of
// caller share the one index and answer as a fresh one does.
func TestSearchIndexIsBuiltLazilyAndShared(t *testing.T) {
	v := catalogtest.Generate(catalogtest.Default(300)).View(t)
	idx := NewSearchIndex(v)
	if idx.cols[0].index != nil || idx.cols[1].index != nil {
		t.Fatal("NewSearchIndex indexed before any search")
	}
	want := map[bool][]Summary{}
	for _, auth := range []bool{false, true} {
		want[auth] = (&Feed{View: v, Caller: callerOf(auth), Base: base}).Search(catalog.KindSkill, "review deploy", 0, 50)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		auth := g%2 == 0
		wg.Go(func() {
			got := (&Feed{View: v, Caller: callerOf(auth), Base: base, SearchIndex: idx}).Search(catalog.KindSkill, "review deploy", 0, 50)
			if !slices.EqualFunc(got, want[auth], func(a, b Summary) bool { return a.Name == b.Name }) {
				errs <- "a shared index answered otherwise than a fresh one"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	built := idx.cols[0].index
	if built == nil || idx.cols[1].index != nil {
		t.Fatalf("skills indexed: %v, sub-agents indexed: %v; want only the collection searched", built != nil, idx.cols[1].index != nil)
	}
	(&Feed{View: v, Base: base, SearchIndex: idx}).Search(catalog.KindSkill, "other", 0, 50)
	if idx.cols[0].index != built {
		t.Error("a later search rebuilt the index")
	}
}

// TestSearchNeverShowsHiddenEntries: over a generated catalog with
// authenticated skills, no anonymous search returns one, and skipping
// through every page anonymously lists exactly the public matches.
func TestSearchNeverShowsHiddenEntries(t *testing.T) {
	b := catalogtest.Generate(catalogtest.Default(500))
	v := b.View(t)
	hidden := map[string]bool{}
	for _, it := range b.Skills {
		if it.Authenticated {
			hidden[it.Name] = true
		}
	}
	idx := NewSearchIndex(v)
	anon := &Feed{View: v, Base: base, SearchIndex: idx}
	auth := &Feed{View: v, Caller: audience.Unrestricted, Base: base, SearchIndex: idx}
	for _, q := range []string{"", "review", "the", "deploy review", b.Skills[9].Name, b.Skills[9].Name[:3]} {
		all := auth.Search(catalog.KindSkill, q, 0, 1<<20)
		var public []string
		for _, s := range all {
			if !hidden[s.Name] {
				public = append(public, s.Name)
			}
		}
		var paged []string
		for skip := 0; ; skip += 7 {
			page := anon.Search(catalog.KindSkill, q, skip, 7)
			if len(page) == 0 {
				break
			}
			for _, s := range page {
				if hidden[s.Name] {
					t.Fatalf("q=%q: an anonymous search returned hidden %s", q, s.Name)
				}
				paged = append(paged, s.Name)
			}
		}
		if !slices.Equal(paged, public) {
			t.Errorf("q=%q: anonymous pages list %d entries, want the %d public ones of the authenticated answer in its order", q, len(paged), len(public))
		}
	}
}
