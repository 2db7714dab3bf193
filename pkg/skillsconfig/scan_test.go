package skillsconfig

import (
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

const d1 = "sha256:9eba8f16325a95a57d173c42f213ec7f38c1b97e85940dc0a2a12e3537583ab3"

func TestScanPolicyAllowRevoke(t *testing.T) {
	c, err := Parse([]byte(`version: 1
scan:
  block: medium
skills:
  - name: deploy
    allow:
      - digest: ` + d1 + `
        rules: [persistence.shell-rc, download-exec.pipe-to-shell]
        reason: "the installer is ours"
listings:
  partner:
    skills:
      - name: deploy
revoke:
  - name: deploy
    version: "1.1"
    digest: ` + d1 + `
    reason: "a compromised build"
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy().Block != scan.SeverityMedium {
		t.Errorf("block %v", c.Policy().Block)
	}
	d := digest.MustParse(d1)
	e := c.Touches("skill", "", "deploy")
	if got := e.Allows(d); got["persistence.shell-rc"] != "the installer is ours" || len(got) != 2 {
		t.Errorf("allows %v", got)
	}
	if got := e.Allows(digest.Of([]byte("other bytes"))); got != nil {
		t.Errorf("an allow for other bytes: %v", got)
	}
	if r := c.Revokes("deploy", "1.1", d); r == nil || r.Reason != "a compromised build" {
		t.Errorf("revokes %+v", r)
	}
	if c.Revokes("deploy", "1.0", d) != nil || c.Revokes("deploy", "1.1", digest.Of(nil)) != nil {
		t.Error("a revocation matches another version or digest")
	}
	if l := c.Listings[0]; len(l.Refs) != 1 {
		t.Errorf("a name-only listing entry is no longer a reference: %+v", l)
	}
	if (*Config)(nil).Policy().Block != scan.DefaultBlock {
		t.Error("no config: not the default policy")
	}
}

func TestScanConfigRejected(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown severity":       "scan:\n  block: severe\n",
		"misspelt scan key":      "scan:\n  blok: high\n",
		"allow without digest":   "skills:\n  - name: a\n    allow:\n      - rules: [x.y]\n        reason: r\n",
		"allow without rules":    "skills:\n  - name: a\n    allow:\n      - digest: " + d1 + "\n        reason: r\n",
		"allow without reason":   "skills:\n  - name: a\n    allow:\n      - digest: " + d1 + "\n        rules: [x.y]\n",
		"allow of a bad id":      "skills:\n  - name: a\n    allow:\n      - digest: " + d1 + "\n        rules: [\"X Y\"]\n        reason: r\n",
		"revoke without reason":  "revoke:\n  - name: a\n    version: \"1\"\n    digest: " + d1 + "\n",
		"revoke twice":           "revoke:\n  - {name: a, version: \"1\", digest: " + d1 + ", reason: r}\n  - {name: a, version: \"1\", digest: " + d1 + ", reason: s}\n",
		"revoke a bad digest":    "revoke:\n  - {name: a, version: \"1\", digest: sha256:00, reason: r}\n",
		"allow of blank reason":  "skills:\n  - name: a\n    allow:\n      - digest: " + d1 + "\n        rules: [x.y]\n        reason: '  \t '\n",
		"revoke of blank reason": "revoke:\n  - {name: a, version: \"1\", digest: " + d1 + ", reason: ' '}\n",
	} {
		if _, err := Parse([]byte("version: 1\n" + doc)); err == nil || !strings.HasPrefix(err.Error(), CodeInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRuleWarnings: an allow naming a rule id the rule pack lacks is a
// warning (not an error: a config must outlive a pack that drops a rule),
// with the id it most likely misspells, or the note that a category is
// not a rule; the pack's own ids are no warning.
func TestRuleWarnings(t *testing.T) {
	doc := "version: 1\nskills:\n  - name: a\n    allow:\n      - digest: " + d1 +
		"\n        rules: [download-exec.pipe-to-shel, persistence.shell-rc]\n        reason: r\n" +
		"subagents:\n  - name: b\n    allow:\n      - digest: " + d1 + "\n        rules: [download-exec]\n        reason: r\n" +
		"listings:\n  p:\n    skills:\n      - name: c\n        allow:\n          - digest: " + d1 + "\n            rules: [zz.qq]\n            reason: r\n"
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got := c.RuleWarnings(scan.Default())
	want := []string{
		`skills[0].allow[0].rules[0]: "download-exec.pipe-to-shel" is no rule`, `(did you mean "download-exec.pipe-to-shell"?)`,
		`subagents[0].allow[0].rules[0]: "download-exec" is no rule`, "it is a category",
		`listings.p.skills[0].allow[0].rules[0]: "zz.qq" is no rule`, "scan --rules lists them",
	}
	if len(got) != 3 {
		t.Fatalf("%d warnings, want 3:\n%s", len(got), strings.Join(got, "\n"))
	}
	for i, w := range got {
		if !strings.Contains(w, want[2*i]) || !strings.Contains(w, want[2*i+1]) || !strings.Contains(w, scan.Engine()) {
			t.Errorf("warning %d: %s\nwant %q and %q", i, w, want[2*i], want[2*i+1])
		}
	}
	if w := (*Config)(nil).RuleWarnings(scan.Default()); w != nil {
		t.Errorf("no config: %v", w)
	}
}

// TestUnmatchedAllowHint: an entry whose name nothing publishes says, when
// it carries an allow, that a blocked upload is unpublished until the
// allow's digest and rules match its rejection; one without says nothing
// of it.
func TestUnmatchedAllowHint(t *testing.T) {
	c, err := Parse([]byte("version: 1\nskills:\n  - name: piper\n    allow:\n      - digest: " + d1 +
		"\n        rules: [download-exec.pipe-to-shell]\n        reason: r\n  - name: other\n    visibility: authenticated\n"))
	if err != nil {
		t.Fatal(err)
	}
	u := c.Unmatched(Published{Skills: map[string]bool{}})
	if len(u) != 2 {
		t.Fatalf("%d unmatched, want 2: %+v", len(u), u)
	}
	if !strings.Contains(u[0].Message, "scan_blocked rejection") {
		t.Errorf("the entry with an allow: %s", u[0].Message)
	}
	if strings.Contains(u[1].Message, "scan_blocked") {
		t.Errorf("the entry without one: %s", u[1].Message)
	}
}
