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
	"strings"

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

// GetAtt returns the logical id and attribute a !GetAtt node names, in its
// short form (!GetAtt Id.Attr) or its list form (!GetAtt [Id, Attr]); "" when
// n is no !GetAtt.
func GetAtt(n *Node) (id, attr string) {
	if n == nil || n.Tag != "!GetAtt" {
		return "", ""
	}
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) != 2 {
			return "", ""
		}
		return n.Content[0].Value, n.Content[1].Value
	}
	id, attr, _ = strings.Cut(n.Value, ".")
	return id, attr
}

// Events returns the names of a function's SAM events of a type ("SQS",
// "ScheduleV2", …), in order.
func (t *Template) Events(function, typ string) []string {
	events := Get(t.Resource(function), "Properties", "Events")
	var out []string
	for _, name := range Keys(events) {
		if v := Get(events, name, "Type"); v != nil && v.Value == typ {
			out = append(out, name)
		}
	}
	return out
}

// Event returns the Properties of a function's event.
func (t *Template) Event(function, name string) *Node {
	return Get(t.Resource(function), "Properties", "Events", name, "Properties")
}

// EventQueues returns the logical ids of the queues a function consumes
// through SQS events (Queue: !GetAtt <id>.Arn).
func (t *Template) EventQueues(function string) []string {
	var out []string
	for _, name := range t.Events(function, "SQS") {
		if id, attr := GetAtt(Get(t.Event(function, name), "Queue")); id != "" && attr == "Arn" {
			out = append(out, id)
		}
	}
	return out
}

// QueueNotification is one rule of a bucket's
// NotificationConfiguration.QueueConfigurations.
type QueueNotification struct {
	Bucket string // the bucket's logical id
	Event  string // s3:ObjectCreated:*, …
	Prefix string // the key prefix of its filter ("" for none)
	Queue  string // the logical id of its queue (Queue: !GetAtt <id>.Arn), else ""
}

// QueueNotifications returns the queue notifications of every bucket of the
// template, in order.
func (t *Template) QueueNotifications() []QueueNotification {
	var out []QueueNotification
	for _, bucket := range t.ResourcesOfType("AWS::S3::Bucket") {
		confs := Get(t.Resource(bucket), "Properties", "NotificationConfiguration", "QueueConfigurations")
		if confs == nil {
			continue
		}
		for _, c := range confs.Content {
			n := QueueNotification{Bucket: bucket}
			if e := Get(c, "Event"); e != nil {
				n.Event = e.Value
			}
			if id, attr := GetAtt(Get(c, "Queue")); attr == "Arn" {
				n.Queue = id
			}
			n.Prefix = prefixRule(Get(c, "Filter", "S3Key", "Rules"))
			out = append(out, n)
		}
	}
	return out
}

func prefixRule(rules *Node) string {
	if rules == nil {
		return ""
	}
	for _, r := range rules.Content {
		if n := Get(r, "Name"); n != nil && (n.Value == "prefix" || n.Value == "Prefix") {
			if v := Get(r, "Value"); v != nil {
				return v.Value
			}
		}
	}
	return ""
}

// S3Filter is a key prefix whose S3 events reach a function, and the event
// names that do.
type S3Filter struct {
	Events []string
	Prefix string
}

// S3Filters returns the bucket notifications that reach a function: those
// sent to a queue the function consumes through an SQS event, by prefix in
// document order, each with its sorted event names.
func (t *Template) S3Filters(function string) []S3Filter {
	queues := t.EventQueues(function)
	var out []S3Filter
	index := map[string]int{}
	for _, n := range t.QueueNotifications() {
		if !slices.Contains(queues, n.Queue) {
			continue
		}
		i, ok := index[n.Prefix]
		if !ok {
			i = len(out)
			index[n.Prefix] = i
			out = append(out, S3Filter{Prefix: n.Prefix})
		}
		out[i].Events = append(out[i].Events, n.Event)
	}
	for i := range out {
		slices.Sort(out[i].Events)
	}
	return out
}

// NotificationPrefixes returns the distinct key prefixes whose S3 events
// reach a function.
func (t *Template) NotificationPrefixes(function string) []string {
	var out []string
	for _, f := range t.S3Filters(function) {
		out = append(out, f.Prefix)
	}
	return out
}
