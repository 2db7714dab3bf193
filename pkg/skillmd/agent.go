package skillmd

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Agent is a parsed and validated agent.md (sub-agent definition).
type Agent struct {
	Name                   string
	Description            string
	Tools                  []string
	ModelRole              string // "", "Compaction" or "Main"
	TimeoutSeconds         int    // 0 when unset, else 5–600
	PrefillTimeoutSeconds  int    // 0 when unset, else 5–3600
	Visibility             string // "", "user-facing" or "internal" (lower-cased); a runtime hint, not access control
	EmitStructuredFindings *bool
	Metadata               map[string]string
	Version                string
	// Frontmatter and FrontmatterIssue are as for Skill.
	Frontmatter      json.RawMessage
	FrontmatterIssue string
	Warnings         []string
	Body             []byte
}

// ParseAgent parses and validates an agent.md document.
func ParseAgent(doc []byte) (*Agent, error) {
	a := &Agent{}
	h, body, err := parseHead(doc, func(f field) (err error) {
		switch f.key {
		case "tools":
			a.Tools, err = stringList(f)
		case "modelRole":
			a.ModelRole, err = oneOf(f, "Compaction", "Main")
		case "timeoutSeconds":
			a.TimeoutSeconds, err = intIn(f, 5, 600)
		case "prefillTimeoutSeconds":
			a.PrefillTimeoutSeconds, err = intIn(f, 5, 3600)
		case "visibility":
			var v string
			if v, err = str(f); err == nil {
				a.Visibility = strings.ToLower(v)
				if a.Visibility != "user-facing" && a.Visibility != "internal" {
					err = fail(CodeInvalidFrontmatter, f.key, "%q: want user-facing or internal", clip(v))
				}
			}
		case "emitStructuredFindings":
			var b bool
			if b, err = boolean(f); err == nil {
				a.EmitStructuredFindings = &b
			}
		default:
			a.Warnings = append(a.Warnings, fmt.Sprintf("unknown frontmatter key %q ignored", clip(f.key)))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	a.Name, a.Description, a.Metadata, a.Version, a.Body = h.name, h.description, h.metadata, h.version, body
	if w := PlaceholderWarning(a.Description); w != "" {
		a.Warnings = append(a.Warnings, w)
	}
	a.Frontmatter, a.FrontmatterIssue = h.frontmatter, h.frontmatterIssue
	if _, err := a.VersionLabel(); err != nil {
		return nil, err
	}
	if err := checkBody(body, true); err != nil {
		return nil, err
	}
	return a, nil
}

// VersionLabel returns metadata.version, else the top-level version, else "".
func (a *Agent) VersionLabel() (string, error) { return label(a.Metadata, a.Version) }

func oneOf(f field, allowed ...string) (string, error) {
	v, err := str(f)
	if err != nil {
		return "", err
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", fail(CodeInvalidFrontmatter, f.key, "%q: want one of %s", clip(v), strings.Join(allowed, ", "))
}

func intIn(f field, lo, hi int) (int, error) {
	n := resolve(f.node)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, fail(CodeInvalidFrontmatter, f.key, "must be an integer")
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < lo || v > hi {
		return 0, fail(CodeInvalidFrontmatter, f.key, "%s is out of range %d–%d", clip(n.Value), lo, hi)
	}
	return v, nil
}

func boolean(f field) (bool, error) {
	n := resolve(f.node)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, fail(CodeInvalidFrontmatter, f.key, "must be true or false")
	}
	return strconv.ParseBool(strings.ToLower(n.Value))
}
