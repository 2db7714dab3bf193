// Package skillsconfig parses and validates agent-skills.yaml, the optional
// operator configuration at the root of the bucket: visibility and overrides
// for dropped skills and sub-agents, entries of its own (inline body, a file
// under files/, or an external URL), per-entry caps, and listings.
//
// A config is valid or rejected whole: unknown keys, duplicate names or URLs,
// invalid values and URLs that collide with the service's own routes are all
// errors, so the previous config stays in force.
package skillsconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// Key is the bucket key of the config: the bucket contract's, which
// pkg/artifact owns.
const Key = artifact.ConfigKey

// MaxBytes bounds the config document.
const MaxBytes = 1 << 20

// CodeInvalidConfig is the stable code of every config rejection.
const CodeInvalidConfig = "invalid_config"

// MaxAudienceClasses bounds the classes of key (audience.Class) one
// document may have: the top-level index, a listing's, the sub-agents. Each
// is a rendering of its own, cached and, for a large catalog, stored, so a
// config whose audiences would make more (n audiences on separate entries
// of one document make 2^n) is refused.
const MaxAudienceClasses = 64

// Ceilings for per-entry caps: an entry may raise the entry, expanded-byte
// and ratio caps up to these, and may only lower max_artifact_bytes.
const (
	ceilEntries       = 65536
	ceilExpandedBytes = 256 << 20
	ceilRatio         = 10000
)

// Error is a config rejection; Field locates the problem (e.g. "skills[2].url").
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return CodeInvalidConfig + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %s: %s", CodeInvalidConfig, e.Field, e.Msg)
}

// Code returns the stable rejection code.
func (e *Error) Code() string { return CodeInvalidConfig }

func fail(field, format string, args ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Config is a validated agent-skills.yaml.
type Config struct {
	// DefaultVisibility is what an entry that sets none gets, and every
	// skill and sub-agent the config does not name, unless the deployment's
	// default is stricter (DefaultIn; "": not set here, the deployment's
	// default applies, else public).
	DefaultVisibility catalog.Visibility
	Skills            []Entry   // top-level skill entries, in document order
	Subagents         []Entry   // sub-agent entries, in document order
	Listings          []Listing // in name order
	Digest            digest.Digest
	// Scan is the scan policy; Revoke the revoked versions (scan.go).
	Scan   ScanPolicy
	Revoke []Revocation

	// byName indexes the entries for Touches, which every indexing round
	// asks of every entry of the catalog.
	byName map[entryKey]*Entry
}

type entryKey struct {
	kind          catalog.Kind
	listing, name string
}

// Listing is one listing of the config.
type Listing struct {
	Name string
	// Audiences, when set, restrict the whole listing (and its own
	// entries, which may name some of them only) to keys that meet them.
	Audiences audience.Set
	// Refs name top-level skills included in this listing too;
	// RefFields locate them in the document, for messages.
	Refs      []string
	RefFields []string
	// Entries are skills of this listing only (or overrides of skills
	// dropped under listings/<name>/skills/).
	Entries []Entry
}

// Caps are per-entry archive caps; zero means "the service default".
type Caps struct {
	MaxArtifactBytes      int64
	MaxEntries            int
	MaxExpandedBytes      int64
	MaxDecompressionRatio float64
	MaxClockSkewSecs      int // accepted, no effect
}

// Where the default visibility in force comes from (DefaultIn).
const (
	FromDeployment = "deployment" // the stack's DefaultVisibility (serve/reindex --default-visibility)
	FromConfig     = "config"     // agent-skills.yaml's default_visibility
	FromBuiltIn    = "built-in"   // neither sets it: public
)

// DefaultIn returns the visibility an entry that sets none gets under a
// deployment whose default is deployment ("": none set, public), and where
// it comes from (FromDeployment, FromConfig or FromBuiltIn). The
// deployment's default is a floor: default_visibility may tighten it
// (authenticated under a public deployment), never loosen it. ignored says
// the config asks for a looser default than the deployment's, which does
// not apply: a registry deployed as internal stays so whatever a config
// says, unless an entry says public itself.
func (c *Config) DefaultIn(deployment catalog.Visibility) (vis catalog.Visibility, from string, ignored bool) {
	var own catalog.Visibility
	if c != nil {
		own = c.DefaultVisibility
	}
	switch {
	case deployment == catalog.Authenticated:
		return catalog.Authenticated, FromDeployment, own == catalog.Public
	case own != "":
		return own, FromConfig, false
	case deployment != "":
		return deployment, FromDeployment, false
	}
	return catalog.Public, FromBuiltIn, false
}

// Entry is one skill or sub-agent entry.
type Entry struct {
	Name    string
	Listing string // "" for top-level and sub-agent entries
	Kind    catalog.Kind
	// Visibility is "" when the entry does not set it: the config's
	// default_visibility, else the deployment's, else public; authenticated
	// when it names audiences.
	Visibility catalog.Visibility
	// Audiences restrict the entry to keys that meet them (none: any
	// valid key, for an authenticated entry).
	Audiences   audience.Set
	Description string
	Type        artifact.Type // "" when not given
	// URL as written; Path is the origin-root-absolute path it resolves to
	// (for relative and path-absolute URLs); ExternalURL is set instead for
	// fully-qualified ones.
	URL         string
	Path        string
	ExternalURL string
	Digest      digest.Digest // pinned digest of an external entry
	FilePath    string        // bucket key under files/ holding the bytes
	Body        string        // inline document
	Caps        Caps
	// Allow are the scan rules allowed for given bytes (scan.go).
	Allow []Allow
	Field string // where the entry is in the document, for messages
}

// Defines reports whether the entry brings bytes of its own (body, path or
// external URL) rather than only settings for a dropped skill.
func (e *Entry) Defines() bool { return e.Body != "" || e.FilePath != "" || e.ExternalURL != "" }

// Touches returns every config entry naming the skill (listing, name) —
// "" listing for top-level — or the sub-agent name when kind is KindSubagent.
func (c *Config) Touches(kind catalog.Kind, listing, name string) *Entry {
	if c == nil {
		return nil
	}
	if kind == catalog.KindSubagent {
		listing = ""
	}
	if c.byName != nil {
		return c.byName[entryKey{kind, listing, name}]
	}
	list := c.Skills
	switch {
	case kind == catalog.KindSubagent:
		list = c.Subagents
	case listing != "":
		list = nil
		for i := range c.Listings {
			if c.Listings[i].Name == listing {
				list = c.Listings[i].Entries
			}
		}
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

// index builds the lookup Touches uses; Parse calls it once the config is
// complete (a Config built otherwise is searched entry by entry).
func (c *Config) index() {
	c.byName = map[entryKey]*Entry{}
	for i := range c.Skills {
		c.byName[entryKey{catalog.KindSkill, "", c.Skills[i].Name}] = &c.Skills[i]
	}
	for i := range c.Subagents {
		c.byName[entryKey{catalog.KindSubagent, "", c.Subagents[i].Name}] = &c.Subagents[i]
	}
	for i := range c.Listings {
		l := &c.Listings[i]
		for j := range l.Entries {
			c.byName[entryKey{catalog.KindSkill, l.Name, l.Entries[j].Name}] = &l.Entries[j]
		}
	}
}

// raw types mirror the YAML; decoding with KnownFields rejects unknown keys.
type rawConfig struct {
	Version           *configVersion        `yaml:"version"`
	DefaultVisibility string                `yaml:"default_visibility"`
	Skills            []rawEntry            `yaml:"skills"`
	Subagents         []rawEntry            `yaml:"subagents"`
	Listings          map[string]rawListing `yaml:"listings"`
	Scan              *rawScan              `yaml:"scan"`
	Revoke            []rawRevoke           `yaml:"revoke"`
}

// configVersion is the version key's value, which must be a YAML integer:
// `version: "1"` is refused by saying so, not with the decoder's type
// error.
type configVersion int

// UnmarshalYAML implements yaml.Unmarshaler.
func (v *configVersion) UnmarshalYAML(n *yaml.Node) error {
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil || n.Value != strconv.Itoa(i) {
		// A plain decimal only: 01, 0x1 and 0o1 are YAML integers too, but
		// not the version as anyone would write it.
		how := ""
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			how = ", without quotes"
		}
		holds := clip(strconv.Quote(n.Value))
		if n.Kind != yaml.ScalarNode {
			holds = yamlGot(strings.TrimPrefix(n.Tag, "!!"), "")
		}
		return fail("version", "must be the number 1 (line %d holds %s): write `version: 1`%s", n.Line, holds, how)
	}
	*v = configVersion(i)
	return nil
}

type rawListing struct {
	Audiences []string   `yaml:"audiences"`
	Skills    []rawEntry `yaml:"skills"`
}

type rawEntry struct {
	Name                  string     `yaml:"name"`
	Visibility            string     `yaml:"visibility"`
	Audiences             []string   `yaml:"audiences"`
	Description           *string    `yaml:"description"`
	Type                  string     `yaml:"type"`
	URL                   string     `yaml:"url"`
	Digest                string     `yaml:"digest"`
	Path                  string     `yaml:"path"`
	Body                  *string    `yaml:"body"`
	MaxDecompressionRatio *float64   `yaml:"max_decompression_ratio"`
	MaxEntries            *int       `yaml:"max_entries"`
	MaxExpandedBytes      *int64     `yaml:"max_expanded_bytes"`
	MaxArtifactBytes      *int64     `yaml:"max_artifact_bytes"`
	MaxClockSkewSecs      *int       `yaml:"max_clock_skew_secs"`
	Allow                 []rawAllow `yaml:"allow"`
}

// nameOnly reports whether the entry carries nothing but a name (a listing reference).
func (r *rawEntry) nameOnly() bool {
	bare := *r
	bare.Allow, bare.Audiences = nil, nil
	return r.Allow == nil && r.Audiences == nil && reflect.DeepEqual(bare, rawEntry{Name: r.Name})
}

// Parse validates an agent-skills.yaml document found in the bucket.
// Beyond the shape of each field, it refuses every document that says
// less than its writer meant: an empty one (0 bytes, comments only, "---",
// null or {}), one without "version: 1", and a key without a value
// ("visibility: ~", "visibility: \"\""), since an unset visibility is the
// default one: a failed or half-finished write must never read as "no
// restrictions".
func Parse(doc []byte) (*Config, error) { return parse(doc, true) }

// ParseInForce parses a config that was put in force earlier (the catalog
// records its text) by a build whose rules may have been looser: the rules
// added since for new uploads (a required version, no empty document or
// value, plain-text descriptions) are not applied again, so that an upgrade
// re-reads the config in force as it was judged instead of failing every
// round. Everything else is Parse's.
func ParseInForce(doc []byte) (*Config, error) { return parse(doc, false) }

func parse(doc []byte, strict bool) (*Config, error) {
	if len(doc) > MaxBytes {
		return nil, fail("", "the config is %d bytes, at most %d allowed", len(doc), MaxBytes)
	}
	if !utf8.Valid(doc) {
		return nil, fail("", "the config is not valid UTF-8")
	}
	var raw rawConfig
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		if e := (*Error)(nil); errors.As(err, &e) {
			return nil, e // the value's own refusal (configVersion)
		}
		return nil, fail("", "%s", yamlMessage(doc, err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fail("", "the config must be a single YAML document")
	}
	if strict {
		if err := complete(doc); err != nil {
			return nil, err
		}
	}
	if raw.Version != nil && *raw.Version != 1 {
		return nil, fail("version", "%d is not supported; the only version is 1", *raw.Version)
	}
	c := &Config{Digest: digest.Of(doc)}
	var err error
	if c.Scan, err = scanPolicy(raw.Scan); err != nil {
		return nil, err
	}
	if c.Revoke, err = revocations(raw.Revoke); err != nil {
		return nil, err
	}
	v, err := catalog.ParseVisibility(raw.DefaultVisibility)
	if err != nil {
		return nil, fail("default_visibility", "%q: want public or authenticated", clip(raw.DefaultVisibility))
	}
	c.DefaultVisibility = v
	paths := map[string]string{} // resolved URL path → field, to catch duplicates
	seen := map[string]string{}
	for i := range raw.Skills {
		field := fmt.Sprintf("skills[%d]", i)
		e, err := entry(&raw.Skills[i], field, "", catalog.KindSkill, paths, strict)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[e.Name]; dup {
			return nil, fail(field+".name", "%q is also defined at %s", e.Name, prev)
		}
		seen[e.Name] = field
		c.Skills = append(c.Skills, e)
	}
	seen = map[string]string{}
	for i := range raw.Subagents {
		field := fmt.Sprintf("subagents[%d]", i)
		e, err := entry(&raw.Subagents[i], field, "", catalog.KindSubagent, paths, strict)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[e.Name]; dup {
			return nil, fail(field+".name", "%q is also defined at %s", e.Name, prev)
		}
		seen[e.Name] = field
		c.Subagents = append(c.Subagents, e)
	}
	for _, name := range slices.Sorted(maps.Keys(raw.Listings)) {
		field := listingField(name)
		if err := skillmd.ValidateName(name); err != nil {
			return nil, fail(field, "listing name: %s", nameMsg(err))
		}
		l := Listing{Name: name}
		if raw.Listings[name].Audiences != nil {
			aud, err := audiences(raw.Listings[name].Audiences, field+".audiences")
			if err != nil {
				return nil, err
			}
			l.Audiences = aud
		}
		seen = map[string]string{}
		for i := range raw.Listings[name].Skills {
			r := &raw.Listings[name].Skills[i]
			f := fmt.Sprintf("%s.skills[%d]", field, i)
			if err := skillmd.ValidateName(r.Name); err != nil {
				return nil, fail(f+".name", "%s", nameMsg(err))
			}
			if prev, dup := seen[r.Name]; dup {
				return nil, fail(f+".name", "%q is also listed at %s", r.Name, prev)
			}
			seen[r.Name] = f
			if r.nameOnly() {
				l.Refs = append(l.Refs, r.Name)
				l.RefFields = append(l.RefFields, f)
				continue
			}
			e, err := entry(r, f, name, catalog.KindSkill, paths, strict)
			if err != nil {
				return nil, err
			}
			if len(l.Audiences) > 0 && !e.Audiences.SubsetOf(l.Audiences) {
				return nil, fail(f+".audiences", "%s: an entry of listing %s may name only the listing's audiences (%s): a key must meet the listing's to see any of it",
					e.Audiences, name, l.Audiences)
			}
			l.Entries = append(l.Entries, e)
		}
		c.Listings = append(c.Listings, l)
	}
	c.index()
	if err := c.checkClasses(); err != nil {
		return nil, err
	}
	return c, nil
}

func listingField(name string) string { return "listings." + clip(name) }

// complete refuses a document that says less than its writer meant: no
// keys at all, no version, or a key without a value. The decoder has
// accepted its syntax and keys already.
func complete(doc []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return fail("", "%s", yamlMessage(doc, err))
	}
	var top *yaml.Node
	if len(root.Content) > 0 {
		top = root.Content[0]
	}
	if top == nil || top.Tag == "!!null" || (top.Kind == yaml.MappingNode && len(top.Content) == 0) {
		return fail("", "the config is empty (an empty file, only comments, \"---\", null or {}): nothing in it says "+
			"what to hide, so it is refused and the config in force stays; an empty upload is usually a write that failed. "+
			"A config starts with `version: 1` (alone, it sets no visibility, so every entry gets the default)")
	}
	if !hasKey(top, "version") {
		return fail("version", "is required: start the config with `version: 1`")
	}
	return noEmptyValues(top, "")
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// noEmptyValues refuses a key or list item without a value, null ("~",
// "null", nothing after the colon) or an empty string: decoded, it would be
// the same as a key left out, and a left-out visibility is the default one.
func noEmptyValues(n *yaml.Node, field string) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f := k.Value
			switch {
			case field == "listings":
				f = listingField(k.Value)
			case field != "":
				f = field + "." + k.Value
			}
			if err := emptyValue(v, f, fmt.Sprintf("line %d: %s", v.Line, clip(k.Value))); err != nil {
				return err
			}
			if err := noEmptyValues(v, f); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			f := fmt.Sprintf("%s[%d]", field, i)
			if err := emptyValue(item, f, fmt.Sprintf("line %d: the list item", item.Line)); err != nil {
				return err
			}
			if err := noEmptyValues(item, f); err != nil {
				return err
			}
		}
	}
	return nil
}

func emptyValue(v *yaml.Node, field, what string) error {
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		hint := "write the value, or remove the key"
		if strings.HasPrefix(field, "listings.") && !strings.Contains(field, "[") {
			hint = "write `{}` for a listing with no entries of its own"
		}
		return fail(field, "%s has no value (nothing after the colon, ~ or null); a missing value is never read as the default: %s", what, hint)
	case v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value == "":
		return fail(field, "%s is empty; a missing value is never read as the default: write the value, or remove the key", what)
	}
	return nil
}

// audiences checks an audiences list: valid names, each once, at least one.
func audiences(names []string, field string) (audience.Set, error) {
	if len(names) == 0 {
		return nil, fail(field, "must name at least one audience (leave it out for any valid key)")
	}
	seen := map[string]bool{}
	for i, a := range names {
		if err := audience.ValidName(a); err != nil {
			return nil, fail(fmt.Sprintf("%s[%d]", field, i), "%s", err)
		}
		if seen[a] {
			return nil, fail(fmt.Sprintf("%s[%d]", field, i), "%q is named twice", a)
		}
		seen[a] = true
	}
	return audience.NewSet(names...), nil
}

// EffectiveAudiences are the audiences an entry is published with: its
// own, else (for a listing's own skill) its listing's.
func (c *Config) EffectiveAudiences(kind catalog.Kind, listing, name string) audience.Set {
	if ce := c.Touches(kind, listing, name); ce != nil && len(ce.Audiences) > 0 {
		return ce.Audiences
	}
	if c != nil && kind == catalog.KindSkill && listing != "" {
		for i := range c.Listings {
			if c.Listings[i].Name == listing {
				return c.Listings[i].Audiences
			}
		}
	}
	return nil
}

// checkClasses refuses a config whose audiences would give one document
// more than MaxAudienceClasses classes of key.
func (c *Config) checkClasses() error {
	sets := func(es []Entry) []audience.Set {
		var out []audience.Set
		for i := range es {
			out = append(out, es[i].Audiences)
		}
		return out
	}
	check := func(field string, g audience.Groups) error {
		if _, err := g.Classes(MaxAudienceClasses); err != nil {
			return fail(field, "%s: one document would be rendered for each; put the skills of audiences no key shares into a listing each (listings.<name>.audiences)", err)
		}
		return nil
	}
	if err := check("skills", audience.GroupsOf(sets(c.Skills)...)); err != nil {
		return err
	}
	if err := check("subagents", audience.GroupsOf(sets(c.Subagents)...)); err != nil {
		return err
	}
	for _, l := range c.Listings {
		all := append(sets(l.Entries), l.Audiences)
		for _, ref := range l.Refs {
			if ce := c.Touches(catalog.KindSkill, "", ref); ce != nil {
				all = append(all, ce.Audiences)
			}
		}
		if err := check("listings."+l.Name, audience.GroupsOf(all...)); err != nil {
			return err
		}
	}
	return nil
}

func entry(r *rawEntry, field, listing string, kind catalog.Kind, paths map[string]string, strict bool) (Entry, error) {
	e := Entry{Name: r.Name, Listing: listing, Kind: kind, Field: field}
	if err := skillmd.ValidateName(r.Name); err != nil {
		return e, fail(field+".name", "%s", nameMsg(err))
	}
	v, err := catalog.ParseVisibility(r.Visibility)
	if err != nil {
		return e, fail(field+".visibility", "%q: want public or authenticated", clip(r.Visibility))
	}
	e.Visibility = v
	if r.Audiences != nil {
		aud, err := audiences(r.Audiences, field+".audiences")
		if err != nil {
			return e, err
		}
		if e.Visibility == catalog.Public {
			return e, fail(field+".audiences", "audiences make an entry authenticated; it says visibility: public")
		}
		e.Audiences, e.Visibility = aud, catalog.Authenticated
	}
	if r.Description != nil {
		n := utf8.RuneCountInString(*r.Description)
		if n == 0 || n > skillmd.MaxDescriptionLen {
			return e, fail(field+".description", "must be 1 to %d characters, got %d", skillmd.MaxDescriptionLen, n)
		}
		if err := skillmd.ValidateDescription(*r.Description); err != nil && strict {
			return e, fail(field+".description", "%s", nameMsg(err))
		}
		e.Description = *r.Description
	}
	switch t := artifact.Type(r.Type); {
	case r.Type == "":
	case kind == catalog.KindSubagent && t == artifact.TypeAgentMD,
		kind == catalog.KindSkill && (t == artifact.TypeSkillMD || t == artifact.TypeArchive):
		e.Type = t
	default:
		want := "skill-md or archive"
		if kind == catalog.KindSubagent {
			want = "agent-md"
		}
		return e, fail(field+".type", "%q: want %s", clip(r.Type), want)
	}
	sources := 0
	if r.Body != nil {
		sources++
		if *r.Body == "" {
			return e, fail(field+".body", "must not be empty")
		}
		if e.Type == artifact.TypeArchive {
			return e, fail(field+".body", "an inline body is a markdown document; archives need path")
		}
		e.Body = *r.Body
	}
	if r.Path != "" {
		sources++
		if err := filePath(r.Path); err != nil {
			return e, fail(field+".path", "%s", err)
		}
		e.FilePath = r.Path
	}
	if r.URL != "" {
		u, err := url.Parse(r.URL)
		if err != nil || r.URL != strings.TrimSpace(r.URL) {
			return e, fail(field+".url", "%q is not a valid URL", clip(r.URL))
		}
		if u.IsAbs() {
			if u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
				return e, fail(field+".url", "external URLs must be https://host/… without credentials or fragment")
			}
			sources++
			e.URL, e.ExternalURL = r.URL, r.URL
		} else {
			p, err := servedPath(r.URL, listing, kind)
			if err != nil {
				return e, fail(field+".url", "%s", err)
			}
			if prev, dup := paths[p]; dup {
				return e, fail(field+".url", "%s is also the URL of %s", p, prev)
			}
			paths[p] = field
			e.URL, e.Path = r.URL, p
		}
	}
	if sources > 1 {
		return e, fail(field, "set at most one of body, path and an external url")
	}
	if r.Digest != "" {
		if e.ExternalURL == "" {
			return e, fail(field+".digest", "a pinned digest is only for external (https://) URLs")
		}
		d, err := digest.Parse(r.Digest)
		if err != nil {
			return e, fail(field+".digest", "%s", err)
		}
		e.Digest = d
	}
	if e.Defines() && e.Type == "" && kind == catalog.KindSkill {
		if e.Body == "" {
			return e, fail(field+".type", "is required for an entry with its own bytes (skill-md or archive)")
		}
		e.Type = artifact.TypeSkillMD
	}
	if kind == catalog.KindSubagent && e.Defines() {
		e.Type = artifact.TypeAgentMD
	}
	if e.ExternalURL != "" && !e.Digest.IsZero() && e.Description == "" {
		// A pinned entry's bytes are never read, so no frontmatter supplies one.
		return e, fail(field+".description", "is required for an external entry with a pinned digest")
	}
	caps, err := capsOf(r, field)
	if err != nil {
		return e, err
	}
	e.Caps = caps
	if e.Allow, err = allows(r.Allow, field); err != nil {
		return e, err
	}
	return e, nil
}

func capsOf(r *rawEntry, field string) (Caps, error) {
	var c Caps
	if r.MaxArtifactBytes != nil {
		if *r.MaxArtifactBytes <= 0 || *r.MaxArtifactBytes > archive.DefaultMaxArtifactBytes {
			return c, fail(field+".max_artifact_bytes", "must be 1 to %d (it may lower, never raise, the service cap)", archive.DefaultMaxArtifactBytes)
		}
		c.MaxArtifactBytes = *r.MaxArtifactBytes
	}
	if r.MaxEntries != nil {
		if *r.MaxEntries <= 0 || *r.MaxEntries > ceilEntries {
			return c, fail(field+".max_entries", "must be 1 to %d", ceilEntries)
		}
		c.MaxEntries = *r.MaxEntries
	}
	if r.MaxExpandedBytes != nil {
		if *r.MaxExpandedBytes <= 0 || *r.MaxExpandedBytes > ceilExpandedBytes {
			return c, fail(field+".max_expanded_bytes", "must be 1 to %d", ceilExpandedBytes)
		}
		c.MaxExpandedBytes = *r.MaxExpandedBytes
	}
	if r.MaxDecompressionRatio != nil {
		if !(*r.MaxDecompressionRatio >= 1 && *r.MaxDecompressionRatio <= ceilRatio) {
			return c, fail(field+".max_decompression_ratio", "must be 1 to %d", ceilRatio)
		}
		c.MaxDecompressionRatio = *r.MaxDecompressionRatio
	}
	if r.MaxClockSkewSecs != nil {
		if *r.MaxClockSkewSecs < 0 || *r.MaxClockSkewSecs > 86400 {
			return c, fail(field+".max_clock_skew_secs", "must be 0 to 86400")
		}
		c.MaxClockSkewSecs = *r.MaxClockSkewSecs
	}
	return c, nil
}

// filePath checks a path: key; the bytes of config entries live under files/.
func filePath(p string) error {
	if !strings.HasPrefix(p, artifact.FilesPrefix) || len(p) == len(artifact.FilesPrefix) {
		return errors.New("must be a bucket key under " + artifact.FilesPrefix)
	}
	return cleanKey(p)
}

func cleanKey(p string) error {
	if strings.HasPrefix(p, "/") {
		return errors.New("must be relative")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%q has an empty, '.' or '..' element", clip(p))
		}
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' || r == '%' || r == '?' || r == '#' {
			return fmt.Errorf("%q contains %q", clip(p), r)
		}
	}
	return nil
}

// servedPath resolves a relative or path-absolute URL: relative ones against
// the listing's own base (the origin root for top-level entries), so both
// spellings name the same address; then refuses every path the URL table
// reserves for the service's own routes (routes.Reserved).
func servedPath(raw, listing string, kind catalog.Kind) (string, error) {
	if strings.ContainsAny(raw, "?#") {
		return "", errors.New("must not have a query or fragment")
	}
	base := "/"
	if listing != "" {
		base = routes.ListingPrefix(listing)
	}
	p := raw
	if strings.HasPrefix(raw, "//") {
		return "", errors.New("a URL starting with // names another host; use https://")
	}
	if strings.HasPrefix(raw, "/") {
		p = raw[1:]
		if listing != "" {
			// A path-absolute URL of a listing entry names the same address
			// as its relative spelling: under the listing's prefix.
			if rel, ok := strings.CutPrefix(raw, routes.ListingPrefix(listing)); ok {
				p = rel
			}
		}
	}
	if err := cleanKey(p); err != nil {
		return "", err
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return "", fmt.Errorf("%q: path elements must not start with '.' (/.well-known/ belongs to the service)", clip(raw))
		}
	}
	full := path.Clean(base + p)
	if kind == catalog.KindSubagent {
		return "", errors.New("sub-agents are served under /api/v1/subagents/ only; a url is not accepted")
	}
	if reason := routes.Reserved(full, listing); reason != "" {
		return "", fmt.Errorf("%s collides with %s", full, reason)
	}
	return full, nil
}

// yamlMessage rewrites the YAML decoder's errors for operators: one line,
// "unknown key" rather than Go type names, a syntax error on the line where
// it is (syntaxLine), bounded.
func yamlMessage(doc []byte, err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "yaml:"))
		if l == "" || l == "unmarshal errors:" {
			continue
		}
		if m := unknownField.FindStringSubmatch(l); m != nil {
			l = unknownKey(m[1], m[2], m[3])
		}
		l = goTypes.ReplaceAllString(l, "$1")
		if m := mismatch.FindStringSubmatch(l); m != nil {
			line, key := keyOf(doc, m[1], m[2])
			l = fmt.Sprintf("line %s: %swant %s, got %s", line, key, yamlWant(m[4]), yamlGot(m[2], m[3]))
		}
		lines = append(lines, l)
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) && len(lines) == 1 {
		lines[0] = syntaxLine(doc, lines[0])
	}
	msg := strings.Join(lines, "; ")
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	return "YAML: " + msg
}

// keyOf is the line (1-based, as a decimal string) and "key: " of the key
// whose value is the node of YAML tag tag the decoder placed on line n
// (key "" when there is none). A block mapping or list starts on the line
// of its first item, under its key ("allow:" on the line before
// "digest: …"), so that key owns it; any other node is the value of the
// key on its own line.
func keyOf(doc []byte, n, tag string) (line, key string) {
	i, err := strconv.Atoi(n)
	lines := strings.Split(string(doc), "\n")
	if (tag == "map" || tag == "seq") && err == nil && i >= 1 && i <= len(lines) && !flowValue.MatchString(lines[i-1]) {
		for j := i - 2; j >= 0; j-- {
			l := strings.TrimSpace(lines[j])
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if m := ownerKey.FindStringSubmatch(lines[j]); m != nil {
				return strconv.Itoa(j + 1), m[1] + ": "
			}
			break
		}
	}
	return n, keyOnLine(doc, n)
}

// keyOnLine is "key: " for the key line n (1-based, as a decimal string)
// of doc sets, or "" when it sets none.
func keyOnLine(doc []byte, n string) string {
	i, err := strconv.Atoi(n)
	lines := strings.Split(string(doc), "\n")
	if err != nil || i < 1 || i > len(lines) {
		return ""
	}
	if m := lineKey.FindStringSubmatch(lines[i-1]); m != nil {
		return m[1] + ": "
	}
	return ""
}

// yamlGot names a YAML node by its tag (and value, clipped), for people.
func yamlGot(tag, value string) string {
	what := map[string]string{"map": "a mapping (key: value)", "seq": "a list", "str": "a string", "int": "a number",
		"float": "a number", "bool": "true or false", "null": "nothing", "binary": "binary data", "timestamp": "a date"}[tag]
	if what == "" {
		what = "!!" + tag
	}
	if value != "" {
		what += " " + strconv.Quote(clip(value))
	}
	return what
}

// yamlWant names what a config field's Go type takes, for people.
func yamlWant(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list (- item per line)"
	case strings.HasPrefix(goType, "map["), goType == "Config", goType == "Listing", goType == "Entry", goType == "Scan",
		goType == "Allow", goType == "Revoke":
		return "a mapping (key: value)"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint") || strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return goType
}

var (
	lineKey      = regexp.MustCompile(`^\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_-]{0,63})\s*:`)
	flowValue    = regexp.MustCompile(`^\s*(?:-\s+)?[A-Za-z_][A-Za-z0-9_-]{0,63}\s*:\s*[\[{]`)
	ownerKey     = regexp.MustCompile(`^\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_-]{0,63})\s*:\s*(?:#.*)?$`)
	mismatch     = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")
	unknownField = regexp.MustCompile(`^line (\d+): field (.+) not found in type (?:skillsconfig\.)?(\S+)$`)
	goTypes      = regexp.MustCompile(`\b(?:skillsconfig\.)?raw(Config|Listing|Entry|Scan|Allow|Revoke)\b`)
	syntaxError  = regexp.MustCompile(`^line (\d+): (.+)$`)
)

// syntaxLine puts a syntax error on the line where it is. The YAML parser
// names the line where the construct holding the error began (the list
// that line 6, indented one space short, breaks is reported at line 2), so
// the line is found again as the shortest prefix of the document whose
// parse fails the same way, by bisection (about 20 parses for a config at
// MaxBytes). An indentation error also says how indentation works.
func syntaxLine(doc []byte, msg string) string {
	m := syntaxError.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	reported, problem := m[1], m[2]
	lines := bytes.SplitAfter(doc, []byte("\n"))
	fails := func(n int) bool {
		err := yaml.Unmarshal(bytes.Join(lines[:n], nil), &yaml.Node{})
		if err == nil {
			return false
		}
		pm := syntaxError.FindStringSubmatch(strings.TrimPrefix(err.Error(), "yaml: "))
		return pm != nil && pm[2] == problem
	}
	n := sort.Search(len(lines), func(i int) bool { return fails(i + 1) }) + 1
	at := reported
	if n <= len(lines) && fails(n) {
		at = strconv.Itoa(n)
	}
	msg = "line " + at + ": " + problem
	if at != reported {
		msg += " (in the block that starts at line " + reported + ")"
	}
	if indentation(problem) {
		msg += "; indent with spaces only, each key of an entry at the same depth as its first (the one after \"- \")"
	}
	return msg
}

// indentation reports whether a syntax error is what a misindented line causes.
func indentation(problem string) bool {
	for _, s := range []string{"did not find expected", "mapping values are not allowed", "tab character", "could not find expected ':'"} {
		if strings.Contains(problem, s) {
			return true
		}
	}
	return false
}

func nameMsg(err error) string {
	var e *skillmd.Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return err.Error()
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
