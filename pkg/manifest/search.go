package manifest

import (
	"sync"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/search"
)

// SearchIndex is the search index of one catalog view: a search.Index per
// collection over every live entry, each built on its first search and
// then shared by every caller, whatever its audiences (the index leaves
// out what a caller may not see). Build one per view, with NewSearchIndex,
// and hand it to every Feed over that view; it is safe for concurrent use.
type SearchIndex struct {
	view *catalog.View
	cols [2]collectionIndex // skills, sub-agents
}

// collectionIndex is one collection's index, built once.
type collectionIndex struct {
	once    sync.Once
	entries []*catalog.Entry // by position in the index
	index   *search.Index
	groups  *SearchGroups
}

// NewSearchIndex returns the (not yet built) search index of v.
func NewSearchIndex(v *catalog.View) *SearchIndex { return &SearchIndex{view: v} }

// search returns a page of the entries of c the caller may see that match q.
func (s *SearchIndex) search(c *collection, q search.Query, caller audience.Caller, skip, take int) []*catalog.Entry {
	ci := &s.cols[0]
	if c == subagents {
		ci = &s.cols[1]
	}
	ci.once.Do(func() {
		ci.entries = c.list(s.view, audience.Unrestricted)
		var items []search.Item
		items, ci.groups = SearchItems(ci.entries)
		ci.index = search.NewIndex(items)
	})
	pos := ci.index.Search(q, ci.groups.Visible(caller), skip, take)
	out := make([]*catalog.Entry, len(pos))
	for i, p := range pos {
		out[i] = ci.entries[p]
	}
	return out
}

// SearchGroups tells which of the search groups SearchItems made a caller
// may see.
type SearchGroups struct {
	// reps holds an entry of each group but 0 (the public entries): the
	// entries of a group share their visibility and audiences, so a
	// caller may see the group when it may see its representative.
	reps []*catalog.Entry
}

// SearchItems is entries as a search.Index indexes them, each in the
// group of the entries a caller sees with it (public ones in group 0).
func SearchItems(entries []*catalog.Entry) ([]search.Item, *SearchGroups) {
	items := make([]search.Item, len(entries))
	g := &SearchGroups{reps: []*catalog.Entry{nil}}
	group := map[string]int32{}
	for i, e := range entries {
		items[i] = search.Item{Name: e.Name, Description: e.EffectiveDescription()}
		if e.VisibleTo(audience.Anonymous) {
			continue
		}
		key := e.Audiences.String()
		id, ok := group[key]
		if !ok {
			id = int32(len(g.reps))
			group[key] = id
			g.reps = append(g.reps, e)
		}
		items[i].Group = id
	}
	return items, g
}

// Visible is what of the groups the caller may see (Entry.VisibleTo of
// each group's representative).
func (g *SearchGroups) Visible(c audience.Caller) search.Visible {
	v := make(search.Visible, len(g.reps))
	for i, e := range g.reps[1:] {
		v[i+1] = e.VisibleTo(c)
	}
	return v
}
