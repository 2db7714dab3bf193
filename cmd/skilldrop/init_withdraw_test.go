package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
)

// TestInitValidatePublishWithdraw: through the built command, init writes
// a skill folder (and a sub-agent folder) that validates and publishes as
// it is and is never overwritten; withdraw then deletes the key it is
// published from and says what the catalog holds afterwards.
func TestInitValidatePublishWithdraw(t *testing.T) {
	work, bucket := t.TempDir(), t.TempDir()
	if code, out, errOut := builtRun(t, work, "init", "my-skill"); code != exitOK || out != "created my-skill/SKILL.md\n" ||
		!strings.Contains(errOut, "skilldrop validate my-skill") {
		t.Fatalf("init: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := builtRun(t, work, "init", "my-skill"); code != exitFailure || !strings.Contains(errOut, "exists; init never overwrites") {
		t.Fatalf("init over an existing skill: exit %d, %q", code, errOut)
	}
	if code, _, errOut := builtRun(t, work, "init", "My_Skill"); code != exitUsage || !strings.Contains(errOut, "only lowercase letters, digits and hyphens") {
		t.Fatalf("init with an invalid name: exit %d, %q", code, errOut)
	}
	if code, out, _ := builtRun(t, work, "init", "--subagent", "agents/reviewer"); code != exitOK || out != "created agents/reviewer/agent.md\n" {
		t.Fatalf("init --subagent: exit %d, %q", code, out)
	}
	for _, dir := range []string{"my-skill", "agents/reviewer"} {
		if code, out, errOut := builtRun(t, work, "validate", dir); code != exitOK || !strings.HasPrefix(out, "ok "+dir+" ") {
			t.Fatalf("validate %s: exit %d, %q %q", dir, code, out, errOut)
		}
	}
	if code, out, errOut := builtRun(t, work, "publish", "--dir", bucket, "my-skill"); code != exitOK || !strings.HasPrefix(out, "published skills/my-skill.zip my-skill 0.1.0 ") {
		t.Fatalf("publish: exit %d, %q %q", code, out, errOut)
	}

	if code, out, errOut := builtRun(t, work, "withdraw", "--dir", bucket, "my-skil"); code != exitFailure || out != "" ||
		!strings.Contains(errOut, "skill my-skil is not published in "+bucket+" (did you mean my-skill?)") {
		t.Fatalf("withdraw of a misspelt name: exit %d, %q %q", code, out, errOut)
	}
	// The key it was published from, or its name in capitals: the name itself is suggested.
	for _, asked := range []string{"skills/my-skill.zip", "MY-SKILL"} {
		if code, _, errOut := builtRun(t, work, "withdraw", "--dir", bucket, asked); code != exitFailure || !strings.Contains(errOut, "(did you mean my-skill?)") {
			t.Fatalf("withdraw %s: exit %d, %q", asked, code, errOut)
		}
	}
	code, out, errOut := builtRun(t, work, "withdraw", "--dir", bucket, "--json", "my-skill")
	var w withdrawal
	if err := json.Unmarshal([]byte(out), &w); err != nil || code != exitOK || w.Result != "withdrawn" || w.Key != "skills/my-skill.zip" {
		t.Fatalf("withdraw: exit %d, %v, %s %s", code, err, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(bucket, "skills", "my-skill.zip")); !os.IsNotExist(err) {
		t.Errorf("the key is still there: %v", err)
	}
	if _, out, _ := builtRun(t, work, "status", "--dir", bucket, "--all"); !strings.Contains(out, "withdrawn") || !strings.Contains(out, "my-skill") {
		t.Errorf("status does not show the skill withdrawn:\n%s", out)
	}
	if code, _, errOut := builtRun(t, work, "withdraw", "--dir", bucket, "my-skill"); code != exitFailure || !strings.Contains(errOut, "is not published") {
		t.Errorf("a second withdraw: exit %d, %q", code, errOut)
	}

	// Two keys claim one name: the second takes over, and withdraw says so.
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/twice.md": skillDoc("twice")})
	if code, _, errOut := builtRun(t, work, "reindex", "--dir", bucket); code != exitOK {
		t.Fatal(errOut)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/twice.zip": string(skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("twice")}))})
	if code, _, errOut := builtRun(t, work, "reindex", "--dir", bucket); code != exitOK {
		t.Fatal(errOut)
	}
	if code, out, errOut := builtRun(t, work, "withdraw", "--dir", bucket, "twice"); code != exitFailure || out != "replaced skill twice skills/twice.zip\n" ||
		!strings.Contains(errOut, "claimed the name too and publishes it now; withdraw again") {
		t.Fatalf("withdraw of a name two keys claim: exit %d, %q %q", code, out, errOut)
	}
	if code, out, _ := builtRun(t, work, "withdraw", "--dir", bucket, "twice"); code != exitOK || out != "withdrawn skill twice skills/twice.zip\n" {
		t.Fatalf("the second withdraw: exit %d, %q", code, out)
	}

	// An entry of agent-skills.yaml has no key of its own.
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskills:\n  - name: inline\n    body: |\n" +
		"      ---\n      name: inline\n      description: Defined in the config.\n      ---\n      Steps.\n"})
	if code, _, errOut := builtRun(t, work, "reindex", "--dir", bucket); code != exitOK {
		t.Fatal(errOut)
	}
	if code, _, errOut := builtRun(t, work, "withdraw", "--dir", bucket, "inline"); code != exitFailure || !strings.Contains(errOut, "is defined in agent-skills.yaml") {
		t.Fatalf("withdraw of a config entry: exit %d, %q", code, errOut)
	}
}

// TestInitPlaceholderDescriptionIsWarnedOf, through the built command: the
// description init writes validates, with a warning saying it is still the
// placeholder, until it is changed (skill and sub-agent alike).
func TestInitPlaceholderDescriptionIsWarnedOf(t *testing.T) {
	work := t.TempDir()
	for _, tt := range []struct {
		args      []string
		dir, file string
	}{
		{[]string{"init", "my-skill"}, "my-skill", "SKILL.md"},
		{[]string{"init", "--subagent", "agents/reviewer"}, "agents/reviewer", "agent.md"},
	} {
		if code, _, errOut := builtRun(t, work, tt.args...); code != exitOK {
			t.Fatalf("%v: exit %d, %s", tt.args, code, errOut)
		}
		code, out, errOut := builtRun(t, work, "validate", tt.dir)
		if code != exitOK || !strings.HasPrefix(out, "ok "+tt.dir+" ") || !strings.Contains(errOut, "warning "+tt.dir+": the description is still skilldrop init's placeholder") {
			t.Fatalf("validate %s as init wrote it: exit %d, %q %q; want ok and the placeholder warning", tt.dir, code, out, errOut)
		}
		p := filepath.Join(work, tt.dir, tt.file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "description: ") {
				lines[i] = "description: Reviews the diff and says what to fix."
			}
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := builtRun(t, work, "validate", tt.dir); code != exitOK || strings.Contains(errOut, "placeholder") {
			t.Fatalf("validate %s once its description is written: exit %d, %q %q; want no placeholder warning", tt.dir, code, out, errOut)
		}
	}
}
