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
//	/.well-known/agent-skills/{listing}/index.json            a listing's index
//	/.well-known/agent-skills/{listing}/*                     a listing's artifacts (its config entries may live here)
//	/.well-known/*                                            nothing
//	/listings/{listing}/.well-known/agent-skills/index.json   a listing's index again, for clients that take a path prefix
//	/listings/*                                               nothing (raw bucket keys)
//	/manifest.json, /skills/v1, /skills/v1/*, /subagents/v1/*  native feed
//	/subagents/*                                              nothing
//	/api/v1/skills/check-updates, /api/v1/subagents/check-updates   native feed, POST
//	/api/v1/*                                                 native feed (its /api/v1/ API)
//	/api/*                                                    nothing
//	/mcp                                                      MCP, POST
//	/mcp/*, /catalog/*, /blobs/*, /files/*                    nothing
//	/*                                                        top-level artifacts (dropped keys, config URLs)
//
// And the MCP feed's resources (SkillURI):
//
//	skill://<name>/<file>                  a top-level skill's file
//	skill://<listing>.listing/<name>/<file>  a file of a listing's own skill
package routes

// The RFC discovery feed.
const (
	// wellKnown is where the RFC feed lives, under an origin root or under
	// a listing's scope.
	wellKnown = "/.well-known/agent-skills/"
	indexFile = "index.json"
	// RFCIndex is the top-level RFC index.
	RFCIndex = wellKnown + indexFile
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
)

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
