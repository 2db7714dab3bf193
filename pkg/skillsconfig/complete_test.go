package skillsconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// TestAConfigSaysWhatItMeans: a document that says less than its writer
// meant (empty in any spelling, without a version, with a key whose value
// is missing or empty) is refused, at the field at fault; each parsed under
// the earlier rules, most as "no restrictions". The config in force is
// re-read under those rules (ParseInForce), so an upgrade keeps it.
func TestAConfigSaysWhatItMeans(t *testing.T) {
	const hide = "version: 1\nskills:\n  - name: secret\n"
	for _, tt := range []struct {
		name, doc, field, says string
	}{
		{"0 bytes", "", "", "the config is empty"},
		{"comments only", "# nothing to hide yet\n", "", "the config is empty"},
		{"a document marker", "---\n", "", "the config is empty"},
		{"a marker and comments", "---\n# todo\n...\n", "", "the config is empty"},
		{"null", "null\n", "", "the config is empty"},
		{"tilde", "~\n", "", "the config is empty"},
		{"an empty mapping", "{}\n", "", "the config is empty"},
		{"no version", "skills:\n  - name: secret\n    visibility: authenticated\n", "version", "start the config with `version: 1`"},
		{"visibility ~", hide + "    visibility: ~\n", "skills[0].visibility", "line 4: visibility has no value"},
		{"visibility null", hide + "    visibility: null\n", "skills[0].visibility", "has no value"},
		{"visibility with nothing after the colon", hide + "    visibility:\n", "skills[0].visibility", "has no value"},
		{"visibility empty", hide + "    visibility: \"\"\n", "skills[0].visibility", "line 4: visibility is empty"},
		{"visibility empty, single quotes", hide + "    visibility: ''\n", "skills[0].visibility", "is empty"},
		{"a name without a value", "version: 1\nskills:\n  - name:\n", "skills[0].name", "has no value"},
		{"skills without a value", "version: 1\nskills:\n", "skills", "skills has no value"},
		{"an empty list item", "version: 1\nskills:\n  -\n", "skills[0]", "the list item has no value"},
		{"a listing without a value", "version: 1\nlistings:\n  partner:\n", "listings.partner", "write `{}` for a listing"},
		{"a listing entry's visibility", "version: 1\nlistings:\n  p:\n    skills:\n      - name: a\n        visibility: ~\n",
			"listings.p.skills[0].visibility", "has no value"},
		{"a sub-agent's visibility", "version: 1\nsubagents:\n  - name: a\n    visibility: \"\"\n", "subagents[0].visibility", "is empty"},
		{"default_visibility ~", "version: 1\ndefault_visibility: ~\n", "default_visibility", "has no value"},
		{"a version of null", "version: ~\n", "version", "has no value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			var e *Error
			if !errors.As(err, &e) || e.Code() != CodeInvalidConfig {
				t.Fatalf("Parse = %v, want an invalid_config", err)
			}
			if e.Field != tt.field || !strings.Contains(e.Msg, tt.says) {
				t.Fatalf("refused at %q: %s\nwant the field %q and %q", e.Field, e.Msg, tt.field, tt.says)
			}
			if tt.field == "skills[0].name" {
				return // never valid: a name is required
			}
			if _, err := ParseInForce([]byte(tt.doc)); err != nil {
				t.Fatalf("ParseInForce: %v; the earlier rules accepted it, so a config in force like it must still parse", err)
			}
		})
	}
	for _, doc := range []string{"version: 1\n", "version: 1\nskills: []\nlistings: {}\n", "version: 1\nlistings:\n  p: {}\n"} {
		if _, err := Parse([]byte(doc)); err != nil {
			t.Errorf("Parse(%q): %v", doc, err)
		}
	}
	if _, err := ParseInForce([]byte("version: 1\nskills:\n  - name: a\n    visibility: private\n")); err == nil {
		t.Error("ParseInForce accepted an invalid visibility: only the rules added for new uploads are relaxed")
	}
}

func TestDefaultVisibility(t *testing.T) {
	for doc, want := range map[string]catalog.Visibility{
		"version: 1\n": "",
		"version: 1\ndefault_visibility: authenticated\n": catalog.Authenticated,
		"version: 1\ndefault_visibility: public\n":        catalog.Public,
	} {
		c, err := Parse([]byte(doc))
		if err != nil || c.DefaultVisibility != want {
			t.Errorf("Parse(%q): %v, default %q; want %q", doc, err, c.DefaultVisibility, want)
		}
	}
	_, err := Parse([]byte("version: 1\ndefault_visibility: internal\n"))
	var e *Error
	if !errors.As(err, &e) || e.Field != "default_visibility" {
		t.Errorf("an unknown default visibility: %v", err)
	}
	_, err = Parse([]byte("version: 1\ndefault_visibilty: authenticated\n"))
	if err == nil || !strings.Contains(err.Error(), `did you mean "default_visibility"?`) {
		t.Errorf("a misspelt default_visibility: %v", err)
	}
	// Another tool's word for a key, no slip of the keyboard, is named
	// too, where the key it means belongs.
	for doc, want := range map[string]string{
		"revocations:\n  - name: x\n":                   `unknown key "revocations" in the top level (did you mean "revoke"?)`,
		"skills:\n  - name: x\n    allowlist: []\n":     `unknown key "allowlist" in an entry (did you mean "allow"?)`,
		"scan:\n  threshold: medium\n":                  `unknown key "threshold" in scan (did you mean "block"?)`,
		"skills:\n  - name: x\n    threshold: medium\n": `unknown key "threshold" in an entry`,
	} {
		_, err := Parse([]byte("version: 1\n" + doc))
		if err == nil || !strings.Contains(err.Error(), want) || (strings.HasSuffix(want, "entry") && strings.Contains(err.Error(), "did you mean")) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}

// TestDescriptionOverridesArePlainText: an override is held to the
// frontmatter's rule (skillmd.ValidateDescription).
func TestDescriptionOverridesArePlainText(t *testing.T) {
	for _, desc := range []string{`"Safe \u202egnp.exe"`, `"zero\u200bwidth"`, `"<img src=x onerror=alert(1)>"`, `"bell \a"`,
		`"Safe &#x202e;gnp.exe"`, `"Safe &#8238;gnp.exe"`, `"&lt;script&gt;"`, `"[x](javascript:alert(1))"`,
		`"![img](http://tracker.example/p.gif)"`, `"data:text/html;base64,PHNjcmlwdD4="`} {
		doc := "version: 1\nskills:\n  - name: a\n    description: " + desc + "\n"
		_, err := Parse([]byte(doc))
		var e *Error
		if !errors.As(err, &e) || e.Field != "skills[0].description" {
			t.Errorf("description %s: %v, want it refused at skills[0].description", desc, err)
		}
		if _, err := ParseInForce([]byte(doc)); err != nil {
			t.Errorf("ParseInForce refused description %s: %v", desc, err)
		}
	}
}

// TestSyntaxErrorsNameTheirLine: the YAML parser names the line where the
// block holding an error starts; the message names the line at fault.
func TestSyntaxErrorsNameTheirLine(t *testing.T) {
	for _, tt := range []struct{ name, doc, want string }{
		{"one space short", "version: 1\nskills:\n  - name: a\n    visibility: authenticated\n  - name: b\n   visibility: authenticated\n  - name: c\n",
			"line 6: did not find expected '-' indicator (in the block that starts at line 2); indent with spaces only"},
		{"a key outdented", "version: 1\nskills:\n  - name: a\n  visibility: authenticated\n", "line 4: "},
		{"a tab", "version: 1\nskills:\n- name: a\n  visibility: authenticated\n\tdescription: x\n", "line 5: found a tab character"},
		{"too deep", "version: 1\nskills:\n  - name: a\n    visibility: authenticated\n  - name: b\n      visibility: authenticated\n",
			"line 6: mapping values are not allowed"},
		{"an unclosed quote", "version: 1\nskills:\n  - name: a\n    description: \"abc\n  - name: b\n", "line 4: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: %v\nwant %q", err, tt.want)
			}
		})
	}
}

func TestUnmatchedNamesGetASuggestion(t *testing.T) {
	c, err := Parse([]byte(`version: 1
skills:
  - name: k8s-rolback
    visibility: authenticated
  - name: pdf-tools
  - name: reviewer
    visibility: authenticated
  - name: partner-faq
    visibility: authenticated
  - name: inline
    body: "---\nname: inline\ndescription: d\n---\nBody.\n"
  - name: zzz-nothing-near
    visibility: authenticated
subagents:
  - name: pdf-tools
    visibility: authenticated
  - name: security-auditr
listings:
  p:
    skills:
      - name: pdf-tool
      - name: faq
        visibility: authenticated
      - name: pdf-tools
        visibility: authenticated
`))
	if err != nil {
		t.Fatal(err)
	}
	pub := PublishedAt([]string{"skills/k8s-rollback.md", "skills/pdf-tools.zip", "subagents/reviewer.md", "subagents/security-auditor/agent.md",
		"listings/p/skills/partner-faq.md", "files/x.md", "skills/notes.txt"})
	got := map[string]string{}
	for _, u := range c.Unmatched(pub) {
		got[u.Field] = u.Message
	}
	want := map[string]string{
		"skills[0]":            `skills[0]: "k8s-rolback" names no published skill (did you mean "k8s-rollback"?); its settings apply to nothing`,
		"skills[2]":            `"reviewer" names no published skill (a sub-agent of that name is published: its entry belongs under subagents)`,
		"skills[3]":            `"partner-faq" names no published skill (listing p publishes a skill of that name: its entry belongs under listings.p.skills)`,
		"skills[5]":            `skills[5]: "zzz-nothing-near" names no published skill; its settings`,
		"subagents[0]":         `"pdf-tools" names no published sub-agent (a skill of that name is published: its entry belongs under skills)`,
		"subagents[1]":         `"security-auditr" names no published sub-agent (did you mean "security-auditor"?)`,
		"listings.p.skills[0]": `"pdf-tool" names no published top-level skill (did you mean "pdf-tools"?); the listing includes nothing by that name`,
		"listings.p.skills[1]": `"faq" names no published skill of listing p; its settings`,
		"listings.p.skills[2]": `"pdf-tools" names no published skill of listing p (a top-level skill of that name is published: a name alone includes it in the listing)`,
	}
	for field, w := range want {
		if !strings.Contains(got[field], w) {
			t.Errorf("%s: %q\nwant it to contain %q", field, got[field], w)
		}
	}
	for field := range got {
		if _, ok := want[field]; !ok {
			t.Errorf("%s reported: %s", field, got[field])
		}
	}
	if u := c.Unmatched(pub)[0]; u.Suggestion != "k8s-rollback" || u.Name != "k8s-rolback" || u.Kind != catalog.KindSkill {
		t.Errorf("the first finding: %+v", u)
	}
}

// TestClosestNameIsDeterministic: among equally near names the first in
// byte order is suggested, whatever the map's order; a name near nothing
// gets no suggestion.
func TestClosestNameIsDeterministic(t *testing.T) {
	names := map[string]bool{"deploy-b": true, "deploy-a": true, "deploy-c": true, "other": true}
	for range 20 {
		if got := ClosestName("deploy-x", names); got != "deploy-a" {
			t.Fatalf("closestName = %q, want deploy-a", got)
		}
	}
	if got := ClosestName("ab", map[string]bool{"xy": true}); got != "" {
		t.Errorf("ClosestName(ab) = %q: two edits of a two-letter name are no slip", got)
	}
}

// TestClosestNamePrefersTheSameName: a name that is the one asked for but
// for case or the key around it wins over names a few edits away, which
// would otherwise be suggested (or nothing would: four capitals are four
// edits).
func TestClosestNamePrefersTheSameName(t *testing.T) {
	names := map[string]bool{"pdf-tools": true, "pdf-tool": true, "pdf-toolsx": true, "md": true}
	for _, s := range []string{"PDF-Tools", "pdf-tools.md", "PDF-TOOLS.ZIP", "pdf-tools.tar.gz", "skills/pdf-tools.md",
		"skills/pdf-tools/SKILL.md", "listings/p/skills/Pdf-Tools.tgz"} {
		if got := ClosestName(s, names); got != "pdf-tools" {
			t.Errorf("ClosestName(%q) = %q, want pdf-tools", s, got)
		}
	}
	// One edit from two names, and the same as neither: the first in byte order.
	if got := ClosestName("pdf-toolz", names); got != "pdf-tool" {
		t.Errorf("ClosestName(pdf-toolz) = %q, want pdf-tool", got)
	}
	if got := ClosestName("Deploy-X", map[string]bool{"deploy-a": true}); got != "deploy-a" {
		t.Errorf("ClosestName(Deploy-X) = %q: case is no edit", got)
	}
}

// TestStrayConfigs: the names a config is mistaken for are strays; the
// config itself, keys below a prefix and unrelated files are not.
func TestStrayConfigs(t *testing.T) {
	for _, key := range []string{"agent-skills.yml", "agent-skills.json", "Agent-Skills.yaml", "AGENT-SKILLS.YAML", "agent_skills.yaml",
		"agent-skills.yaml.bak", "agent-skills.yaml~", "agent-skills.yml.orig.bak", "agentskills.yaml", "agent-skills"} {
		if !IsStray(key) {
			t.Errorf("IsStray(%q) = false", key)
		}
		matched := false
		for _, p := range StrayPrefixes {
			matched = matched || strings.HasPrefix(key, p)
		}
		if !matched {
			t.Errorf("%q is under none of StrayPrefixes", key)
		}
	}
	for _, key := range []string{Key, "skills/agent-skills.yml", "agent.md", "agent-skills-notes.md", "README.md", "agents.yaml"} {
		if IsStray(key) {
			t.Errorf("IsStray(%q) = true", key)
		}
	}
	if !strings.HasPrefix(StrayMessage(), "ignored: did you mean agent-skills.yaml?") {
		t.Errorf("the message: %s", StrayMessage())
	}
}
