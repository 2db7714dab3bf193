// Package skillmd parses and validates the YAML frontmatter of SKILL.md files
// (Agent Skills) and agent.md files (sub-agents).
//
// A document starts with a line "---", then YAML, then a closing "---" line,
// then a Markdown body. Validation follows the Agent Skills specification;
// common extra keys seen in the wild are accepted and unknown keys are
// reported as warnings, not errors.
package skillmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/skilldrop/skilldrop/pkg/routes"
)

// Limits of the Agent Skills specification and of skilldrop.
const (
	MaxNameLen          = 64
	MaxDescriptionLen   = 1024
	MaxCompatibilityLen = 500
	MaxVersionLen       = 64
	// MaxFrontmatterBytes bounds the YAML a parser is ever handed; real
	// frontmatter is a few hundred bytes.
	MaxFrontmatterBytes = 64 << 10
)

// Stable error codes.
const (
	CodeInvalidFrontmatter = "invalid_frontmatter"
	CodeInvalidBody        = "invalid_body"
	CodeInvalidVersion     = "invalid_version"
	CodeReservedName       = "reserved_name"
	CodeReservedVersion    = "reserved_version"
)

// Error is a validation failure with a stable code and the offending field.
type Error struct {
	Code  string // one of the Code constants
	Field string // frontmatter key, "" for the document as a whole
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Code + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Msg)
}

func fail(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// reservedNames collide with the service's own routes (routes.ReservedNames).
var reservedNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range routes.ReservedNames {
		m[n] = true
	}
	return m
}()

// ValidateName checks a skill or sub-agent name: 1–64 characters of a-z, 0-9
// and '-', no leading, trailing or doubled hyphen, not reserved.
func ValidateName(name string) error {
	if name == "" {
		return fail(CodeInvalidFrontmatter, "name", "is required")
	}
	if len(name) > MaxNameLen {
		return fail(CodeInvalidFrontmatter, "name", "is %d characters, at most %d allowed", len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return fail(CodeInvalidFrontmatter, "name", "%q: only lowercase letters, digits and hyphens are allowed", clip(name))
		}
	}
	if name[0] == '-' || name[len(name)-1] == '-' {
		return fail(CodeInvalidFrontmatter, "name", "%q must not start or end with a hyphen", name)
	}
	if strings.Contains(name, "--") {
		return fail(CodeInvalidFrontmatter, "name", "%q must not contain consecutive hyphens", name)
	}
	if reservedNames[name] {
		return fail(CodeReservedName, "name", "%q is reserved by the service's routes", name)
	}
	return nil
}

// ValidateVersion checks a version label: 1–64 letters, digits, '.', '-' or
// '+', starting with a letter or digit; "latest" is reserved.
func ValidateVersion(v string) error {
	if v == "" || len(v) > MaxVersionLen {
		return fail(CodeInvalidVersion, "version", "must be 1 to %d characters, got %d", MaxVersionLen, len(v))
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '.' && c != '-' && c != '+' {
			return fail(CodeInvalidVersion, "version", "%q: only letters, digits, '.', '-' and '+' are allowed", clip(v))
		}
	}
	if c := v[0]; (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
		// A label is a URL path segment (/api/v1/skills/<name>/<version>/…):
		// ".", ".." or a leading dot or sign would be resolved away or hidden.
		return fail(CodeInvalidVersion, "version", "%q must start with a letter or digit", clip(v))
	}
	if strings.EqualFold(v, routes.Latest) {
		return fail(CodeReservedVersion, "version", "%q is reserved: it names the newest version", v)
	}
	return nil
}

// split separates frontmatter from body. The document must start with a
// "---" line (an optional UTF-8 byte order mark is tolerated) and the YAML
// ends at the next line that is exactly "---".
func split(doc []byte) (front, body []byte, err error) {
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	first, rest, _ := cutLine(doc)
	if string(first) != "---" {
		return nil, nil, fail(CodeInvalidFrontmatter, "", "the document must start with a '---' line opening the YAML frontmatter")
	}
	off := 0
	for off <= len(rest) {
		line, next, more := cutLine(rest[off:])
		if string(line) == "---" {
			front = rest[:off]
			if more {
				body = next
			}
			if len(front) > MaxFrontmatterBytes {
				return nil, nil, fail(CodeInvalidFrontmatter, "", "frontmatter is %d bytes, at most %d allowed", len(front), MaxFrontmatterBytes)
			}
			return front, body, nil
		}
		if !more {
			break
		}
		off = len(rest) - len(next)
		if off > MaxFrontmatterBytes {
			return nil, nil, fail(CodeInvalidFrontmatter, "", "frontmatter exceeds %d bytes or is not closed by a '---' line", MaxFrontmatterBytes)
		}
	}
	return nil, nil, fail(CodeInvalidFrontmatter, "", "the frontmatter is not closed by a '---' line")
}

// cutLine returns the first line without its terminator (\n or \r\n), the
// remainder, and whether a terminator was found.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.TrimSuffix(b, []byte("\r")), nil, false
	}
	return bytes.TrimSuffix(b[:i], []byte("\r")), b[i+1:], true
}

// field is one top-level frontmatter key with its YAML node.
type field struct {
	key  string
	node *yaml.Node
}

// decode parses the frontmatter into its top-level mapping, preserving order.
func decode(front []byte) ([]field, error) {
	if !utf8.Valid(front) {
		return nil, fail(CodeInvalidFrontmatter, "", "frontmatter is not valid UTF-8")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		return nil, fail(CodeInvalidFrontmatter, "", "YAML: %s", clip(err.Error()))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fail(CodeInvalidFrontmatter, "", "frontmatter is empty")
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, fail(CodeInvalidFrontmatter, "", "frontmatter must be a YAML mapping")
	}
	if err := singleMeaning(m); err != nil {
		return nil, err
	}
	fields := make([]field, 0, len(m.Content)/2)
	seen := make(map[string]bool, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			return nil, fail(CodeInvalidFrontmatter, "", "frontmatter keys must be strings")
		}
		if seen[k.Value] {
			return nil, fail(CodeInvalidFrontmatter, clip(k.Value), "appears more than once")
		}
		seen[k.Value] = true
		fields = append(fields, field{key: k.Value, node: m.Content[i+1]})
	}
	return fields, nil
}

// singleMeaning refuses YAML whose meaning depends on the parser: anchors,
// aliases and merge keys ("<<"), which YAML 1.1 parsers (js-yaml, PyYAML)
// apply and 1.2 ones treat as an ordinary key, so an agent runtime could see
// fields the catalog never recorded. Frontmatter has no use for them.
func singleMeaning(n *yaml.Node) error {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return fail(CodeInvalidFrontmatter, "", "YAML anchors and aliases are not accepted: other parsers resolve them differently")
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Value == "<<" && k.Style == 0 {
				return fail(CodeInvalidFrontmatter, "<<", "YAML merge keys are not accepted: other parsers resolve them differently")
			}
		}
	}
	for _, c := range n.Content {
		if err := singleMeaning(c); err != nil {
			return err
		}
	}
	return nil
}

// yaml11NonString matches plain scalars that a name may spell but that YAML
// 1.1 parsers read as a number, a boolean or null: "0x1f" is 31 to them.
var yaml11NonString = regexp.MustCompile(`^(yes|no|on|off|true|false|null|[0-9][0-9_]*|0x[0-9a-f_]+|0b[01_]+|0o[0-7_]+)$`)

// nameOf reads the name: any scalar, but written quoted when an unquoted
// spelling would not be a string to every YAML parser.
func nameOf(f field) (string, error) {
	v, err := scalar(f)
	if err != nil {
		return "", err
	}
	if n := resolve(f.node); n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 && yaml11NonString.MatchString(v) {
		return "", fail(CodeInvalidFrontmatter, f.key, "write %q quoted: unquoted, YAML 1.1 parsers read it as a number or boolean", v)
	}
	return v, nil
}

// head is the frontmatter SKILL.md and agent.md share.
type head struct {
	name, description, version string
	metadata                   map[string]string
	// frontmatter is the whole frontmatter as JSON; nil, with the reason in
	// frontmatterIssue, when a value has no faithful JSON form.
	frontmatter      json.RawMessage
	frontmatterIssue string
}

// parseHead splits doc and reads its frontmatter key by key, in document
// order: the keys both documents share into a head, every other one
// through other (a document's own keys, and its warning for an unknown
// one). The first error in document order is returned. Then it requires a
// valid name and a plain-text description (ValidateDescription), in
// that order, and returns the body.
func parseHead(doc []byte, other func(field) error) (head, []byte, error) {
	front, body, err := split(doc)
	if err != nil {
		return head{}, nil, err
	}
	fields, err := decode(front)
	if err != nil {
		return head{}, nil, err
	}
	var h head
	seen := map[string]bool{}
	for _, f := range fields {
		seen[f.key] = true
		switch f.key {
		case "name":
			h.name, err = nameOf(f)
		case "description":
			h.description, err = str(f)
		case "metadata":
			h.metadata, err = stringMap(f)
		case "version":
			h.version, err = scalar(f)
		default:
			err = other(f)
		}
		if err != nil {
			return head{}, nil, err
		}
	}
	if !seen["name"] {
		return head{}, nil, fail(CodeInvalidFrontmatter, "name", "is required")
	}
	if err := ValidateName(h.name); err != nil {
		return head{}, nil, err
	}
	if !seen["description"] {
		return head{}, nil, fail(CodeInvalidFrontmatter, "description", "is required")
	}
	if err := ValidateDescription(h.description); err != nil {
		return head{}, nil, err
	}
	if h.frontmatter, err = frontmatterJSON(fields); err != nil {
		h.frontmatterIssue = err.Error()
	}
	return h, body, nil
}

// scalar returns the raw text of a scalar node: "1.10" stays "1.10".
func scalar(f field) (string, error) {
	n := resolve(f.node)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", fail(CodeInvalidFrontmatter, f.key, "must be a scalar value")
	}
	return n.Value, nil
}

func str(f field) (string, error) {
	n := resolve(f.node)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", fail(CodeInvalidFrontmatter, f.key, "must be a string")
	}
	return n.Value, nil
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// stringList accepts a YAML sequence of strings or a single string of
// space- or comma-separated items (both appear in the wild).
func stringList(f field) ([]string, error) {
	n := resolve(f.node)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		return strings.FieldsFunc(n.Value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }), nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			c = resolve(c)
			if c.Kind != yaml.ScalarNode {
				return nil, fail(CodeInvalidFrontmatter, f.key, "must be a list of strings")
			}
			out = append(out, c.Value)
		}
		return out, nil
	}
	return nil, fail(CodeInvalidFrontmatter, f.key, "must be a string or a list of strings")
}

func checkLen(field, v string, lo, hi int) error {
	n := utf8.RuneCountInString(v)
	if n < lo || n > hi {
		if lo > 0 && n == 0 {
			return fail(CodeInvalidFrontmatter, field, "is required and must not be empty")
		}
		return fail(CodeInvalidFrontmatter, field, "is %d characters, at most %d allowed", n, hi)
	}
	return nil
}

func checkBody(body []byte, requireText bool) error {
	if !utf8.Valid(body) {
		return fail(CodeInvalidBody, "", "the body is not valid UTF-8")
	}
	if requireText && len(bytes.TrimSpace(body)) == 0 {
		return fail(CodeInvalidBody, "", "the body must not be empty")
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// AsError unwraps err to an *Error when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
