package indexer

import (
	"maps"
	"net/url"
	"slices"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// storedDoc is one document the indexer renders into the bucket when it is
// large: what it is, its frame, and how to build it whole or change it.
type storedDoc struct {
	origin, path string
	// class is the audience class it is rendered for; groups decide the
	// classes of its path (recorded with it, so the request path can tell
	// a caller's class from the head alone).
	class  audience.Class
	groups audience.Groups
	// empty is the document with no items.
	empty any
	// items are the document's items in name order, from the view.
	items func(v *catalog.View) []feeddoc.Item
	// item is an entry's item in the document (nil: not in it), for the
	// entries of the document's domain; nil for a document rebuilt whole
	// on every change (a listing's, whose members the config names).
	item   func(e *catalog.Entry) []byte
	domain func(e *catalog.Entry) bool
	// bounded documents hold at most atMost items, so one that cannot
	// reach the threshold is not rendered to find out.
	bounded bool
	atMost  int
}

// maxItemBytes bounds an item of an RFC index (a name of at most 64
// characters, a description of at most 1,024 however escaped, a URL, a
// digest, a version label), to skip rendering a listing's index that cannot
// be large enough to store.
const maxItemBytes = 16 << 10

// storedDocs are the documents of c that may be stored, for origins: each
// in every class of caller its path can have (audience.Groups.Classes,
// which the config check bounds).
func (ix *Indexer) storedDocs(c *catalog.Catalog, origins []*url.URL) []storedDoc {
	topLevel := func(e *catalog.Entry) bool { return e.Kind == catalog.KindSkill && e.Listing == "" }
	subagent := func(e *catalog.Entry) bool { return e.Kind == catalog.KindSubagent }
	own := map[string]int{} // listing → its own skills
	if len(c.Listings) > 0 {
		for _, e := range c.Skills {
			if e.Listing != "" {
				own[e.Listing]++
			}
		}
	}
	classes := func(scope catalog.Scope) (audience.Groups, []audience.Class) {
		g := c.Groups(scope)
		cl, err := g.Classes(skillsconfig.MaxAudienceClasses)
		if err != nil {
			// The config check keeps a config from getting here; should one,
			// its other classes are rendered on the request path.
			ix.log.Warn("stored documents: too many classes of caller; storing the anonymous one only", "error", err.Error())
			cl = []audience.Class{{}}
		}
		return g, cl
	}
	var out []storedDoc
	top, topClasses := classes(catalog.ScopeSkills)
	for _, class := range topClasses {
		caller := class.Caller()
		for _, base := range origins {
			origin := discovery.Origin(base)
			out = append(out, storedDoc{
				origin: origin, path: routes.RFCIndex, class: class, groups: top, empty: discovery.Build(nil, base), domain: topLevel,
				items: func(v *catalog.View) []feeddoc.Item { return indexItems(discovery.TopLevel(v, caller, base)) },
				item: func(e *catalog.Entry) []byte {
					if !e.Served() || !e.VisibleTo(caller) {
						return nil
					}
					if s, ok := discovery.Item(e, origin); ok {
						return feeddoc.EncodeItem(s)
					}
					return nil
				},
			})
		}
	}
	for _, l := range slices.Sorted(maps.Keys(c.Listings)) {
		groups, lc := classes(catalog.ListingScope(l))
		for _, class := range lc {
			caller := class.Caller()
			for _, base := range origins {
				out = append(out, storedDoc{
					origin: discovery.Origin(base), path: routes.ListingIndex(l), class: class, groups: groups,
					empty: discovery.Build(nil, base), bounded: true, atMost: len(c.Listings[l].Skills) + own[l],
					items: func(v *catalog.View) []feeddoc.Item {
						idx, _ := discovery.Listing(v, l, caller, base)
						return indexItems(idx)
					},
				})
			}
		}
	}
	// Pages hold origin-root-absolute hrefs only: one rendering serves
	// every origin.
	for _, kind := range []catalog.Kind{catalog.KindSkill, catalog.KindSubagent} {
		path, domain, scope := routes.AllPage(routes.SkillFeed), topLevel, catalog.ScopeSkills
		if kind == catalog.KindSubagent {
			path, domain, scope = routes.AllPage(routes.SubagentFeed), subagent, catalog.ScopeSubagents
		}
		groups, kc := classes(scope)
		for _, class := range kc {
			caller := class.Caller()
			out = append(out, storedDoc{
				path: path, class: class, groups: groups, domain: domain,
				empty: (&manifest.Feed{View: catalog.Compile(catalog.New(), "")}).Page(kind, manifest.Range{}),
				items: func(v *catalog.View) []feeddoc.Item {
					page := (&manifest.Feed{View: v, Caller: caller}).Page(kind, manifest.Range{})
					out := make([]feeddoc.Item, len(page.Items))
					for i, it := range page.Items {
						out[i] = feeddoc.Item{Name: it.Name, JSON: feeddoc.EncodeItem(it)}
					}
					return out
				},
				item: func(e *catalog.Entry) []byte {
					if !e.Served() || !e.VisibleTo(caller) {
						return nil
					}
					return feeddoc.EncodeItem(manifest.PageItemOf(kind, e))
				},
			})
		}
	}
	return out
}

func indexItems(idx discovery.Index) []feeddoc.Item {
	out := make([]feeddoc.Item, len(idx.Skills))
	for i, s := range idx.Skills {
		out[i] = feeddoc.Item{Name: s.Name, JSON: feeddoc.EncodeItem(s)}
	}
	return out
}
