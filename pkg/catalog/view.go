package catalog

import (
	"sort"
)

// View is a read-only, indexed form of a Catalog for the request path: live
// entries only, sorted, with lookups by name and by served path. Build it
// once per catalog revision with Compile; it is safe for concurrent use.
// Every accessor takes the caller's authentication and never returns an
// entry the caller may not see, so a surface cannot leak one by forgetting
// a filter.
type View struct {
	catalog   *Catalog
	etag      string
	skills    []*Entry // live top-level skills, by name
	subagents []*Entry // live sub-agents, by name
	skillBy   map[string]*Entry
	agentBy   map[string]*Entry
	byPath    map[string]*Entry
	listings  map[string][]*Entry // live members (top-level by reference and listing-only), by name
}

// Compile indexes c. etag is the catalog object's ETag, kept for callers
// that revalidate.
func Compile(c *Catalog, etag string) *View {
	v := &View{
		catalog:  c,
		etag:     etag,
		skillBy:  map[string]*Entry{},
		agentBy:  map[string]*Entry{},
		byPath:   map[string]*Entry{},
		listings: map[string][]*Entry{},
	}
	for name := range c.Listings {
		v.listings[name] = nil
	}
	for _, e := range c.SortedSkills() {
		if !e.Live() {
			continue
		}
		if e.Path != "" {
			v.byPath[e.Path] = e
		}
		if e.Listing != "" {
			if _, ok := v.listings[e.Listing]; ok {
				v.listings[e.Listing] = append(v.listings[e.Listing], e)
			}
			continue
		}
		v.skills = append(v.skills, e)
		v.skillBy[e.Name] = e
	}
	for name, l := range c.Listings {
		for _, skill := range l.Skills {
			if e := v.skillBy[skill]; e != nil {
				v.listings[name] = append(v.listings[name], e)
			}
		}
	}
	for _, members := range v.listings {
		sort.SliceStable(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	}
	for _, e := range c.SortedSubagents() {
		if !e.Live() {
			continue
		}
		v.subagents = append(v.subagents, e)
		v.agentBy[e.Name] = e
	}
	return v
}

// Catalog returns the catalog the view was compiled from. Callers must not modify it.
func (v *View) Catalog() *Catalog { return v.catalog }

// ETag returns the catalog object's ETag.
func (v *View) ETag() string { return v.etag }

// Skills returns the live top-level skills the caller may see, by name.
func (v *View) Skills(authenticated bool) []*Entry { return visible(v.skills, authenticated) }

// Subagents returns the live sub-agents the caller may see, by name.
func (v *View) Subagents(authenticated bool) []*Entry { return visible(v.subagents, authenticated) }

// Skill returns a live top-level skill the caller may see, or nil.
func (v *View) Skill(name string, authenticated bool) *Entry {
	return visibleOne(v.skillBy[name], authenticated)
}

// Subagent returns a live sub-agent the caller may see, or nil.
func (v *View) Subagent(name string, authenticated bool) *Entry {
	return visibleOne(v.agentBy[name], authenticated)
}

// ByPath returns the live entry served at an origin-root-absolute path, or nil.
func (v *View) ByPath(path string, authenticated bool) *Entry {
	return visibleOne(v.byPath[path], authenticated)
}

// Listing returns the live members of a listing the caller may see. ok is
// false when the listing is unknown or nothing in it is visible to the
// caller: an anonymous caller cannot tell a listing of hidden skills from
// one that does not exist.
func (v *View) Listing(name string, authenticated bool) (members []*Entry, ok bool) {
	all, known := v.listings[name]
	if !known {
		return nil, false
	}
	members = visible(all, authenticated)
	return members, len(members) > 0
}

// ListingNames returns the names of the known listings, sorted.
func (v *View) ListingNames() []string {
	names := make([]string, 0, len(v.listings))
	for name := range v.listings {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// AnyVisible reports whether the caller can see at least one skill anywhere
// (top level or a listing); MCP advertises the index only then.
func (v *View) AnyVisible(authenticated bool) bool {
	if len(v.Skills(authenticated)) > 0 {
		return true
	}
	for name := range v.listings {
		if _, ok := v.Listing(name, authenticated); ok {
			return true
		}
	}
	return false
}

func visible(all []*Entry, authenticated bool) []*Entry {
	if authenticated {
		return all
	}
	out := make([]*Entry, 0, len(all))
	for _, e := range all {
		if e.VisibleTo(false) {
			out = append(out, e)
		}
	}
	return out
}

func visibleOne(e *Entry, authenticated bool) *Entry {
	if e == nil || !e.VisibleTo(authenticated) {
		return nil
	}
	return e
}
