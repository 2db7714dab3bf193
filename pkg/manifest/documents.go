package manifest

import (
	"context"
	"net/url"
	"slices"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// Schema is the root manifest's $schema.
const Schema = "https://schemas.netclaw.dev/skillserver/manifest/0.1.0"

// APIVersion is the one API version served, and the recommended one: the
// version segment of every native path.
const APIVersion = routes.NativeVersion

// Link is a hypermedia link; Href is origin-root-absolute.
type Link struct {
	Href string `json:"href"`
}

// SelfLinks is the "links" object of every document but the root.
type SelfLinks struct {
	Self Link `json:"self"`
}

// Root is /manifest.json.
type Root struct {
	Schema     string               `json:"$schema"`
	APIVersion string               `json:"apiVersion"`
	Versions   map[string]RootLinks `json:"versions"`
}

// RootLinks are one API version's entry points.
type RootLinks struct {
	Self           Link `json:"self"`
	Skills         Link `json:"skills"`
	Subagents      Link `json:"subagents"`
	SkillSearch    Link `json:"skillSearch"`
	SubagentSearch Link `json:"subagentSearch"`
}

// Index is a collection index (kind skill-index or subagent-index): the
// pages that together list the whole collection.
type Index struct {
	Kind  string     `json:"kind"`
	Links SelfLinks  `json:"links"`
	Pages []PageLink `json:"pages"`
}

// PageLink is one page of an Index. Range is the page's token (see the
// package documentation).
type PageLink struct {
	Range string `json:"range"`
	Href  string `json:"href"`
}

// Page is a collection page (kind skill-page or subagent-page): the items
// whose names fall in Range, in name order.
type Page struct {
	Kind  string     `json:"kind"`
	Range string     `json:"range"`
	Items []PageItem `json:"items"`
	Links SelfLinks  `json:"links"`
}

// PageItem is one skill or sub-agent in a Page.
type PageItem struct {
	Name          string       `json:"name"`
	LatestVersion string       `json:"latestVersion"`
	VersionRange  VersionRange `json:"versionRange"`
	Href          string       `json:"href"`
}

// VersionRange bounds an entry's history: Min is the first version
// published, Max the latest (the last published), Count how many versions
// there are.
type VersionRange struct {
	Min   string `json:"min"`
	Max   string `json:"max"`
	Count int    `json:"count"`
}

// Identity is one skill or sub-agent with every version (kind skill or
// subagent), newest first by publish time.
type Identity struct {
	Kind          string        `json:"kind"`
	Name          string        `json:"name"`
	LatestVersion string        `json:"latestVersion"`
	Versions      []VersionLink `json:"versions"`
	Links         SelfLinks     `json:"links"`
}

// VersionLink is one version in an Identity.
type VersionLink struct {
	Version     string        `json:"version"`
	PublishedAt time.Time     `json:"publishedAt"`
	Digest      digest.Digest `json:"digest"`
	Href        string        `json:"href"`
}

// Artifact is where a version's bytes are and the digest they must have.
// URL is absolute.
type Artifact struct {
	Name        string        `json:"name"`
	Version     string        `json:"version"`
	Type        artifact.Type `json:"type"`
	Description string        `json:"description"`
	URL         string        `json:"url"`
	Digest      digest.Digest `json:"digest"`
}

// SkillVersion is /skills/v1/{name}/versions/{version}.json (kind
// skill-version). It carries the artifact twice: flat, the shape sub-agent
// versions have, and under "artifact", the shape the reference server uses,
// so clients of either shape read it.
type SkillVersion struct {
	Kind string `json:"kind"`
	Artifact
	Nested Artifact `json:"artifact"`
	// RoutesToSubagent is metadata.subagent as a link, or null when unset
	// or naming a sub-agent the caller cannot see.
	RoutesToSubagent *SubagentRoute `json:"routesToSubagent"`
	// Files are the version's files with their digests, sizes and media
	// types (a skill-md's SKILL.md, an archive's regular files), as the
	// MCP feed pins them; absent when the indexer recorded none (an
	// external entry, or a version indexed before files were recorded).
	Files []catalog.File `json:"files,omitempty"`
	// Scan is what the content scan found in the version's bytes when it
	// was published (verdict, engine, findings, allows used); absent for a
	// version never scanned (an external entry pinned by digest).
	Scan *scan.Result `json:"scan,omitempty"`
	// Provenance is where the version's signed provenance is; absent for
	// a version signed by no key.
	Provenance *Provenance `json:"provenance,omitempty"`
	Links      SelfLinks   `json:"links"`
}

// Provenance is a version's Sigstore bundle, served beside its bytes:
// its absolute URL, its digest and media type.
type Provenance struct {
	Bundle    string        `json:"bundle"`
	Digest    digest.Digest `json:"digest"`
	MediaType string        `json:"mediaType"`
}

// SubagentRoute names the sub-agent a skill routes to.
type SubagentRoute struct {
	Name string `json:"name"`
	Href string `json:"href"`
}

// SubagentVersion is /subagents/v1/{name}/versions/{version}.json (kind
// subagent-version, type agent-md).
type SubagentVersion struct {
	Kind string `json:"kind"`
	Artifact
	Scan       *scan.Result `json:"scan,omitempty"` // as SkillVersion's
	Provenance *Provenance  `json:"provenance,omitempty"`
	Links      SelfLinks    `json:"links"`
}

// collection is what differs between the skill and sub-agent trees.
type collection struct {
	kind                                   catalog.Kind
	feed                                   string // the collection tree, routes.SkillFeed
	api                                    string // its /api/v1/ routes, routes.SkillAPI
	indexKind, pageKind, itemKind, verKind string
	list                                   func(v *catalog.View, c audience.Caller) []*catalog.Entry
	get                                    func(v *catalog.View, name string, c audience.Caller) *catalog.Entry
}

var (
	skills = &collection{
		kind: catalog.KindSkill, feed: routes.SkillFeed, api: routes.SkillAPI,
		indexKind: "skill-index", pageKind: "skill-page", itemKind: "skill", verKind: "skill-version",
		list: (*catalog.View).Skills, get: (*catalog.View).Skill,
	}
	subagents = &collection{
		kind: catalog.KindSubagent, feed: routes.SubagentFeed, api: routes.SubagentAPI,
		indexKind: "subagent-index", pageKind: "subagent-page", itemKind: "subagent", verKind: "subagent-version",
		list: (*catalog.View).Subagents, get: (*catalog.View).Subagent,
	}
)

func collectionOf(kind catalog.Kind) *collection {
	if kind == catalog.KindSubagent {
		return subagents
	}
	return skills
}

func (c *collection) indexHref() string { return c.feed + "/index.json" }

func (c *collection) pageHref(r Range) string { return c.feed + "/pages/" + r.String() + ".json" }

func (c *collection) identityHref(name string) string {
	return c.feed + "/" + url.PathEscape(name) + "/index.json"
}

func (c *collection) versionHref(name, label string) string {
	return c.feed + "/" + url.PathEscape(name) + "/versions/" + url.PathEscape(label) + ".json"
}

func (c *collection) searchHref() string { return c.api }

// bytesPath is the origin-root-absolute path of a version's bytes.
func (c *collection) bytesPath(name string, ver *catalog.Version) string {
	return c.api + "/" + url.PathEscape(name) + "/" + url.PathEscape(ver.Label) + "/" + c.fileName(ver)
}

// fileName is the last segment of a version's byte path, by its format.
func (c *collection) fileName(ver *catalog.Version) string {
	if c == subagents {
		return "agent.md"
	}
	switch ver.Format {
	case artifact.FormatZip:
		return "archive.zip"
	case artifact.FormatTarGz:
		return "archive.tar.gz"
	default:
		return "SKILL.md"
	}
}

// Feed renders the native feed as one caller sees it. View and Base are
// required: Base supplies the scheme and host of absolute URLs (its path
// is ignored: skilldrop is deployed at an origin root).
type Feed struct {
	View *catalog.View
	// Caller is who the feed is rendered for.
	Caller audience.Caller
	Base   *url.URL
	// PageSize is about how many items an index page holds; <= 0 means
	// DefaultPageSize.
	PageSize int
	// SearchIndex is View's search index (NewSearchIndex(View)), kept by
	// the caller for as long as it serves View; nil builds one per search,
	// which costs as much as the catalog is large.
	SearchIndex *SearchIndex
}

// Root returns /manifest.json.
func (f *Feed) Root() Root {
	return Root{
		Schema:     Schema,
		APIVersion: APIVersion,
		Versions: map[string]RootLinks{APIVersion: {
			Self:           Link{routes.Manifest},
			Skills:         Link{skills.indexHref()},
			Subagents:      Link{subagents.indexHref()},
			SkillSearch:    Link{skills.searchHref()},
			SubagentSearch: Link{subagents.searchHref()},
		}},
	}
}

// Index returns a collection's index: the pages covering what the caller
// can see.
func (f *Feed) Index(kind catalog.Kind) Index {
	c := collectionOf(kind)
	entries := c.list(f.View, f.Caller)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	ranges := partition(names, f.PageSize)
	pages := make([]PageLink, len(ranges))
	for i, r := range ranges {
		pages[i] = PageLink{Range: r.String(), Href: c.pageHref(r)}
	}
	return Index{Kind: c.indexKind, Links: SelfLinks{Link{c.indexHref()}}, Pages: pages}
}

// Page returns the page of a collection for a range: every entry the
// caller can see whose name is in it, from the current catalog.
func (f *Feed) Page(kind catalog.Kind, r Range) Page {
	c := collectionOf(kind)
	in := r.slice(c.list(f.View, f.Caller))
	items := make([]PageItem, 0, len(in))
	for _, e := range in {
		items = append(items, PageItemOf(kind, e))
	}
	return Page{Kind: c.pageKind, Range: r.String(), Items: items, Links: SelfLinks{Link{c.pageHref(r)}}}
}

// PageItemOf is a live entry of kind as a page lists it.
func PageItemOf(kind catalog.Kind, e *catalog.Entry) PageItem {
	latest := e.LatestVersion()
	return PageItem{
		Name:          e.Name,
		LatestVersion: latest.Label,
		VersionRange:  VersionRange{Min: e.FirstVersion(), Max: latest.Label, Count: e.VersionCount()},
		Href:          collectionOf(kind).identityHref(e.Name),
	}
}

// Identity returns one entry with its versions, newest first; ok is false
// when the caller cannot see an entry of that name.
func (f *Feed) Identity(ctx context.Context, kind catalog.Kind, name string) (doc Identity, ok bool, err error) {
	c := collectionOf(kind)
	e := c.get(f.View, name, f.Caller)
	if e == nil {
		return Identity{}, false, nil
	}
	history, err := f.View.History(ctx, e)
	if err != nil {
		return Identity{}, false, err
	}
	vers := newestFirst(history)
	links := make([]VersionLink, len(vers))
	for i, v := range vers {
		links[i] = VersionLink{
			Version: v.Label, PublishedAt: v.PublishedAt.UTC(), Digest: v.Digest,
			Href: c.versionHref(e.Name, v.Label),
		}
	}
	return Identity{
		Kind: c.itemKind, Name: e.Name, LatestVersion: e.Latest, Versions: links,
		Links: SelfLinks{Link{c.identityHref(e.Name)}},
	}, true, nil
}

// SkillVersion returns one version of a skill; ok is false when the caller
// cannot see the skill or it has no such version.
func (f *Feed) SkillVersion(ctx context.Context, name, label string) (doc SkillVersion, ok bool, err error) {
	e, ver, err := f.version(ctx, skills, name, label)
	if err != nil || ver == nil {
		return SkillVersion{}, false, err
	}
	a := f.artifact(skills, e, ver)
	doc = SkillVersion{Kind: skills.verKind, Artifact: a, Nested: a, Files: ver.Files, Scan: ver.Scan, Provenance: f.provenance(skills, e, ver),
		Links: SelfLinks{Link{skills.versionHref(e.Name, ver.Label)}}}
	if ver.Subagent != "" && f.View.Subagent(ver.Subagent, f.Caller) != nil {
		doc.RoutesToSubagent = &SubagentRoute{Name: ver.Subagent, Href: subagents.identityHref(ver.Subagent)}
	}
	return doc, true, nil
}

// SubagentVersion returns one version of a sub-agent; ok is false when the
// caller cannot see the sub-agent or it has no such version.
func (f *Feed) SubagentVersion(ctx context.Context, name, label string) (doc SubagentVersion, ok bool, err error) {
	e, ver, err := f.version(ctx, subagents, name, label)
	if err != nil || ver == nil {
		return SubagentVersion{}, false, err
	}
	return SubagentVersion{Kind: subagents.verKind, Artifact: f.artifact(subagents, e, ver), Scan: ver.Scan, Provenance: f.provenance(subagents, e, ver),
		Links: SelfLinks{Link{subagents.versionHref(e.Name, ver.Label)}}}, true, nil
}

// version looks up an entry the caller can see and one of its versions;
// a version taken out of service is a *goneError.
func (f *Feed) version(ctx context.Context, c *collection, name, label string) (*catalog.Entry, *catalog.Version, error) {
	e := c.lookup(f.View, name, f.Caller)
	if e == nil {
		return nil, nil, nil
	}
	v, err := f.View.Version(ctx, e, label)
	if err == nil && v != nil && v.Gone != nil {
		return nil, nil, &goneError{v.Gone}
	}
	return e, v, err
}

// lookup is get, or the entry no version of which is in service (whose
// versions' routes answer 410 rather than 404).
func (c *collection) lookup(v *catalog.View, name string, caller audience.Caller) *catalog.Entry {
	if e := c.get(v, name, caller); e != nil {
		return e
	}
	if c == subagents {
		return v.GoneSubagent(name, caller)
	}
	return v.GoneSkill(name, caller)
}

func (f *Feed) artifact(c *collection, e *catalog.Entry, ver *catalog.Version) Artifact {
	typ := ver.Type
	if c == subagents {
		typ = artifact.TypeAgentMD // the only form a sub-agent has
	}
	return Artifact{
		Name: e.Name, Version: ver.Label, Type: typ, Description: description(e, ver),
		URL: f.url(c, e, ver), Digest: ver.Digest,
	}
}

// URL is where version ver of e (an entry of kind) is served for good:
// the entry's external URL verbatim, else its versioned path under
// /api/v1/ on the base origin.
func (f *Feed) URL(kind catalog.Kind, e *catalog.Entry, ver *catalog.Version) string {
	return f.url(collectionOf(kind), e, ver)
}

// url is where a version's bytes are served: the entry's external URL
// verbatim, else the versioned path under /api/v1/ on the base origin.
func (f *Feed) url(c *collection, e *catalog.Entry, ver *catalog.Version) string {
	if e.ExternalURL != "" {
		return e.ExternalURL
	}
	u := url.URL{Scheme: f.Base.Scheme, Host: f.Base.Host}
	return u.String() + c.bytesPath(e.Name, ver)
}

// provenance is the bundle beside a version's bytes, or nil when it has none.
func (f *Feed) provenance(c *collection, e *catalog.Entry, ver *catalog.Version) *Provenance {
	if ver.Bundle == nil || e.ExternalURL != "" {
		return nil
	}
	return &Provenance{Bundle: routes.Bundle(f.url(c, e, ver)), Digest: ver.Bundle.Digest, MediaType: provenance.BundleMediaType}
}

// description is the operator's override, else the version's own.
func description(e *catalog.Entry, ver *catalog.Version) string {
	if e.Description != "" {
		return e.Description
	}
	return ver.Description
}

// newestFirst returns pointers to the versions of a history ordered newest
// first by publish time; equal times keep the reverse of publish order.
func newestFirst(history []catalog.Version) []*catalog.Version {
	out := make([]*catalog.Version, len(history))
	for i := range history {
		out[len(out)-1-i] = &history[i]
	}
	slices.SortStableFunc(out, func(a, b *catalog.Version) int { return b.PublishedAt.Compare(a.PublishedAt) })
	return out
}
