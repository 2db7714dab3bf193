package catalog

import (
	"context"
	"slices"
	"sort"

	"github.com/skilldrop/skilldrop/pkg/audience"
)

// View is a read-only, indexed form of a Catalog for the request path: live
// entries only, sorted, with lookups by name and by served path. Build it
// once per catalog revision with Compile; it is safe for concurrent use.
// Every accessor takes the caller and never returns an entry the caller
// may not see (Entry.VisibleTo, and Listing.VisibleTo for a listing's
// members), so a surface cannot leak one by forgetting a filter.
type View struct {
	revision  int64
	etag      string
	documents []Document
	history   func(ctx context.Context, e *Entry) ([]Version, error)
	skills    []*Entry // live top-level skills, by name
	subagents []*Entry // live sub-agents, by name
	skillBy   map[string]*Entry
	agentBy   map[string]*Entry
	byPath    map[string]*Entry
	listings  map[string][]*Entry // live members (top-level by reference and listing-only), by name
	// gone are the live entries no version of which is in service, by the
	// keys the served ones have: their bytes answer 410, not 404.
	goneSkill, goneAgent, gonePath map[string]*Entry
	// revoked lists the gone versions, each with its entry (for who may see it).
	revoked []goneFor
	gates   map[string]*Listing // the listings, for their audiences
	classes map[Scope]*audience.Classifier
}

type goneFor struct {
	GoneVersion
	entry *Entry
}

// Compile indexes c. etag is the catalog object's ETag, kept for callers
// that revalidate. Histories come from c's entries (decoded on demand,
// without changing them, so the view stays safe for concurrent use).
func Compile(c *Catalog, etag string) *View {
	return compile(c.SortedSkills(), c.SortedSubagents(), c.Listings, c.Documents, c.Gone, c.Revision, etag,
		func(_ context.Context, e *Entry) ([]Version, error) {
			if e.HasHistory() {
				return e.Versions, nil
			}
			return decodeHistory(e.history, e.head())
		})
}

// compile indexes entries (skills in ID order, sub-agents in name order).
func compile(skills, subagents []*Entry, listings map[string]*Listing, docs []Document, gone []GoneVersion, revision int64, etag string,
	history func(context.Context, *Entry) ([]Version, error)) *View {
	v := &View{
		revision:  revision,
		etag:      etag,
		documents: docs,
		history:   history,
		skillBy:   map[string]*Entry{},
		agentBy:   map[string]*Entry{},
		byPath:    map[string]*Entry{},
		listings:  map[string][]*Entry{},
		goneSkill: map[string]*Entry{},
		goneAgent: map[string]*Entry{},
		gonePath:  map[string]*Entry{},
		gates:     map[string]*Listing{},
	}
	for name, l := range listings {
		v.listings[name], v.gates[name] = nil, l
	}
	for _, e := range skills {
		if !e.Served() {
			if e.Live() {
				if e.Path != "" {
					v.gonePath[e.Path] = e
				}
				if e.Listing == "" {
					v.goneSkill[e.Name] = e
				}
			}
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
	for name, l := range listings {
		for _, skill := range l.Skills {
			if e := v.skillBy[skill]; e != nil {
				v.listings[name] = append(v.listings[name], e)
			}
		}
	}
	for _, members := range v.listings {
		sort.SliceStable(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	}
	for _, e := range subagents {
		if !e.Served() {
			if e.Live() {
				v.goneAgent[e.Name] = e
			}
			continue
		}
		v.subagents = append(v.subagents, e)
		v.agentBy[e.Name] = e
	}
	if len(gone) > 0 {
		byID := map[Kind]map[string]*Entry{KindSkill: {}, KindSubagent: {}}
		for _, e := range skills {
			byID[KindSkill][e.ID()] = e
		}
		for _, e := range subagents {
			byID[KindSubagent][e.Name] = e
		}
		for _, g := range gone {
			if e := byID[g.Kind][g.ID()]; e != nil {
				v.revoked = append(v.revoked, goneFor{GoneVersion: g, entry: e})
			}
		}
	}
	top := groupsOf(v.skills, nil)
	v.classes = map[Scope]*audience.Classifier{ScopeSkills: audience.NewClassifier(top), ScopeSubagents: audience.NewClassifier(groupsOf(v.subagents, nil))}
	all := []audience.Set(top)
	for name, members := range v.listings {
		g := groupsOf(members, v.gates[name].Audiences)
		v.classes[ListingScope(name)] = audience.NewClassifier(g)
		all = append(all, g...)
	}
	v.classes[ScopeAll] = audience.NewClassifier(audience.GroupsOf(all...))
	return v
}

// Scope names what one document lists, whose audiences decide the
// document's classes: the top-level skills, the sub-agents, one listing,
// or every skill (MCP serves the top level and every listing's own).
type Scope struct {
	kind    Kind
	listing string
	all     bool
}

// The scopes that are not a listing.
var (
	ScopeSkills    = Scope{kind: KindSkill}
	ScopeSubagents = Scope{kind: KindSubagent}
	ScopeAll       = Scope{kind: KindSkill, all: true}
)

// ListingScope is the scope of a listing's index.
func ListingScope(name string) Scope { return Scope{kind: KindSkill, listing: name} }

// groupsOf are the audiences that decide what of entries (behind a
// listing's gate audiences, when set) a caller sees.
func groupsOf(entries []*Entry, gate audience.Set) audience.Groups {
	sets := []audience.Set{gate}
	for _, e := range entries {
		if e.Visibility == Authenticated {
			sets = append(sets, e.Audiences)
		}
	}
	return audience.GroupsOf(sets...)
}

// Groups are the audiences that decide what a caller sees in scope of c:
// those of its entries not withdrawn (a head is not decoded to tell a live
// one), so a publish can enumerate the classes of its stored documents
// without decoding the catalog. A withdrawn entry's audiences, counted,
// only split a class in two that see the same.
func (c *Catalog) Groups(scope Scope) audience.Groups {
	var entries []*Entry
	var gate audience.Set
	add := func(e *Entry) {
		if e != nil && !e.Withdrawn {
			entries = append(entries, e)
		}
	}
	switch {
	case scope.kind == KindSubagent:
		for _, e := range c.Subagents {
			add(e)
		}
	case scope.listing != "":
		l := c.Listings[scope.listing]
		if l == nil {
			return nil
		}
		gate = l.Audiences
		for _, name := range l.Skills {
			add(c.Skills[name])
		}
		for _, e := range c.Skills {
			if e.Listing == scope.listing {
				add(e)
			}
		}
	default: // the top level (a publish stores no document of ScopeAll)
		for _, e := range c.Skills {
			if e.Listing == "" {
				add(e)
			}
		}
	}
	return groupsOf(entries, gate)
}

// Class is the caller's class in scope: what caches and stored documents
// of the scope are keyed by.
func (v *View) Class(scope Scope, c audience.Caller) audience.Class {
	if k := v.classes[scope]; k != nil {
		return k.Class(c)
	}
	return audience.Groups(nil).Class(c) // an unknown listing: nothing to tell
}

// Revision is the catalog revision the view was compiled from.
func (v *View) Revision() int64 { return v.revision }

// Document returns the pre-rendered document for origin and path in the
// caller's class, or nil.
func (v *View) Document(origin, path string, c audience.Caller) *Document {
	return findDocument(v.documents, origin, path, c)
}

// History returns e's versions in service, oldest first (the latest
// last), reading them from the catalog when the view holds only latest
// versions: gone versions are in no list. e must come from this view.
// The result must not be modified.
func (v *View) History(ctx context.Context, e *Entry) ([]Version, error) {
	vs, err := v.history(ctx, e)
	if err != nil || !slices.ContainsFunc(vs, func(x Version) bool { return x.Gone != nil }) {
		return vs, err
	}
	return slices.DeleteFunc(slices.Clone(vs), func(x Version) bool { return x.Gone != nil }), nil
}

// Version returns one version of e (the latest without reading anything),
// or nil when e has no version of that label. A gone version is returned
// too (Version.Gone): its routes answer 410 rather than 404.
func (v *View) Version(ctx context.Context, e *Entry, label string) (*Version, error) {
	if l := e.LatestVersion(); l != nil && l.Label == label {
		return l, nil
	}
	vs, err := v.history(ctx, e)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		if vs[i].Label == label {
			return &vs[i], nil
		}
	}
	return nil, nil
}

// GoneSkill, GoneSubagent and GoneAt return the live entry of that name
// (or served at that path) the caller may see when no version of it is in
// service, or nil: for a 410 where a served one would be answered.
func (v *View) GoneSkill(name string, c audience.Caller) *Entry {
	return visibleOne(v.goneSkill[name], c)
}

// GoneSubagent is GoneSkill for sub-agents.
func (v *View) GoneSubagent(name string, c audience.Caller) *Entry {
	return visibleOne(v.goneAgent[name], c)
}

// GoneAt is GoneSkill for an artifact path.
func (v *View) GoneAt(path string, c audience.Caller) *Entry {
	return visibleOne(v.gonePath[path], c)
}

// Revoked returns the gone versions of entries the caller may see, oldest
// first.
func (v *View) Revoked(c audience.Caller) []GoneVersion {
	out := []GoneVersion{}
	for _, g := range v.revoked {
		if g.entry.VisibleTo(c) {
			out = append(out, g.GoneVersion)
		}
	}
	return out
}

// ETag returns the catalog object's ETag.
func (v *View) ETag() string { return v.etag }

// Skills returns the live top-level skills the caller may see, by name.
func (v *View) Skills(c audience.Caller) []*Entry { return visible(v.skills, c) }

// Subagents returns the live sub-agents the caller may see, by name.
func (v *View) Subagents(c audience.Caller) []*Entry { return visible(v.subagents, c) }

// Skill returns a live top-level skill the caller may see, or nil.
func (v *View) Skill(name string, c audience.Caller) *Entry {
	return visibleOne(v.skillBy[name], c)
}

// Subagent returns a live sub-agent the caller may see, or nil.
func (v *View) Subagent(name string, c audience.Caller) *Entry {
	return visibleOne(v.agentBy[name], c)
}

// ByPath returns the live entry served at an origin-root-absolute path, or nil.
func (v *View) ByPath(path string, c audience.Caller) *Entry {
	return visibleOne(v.byPath[path], c)
}

// Listing returns the live members of a listing the caller may see. ok is
// false when the listing is unknown, restricted to audiences the caller
// does not meet, or holds nothing visible to the caller: a caller cannot
// tell a listing hidden from it from one that does not exist.
func (v *View) Listing(name string, c audience.Caller) (members []*Entry, ok bool) {
	all, known := v.listings[name]
	if !known || !v.gates[name].VisibleTo(c) {
		return nil, false
	}
	members = visible(all, c)
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
func (v *View) AnyVisible(c audience.Caller) bool {
	if len(v.Skills(c)) > 0 {
		return true
	}
	for name := range v.listings {
		if _, ok := v.Listing(name, c); ok {
			return true
		}
	}
	return false
}

func visible(all []*Entry, c audience.Caller) []*Entry {
	out := make([]*Entry, 0, len(all))
	for _, e := range all {
		if e.VisibleTo(c) {
			out = append(out, e)
		}
	}
	if len(out) == len(all) {
		return all
	}
	return out
}

func visibleOne(e *Entry, c audience.Caller) *Entry {
	if e == nil || !e.VisibleTo(c) {
		return nil
	}
	return e
}
