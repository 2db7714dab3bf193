package skillsconfig

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// ScanPolicy is the config's scan: block, the service-wide threshold.
type ScanPolicy struct {
	// Block is the lowest severity that blocks (scan.DefaultBlock when
	// the config does not set it).
	Block scan.Severity
}

// Policy is the scan policy the config puts in force (the default for a
// nil config).
func (c *Config) Policy() scan.Policy {
	if c == nil || c.Scan.Block == 0 {
		return scan.Policy{Block: scan.DefaultBlock}
	}
	return scan.Policy{Block: c.Scan.Block}
}

// Allow is an entry's allow of scan rules for the bytes with one digest:
// a new version is scanned again, whatever this allow says.
type Allow struct {
	Digest digest.Digest
	Rules  []string
	Reason string
	Field  string // where it is in the document
}

// Allows returns the rules the entry allows for bytes with digest d, each
// with the operator's reason (nil: none).
func (e *Entry) Allows(d digest.Digest) map[string]string {
	if e == nil {
		return nil
	}
	var out map[string]string
	for _, a := range e.Allow {
		if !a.Digest.Equal(d) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for _, r := range a.Rules {
			out[r] = a.Reason
		}
	}
	return out
}

// Revocation is one version the config revokes: it leaves every feed, and
// its bytes answer 410 Gone with the reason.
type Revocation struct {
	Name    string
	Version string
	Digest  digest.Digest
	Reason  string
	Field   string
}

// Revokes returns the revocation of the version of name labelled label
// with digest d, or nil.
func (c *Config) Revokes(name, label string, d digest.Digest) *Revocation {
	if c == nil {
		return nil
	}
	for i := range c.Revoke {
		r := &c.Revoke[i]
		if r.Name == name && r.Version == label && r.Digest.Equal(d) {
			return r
		}
	}
	return nil
}

type rawScan struct {
	Block string `yaml:"block"`
}

type rawAllow struct {
	Digest string   `yaml:"digest"`
	Rules  []string `yaml:"rules"`
	Reason string   `yaml:"reason"`
}

type rawRevoke struct {
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
	Digest  string `yaml:"digest"`
	Reason  string `yaml:"reason"`
}

// maxReason bounds an allow's or a revocation's reason.
const maxReason = 1024

// ruleID is the shape of a rule id. Ids are not checked against this
// build's rule pack: a config in force must stay valid when a newer pack
// drops a rule.
var ruleID = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{0,127}$`)

func scanPolicy(r *rawScan) (ScanPolicy, error) {
	if r == nil || r.Block == "" {
		return ScanPolicy{}, nil
	}
	s, err := scan.ParseSeverity(r.Block)
	if err != nil {
		return ScanPolicy{}, fail("scan.block", "%s", err)
	}
	return ScanPolicy{Block: s}, nil
}

func allows(raw []rawAllow, field string) ([]Allow, error) {
	var out []Allow
	for i, r := range raw {
		f := fmt.Sprintf("%s.allow[%d]", field, i)
		d, err := digest.Parse(r.Digest)
		if err != nil {
			return nil, fail(f+".digest", "an allow is bound to the digest of the bytes it is for: %s", err)
		}
		if len(r.Rules) == 0 {
			return nil, fail(f+".rules", "name at least one rule id")
		}
		for j, id := range r.Rules {
			if !ruleID.MatchString(id) {
				return nil, fail(fmt.Sprintf("%s.rules[%d]", f, j), "%q is not a rule id: an allow names each rule it lets through, as a finding names it (<category>.<rule>; skilldrop scan --rules lists them)", clip(id))
			}
		}
		if err := reason(r.Reason, f); err != nil {
			return nil, err
		}
		out = append(out, Allow{Digest: d, Rules: r.Rules, Reason: r.Reason, Field: f})
	}
	return out, nil
}

func revocations(raw []rawRevoke) ([]Revocation, error) {
	var out []Revocation
	seen := map[string]string{}
	for i, r := range raw {
		f := fmt.Sprintf("revoke[%d]", i)
		if err := skillmd.ValidateName(r.Name); err != nil {
			return nil, fail(f+".name", "%s", nameMsg(err))
		}
		if r.Version == "" || len(r.Version) > 128 {
			return nil, fail(f+".version", "the version label, as the feeds list it (1 to 128 characters)")
		}
		d, err := digest.Parse(r.Digest)
		if err != nil {
			return nil, fail(f+".digest", "%s", err)
		}
		if err := reason(r.Reason, f); err != nil {
			return nil, err
		}
		k := r.Name + "\x00" + r.Version + "\x00" + d.String()
		if prev, dup := seen[k]; dup {
			return nil, fail(f, "revokes what %s revokes", prev)
		}
		seen[k] = f
		out = append(out, Revocation{Name: r.Name, Version: r.Version, Digest: d, Reason: r.Reason, Field: f})
	}
	return out, nil
}

func reason(s, field string) error {
	if n := utf8.RuneCountInString(s); strings.TrimSpace(s) == "" || n > maxReason {
		return fail(field+".reason", "a reason is required, 1 to %d characters, not only blanks", maxReason)
	}
	return nil
}

// RuleWarnings are the allows of c that name a rule id pack does not have,
// for validate and status, in document order: a misspelt id, or a
// category given for a rule, lets nothing through, and the skill it was
// meant for stays blocked. They are warnings, not errors, so that a config
// in force stays valid under a newer pack that drops a rule.
func (c *Config) RuleWarnings(pack *scan.Pack) []string {
	if c == nil {
		return nil
	}
	var ids []string
	for _, r := range pack.Rules() {
		ids = append(ids, r.ID)
	}
	var out []string
	check := func(entries []Entry) {
		for _, e := range entries {
			for _, a := range e.Allow {
				for j, id := range a.Rules {
					if pack.Rule(id) != nil {
						continue
					}
					msg := fmt.Sprintf("%s.rules[%d]: %q is no rule of the rule pack this build scans with (%s)", a.Field, j, id, pack.Engine())
					switch near := closest(id, ids); {
					case slices.Contains(scan.Categories, scan.Category(id)):
						msg += "; it is a category: name the rule ids its findings give (skilldrop scan --rules lists them)"
					case near != "":
						msg += fmt.Sprintf(" (did you mean %q?)", near)
					default:
						msg += " (skilldrop scan --rules lists them)"
					}
					out = append(out, msg+"; the allow lets nothing through")
				}
			}
		}
	}
	check(c.Skills)
	check(c.Subagents)
	for _, l := range c.Listings {
		check(l.Entries)
	}
	return out
}
