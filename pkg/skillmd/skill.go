package skillmd

import (
	"encoding/json"
	"fmt"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Skill is a parsed and validated SKILL.md.
type Skill struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	AllowedTools  []string
	Metadata      map[string]string
	// Version is the top-level "version" key, kept raw; most publishers put
	// the version in metadata.version instead.
	Version string
	// Extras holds other recognised scalar keys seen in the wild (category, author, …).
	Extras map[string]string
	// Frontmatter is the whole frontmatter as a JSON object, verbatim:
	// every key the author wrote, in document order. It is nil when a value
	// has no faithful JSON form; FrontmatterIssue then says which.
	Frontmatter      json.RawMessage
	FrontmatterIssue string
	// Warnings name keys that were ignored.
	Warnings []string
	Body     []byte
}

// knownSkillExtras are accepted without a warning; they carry no meaning here.
var knownSkillExtras = map[string]bool{
	"category": true, "author": true, "tags": true, "homepage": true,
	"repository": true, "keywords": true, "model": true, "disable-model-invocation": true,
	"user-invocable": true, "argument-hint": true, "context": true, "agent": true, "hooks": true,
}

// ParseSkill parses and validates a SKILL.md document.
func ParseSkill(doc []byte) (*Skill, error) {
	s := &Skill{}
	h, body, err := parseHead(doc, func(f field) (err error) {
		switch f.key {
		case "license":
			s.License, err = scalar(f)
		case "compatibility":
			s.Compatibility, err = str(f)
		case "allowed-tools":
			s.AllowedTools, err = stringList(f)
		default:
			if knownSkillExtras[f.key] {
				if v, e := scalar(f); e == nil {
					if s.Extras == nil {
						s.Extras = map[string]string{}
					}
					s.Extras[f.key] = v
				}
				return nil
			}
			s.Warnings = append(s.Warnings, fmt.Sprintf("unknown frontmatter key %q ignored", clip(f.key)))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	s.Name, s.Description, s.Metadata, s.Version, s.Body = h.name, h.description, h.metadata, h.version, body
	if w := PlaceholderWarning(s.Description); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	s.Frontmatter, s.FrontmatterIssue = h.frontmatter, h.frontmatterIssue
	if err := checkLen("compatibility", s.Compatibility, 0, MaxCompatibilityLen); err != nil {
		return nil, err
	}
	if _, err := s.VersionLabel(); err != nil {
		return nil, err
	}
	if err := checkBody(body, false); err != nil {
		return nil, err
	}
	return s, nil
}

// VersionLabel returns metadata.version, else the top-level version, else ""
// (the caller then derives a label from the content digest).
func (s *Skill) VersionLabel() (string, error) {
	return label(s.Metadata, s.Version)
}

// Subagent returns metadata.subagent: the sub-agent this skill routes to, if any.
func (s *Skill) Subagent() string { return s.Metadata["subagent"] }

func label(meta map[string]string, top string) (string, error) {
	v := meta["version"]
	if v == "" {
		v = top
	}
	if v == "" {
		return "", nil
	}
	if err := ValidateVersion(v); err != nil {
		return "", err
	}
	return v, nil
}

// stringMap decodes a mapping of string keys to scalar values, kept raw.
func stringMap(f field) (map[string]string, error) {
	n := resolve(f.node)
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fail(CodeInvalidFrontmatter, f.key, "must be a mapping of strings to strings")
	}
	m := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
			return nil, fail(CodeInvalidFrontmatter, f.key, "must be a mapping of strings to strings (key %q)", clip(k.Value))
		}
		if _, dup := m[k.Value]; dup {
			return nil, fail(CodeInvalidFrontmatter, f.key, "key %q appears more than once", clip(k.Value))
		}
		m[k.Value] = v.Value
	}
	return m, nil
}

// SortedKeys returns the keys of m in order, for stable output.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
