package skillmd

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestFrontmatterJSON(t *testing.T) {
	tests := []struct {
		name  string
		front string
		want  string // "" when the frontmatter has no JSON form
		issue string // a substring of FrontmatterIssue
	}{
		{"order and types kept", "name: a\ndescription: \"d <&> \\\"q\\\"\"\nlicense: MIT\nmetadata:\n  version: 1.10\n  count: 0x1f\n  on: yes\nallowed-tools: [Bash, Read]\ntags:\n  - x\n  - 2\nhooks: null\nflag: true\n",
			`{"name":"a","description":"d <&> \"q\"","license":"MIT","metadata":{"version":1.1,"count":31,"on":"yes"},"allowed-tools":["Bash","Read"],"tags":["x",2],"hooks":null,"flag":true}`, ""},
		{"quoted stays a string", "name: a\ndescription: d\nversion: \"1.10\"\n", `{"name":"a","description":"d","version":"1.10"}`, ""},
		{"timestamp stays as written", "name: a\ndescription: d\nreleased: 2026-03-01\n", `{"name":"a","description":"d","released":"2026-03-01"}`, ""},
		{"nested mappings", "name: a\ndescription: d\nx:\n  y:\n    z: [1, {k: v}]\n", `{"name":"a","description":"d","x":{"y":{"z":[1,{"k":"v"}]}}}`, ""},
		{"infinity", "name: a\ndescription: d\nx: .inf\n", "", "x: .inf is not a finite number"},
		{"nan", "name: a\ndescription: d\nx: [.nan]\n", "", "x[0]"},
		{"integer beyond 64 bits", "name: a\ndescription: d\nx: !!int 123456789012345678901234567890\n", "", "does not fit 64 bits"},
		{"non-string key", "name: a\ndescription: d\nx:\n  1: one\n", "", "not a string"},
		{"nested duplicate key", "name: a\ndescription: d\nx:\n  k: 1\n  k: 2\n", "", "x.k: appears more than once"},
		{"custom tag", "name: a\ndescription: d\nx: !shout hello\n", "", "tag !shout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSkill(doc(tc.front, "body\n"))
			if err != nil {
				t.Fatalf("ParseSkill: %v", err)
			}
			a, err := ParseAgent(doc(tc.front, "body\n"))
			if err != nil {
				t.Fatalf("ParseAgent: %v", err)
			}
			for _, got := range []struct {
				fm    json.RawMessage
				issue string
			}{{s.Frontmatter, s.FrontmatterIssue}, {a.Frontmatter, a.FrontmatterIssue}} {
				if tc.want == "" {
					if got.fm != nil || !strings.Contains(got.issue, tc.issue) {
						t.Errorf("frontmatter %s, issue %q; want none, issue with %q", got.fm, got.issue, tc.issue)
					}
					continue
				}
				if string(got.fm) != tc.want || got.issue != "" {
					t.Errorf("frontmatter\n %s (issue %q)\nwant\n %s", got.fm, got.issue, tc.want)
				}
				var v map[string]any
				if err := json.Unmarshal(got.fm, &v); err != nil {
					t.Errorf("not JSON: %v", err)
				}
			}
		})
	}
}

// TestFrontmatterJSONAgreesWithDecode pins that the rendering means what
// go-yaml itself decodes, for every value the table above accepts.
func TestFrontmatterJSONAgreesWithDecode(t *testing.T) {
	front := "name: a\ndescription: d\nm:\n  f: 1.5\n  i: -3\n  o: 0o17\n  s: 'x'\n  n: ~\n  l: [true, false, 'y']\n"
	s, err := ParseSkill(doc(front, ""))
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON map[string]any
	if err := json.Unmarshal(s.Frontmatter, &fromJSON); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "a", "description": "d", "m": map[string]any{
		"f": 1.5, "i": -3.0, "o": 15.0, "s": "x", "n": nil, "l": []any{true, false, "y"},
	}}
	if !reflect.DeepEqual(fromJSON, want) {
		t.Errorf("got %#v\nwant %#v", fromJSON, want)
	}
}
