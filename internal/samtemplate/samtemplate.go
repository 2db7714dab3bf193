// Package samtemplate reads template.yaml (AWS SAM) for the tests that check
// the deployable bundle: CloudFormation's short-form intrinsics (!Sub, !Ref,
// !GetAtt, !If, …) are kept as YAML tags on the nodes, so a test can tell a
// !Sub string from a !Ref.
package samtemplate

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Node is a template node; Tag is "!Sub", "!Ref", … for intrinsics.
type Node = yaml.Node

// Template is a parsed template.yaml.
type Template struct {
	Root *Node // the top-level mapping
}

// Path is the repository's template.yaml.
func Path() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "template.yaml")
}

// Load parses the repository's template.yaml.
func Load() (*Template, error) {
	b, err := os.ReadFile(Path())
	if err != nil {
		return nil, err
	}
	var doc Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("parse template.yaml: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("template.yaml is not a mapping")
	}
	return &Template{Root: doc.Content[0]}, nil
}

// Get follows mapping keys from n; nil when a key is missing.
func Get(n *Node, keys ...string) *Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// Keys returns a mapping's keys in document order.
func Keys(n *Node) []string {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var ks []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		ks = append(ks, n.Content[i].Value)
	}
	return ks
}

// Resource returns the resource with the logical id, or nil.
func (t *Template) Resource(id string) *Node { return Get(t.Root, "Resources", id) }

// ResourcesOfType returns the logical ids of the resources of a type, in order.
func (t *Template) ResourcesOfType(typ string) []string {
	res := Get(t.Root, "Resources")
	var ids []string
	for _, id := range Keys(res) {
		if v := Get(res, id, "Type"); v != nil && v.Value == typ {
			ids = append(ids, id)
		}
	}
	return ids
}

// Walk calls fn for every node under n, depth first.
func Walk(n *Node, fn func(*Node)) {
	if n == nil {
		return
	}
	fn(n)
	for _, c := range n.Content {
		Walk(c, fn)
	}
}

// S3Filter is one S3 event of a function: its event names and key prefix.
type S3Filter struct {
	Events []string
	Prefix string
}

// S3Filters returns the S3 events of a function's Events with their prefix filters.
func (t *Template) S3Filters(function string) []S3Filter {
	events := Get(t.Resource(function), "Properties", "Events")
	var out []S3Filter
	for _, name := range Keys(events) {
		ev := Get(events, name)
		if v := Get(ev, "Type"); v == nil || v.Value != "S3" {
			continue
		}
		f := S3Filter{}
		switch e := Get(ev, "Properties", "Events"); {
		case e == nil:
		case e.Kind == yaml.SequenceNode:
			for _, c := range e.Content {
				f.Events = append(f.Events, c.Value)
			}
		default:
			f.Events = []string{e.Value}
		}
		rules := Get(ev, "Properties", "Filter", "S3Key", "Rules")
		if rules != nil {
			for _, r := range rules.Content {
				if n := Get(r, "Name"); n != nil && (n.Value == "prefix" || n.Value == "Prefix") {
					f.Prefix = Get(r, "Value").Value
				}
			}
		}
		slices.Sort(f.Events)
		out = append(out, f)
	}
	return out
}

// NotificationPrefixes returns the distinct key prefixes that trigger a function.
func (t *Template) NotificationPrefixes(function string) []string {
	var out []string
	for _, f := range t.S3Filters(function) {
		if !slices.Contains(out, f.Prefix) {
			out = append(out, f.Prefix)
		}
	}
	return out
}
