// Package routes is skilldrop's URL space, written out once: every path the
// service answers and what answers it, the areas where published artifacts
// live, the namespaces that are never served, and the skill:// URIs of the
// MCP feed. The router dispatches from Lookup, the feeds build their links
// from the paths here, and agent-skills.yaml's URL check asks Reserved, so a
// route added to the table is reserved against config entries at once.
//
// The table, first match wins ({listing} is one path segment; * is anything
// below):
//
//	/.well-known/agent-skills/index.json                      RFC index
//	/.well-known/agent-skills/revocations.json                the versions taken out of service
//	/.well-known/agent-skills/{listing}/index.json            a listing's index
//	/.well-known/agent-skills/{listing}/*                     a listing's artifacts (its config entries may live here)
//	/.well-known/ai-catalog.json                              the signed AI Catalog
//	/.well-known/did.json                                     the signing keys as a did:web document
//	/.well-known/skilldrop/signing-key.pem                    the current signing key
//	/.well-known/*                                            nothing
//	/listings/{listing}/.well-known/agent-skills/index.json   a listing's index again, for clients that take a path prefix
//	/listings/*                                               nothing (raw bucket keys)
//	/manifest.json, /skills/v1, /skills/v1/*, /subagents/v1/*  native feed
//	/subagents/*                                              nothing
//	/api/v1/skills/check-updates, /api/v1/subagents/check-updates   native feed, POST
//	/api/v1/*                                                 native feed (its /api/v1/ API)
//	/api/*                                                    nothing
//	/mcp                                                      MCP, POST
//	/mcp/*, /blobs/*, /files/*                                nothing
//	/catalog/sign-in, /catalog/sign-out                       web catalog forms, GET and POST
//	/catalog/*                                                web catalog pages (HTML)
//	/, /catalog                                               the origin root: a browser is sent to /catalog/
//	/healthz                                                  the health check
//	/k/*                                                      capability URLs: /k/<key> then an RFC feed path
//	/*                                                        top-level artifacts (dropped keys, config URLs)
//
// Beside every artifact path the service answers (the top-level and listing
// areas, and the versioned bytes under /api/v1/), the same path followed by
// BundleSuffix is the artifact's Sigstore bundle; config entries may not
// take such a path.
//
// And the MCP feed's resources (SkillURI):
//
//	skill://<name>/<file>                  a top-level skill's file
//	skill://<listing>.listing/<name>/<file>  a file of a listing's own skill
package routes

import (
	"net/url"
	"strings"
)

// The RFC discovery feed.
const (
	// wellKnown is where the RFC feed lives, under an origin root or under
	// a listing's scope.
	wellKnown = "/.well-known/agent-skills/"
	indexFile = "index.json"
	// RFCIndex is the top-level RFC index.
	RFCIndex = wellKnown + indexFile
	// Revocations lists the versions taken out of service, for clients
	// that check before they install.
	Revocations = wellKnown + "revocations.json"
	// listingsScope is the prefix of ListingScope.
	listingsScope = "/listings/"
)

// The native feed, its API and MCP.
const (
	// Manifest is the native feed's root document.
	Manifest = "/manifest.json"
	// NativeVersion is the native feed's one API version: a path segment of
	// every native route, and the manifest's apiVersion.
	NativeVersion = "v1"
	// SkillFeed and SubagentFeed are the roots of the native collection
	// trees (SkillFeed + "/index.json", …/pages/…, …/<name>/…).
	SkillFeed    = "/skills/" + NativeVersion
	SubagentFeed = "/subagents/" + NativeVersion
	// API is the root of the /api/v1/ JSON API.
	API = "/api/" + NativeVersion
	// SkillAPI and SubagentAPI are the collections' search routes; one item
	// and its versions are below them.
	SkillAPI    = API + "/skills"
	SubagentAPI = API + "/subagents"
	// CheckUpdates is the last segment of the check-updates routes, which
	// is why no skill or sub-agent may take it as a name.
	CheckUpdates         = "check-updates"
	SkillCheckUpdates    = SkillAPI + "/" + CheckUpdates
	SubagentCheckUpdates = SubagentAPI + "/" + CheckUpdates
	// Latest stands for the newest version where a version label goes
	// (SkillAPI + "/<name>/latest"), so no version may take it as a label.
	Latest = "latest"
	// MCP is the MCP endpoint (Streamable HTTP).
	MCP = "/mcp"
	// Healthz is the health check: whether the feeds can be answered.
	Healthz = "/healthz"
)

// The web catalog: HTML pages for people, below Catalog.
const (
	// Catalog is the web catalog's list of every visible skill and
	// sub-agent (with its search and filters in the query string).
	Catalog = "/catalog/"
	// CatalogSignIn takes an API key (GET: the form, POST: its submission)
	// and CatalogSignOut ends the session (POST).
	CatalogSignIn  = Catalog + "sign-in"
	CatalogSignOut = Catalog + "sign-out"
	// CatalogAssets holds the pages' stylesheet and script, embedded in the
	// binary.
	CatalogAssets = Catalog + "assets/"
	// catalogSkills, catalogSubagents and catalogListings are the
	// collections' pages below Catalog.
	catalogSkills    = Catalog + "skills/"
	catalogSubagents = Catalog + "subagents/"
	catalogListings  = Catalog + "listings/"
)

// CatalogSkill is a skill's page: /catalog/skills/<name> for a top-level
// skill, /catalog/listings/<listing>/skills/<name> for a listing's own.
func CatalogSkill(listing, name string) string {
	if listing == "" {
		return catalogSkills + name
	}
	return CatalogListing(listing) + "skills/" + name
}

// CatalogSubagent is a sub-agent's page, /catalog/subagents/<name>.
func CatalogSubagent(name string) string { return catalogSubagents + name }

// CatalogListing is a listing's page, /catalog/listings/<listing>/.
func CatalogListing(listing string) string { return catalogListings + listing + "/" }

// CatalogPage is what a path below Catalog names.
type CatalogPage struct {
	// Kind is one of the CatalogPage kinds; CatalogUnknown for a path
	// that names no page.
	Kind CatalogPageKind
	// Listing and Name are the path's listing and entry name, as spelled
	// (the caller checks they exist and may be seen).
	Listing, Name string
}

// CatalogPageKind tells the web catalog's pages apart.
type CatalogPageKind int

// The kinds of web catalog page.
const (
	CatalogUnknown CatalogPageKind = iota
	CatalogList
	CatalogSkillPage
	CatalogSubagentPage
	CatalogListingPage
	CatalogSignInPage
	CatalogSignOutPage
	CatalogAsset // Name is the asset's file name
	// CatalogListings is /catalog/listings/, the parent of the listings'
	// pages: the list, whose filter names the visible listings, answers it.
	CatalogListings
	// CatalogListingNoSlash is /catalog/listings/<listing>, a listing's
	// page without its slash: answered by a redirect to the page, whatever
	// the listing (so it says nothing of which exist).
	CatalogListingNoSlash
)

// ParseCatalog says which web catalog page an origin-root-absolute path
// names: the inverse of the Catalog* paths above, and nothing else.
func ParseCatalog(path string) CatalogPage {
	rest, ok := strings.CutPrefix(path, Catalog)
	if !ok {
		return CatalogPage{}
	}
	segs := strings.Split(rest, "/")
	one := func(s string) bool { return s != "" }
	switch {
	case rest == "":
		return CatalogPage{Kind: CatalogList}
	case path == CatalogSignIn:
		return CatalogPage{Kind: CatalogSignInPage}
	case path == CatalogSignOut:
		return CatalogPage{Kind: CatalogSignOutPage}
	case path == catalogListings:
		return CatalogPage{Kind: CatalogListings}
	case len(segs) == 2 && segs[0]+"/" == strings.TrimPrefix(CatalogAssets, Catalog) && one(segs[1]):
		return CatalogPage{Kind: CatalogAsset, Name: segs[1]}
	case len(segs) == 2 && segs[0]+"/" == strings.TrimPrefix(catalogSkills, Catalog) && one(segs[1]):
		return CatalogPage{Kind: CatalogSkillPage, Name: segs[1]}
	case len(segs) == 2 && segs[0]+"/" == strings.TrimPrefix(catalogSubagents, Catalog) && one(segs[1]):
		return CatalogPage{Kind: CatalogSubagentPage, Name: segs[1]}
	case len(segs) == 2 && segs[0]+"/" == strings.TrimPrefix(catalogListings, Catalog) && one(segs[1]):
		return CatalogPage{Kind: CatalogListingNoSlash, Listing: segs[1]}
	case len(segs) == 3 && segs[0]+"/" == strings.TrimPrefix(catalogListings, Catalog) && one(segs[1]) && segs[2] == "":
		return CatalogPage{Kind: CatalogListingPage, Listing: segs[1]}
	case len(segs) == 4 && segs[0]+"/" == strings.TrimPrefix(catalogListings, Catalog) && one(segs[1]) &&
		segs[2] == "skills" && one(segs[3]):
		return CatalogPage{Kind: CatalogSkillPage, Listing: segs[1], Name: segs[3]}
	}
	return CatalogPage{}
}

// CapabilityPrefix starts a capability URL: /k/<key>/ followed by the path
// of the RFC index, a listing's index or an artifact, answered as if the
// key were presented (for clients that send no credentials).
const CapabilityPrefix = "/k/"

// SplitCapability cuts a capability URL's path into its key and the path
// it names ("/k/<key>/x" is "<key>" and "/x"); ok is false for any other
// path. rest is "" for a path that ends at the key.
func SplitCapability(path string) (key, rest string, ok bool) {
	after, ok := strings.CutPrefix(path, CapabilityPrefix)
	if !ok {
		return "", "", false
	}
	key, rest, found := strings.Cut(after, "/")
	if found {
		rest = "/" + rest
	}
	return key, rest, true
}

// Capability is the path of rest under a capability URL's key.
func Capability(key, rest string) string { return CapabilityPrefix + key + rest }

// RedactCapability returns path as logs may write it (name is the key's
// id, or "…" when it is not known): a capability URL's key is replaced by
// "[name]", and so is, by "[…]", every segment of any path after a segment
// that reads "k" in any case, any number of percent-decodings or with "\"
// for "/" ("//k/<key>/", "/K/<key>/", "/x/../k/<key>/", "/%6b/<key>/"), so
// that a key sent in a malformed URL, which no route answers, is not
// logged either. A segment that only decodes to hold such a "k" is
// replaced as a whole.
func RedactCapability(path, name string) string {
	if name == "" {
		name = "…"
	}
	// "/k//<key>/" and "/k/./<key>/" split with no key, their key in rest.
	if key, rest, ok := SplitCapability(path); ok && key != "" && key != "." && key != ".." {
		return CapabilityPrefix + "[" + name + "]" + redactAfterK(rest)
	}
	return redactAfterK(path)
}

// redactAfterK replaces every segment of path after the first that is, or
// decodes to hold, a "k" segment (capabilityMark) by "[…]", and that one
// too unless it is exactly such a segment. Empty and dot segments stay,
// so the shape of the path is still seen.
func redactAfterK(path string) string {
	segs := strings.Split(path, "/")
	marked := false
	for i, seg := range segs {
		switch {
		case marked:
			if seg != "" && seg != "." && seg != ".." {
				segs[i] = "[…]"
			}
		case capabilityMark(seg):
			marked = true
		case holdsCapabilityMark(seg):
			marked, segs[i] = true, "[…]"
		}
	}
	return strings.Join(segs, "/")
}

// capabilityMark reports whether seg reads as the "k" of CapabilityPrefix
// once decoded: "k", "K", "%6b", "%256B", ….
func capabilityMark(seg string) bool {
	return strings.EqualFold(strings.TrimSpace(decodeAll(seg)), "k")
}

// holdsCapabilityMark reports whether seg, decoded, holds a "k" segment of
// its own ("k%2f<key>" and the like).
func holdsCapabilityMark(seg string) bool {
	d := strings.ReplaceAll(decodeAll(seg), "\\", "/")
	if !strings.Contains(d, "/") {
		return false
	}
	for _, s := range strings.Split(d, "/") {
		if capabilityMark(s) {
			return true
		}
	}
	return false
}

// decodeAll percent-decodes s until it no longer changes (a few times at
// most), stopping at a form that does not decode.
func decodeAll(s string) string {
	for range 4 {
		d, err := url.PathUnescape(s)
		if err != nil || d == s {
			return s
		}
		s = d
	}
	return s
}

// Provenance: what the operator's signing key signed, and the key.
const (
	// AICatalog is the signed AI Catalog (the well-known URI of its format).
	AICatalog = "/.well-known/ai-catalog.json"
	// DIDDocument is the origin's did:web document: the signing keys.
	DIDDocument = "/.well-known/did.json"
	// SigningKey is the current signing key as a PEM, for cosign's --key.
	SigningKey = "/.well-known/skilldrop/signing-key.pem"
	// BundleSuffix follows an artifact's path to name its Sigstore bundle.
	BundleSuffix = ".sigstore.json"
)

// Bundle is the path of the bundle of the artifact served at path.
func Bundle(path string) string { return path + BundleSuffix }

// ReservedNames are the skill and sub-agent names that would land on a
// route's own segment (a skill "v1" dropped at skills/v1/SKILL.md would be
// served inside SkillFeed; one named "check-updates" would be shadowed by
// SkillCheckUpdates), so no skill or sub-agent may take them.
var ReservedNames = []string{NativeVersion, CheckUpdates, Latest}

// AllToken is the page token of a feed's page holding every entry.
const AllToken = "all"

// AllPage is the path of a feed's page of every entry (feed is SkillFeed or
// SubagentFeed): the one native document that grows with the catalog.
func AllPage(feed string) string { return feed + "/pages/" + AllToken + ".json" }

// ListingPrefix is where a listing's index and artifacts are served:
// "/.well-known/agent-skills/<listing>/". A listing's config URLs are
// relative to it.
func ListingPrefix(listing string) string { return wellKnown + listing + "/" }

// ListingIndex is a listing's index at its seed-style path,
// "/.well-known/agent-skills/<listing>/index.json".
func ListingIndex(listing string) string { return ListingPrefix(listing) + indexFile }

// ListingScope is the path a client that takes an origin plus a path prefix
// is given for a listing ("skills add <origin>/listings/<listing>"): it
// finds the listing's index at ListingScope + RFCIndex.
func ListingScope(listing string) string { return listingsScope + listing }

// ListingScopedIndex is the listing's index below its scope,
// "/listings/<listing>/.well-known/agent-skills/index.json": the same
// document as ListingIndex.
func ListingScopedIndex(listing string) string { return ListingScope(listing) + RFCIndex }
