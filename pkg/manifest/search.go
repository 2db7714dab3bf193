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
	// reps holds an entry of each search group but 0 (public): the
	// entries of a group share their visibility and audiences, so a caller
	// may see the group when it may see its representative.
	reps []*catalog.Entry
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
		items := make([]search.Item, len(ci.entries))
		group := map[string]int32{}
		ci.reps = []*catalog.Entry{nil}
		for i, e := range ci.entries {
			items[i] = search.Item{Name: e.Name, Description: e.EffectiveDescription()}
			if e.VisibleTo(audience.Anonymous) {
				continue
			}
			key := e.Audiences.String()
			g, ok := group[key]
			if !ok {
				g = int32(len(ci.reps))
				group[key] = g
				ci.reps = append(ci.reps, e)
			}
			items[i].Group = g
		}
		ci.index = search.NewIndex(items)
	})
	visible := make(search.Visible, len(ci.reps))
	for g, e := range ci.reps[1:] {
		visible[g+1] = e.VisibleTo(caller)
	}
	pos := ci.index.Search(q, visible, skip, take)
	out := make([]*catalog.Entry, len(pos))
	for i, p := range pos {
		out[i] = ci.entries[p]
	}
	return out
}
