package server

import (
	"strings"

	"github.com/skilldrop/skilldrop/pkg/routes"
)

// skillPrefix starts every URI of the MCP feed; routes.SkillDir and
// routes.SkillURI write them (one spelling per resource, so lookups are
// exact matches and "..", "%2e" or an encoded slash name nothing served).
var skillPrefix = routes.SkillScheme + "://"

// listingDir is the directory of a listing's own skills, the parent of
// their directories: skill://<listing>.listing.
func listingDir(listing string) string { return strings.TrimSuffix(routes.SkillDir(listing, ""), "/") }
