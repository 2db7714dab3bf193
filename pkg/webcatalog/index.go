package webcatalog

import (
	"slices"
	"strings"
	"sync"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/search"
)

// Index is the web catalog's index of one catalog revision: for each scope
// a page can show (everything, one kind, one listing) its entries in name
// order and a search index over them, built on first use and then shared
// by every caller (a search leaves out what the caller may not see). Build
// one per catalog.View with NewIndex; it is safe for concurrent use.
type Index struct {
	view *catalog.View

	mu     sync.Mutex
	scopes map[Scope]*scope
	// listings holds the listings a caller can see, by class of caller
	// over the whole catalog (catalog.ScopeAll), at most maxClasses.
	listings map[string][]string
}

// maxClasses bounds the classes of caller an Index keeps the listings of:
// a caller past it is answered by reading the listings through.
const maxClasses = 64

// Scope is a set of entries a list page shows.
type Scope struct {
	// Kind is catalog.KindSkill, catalog.KindSubagent or "" for both.
	Kind catalog.Kind
	// Listing, when set, keeps the skills of that listing only.
	Listing string
}

type scope struct {
	once   sync.Once
	rows   []*catalog.Entry // in the index's name order
	index  *search.Index
	groups *manifest.SearchGroups
}

// NewIndex returns the (not yet built) index of v.
func NewIndex(v *catalog.View) *Index {
	return &Index{view: v, scopes: map[Scope]*scope{}, listings: map[string][]string{}}
}

// visibleListings returns the names of the listings the caller can see,
// sorted: the same for every caller of its class over the whole catalog,
// which decides every listing's gate and members, so read once per class.
// The result must not be modified.
func (x *Index) visibleListings(c audience.Caller) []string {
	class := x.view.Class(catalog.ScopeAll, c)
	key := class.Key()
	x.mu.Lock()
	names, ok := x.listings[key]
	x.mu.Unlock()
	if ok {
		return names
	}
	caller := class.Caller()
	names = []string{}
	for _, l := range x.view.ListingNames() {
		if _, ok := x.view.Listing(l, caller); ok {
			names = append(names, l)
		}
	}
	x.mu.Lock()
	if len(x.listings) < maxClasses {
		x.listings[key] = names
	}
	x.mu.Unlock()
	return names
}

// search returns a page of the entries of sc that the caller may see and
// that match q (all of them in name order for the zero query).
func (x *Index) search(sc Scope, q search.Query, c audience.Caller, skip, take int) []*catalog.Entry {
	s := x.scope(sc)
	pos := s.index.Search(q, s.groups.Visible(c), skip, take)
	out := make([]*catalog.Entry, len(pos))
	for i, p := range pos {
		out[i] = s.rows[p]
	}
	return out
}

// count is how many entries of sc the caller may see.
func (x *Index) count(sc Scope, c audience.Caller) int {
	s := x.scope(sc)
	return s.index.Count(s.groups.Visible(c))
}

// scope returns sc's rows and index, building them on first use. The
// scopes are bounded: three kinds times the view's listings.
func (x *Index) scope(sc Scope) *scope {
	x.mu.Lock()
	s := x.scopes[sc]
	if s == nil {
		s = &scope{}
		x.scopes[sc] = s
	}
	x.mu.Unlock()
	s.once.Do(func() {
		s.rows = x.rows(sc)
		var items []search.Item
		items, s.groups = manifest.SearchItems(s.rows)
		s.index = search.NewIndex(items)
	})
	return s
}

// rows lists every live entry of sc, whoever may see it (the search index
// filters per caller), sorted by name, then skills before sub-agents,
// top-level before a listing's own.
func (x *Index) rows(sc Scope) []*catalog.Entry {
	v := x.view
	var out []*catalog.Entry
	if sc.Listing != "" {
		if sc.Kind == catalog.KindSubagent {
			return nil // listings hold skills only
		}
		members, _ := v.Listing(sc.Listing, audience.Unrestricted)
		return sortRows(slices.Clone(members))
	}
	if sc.Kind != catalog.KindSubagent {
		out = append(out, v.Skills(audience.Unrestricted)...)
		for _, l := range v.ListingNames() {
			members, _ := v.Listing(l, audience.Unrestricted)
			for _, e := range members {
				if e.Listing == l {
					out = append(out, e)
				}
			}
		}
	}
	if sc.Kind != catalog.KindSkill {
		out = append(out, v.Subagents(audience.Unrestricted)...)
	}
	return sortRows(out)
}

func sortRows(rows []*catalog.Entry) []*catalog.Entry {
	slices.SortStableFunc(rows, func(a, b *catalog.Entry) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if a.Kind != b.Kind {
			if a.Kind == catalog.KindSkill {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Listing, b.Listing)
	})
	return rows
}
