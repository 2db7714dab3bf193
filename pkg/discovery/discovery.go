// Package discovery renders the Agent Skills Discovery RFC v0.2.0 index:
// the top-level document and the same shape for each listing (their paths
// are pkg/routes': routes.RFCIndex, routes.ListingIndex and
// routes.ListingScopedIndex). It is pure: it builds values from a compiled
// *catalog.View, whose accessors already filter by visibility and
// withdrawal, and knows nothing about HTTP.
package discovery

import (
	"net/url"
	"sort"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// SchemaURL is the $schema every index carries, byte for byte.
const SchemaURL = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// Index is the RFC discovery document. Skills is never nil, so an empty
// index encodes as "skills": [] rather than null.
type Index struct {
	Schema string  `json:"$schema"`
	Skills []Skill `json:"skills"`
}

// Skill is one index entry. URL is absolute; Version is the RFC's allowed
// extension field carrying the label of the version the digest pins.
type Skill struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
	Version     string `json:"version"`
}

// TopLevel is the index of the top-level skills the caller may see. base is
// the public origin (scheme and host; any path is ignored) that re-hosted
// URLs are made absolute against.
func TopLevel(v *catalog.View, c audience.Caller, base *url.URL) Index {
	return Build(v.Skills(c), base)
}

// Listing is the index of a listing. ok is false when the listing is
// unknown or holds nothing the caller may see (catalog.View.Listing), so a
// listing of hidden skills is indistinguishable from a missing one.
func Listing(v *catalog.View, name string, c audience.Caller, base *url.URL) (idx Index, ok bool) {
	members, ok := v.Listing(name, c)
	if !ok {
		return Index{}, false
	}
	return Build(members, base), true
}

// Build renders entries, sorted by name. An entry without a latest version,
// or with neither a served path nor an external URL, has nothing a client
// could fetch and is left out. Callers pass only entries the caller may
// see: Build does not filter by visibility.
func Build(entries []*catalog.Entry, base *url.URL) Index {
	return BuildAt(entries, Origin(base))
}

// BuildAt is Build with the prefix of every re-hosted URL given as it is
// (an origin, Origin's form, optionally followed by a path such as a
// capability URL's /k/<key>).
func BuildAt(entries []*catalog.Entry, origin string) Index {
	idx := Index{Schema: SchemaURL, Skills: make([]Skill, 0, len(entries))}
	for _, e := range entries {
		if s, ok := Item(e, origin); ok {
			idx.Skills = append(idx.Skills, s)
		}
	}
	sort.SliceStable(idx.Skills, func(i, j int) bool { return idx.Skills[i].Name < idx.Skills[j].Name })
	return idx
}

// Item is an entry's item in an index for origin (Origin's form); ok is
// false for an entry Build leaves out.
func Item(e *catalog.Entry, origin string) (Skill, bool) {
	ver := e.LatestVersion()
	if ver == nil {
		return Skill{}, false
	}
	u := ArtifactURL(e, origin)
	if u == "" {
		return Skill{}, false
	}
	return Skill{
		Name:        e.Name,
		Type:        string(ver.Type),
		Description: e.EffectiveDescription(),
		URL:         u,
		Digest:      ver.Digest.String(),
		Version:     ver.Label,
	}, true
}

// Origin formats base as "scheme://host" with no trailing slash: the prefix
// ArtifactURL puts before an origin-root-absolute path.
func Origin(base *url.URL) string {
	if base == nil {
		return ""
	}
	return (&url.URL{Scheme: base.Scheme, Host: base.Host}).String()
}

// ArtifactURL is the absolute URL an entry's latest bytes are fetched from:
// its ExternalURL verbatim, else origin followed by its path, escaped as a
// URL path. It is "" when the entry has neither.
func ArtifactURL(e *catalog.Entry, origin string) string {
	if e.ExternalURL != "" {
		return e.ExternalURL
	}
	if e.Path == "" {
		return ""
	}
	return origin + (&url.URL{Path: e.Path}).EscapedPath()
}
