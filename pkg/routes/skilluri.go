package routes

import (
	"net/url"
	"strings"
)

// The skill:// URIs of the MCP feed (the Skills extension's resource
// mapping, skill://<skill-path>/<file-path>, whose last skill-path segment
// is the skill's name).
const (
	// SkillScheme is the scheme of every MCP skill resource.
	SkillScheme = "skill"
	skillPrefix = SkillScheme + "://"
	// listingAuthority ends the authority of a listing's own skills,
	// skill://<listing>.listing/<name>/…: skill names hold no dots, so no
	// top-level skill can take that authority, and the listing's skills
	// never land inside a skill's directory.
	listingAuthority = ".listing"
)

// SkillDir is the URI of a skill's root directory: skill://<name> for a
// top-level skill (listing ""), skill://<listing>.listing/<name> for a
// listing's own skill. A top-level skill a listing includes by name keeps
// its top-level URI.
func SkillDir(listing, name string) string {
	if listing == "" {
		return skillPrefix + name
	}
	return skillPrefix + listing + listingAuthority + "/" + name
}

// SkillURI is the URI of file (a "/"-separated path inside the skill, such
// as "SKILL.md" or "scripts/run.py") in a skill's directory, each segment
// escaped as a URI path segment. An empty file is the directory itself.
func SkillURI(listing, name, file string) string {
	if file == "" {
		return SkillDir(listing, name)
	}
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return SkillDir(listing, name) + "/" + strings.Join(segs, "/")
}

// ParseSkillURI is SkillURI's inverse. ok is false for anything SkillURI
// would not have written: another scheme, an empty or dotted name, empty,
// "." or ".." segments, an escaped "/", or a spelling other than the one
// SkillURI writes (so one resource has one URI).
func ParseSkillURI(uri string) (listing, name, file string, ok bool) {
	rest, found := strings.CutPrefix(uri, skillPrefix)
	if !found {
		return "", "", "", false
	}
	authority, path, _ := strings.Cut(rest, "/")
	if l, own := strings.CutSuffix(authority, listingAuthority); own {
		listing = l
		name, path, _ = strings.Cut(path, "/")
	} else {
		name = authority
	}
	if (listing != "" && !plainSegment(listing)) || !plainSegment(name) {
		return "", "", "", false
	}
	if path != "" {
		segs := strings.Split(path, "/")
		for i, s := range segs {
			dec, err := url.PathUnescape(s)
			if err != nil || dec == "" || dec == "." || dec == ".." || strings.Contains(dec, "/") {
				return "", "", "", false
			}
			segs[i] = dec
		}
		file = strings.Join(segs, "/")
	}
	if SkillURI(listing, name, file) != uri {
		return "", "", "", false
	}
	return listing, name, file, true
}

// plainSegment reports whether s can be a skill or listing name in a skill
// path: non-empty, of the characters names are made of (lowercase letters,
// digits, '-'), so it needs no escaping and holds no dot. Whether such a
// skill exists is the catalog's to say.
func plainSegment(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
