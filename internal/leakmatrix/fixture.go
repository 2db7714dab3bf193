// Package leakmatrix is the audience leak matrix that the serve tier
// (cmd/skilldrop) and the end-to-end tier (the api binary under
// aws-lambda-rie) both run: a bucket with three audiences and overlapping
// listings, a key store of named keys, every route and method of every
// surface asked by every kind of caller, and what each caller must get.
// It is test support only.
package leakmatrix

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/apikey"
)

// entry is one skill or sub-agent of the fixture and who may see it.
type entry struct {
	name    string
	key     string // the bucket key
	listing string // a listing's own skill
	agent   bool
	auth    bool     // authenticated
	aud     []string // its audiences (what the config or its listing says)
}

// The fixture: top-level skills of every visibility, sub-agents, a listing
// with no audiences that includes restricted skills by name and holds one
// of its own, and a listing restricted to two audiences with its own
// skills (one inheriting them, one narrower) and a top-level skill of a
// third audience included by name.
var entries = []entry{
	{name: "open-notes", key: "skills/open-notes.md"},
	{name: "team-wiki", key: "skills/team-wiki.md", auth: true},
	{name: "alpha-deploy", key: "skills/alpha-deploy.md", auth: true, aud: []string{"partner-a"}},
	{name: "shared-runbook", key: "skills/shared-runbook.md", auth: true, aud: []string{"partner-a", "partner-b"}},
	{name: "gamma-report", key: "skills/gamma-report.md", auth: true, aud: []string{"partner-c"}},
	{name: "partners-c-guide", key: "listings/partners/skills/partners-c-guide.md", listing: "partners", auth: true, aud: []string{"partner-c"}},
	{name: "alpha-playbook", key: "listings/alpha/skills/alpha-playbook.md", listing: "alpha", auth: true, aud: []string{"partner-a", "partner-b"}},
	{name: "alpha-beta-only", key: "listings/alpha/skills/alpha-beta-only.md", listing: "alpha", auth: true, aud: []string{"partner-b"}},
	{name: "open-agent", key: "subagents/open-agent.md", agent: true},
	{name: "beta-agent", key: "subagents/beta-agent.md", agent: true, auth: true, aud: []string{"partner-b"}},
}

// listings: what each includes by name, and its audiences.
var listings = map[string]struct {
	refs []string
	aud  []string
}{
	"partners": {refs: []string{"alpha-deploy", "open-notes", "shared-runbook"}},
	"alpha":    {refs: []string{"gamma-report"}, aud: []string{"partner-a", "partner-b"}},
}

// Ghost is a name no entry has: hidden entries must answer as it does.
const Ghost = "ghost-skill"

// config is the fixture's agent-skills.yaml.
const config = `version: 1
skills:
  - name: team-wiki
    visibility: authenticated
  - name: alpha-deploy
    audiences: [partner-a]
  - name: shared-runbook
    visibility: authenticated
    audiences: [partner-b, partner-a]
  - name: gamma-report
    audiences: [partner-c]
subagents:
  - name: beta-agent
    audiences: [partner-b]
listings:
  partners:
    skills:
      - name: open-notes
      - name: alpha-deploy
      - name: shared-runbook
      - name: partners-c-guide
        audiences: [partner-c]
  alpha:
    audiences: [partner-a, partner-b]
    skills:
      - name: gamma-report
      - name: alpha-beta-only
        audiences: [partner-b]
`

// Version is every entry's version label.
const Version = "1.0"

// Files is the fixture bucket: key → bytes.
func Files() map[string][]byte {
	files := map[string][]byte{"agent-skills.yaml": []byte(config)}
	for _, e := range entries {
		doc := skilltest.SkillMD(e.name, Version, "The "+e.name+" skill, for the leak matrix.")
		if e.agent {
			doc = fmt.Sprintf("---\nname: %s\ndescription: The %s sub-agent, for the leak matrix.\nmetadata:\n  version: %q\n---\nAgent body.\n", e.name, e.name, Version)
		}
		files[e.key] = []byte(doc)
	}
	return files
}

// Caller is one kind of caller of the matrix.
type Caller struct {
	Name string
	// Key is presented as a Bearer key; with InPath, in a capability URL
	// instead. "" is anonymous. Twin is another key of the same audiences,
	// which a fresh render for the caller's set is asked with.
	Key, Twin string
	InPath    bool
	// Refused callers get 401 on every request.
	Refused bool
	// id and twinID are the key ids of Key and Twin, which the web
	// catalog's pages name ("" for no key).
	id, twinID string
	// all, auth and aud say what the caller may see.
	all, auth bool
	aud       []string
}

// key is one named key of the store.
type key struct {
	id, secret string
	aud        []string
	path       bool
	expires    string
}

// keys are the store's keys: the expired one expired an hour ago, key-a
// expires in ten days, the others never.
func keys() []key {
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	future := time.Now().Add(240 * time.Hour).UTC().Format(time.RFC3339)
	var out []key
	for _, k := range []key{
		{id: "key-a", aud: []string{"partner-a"}, path: true, expires: future},
		{id: "key-b", aud: []string{"partner-b"}},
		{id: "key-c", aud: []string{"partner-c"}},
		{id: "key-ac", aud: []string{"partner-c", "partner-a"}},
		{id: "key-none"},
		{id: "key-all", aud: []string{"*"}},
		{id: "key-path-b", aud: []string{"partner-b"}, path: true},
	} {
		k.secret = "sk-" + k.id + "-7d3f91"
		twin := k
		twin.id, twin.secret = k.id+"-twin", "sk-"+k.id+"-twin-5e2a08"
		out = append(out, k, twin)
	}
	return append(out,
		key{id: "key-expired", secret: "sk-key-expired-c81b", aud: []string{"partner-a"}, path: true, expires: past},
		key{id: "key-revoked", secret: "sk-key-revoked-94aa", aud: []string{"partner-a"}},
	)
}

// Legacy is a key configured as a bare hash (SKILLDROP_API_KEY_SHA256):
// every audience. LegacyTwin is its twin.
const (
	Legacy     = "sk-legacy-bare-hash-3c0d"
	LegacyTwin = "sk-legacy-bare-hash-twin-9b71"
	// Revoked is in the store until the test revokes it.
	Revoked = "sk-key-revoked-94aa"
)

// Store is the key store document; without revoked, the revoked key is
// left out (as an operator revokes one).
func Store(revoked bool) string {
	type doc struct {
		ID        string   `json:"id"`
		SHA256    string   `json:"sha256"`
		Audiences []string `json:"audiences,omitempty"`
		Expires   string   `json:"expires,omitempty"`
		Path      bool     `json:"path,omitempty"`
	}
	var out []doc
	for _, k := range keys() {
		if k.id == "key-revoked" && !revoked {
			continue
		}
		out = append(out, doc{ID: k.id, SHA256: apikey.Hash(k.secret), Audiences: k.aud, Expires: k.expires, Path: k.path})
	}
	b, _ := json.Marshal(map[string]any{"keys": out})
	return string(b)
}

// LegacyHashes is the comma-separated store of the bare-hash keys.
func LegacyHashes() string { return apikey.Hash(Legacy) + "," + apikey.Hash(LegacyTwin) }

// Callers are the matrix's callers: anonymous, each key (one audience,
// two, none, every audience, a bare hash), a path key, a header key in a
// path, an expired key (in a header and in a path) and a revoked one.
func Callers() []Caller {
	byID := map[string]key{}
	for _, k := range keys() {
		byID[k.id] = k
	}
	c := func(id string, inPath bool) Caller {
		k := byID[id]
		out := Caller{Name: id, Key: k.secret, Twin: byID[id+"-twin"].secret, InPath: inPath, auth: true, id: id, twinID: id + "-twin"}
		if inPath {
			out.Name += " in a path"
		}
		if len(k.aud) == 1 && k.aud[0] == "*" {
			out.all = true
		} else {
			out.aud = k.aud
		}
		return out
	}
	refused := func(name, secret string, inPath bool) Caller {
		return Caller{Name: name, Key: secret, Twin: secret, InPath: inPath, Refused: true}
	}
	return []Caller{
		{Name: "anonymous"},
		c("key-a", false), c("key-b", false), c("key-c", false), c("key-ac", false), c("key-none", false), c("key-all", false),
		{Name: "bare hash", Key: Legacy, Twin: LegacyTwin, auth: true, all: true, id: apikey.KeyID(Legacy), twinID: apikey.KeyID(LegacyTwin)},
		c("key-a", true), c("key-path-b", true),
		refused("key-b in a path (not a path key)", byID["key-b"].secret, true),
		refused("expired", byID["key-expired"].secret, false),
		refused("expired in a path", byID["key-expired"].secret, true),
		refused("revoked", Revoked, false),
		refused("unknown", "sk-never-issued-1f2e", false),
	}
}

// meets reports whether the caller may see what aud restricts (the
// matrix's own statement of the rule, not the server's code).
func (c Caller) meets(auth bool, aud []string) bool {
	switch {
	case !auth:
		return true
	case !c.auth:
		return false
	case len(aud) == 0 || c.all:
		return true
	}
	for _, a := range aud {
		if slices.Contains(c.aud, a) {
			return true
		}
	}
	return false
}

// sees reports whether the caller may see e.
func (c Caller) sees(e entry) bool { return !c.Refused && c.meets(e.auth, e.aud) }

// seesListing reports whether the caller may see the listing's gate.
func (c Caller) seesListing(name string) bool {
	l := listings[name]
	return !c.Refused && c.meets(len(l.aud) > 0, l.aud)
}

// TopLevel is the names of the top-level skills the caller sees, sorted.
func (c Caller) TopLevel() []string {
	var out []string
	for _, e := range entries {
		if !e.agent && e.listing == "" && c.sees(e) {
			out = append(out, e.name)
		}
	}
	slices.Sort(out)
	return out
}

// Listing is what the caller sees of a listing, sorted; ok is false when
// it must be 404.
func (c Caller) Listing(name string) (names []string, ok bool) {
	if !c.seesListing(name) {
		return nil, false
	}
	for _, e := range entries {
		if c.sees(e) && (e.listing == name || e.listing == "" && !e.agent && slices.Contains(listings[name].refs, e.name)) {
			names = append(names, e.name)
		}
	}
	slices.Sort(names)
	return names, len(names) > 0
}

// Subagents is the sub-agents the caller sees, sorted.
func (c Caller) Subagents() []string {
	var out []string
	for _, e := range entries {
		if e.agent && c.sees(e) {
			out = append(out, e.name)
		}
	}
	return out
}

// Hidden is the entries the caller may not see, by name.
func (c Caller) Hidden() []string {
	var out []string
	for _, e := range entries {
		if !c.sees(e) {
			out = append(out, e.name)
		}
	}
	return out
}

// Listings are the fixture's listing names, and one that does not exist.
func Listings() []string { return []string{"alpha", "partners", "no-such-listing"} }

// names are every name of the fixture, and the ghost's.
func names() []string {
	out := []string{Ghost}
	for _, e := range entries {
		out = append(out, e.name)
	}
	return out
}

// String names the caller in test output.
func (c Caller) String() string { return strings.ReplaceAll(c.Name, " ", "_") }
