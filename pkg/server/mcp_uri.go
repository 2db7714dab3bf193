package server

import (
	"net/url"
	"strings"
)

// The skill:// URI space of the MCP feed (SEP-2640's Resource Mapping).
const (
	skillScheme = "skill://"
	// listingAuthority ends the authority of a listing's own skills: skill
	// names have no dots, so no skill's directory can take it.
	listingAuthority = ".listing"
)

// skillRoot is the skill:// directory of a skill, written without a
// trailing slash: skill://<name> for a top-level skill,
// skill://<listing>.listing/<name> for a skill published only in a listing.
// A top-level skill that a listing includes by name keeps its top-level
// root. Names are a-z, 0-9 and '-', so nothing in them needs escaping.
func skillRoot(listing, name string) string {
	if listing == "" {
		return skillScheme + name
	}
	return listingRoot(listing) + "/" + name
}

// listingRoot is the directory holding a listing's own skills.
func listingRoot(listing string) string { return skillScheme + listing + listingAuthority }

// fileURI is the URI of the file at path (slash-separated, as the archive
// validator cleaned it) within the skill at root, each path element
// percent-encoded where a URI path segment needs it (space, '#', '?', '%',
// non-ASCII), so that every file has exactly one spelling and a lookup is
// an exact match: "..", "%2e" or an encoded slash spell nothing we serve.
func fileURI(root, path string) string {
	var b strings.Builder
	b.WriteString(root)
	for elem := range strings.SplitSeq(path, "/") {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(elem))
	}
	return b.String()
}
