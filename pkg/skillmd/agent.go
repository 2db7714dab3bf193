package skillmd

import (
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
	Warnings               []string
	Body                   []byte
}

// ParseAgent parses and validates an agent.md document.
func ParseAgent(doc []byte) (*Agent, error) {
	front, body, err := split(doc)
	if err != nil {
		return nil, err
	}
	fields, err := decode(front)
	if err != nil {
		return nil, err
	}
	a := &Agent{Body: body}
	seen := map[string]bool{}
	for _, f := range fields {
		seen[f.key] = true
		switch f.key {
		case "name":
			a.Name, err = scalar(f)
		case "description":
			a.Description, err = str(f)
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
		case "metadata":
			a.Metadata, err = stringMap(f)
		case "version":
			a.Version, err = scalar(f)
		default:
			a.Warnings = append(a.Warnings, fmt.Sprintf("unknown frontmatter key %q ignored", clip(f.key)))
		}
		if err != nil {
			return nil, err
		}
	}
	if !seen["name"] {
		return nil, fail(CodeInvalidFrontmatter, "name", "is required")
	}
	if err := ValidateName(a.Name); err != nil {
		return nil, err
	}
	if !seen["description"] {
		return nil, fail(CodeInvalidFrontmatter, "description", "is required")
	}
	if err := checkLen("description", a.Description, 1, MaxDescriptionLen); err != nil {
		return nil, err
	}
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
