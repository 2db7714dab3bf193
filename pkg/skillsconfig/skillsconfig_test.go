package skillsconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

const full = `version: 1
skills:
  - name: deploy-via-pr
    visibility: authenticated
    description: "Open a PR to deploy a config change."
    url: /skills/deploy-via-pr.md
    max_entries: 2000
    max_artifact_bytes: 1048576
  - name: inline-one
    body: |
      ---
      name: inline-one
      description: d
      ---
      body
  - name: from-file
    type: archive
    path: files/from-file.zip
    url: skills/from-file.zip
  - name: remote
    type: skill-md
    url: https://cdn.example.com/remote.md
    digest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
    description: Remote skill.
subagents:
  - name: reviewer
    visibility: authenticated
listings:
  partner-a:
    skills:
      - name: deploy-via-pr
      - name: partner-only
        url: skills/partner-only.md
        path: files/partner-only.md
        type: skill-md
  empty-one: {}
`

// v1 completes a test document with the version every config must state,
// after its own lines, so that the line numbers of messages stay the
// document's.
func v1(doc string) string {
	if strings.Contains(doc, "version:") {
		return doc
	}
	return doc + "version: 1\n"
}

func TestParseFull(t *testing.T) {
	c, err := Parse([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Skills) != 4 || len(c.Subagents) != 1 || len(c.Listings) != 2 {
		t.Fatalf("counts: %d skills %d subagents %d listings", len(c.Skills), len(c.Subagents), len(c.Listings))
	}
	d := c.Skills[0]
	if d.Visibility != catalog.Authenticated || d.Path != "/skills/deploy-via-pr.md" || d.Defines() || d.Caps.MaxEntries != 2000 || d.Caps.MaxArtifactBytes != 1<<20 {
		t.Errorf("deploy-via-pr = %+v", d)
	}
	if in := c.Skills[1]; in.Type != artifact.TypeSkillMD || !in.Defines() || !strings.Contains(in.Body, "name: inline-one") {
		t.Errorf("inline-one = %+v", in)
	}
	if ff := c.Skills[2]; ff.Path != "/skills/from-file.zip" || ff.FilePath != "files/from-file.zip" || ff.Type != artifact.TypeArchive {
		t.Errorf("relative url must resolve against the origin root: %+v", ff)
	}
	if r := c.Skills[3]; r.ExternalURL != "https://cdn.example.com/remote.md" || r.Path != "" || r.Digest.IsZero() {
		t.Errorf("remote = %+v", r)
	}
	if c.Listings[0].Name != "empty-one" || c.Listings[1].Name != "partner-a" {
		t.Fatalf("listings not in name order: %+v", c.Listings)
	}
	p := c.Listings[1]
	if len(p.Refs) != 1 || p.Refs[0] != "deploy-via-pr" || len(p.Entries) != 1 {
		t.Fatalf("partner-a = %+v", p)
	}
	if e := p.Entries[0]; e.Path != "/.well-known/agent-skills/partner-a/skills/partner-only.md" || e.Listing != "partner-a" {
		t.Errorf("listing entry url must resolve under the listing prefix: %+v", e)
	}
	if c.Touches(catalog.KindSkill, "partner-a", "partner-only") == nil || c.Touches(catalog.KindSkill, "", "partner-only") != nil ||
		c.Touches(catalog.KindSubagent, "", "reviewer") == nil || c.Touches(catalog.KindSkill, "", "reviewer") != nil {
		t.Error("Touches finds the wrong entries")
	}
}

func TestRelativeAndAbsoluteNameTheSameAddress(t *testing.T) {
	for _, tc := range []struct{ listing, rel, abs, want string }{
		{"", "skills/x.md", "/skills/x.md", "/skills/x.md"},
		{"partner-a", "skills/x.md", "/.well-known/agent-skills/partner-a/skills/x.md", "/.well-known/agent-skills/partner-a/skills/x.md"},
	} {
		a, err := servedPath(tc.rel, tc.listing, catalog.KindSkill)
		if err != nil {
			t.Fatal(err)
		}
		b, err := servedPath(tc.abs, tc.listing, catalog.KindSkill)
		if err != nil {
			t.Fatal(err)
		}
		if a != tc.want || b != tc.want {
			t.Errorf("listing %q: %q -> %q, %q -> %q, want %q", tc.listing, tc.rel, a, tc.abs, b, tc.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, doc, field string
	}{
		{"unknown top-level key", "skillz: []\n", ""},
		{"unknown entry key", "skills:\n  - name: a\n    colour: red\n", ""},
		{"bad version", "version: 2\n", "version"},
		{"not yaml", "skills: [\n", ""},
		{"two documents", "skills: []\n---\nskills: []\n", ""},
		{"invalid utf8", "skills:\n  - name: a\n    description: \"\xff\"\n", ""},
		{"missing name", "skills:\n  - visibility: public\n", "skills[0].name"},
		{"bad name", "skills:\n  - name: Bad\n", "skills[0].name"},
		{"reserved name", "skills:\n  - name: check-updates\n", "skills[0].name"},
		{"duplicate name", "skills:\n  - name: a\n  - name: a\n", "skills[1].name"},
		{"duplicate subagent", "subagents:\n  - name: a\n  - name: a\n", "subagents[1].name"},
		{"bad visibility", "skills:\n  - name: a\n    visibility: private\n", "skills[0].visibility"},
		{"empty description", "skills:\n  - name: a\n    description: \"\"\n", "skills[0].description"},
		{"long description", "skills:\n  - name: a\n    description: " + strings.Repeat("x", 1025) + "\n", "skills[0].description"},
		{"bad type", "skills:\n  - name: a\n    type: zip\n", "skills[0].type"},
		{"agent type on skill", "skills:\n  - name: a\n    type: agent-md\n", "skills[0].type"},
		{"path outside files", "skills:\n  - name: a\n    type: skill-md\n    path: skills/a.md\n", "skills[0].path"},
		{"path traversal", "skills:\n  - name: a\n    type: skill-md\n    path: files/../catalog/catalog.json\n", "skills[0].path"},
		{"path needs type", "skills:\n  - name: a\n    path: files/a.md\n", "skills[0].type"},
		{"body and path", "skills:\n  - name: a\n    type: skill-md\n    body: x\n    path: files/a.md\n", "skills[0]"},
		{"archive body", "skills:\n  - name: a\n    type: archive\n    body: x\n", "skills[0].body"},
		{"duplicate url", "skills:\n  - name: a\n    url: /skills/x.md\n  - name: b\n    url: skills/x.md\n", "skills[1].url"},
		{"url dot-dot", "skills:\n  - name: a\n    url: /skills/../manifest.json\n", "skills[0].url"},
		{"url query", "skills:\n  - name: a\n    url: /skills/a.md?x=1\n", "skills[0].url"},
		{"scheme-relative url", "skills:\n  - name: a\n    url: //evil.example/a.md\n", "skills[0].url"},
		{"http external", "skills:\n  - name: a\n    type: skill-md\n    url: http://cdn.example.com/a.md\n", "skills[0].url"},
		{"credentials in url", "skills:\n  - name: a\n    type: skill-md\n    url: https://u:p@cdn.example.com/a.md\n", "skills[0].url"},
		{"digest without external", "skills:\n  - name: a\n    digest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n", "skills[0].digest"},
		{"bad digest", "skills:\n  - name: a\n    type: skill-md\n    url: https://cdn.example.com/a.md\n    digest: sha256:ABC\n", "skills[0].digest"},
		{"pinned without description", "skills:\n  - name: a\n    type: skill-md\n    url: https://cdn.example.com/a.md\n    digest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n", "skills[0].description"},
		{"collides with manifest", "skills:\n  - name: a\n    url: /manifest.json\n", "skills[0].url"},
		{"collides with api", "skills:\n  - name: a\n    url: /api/v1/skills\n", "skills[0].url"},
		{"collides with mcp", "skills:\n  - name: a\n    url: /mcp\n", "skills[0].url"},
		{"collides with native", "skills:\n  - name: a\n    url: /skills/v1/index.json\n", "skills[0].url"},
		{"collides with subagents", "skills:\n  - name: a\n    url: /subagents/v1/x.json\n", "skills[0].url"},
		{"collides with well-known", "skills:\n  - name: a\n    url: /.well-known/agent-skills/index.json\n", "skills[0].url"},
		{"collides with catalog", "skills:\n  - name: a\n    url: /catalog/catalog.json\n", "skills[0].url"},
		{"collides with blobs", "skills:\n  - name: a\n    url: /blobs/sha256/00\n", "skills[0].url"},
		{"raw files key", "skills:\n  - name: a\n    url: /files/a.md\n", "skills[0].url"},
		{"listing escapes its prefix", "listings:\n  p:\n    skills:\n      - name: a\n        url: /.well-known/agent-skills/q/a.md\n", "listings.p.skills[0].url"},
		{"listing index", "listings:\n  p:\n    skills:\n      - name: a\n        url: index.json\n", "listings.p.skills[0].url"},
		{"bad listing name", "listings:\n  Partner:\n    skills: []\n", "listings.Partner"},
		{"duplicate in listing", "listings:\n  p:\n    skills:\n      - name: a\n      - name: a\n", "listings.p.skills[1].name"},
		{"subagent url", "subagents:\n  - name: a\n    url: /agents/a.md\n", "subagents[0].url"},
		{"raise artifact cap", "skills:\n  - name: a\n    max_artifact_bytes: 4194305\n", "skills[0].max_artifact_bytes"},
		{"zero entries", "skills:\n  - name: a\n    max_entries: 0\n", "skills[0].max_entries"},
		{"ratio below one", "skills:\n  - name: a\n    max_decompression_ratio: 0.5\n", "skills[0].max_decompression_ratio"},
		{"negative expanded", "skills:\n  - name: a\n    max_expanded_bytes: -1\n", "skills[0].max_expanded_bytes"},
		{"huge", strings.Repeat("#", MaxBytes+1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(v1(tt.doc)))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v, want *Error", err)
			}
			if e.Field != tt.field || e.Code() != CodeInvalidConfig {
				t.Fatalf("error %q at field %q, want field %q", e.Msg, e.Field, tt.field)
			}
		})
	}
}

func TestYAMLErrorsSpeakToOperators(t *testing.T) {
	_, err := Parse([]byte(v1("skills:\n  - name: a\n    colour: red\n    shade: dark\n")))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse = %v", err)
	}
	for _, want := range []string{`line 3: unknown key "colour"`, `line 4: unknown key "shade"`} {
		if !strings.Contains(e.Msg, want) {
			t.Errorf("message %q lacks %q", e.Msg, want)
		}
	}
	if strings.Contains(e.Msg, "raw") || strings.Contains(e.Msg, "skillsconfig") || strings.Contains(e.Msg, "\n") {
		t.Errorf("message %q exposes Go names or spans lines", e.Msg)
	}
	_, err = Parse([]byte(v1("skills:\n  - name: a\n    max_entries: many\n")))
	if !errors.As(err, &e) || !strings.Contains(e.Msg, `line 3: max_entries: want a number, got a string "many"`) {
		t.Errorf("type error = %v, want the line, key and kinds named", err)
	}
	// A node of the wrong kind is named as YAML names it, with the key
	// it is on, never as the Go type it would decode into.
	for doc, want := range map[string]string{
		"revoke: {name: x}\n":                       "line 1: revoke: want a list (- item per line), got a mapping (key: value)",
		"skills:\n  - name: a\n    allow: {a: b}\n": "line 3: allow: want a list (- item per line), got a mapping (key: value)",
		"skills: 3\n":                               `line 1: skills: want a list (- item per line), got a number "3"`,
		"scan: [a]\n":                               "line 1: scan: want a mapping (key: value), got a list",
		"skills:\n  - name: [a]\n":                  "line 2: name: want a string, got a list",
		"listings:\n  - a\n":                        "line 1: listings: want a mapping (key: value), got a list",
		// A block node is named by the key it is under, on that key's
		// line, not by its own first key.
		"skills:\n  - name: a\n    allow:\n      digest: x\n": "line 3: allow: want a list (- item per line), got a mapping (key: value)",
		"revoke:\n\n  # the bad one\n  name: x\n":             "line 1: revoke: want a list (- item per line), got a mapping (key: value)",
	} {
		_, err := Parse([]byte(v1(doc)))
		if !errors.As(err, &e) || !strings.Contains(e.Msg, want) || strings.Contains(e.Msg, "unmarshal") {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}

func TestParseAcceptsEdgeCases(t *testing.T) {
	for name, doc := range map[string]string{
		"version alone":        "version: 1\n",
		"a listing of its own": "listings:\n  p: {}\n",
		"clock skew accepted":  "skills:\n  - name: a\n    max_clock_skew_secs: 60\n",
		"fetched once":         "skills:\n  - name: a\n    type: archive\n    url: https://cdn.example.com/a.zip\n",
		"listing of refs only": "listings:\n  p:\n    skills:\n      - name: a\n      - name: b\n",
		"raised caps":          "skills:\n  - name: a\n    max_entries: 5000\n    max_expanded_bytes: 104857600\n    max_decompression_ratio: 500\n",
	} {
		if _, err := Parse([]byte(v1(doc))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMisspeltKeysGetASuggestion: an unknown key close to a known one of
// its level is answered with that key, at every level of the document; a
// key of another level says where it belongs.
func TestMisspeltKeysGetASuggestion(t *testing.T) {
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"entry", "skills:\n  - name: a\n    visibilty: authenticated\n", `line 3: unknown key "visibilty" in an entry (did you mean "visibility"?)`},
		{"sub-agent entry", "subagents:\n  - name: a\n    decsription: x\n", `unknown key "decsription" in an entry (did you mean "description"?)`},
		{"top level", "skils:\n  - name: a\n", `line 1: unknown key "skils" in the top level (did you mean "skills"?)`},
		{"top level, plural", "listing:\n  p: {}\n", `(did you mean "listings"?)`},
		{"listing", "listings:\n  p:\n    skill:\n      - name: a\n", `line 3: unknown key "skill" in a listing (did you mean "skills"?)`},
		{"listing entry", "listings:\n  p:\n    skills:\n      - name: a\n        max_entires: 5\n", `(did you mean "max_entries"?)`},
		{"capitals", "skills:\n  - name: a\n    Visibility: public\n", `(did you mean "visibility"?)`},
		{"a key of another level", "visibility: public\n", `unknown key "visibility" in the top level ("visibility" is a key of an entry)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(v1(tt.doc)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: %v\nwant it to contain %s", err, tt.want)
			}
		})
	}
	_, err := Parse([]byte(v1("skills:\n  - name: a\n    colour: red\n")))
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("Parse: %v; want no suggestion for a key near nothing", err)
	}
}
