package skillmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// frontmatterJSON renders the frontmatter's top-level mapping as one JSON
// object, verbatim: every key in document order, each value as the YAML 1.2
// core schema reads it (go-yaml v3's resolution: 1.10 is the number 1.1,
// "1.10" the string). Timestamps stay the strings they were written as,
// since JSON has no date type. The error names the first value JSON cannot
// carry unchanged (a non-string mapping key, a duplicate nested key, NaN
// or infinity, an integer beyond 64 bits, a custom tag): such a frontmatter
// is still valid, it just has no faithful JSON form.
func frontmatterJSON(fields []field) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, f.key)
		b.WriteByte(':')
		if err := writeNode(&b, f.node, f.key); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return json.RawMessage(b.Bytes()), nil
}

func writeNode(b *bytes.Buffer, n *yaml.Node, path string) error {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
				return fmt.Errorf("%s: a mapping key that is not a string", clip(path))
			}
			if seen[k.Value] {
				return fmt.Errorf("%s.%s: appears more than once", clip(path), clip(k.Value))
			}
			seen[k.Value] = true
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := writeNode(b, n.Content[i+1], path+"."+k.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeNode(b, c, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(b, n, path)
	default:
		return fmt.Errorf("%s: not a mapping, sequence or scalar", clip(path))
	}
	return nil
}

func writeScalar(b *bytes.Buffer, n *yaml.Node, path string) error {
	switch n.Tag {
	case "!!str", "!!timestamp":
		writeString(b, n.Value)
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("%s: %q is not a boolean", clip(path), clip(n.Value))
		}
		fmt.Fprint(b, v)
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			fmt.Fprint(b, i)
			return nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			fmt.Fprint(b, u)
			return nil
		}
		return fmt.Errorf("%s: the integer %s does not fit 64 bits", clip(path), clip(n.Value))
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%s: %s is not a finite number", clip(path), clip(n.Value))
		}
		enc, _ := json.Marshal(f) // finite: cannot fail
		b.Write(enc)
	default:
		return fmt.Errorf("%s: the tag %s has no JSON form", clip(path), clip(n.Tag))
	}
	return nil
}

// writeString writes s as a JSON string, without HTML escaping.
func writeString(b *bytes.Buffer, s string) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string: cannot fail
	b.WriteString(strings.TrimSuffix(sb.String(), "\n"))
}
