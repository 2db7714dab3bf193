package routes

import (
	"fmt"
	"strings"
)

// Surface is what answers a route.
type Surface int

// The surfaces. The zero value answers nothing, so a route nobody wired
// is a 404, never a guess.
const (
	SurfaceNone        Surface = iota // 404: a namespace that is never served
	SurfaceIndex                      // an RFC index: the top level, or a listing's (Match.Listing)
	SurfaceNative                     // the native feed and its /api/v1/ API
	SurfaceMCP                        // the MCP endpoint
	SurfaceArtifact                   // a published artifact, found by its path
	SurfaceCatalog                    // the web catalog's HTML pages (and their assets)
	SurfaceRoot                       // the origin root and /catalog: browsers are sent to the web catalog
	SurfaceRevocations                // the revoked and withdrawn versions
	SurfaceHealth                     // the health check
	SurfaceCapability                 // a capability URL: /k/<key>/ and a path of the RFC feed, answered for that key
	SurfaceProvenance                 // the signed AI Catalog, the DID document, the signing key
)

// Route is one row of the URL space.
type Route struct {
	// Pattern is the path the route answers: "/"-separated segments, where
	// "{listing}" stands for one segment naming a listing and a final "*"
	// for anything below; without "*" the path must be equal.
	Pattern string
	// Surface is what answers it.
	Surface Surface
	// Post marks the routes answered to POST; all others answer GET and
	// HEAD. A web catalog form's route answers GET and HEAD too (the form)
	// and POST (its submission). Every route answers OPTIONS (CORS
	// preflight), except the web catalog's, which take no cross-origin
	// requests.
	Post bool
	// What names the route for people: a config URL that falls here
	// "collides with" it.
	What string
	// Bundles marks the routes whose paths ending in BundleSuffix are the
	// bundles of the artifacts at the paths without it.
	Bundles bool
}

// listingParam is the placeholder of a listing's name in a pattern.
const listingParam = "{listing}"

// table is the URL space. Order matters: the first route that matches a
// path answers it.
var table = []Route{
	{Pattern: RFCIndex, Surface: SurfaceIndex, What: "the RFC index"},
	{Pattern: Revocations, Surface: SurfaceRevocations, What: "the revocations list"},
	{Pattern: ListingIndex(listingParam), Surface: SurfaceIndex, What: "the listing's index"},
	{Pattern: ListingPrefix(listingParam) + "*", Surface: SurfaceArtifact, What: "a listing's prefix (only the listing's own entries live there)", Bundles: true},
	{Pattern: AICatalog, Surface: SurfaceProvenance, What: "the AI Catalog"},
	{Pattern: DIDDocument, Surface: SurfaceProvenance, What: "the DID document"},
	{Pattern: SigningKey, Surface: SurfaceProvenance, What: "the signing key"},
	{Pattern: "/.well-known/*", Surface: SurfaceNone, What: "/.well-known/ (only a listing's own entries live under its prefix)"},
	{Pattern: ListingScopedIndex(listingParam), Surface: SurfaceIndex, What: "a listing's index"},
	{Pattern: listingsScope + "*", Surface: SurfaceNone, What: "the listings' own paths (and raw bucket keys, which are never served)"},
	{Pattern: Manifest, Surface: SurfaceNative, What: "the native manifest"},
	{Pattern: SkillFeed, Surface: SurfaceNative, What: "the native skill feed"},
	{Pattern: SkillFeed + "/*", Surface: SurfaceNative, What: "the native skill feed"},
	{Pattern: SubagentFeed + "/*", Surface: SurfaceNative, What: "the native sub-agent feed"},
	{Pattern: "/subagents/*", Surface: SurfaceNone, What: "the native sub-agent feed"},
	{Pattern: SkillCheckUpdates, Surface: SurfaceNative, Post: true, What: "the check-updates route"},
	{Pattern: SubagentCheckUpdates, Surface: SurfaceNative, Post: true, What: "the check-updates route"},
	{Pattern: API + "/*", Surface: SurfaceNative, What: "the /api/ routes", Bundles: true},
	{Pattern: "/api/*", Surface: SurfaceNone, What: "the /api/ routes"},
	{Pattern: MCP, Surface: SurfaceMCP, Post: true, What: "the MCP endpoint"},
	{Pattern: MCP + "/*", Surface: SurfaceNone, What: "the MCP endpoint"},
	{Pattern: CatalogSignIn, Surface: SurfaceCatalog, Post: true, What: "the web catalog's sign-in form"},
	{Pattern: CatalogSignOut, Surface: SurfaceCatalog, Post: true, What: "the web catalog's sign-out form"},
	{Pattern: strings.TrimSuffix(Catalog, "/"), Surface: SurfaceRoot, What: "the web catalog"},
	{Pattern: Catalog + "*", Surface: SurfaceCatalog, What: "the web catalog"},
	{Pattern: "/blobs/*", Surface: SurfaceNone, What: "internal storage"},
	{Pattern: "/files/*", Surface: SurfaceNone, What: "raw bucket keys, which are never served"},
	{Pattern: "/", Surface: SurfaceRoot, What: "the origin root"},
	{Pattern: Healthz, Surface: SurfaceHealth, What: "the health check"},
	{Pattern: CapabilityPrefix + "*", Surface: SurfaceCapability, What: "the capability URLs (/k/<key>/…)"},
	{Pattern: "/*", Surface: SurfaceArtifact, What: "the top-level artifacts", Bundles: true},
}

// All returns a copy of the table, in match order.
func All() []Route { return append([]Route(nil), table...) }

// Match is the route a path falls in.
type Match struct {
	*Route
	// Listing is the segment that stood for {listing}, if the pattern has one.
	Listing string
	// Bundle is set for the bundle of an artifact (a path of a Bundles
	// route ending in BundleSuffix); Artifact is then the artifact's path.
	Bundle   bool
	Artifact string
}

// Lookup returns the route of a decoded, origin-root-absolute path. Every
// path that starts with "/" has one (the last row takes the rest).
func Lookup(path string) Match {
	for i := range table {
		if listing, ok := table[i].match(path); ok {
			m := Match{Route: &table[i], Listing: listing}
			if art, ok := strings.CutSuffix(path, BundleSuffix); ok && m.Bundles && art != "" && !strings.HasSuffix(art, "/") {
				m.Bundle, m.Artifact = true, art
			}
			return m
		}
	}
	return Match{Route: &none}
}

// none answers what no row matches: only paths without a leading "/".
var none = Route{Pattern: "", Surface: SurfaceNone, What: "no route"}

// match reports whether path matches the pattern, and the listing segment.
func (r *Route) match(path string) (listing string, ok bool) {
	pat, rest := r.Pattern, path
	if before, after, found := strings.Cut(pat, listingParam); found {
		if rest, ok = strings.CutPrefix(rest, before); !ok {
			return "", false
		}
		end := strings.IndexByte(rest, '/')
		if end <= 0 { // the placeholder is one non-empty segment, followed by more
			return "", false
		}
		listing, rest, pat = rest[:end], rest[end:], after
	}
	if prefix, below := strings.CutSuffix(pat, "*"); below {
		return listing, strings.HasPrefix(rest, prefix)
	}
	return listing, rest == pat
}

// Reserved says which of the service's routes a path a config entry would
// be served at collides with, or "" when config may put an artifact there:
// the top-level artifact area for top-level entries (listing ""), a
// listing's own prefix for that listing's entries.
func Reserved(path, listing string) string {
	m := Lookup(path)
	if m.Surface != SurfaceArtifact {
		return m.What
	}
	if m.Bundle {
		return "the artifacts' bundles (a path ending in " + BundleSuffix + ")"
	}
	switch m.Listing {
	case listing:
		return ""
	case "":
		return "the top-level artifacts (a listing's entries live under its prefix)"
	default:
		return fmt.Sprintf("the prefix of listing %q (only its own entries live there)", m.Listing)
	}
}

// Example is a path the route answers: the pattern with listing for
// {listing} and below for a final "*". The tests of every package that
// reads the table walk it with Example.
func (r *Route) Example(listing, below string) string {
	p := strings.Replace(r.Pattern, listingParam, listing, 1)
	if prefix, ok := strings.CutSuffix(p, "*"); ok {
		return prefix + below
	}
	return p
}
