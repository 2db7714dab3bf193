package skillsconfig

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// Published is what a bucket publishes, as far as the config's names go.
type Published struct {
	Skills    map[string]bool            // live top-level skills
	Listings  map[string]map[string]bool // listing → its own live skills
	Subagents map[string]bool            // live sub-agents
	// Versions, when set, returns the versions of the live entries of
	// that name (any kind or listing), for judging allow: and revoke:
	// entries, which name versions by digest; nil when the versions are
	// not known, and those entries are judged by name alone.
	Versions func(name string) []PublishedVersion
	// Current says Versions lists only the bytes each name has now (a
	// local layout), not its history: a label or digest it lacks may be
	// an older version's, so only a label with another digest is judged.
	Current bool
}

// PublishedVersion is one version of a live entry.
type PublishedVersion struct {
	Kind    catalog.Kind
	Listing string
	Label   string
	Digest  digest.Digest
}

func newPublished() Published {
	return Published{Skills: map[string]bool{}, Listings: map[string]map[string]bool{}, Subagents: map[string]bool{}}
}

func (p Published) add(kind catalog.Kind, listing, name string) {
	switch {
	case kind == catalog.KindSubagent:
		p.Subagents[name] = true
	case listing != "":
		if p.Listings[listing] == nil {
			p.Listings[listing] = map[string]bool{}
		}
		p.Listings[listing][name] = true
	default:
		p.Skills[name] = true
	}
}

// PublishedIn returns what catalog c publishes: its live entries, the
// config's own ones included.
func PublishedIn(c *catalog.Catalog) Published {
	p := newPublished()
	byName := map[string][]*catalog.Entry{}
	for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
		for _, e := range m {
			if e.LiveAsRead() {
				p.add(e.Kind, e.Listing, e.Name)
				byName[e.Name] = append(byName[e.Name], e)
			}
		}
	}
	// Histories are decoded only for the few names an allow or a
	// revocation names.
	p.Versions = func(name string) []PublishedVersion {
		var out []PublishedVersion
		for _, e := range byName[name] {
			vs, err := e.History()
			if err != nil { // judged by its latest version alone
				vs = nil
				if l := e.LatestVersion(); l != nil {
					vs = []catalog.Version{*l}
				}
			}
			for _, v := range vs {
				out = append(out, PublishedVersion{Kind: e.Kind, Listing: e.Listing, Label: v.Label, Digest: v.Digest})
			}
		}
		return out
	}
	return p
}

// PublishedAt returns what a bucket holding keys would publish: the names
// their keys imply, for the keys the bucket contract reads as skills and
// sub-agents (the others are left out).
func PublishedAt(keys []string) Published {
	p := newPublished()
	for _, key := range keys {
		k, err := artifact.ParseKey(key)
		switch {
		case err != nil:
		case k.Kind == artifact.KindSkill:
			p.add(catalog.KindSkill, k.Listing, k.Name)
		case k.Kind == artifact.KindSubagent:
			p.add(catalog.KindSubagent, "", k.Name)
		}
	}
	return p
}

// Unmatched is a config entry or listing member that names no published
// skill or sub-agent: its settings apply to nothing, which is how a
// misspelt name leaves the skill it meant public.
type Unmatched struct {
	Field   string // where it is in the document: skills[0], listings.p.skills[1]
	Kind    catalog.Kind
	Listing string // the listing of a listing entry or member
	Name    string
	// Suggestion is the published name it most likely misspells ("": none near).
	Suggestion string
	// Message says all of it, for the operator.
	Message string
}

// Unmatched returns the entries of c that name nothing p publishes, in
// document order: entries that only set something (visibility, a
// description, caps) for a skill or sub-agent of that name, and the names a
// listing includes. An entry with bytes of its own publishes itself and is
// never unmatched.
func (c *Config) Unmatched(p Published) []Unmatched {
	if c == nil {
		return nil
	}
	var out []Unmatched
	add := func(u Unmatched, among map[string]bool, what, consequence string) {
		u.Suggestion = ClosestName(u.Name, among)
		u.Message = fmt.Sprintf("%s: %q names no published %s", u.Field, u.Name, what)
		switch {
		case u.Suggestion != "":
			u.Message += fmt.Sprintf(" (did you mean %q?)", u.Suggestion)
		default:
			if elsewhere := p.elsewhere(u); elsewhere != "" {
				u.Message += " (" + elsewhere + ")"
			}
		}
		u.Message += "; " + consequence
		out = append(out, u)
	}
	const settings = "its settings apply to nothing until one of that name is published"
	for _, e := range c.Skills {
		if !e.Defines() && !p.Skills[e.Name] {
			add(Unmatched{Field: e.Field, Kind: catalog.KindSkill, Name: e.Name}, p.Skills, "skill", settings+blockedHint(&e))
			continue
		}
		out = append(out, p.unmatchedAllows(&e, "skill")...)
	}
	for _, e := range c.Subagents {
		if !e.Defines() && !p.Subagents[e.Name] {
			add(Unmatched{Field: e.Field, Kind: catalog.KindSubagent, Name: e.Name}, p.Subagents, "sub-agent", settings+blockedHint(&e))
			continue
		}
		out = append(out, p.unmatchedAllows(&e, "sub-agent")...)
	}
	for _, l := range c.Listings {
		for i, name := range l.Refs {
			if !p.Skills[name] {
				add(Unmatched{Field: l.RefFields[i], Kind: catalog.KindSkill, Listing: l.Name, Name: name}, p.Skills, "top-level skill",
					"the listing includes nothing by that name until one is published")
			}
		}
		for _, e := range l.Entries {
			if !e.Defines() && !p.Listings[l.Name][e.Name] {
				add(Unmatched{Field: e.Field, Kind: catalog.KindSkill, Listing: l.Name, Name: e.Name}, p.Listings[l.Name],
					"skill of listing "+l.Name, settings+blockedHint(&e))
				continue
			}
			out = append(out, p.unmatchedAllows(&e, "skill of listing "+l.Name)...)
		}
	}
	return append(out, p.unmatchedRevocations(c.Revoke)...)
}

// blockedHint is what an unmatched entry with allows adds: the upload it
// was meant to let through is unpublished because the scan blocks it, and
// the allow publishes it only for that upload's digest and rules.
func blockedHint(e *Entry) string {
	if len(e.Allow) == 0 {
		return ""
	}
	return " (an upload the scan blocked is not published: its allow publishes it only when the digest is the one the " +
		"scan_blocked rejection names and the rules cover its blocking findings; `skilldrop status` lists both)"
}

// unmatchedAllows are the allows of entry e (published under its name)
// whose digest is that of no version of it: bytes never uploaded, or a
// digest copied wrong. They are judged only when p knows the versions.
func (p Published) unmatchedAllows(e *Entry, what string) []Unmatched {
	if p.Versions == nil || p.Current || len(e.Allow) == 0 {
		return nil
	}
	var mine []PublishedVersion
	for _, v := range p.Versions(e.Name) {
		if v.Kind == e.Kind && v.Listing == e.Listing {
			mine = append(mine, v)
		}
	}
	var out []Unmatched
	for _, a := range e.Allow {
		if slices.ContainsFunc(mine, func(v PublishedVersion) bool { return v.Digest.Equal(a.Digest) }) {
			continue
		}
		out = append(out, Unmatched{Field: a.Field, Kind: e.Kind, Listing: e.Listing, Name: e.Name,
			Message: fmt.Sprintf("%s: %s is the digest of no published version of %s %q%s; the allow applies to nothing until "+
				"bytes with that digest are uploaded (the digest a scan_blocked rejection names)", a.Field, a.Digest, what, e.Name, versionList(mine))})
	}
	return out
}

// unmatchedRevocations are the revocations that name no published
// version: a name nothing publishes, a label it has not, or a digest that
// is not the label's (a revocation names the exact bytes). Without the
// versions, only the name is judged.
func (p Published) unmatchedRevocations(rs []Revocation) []Unmatched {
	const consequence = "the revocation takes nothing out of service"
	names := map[string]bool{}
	for _, m := range []map[string]bool{p.Skills, p.Subagents} {
		for n := range m {
			names[n] = true
		}
	}
	for _, l := range p.Listings {
		for n := range l {
			names[n] = true
		}
	}
	var out []Unmatched
	for _, r := range rs {
		u := Unmatched{Field: r.Field, Name: r.Name}
		if !names[r.Name] {
			u.Suggestion = ClosestName(r.Name, names)
			u.Message = fmt.Sprintf("%s: %q names no published skill or sub-agent", r.Field, r.Name)
			if u.Suggestion != "" {
				u.Message += fmt.Sprintf(" (did you mean %q?)", u.Suggestion)
			}
			out = append(out, withConsequence(u, consequence))
			continue
		}
		if p.Versions == nil {
			continue
		}
		vs := p.Versions(r.Name)
		if len(vs) > 0 {
			u.Kind, u.Listing = vs[0].Kind, vs[0].Listing
		}
		var labelled []PublishedVersion
		for _, v := range vs {
			if v.Label == r.Version {
				labelled = append(labelled, v)
			}
		}
		switch {
		case slices.ContainsFunc(labelled, func(v PublishedVersion) bool { return v.Digest.Equal(r.Digest) }):
			continue
		case len(labelled) == 0 && p.Current:
			continue
		case len(labelled) == 0:
			u.Message = fmt.Sprintf("%s: %q has no published version %q%s", r.Field, r.Name, r.Version, versionList(vs))
		default:
			u.Kind, u.Listing = labelled[0].Kind, labelled[0].Listing
			u.Message = fmt.Sprintf("%s: version %q of %q has digest %s, not %s (a revocation names the exact bytes)",
				r.Field, r.Version, r.Name, labelled[0].Digest, r.Digest)
		}
		out = append(out, withConsequence(u, consequence))
	}
	return out
}

func withConsequence(u Unmatched, consequence string) Unmatched {
	u.Message += "; " + consequence
	return u
}

// maxListed bounds the versions a message lists.
const maxListed = 5

// versionList names versions for a message, " (its versions: 1.0
// sha256:…, …)", the newest last; "" for none.
func versionList(vs []PublishedVersion) string {
	if len(vs) == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(vs), maxListed)+1)
	if len(vs) > maxListed {
		parts = append(parts, "…")
		vs = vs[len(vs)-maxListed:]
	}
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%q %s", v.Label, v.Digest))
	}
	return " (its versions: " + strings.Join(parts, ", ") + ")"
}

// elsewhere says where a name that is published under another kind or
// listing is, and where its entry belongs then.
func (p Published) elsewhere(u Unmatched) string {
	switch {
	case u.Kind == catalog.KindSubagent && p.Skills[u.Name]:
		return "a skill of that name is published: its entry belongs under skills"
	case u.Kind == catalog.KindSkill && u.Listing == "" && p.Subagents[u.Name]:
		return "a sub-agent of that name is published: its entry belongs under subagents"
	case u.Kind == catalog.KindSkill && u.Listing != "" && p.Skills[u.Name]:
		return "a top-level skill of that name is published: a name alone includes it in the listing"
	case u.Kind == catalog.KindSkill && u.Listing == "":
		for _, l := range sortedKeys(p.Listings) {
			if p.Listings[l][u.Name] {
				return fmt.Sprintf("listing %s publishes a skill of that name: its entry belongs under listings.%s.skills", l, l)
			}
		}
	}
	return ""
}

// ClosestName returns the name among names nearest to s when it is near
// enough to be a slip (closest's measure, case ignored); ties go to the
// first in byte order, so the answer does not depend on map order. A name
// that is s but for case, or for the key around it (PDF-Tools,
// pdf-tools.md, skills/pdf-tools/SKILL.md), wins over every name a few
// edits away.
func ClosestName(s string, names map[string]bool) string {
	bare := bareName(s)
	exact := ""
	for n := range names {
		if bareName(n) == bare && (exact == "" || n < exact) {
			exact = n
		}
	}
	if exact != "" {
		return exact
	}
	s = strings.ToLower(s)
	best, limit := "", 2
	for n := range names {
		if abs(len(n)-len(s)) > limit {
			continue // the distance is at least the difference in length
		}
		d := distance(s, strings.ToLower(n))
		if d > limit || 2*d >= len(s) {
			continue
		}
		if best == "" || d < limit || n < best {
			best, limit = n, d
		}
	}
	return best
}

// bareName is the name a key or file name names, in lower case: the
// folder of a SKILL.md or agent.md, else the last path element without the
// extension the bucket contract reads (artifact.CutExt).
func bareName(s string) string {
	s = strings.ToLower(s)
	if dir, file := path.Split(s); file == "skill.md" || file == "agent.md" {
		s = strings.TrimSuffix(dir, "/")
	}
	s = path.Base(s)
	if b, _, ok := artifact.CutExt(s); ok && b != "" {
		return b
	}
	return s
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
