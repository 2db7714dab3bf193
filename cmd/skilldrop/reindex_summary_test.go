package main

import (
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
)

// TestReindexSummaryCountsGone: a re-index that takes a published version
// out of service (a stricter threshold) prints a gone line and counts it
// by code; one that puts it back says it was restored.
func TestReindexSummaryCountsGone(t *testing.T) {
	bucket := t.TempDir()
	rc := skilltest.SkillMD("rc", "1", "Adds an alias.") + "\necho \"alias ll=ls\" >> ~/.bashrc\n"
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/rc/SKILL.md": rc, "agent-skills.yaml": "version: 1\n"})
	reindex := func(step string) string {
		t.Helper()
		code, out, errOut := runCLI("reindex", "--dir", bucket)
		if code != exitOK {
			t.Fatalf("%s: reindex: exit %d, %s", step, code, errOut)
		}
		return out
	}
	if out := reindex("first"); !strings.Contains(out, ": 1 published, 0 withdrawn, 0 gone, 0 rejected") {
		t.Fatalf("first: %s", out)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nscan:\n  block: medium\n"})
	out := reindex("blocked")
	for _, want := range []string{
		"gone skill rc 1 skills/rc/SKILL.md scan_blocked: blocked by the content scan",
		": 0 published, 0 withdrawn, 1 gone (1 scan_blocked), 1 rejected",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("blocked: lacks %q:\n%s", want, out)
		}
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\n"})
	out = reindex("restored")
	for _, want := range []string{
		"published skill rc 1 skills/rc/SKILL.md (restored: was scan_blocked)",
		": 1 published (1 restored), 0 withdrawn, 0 gone, 0 rejected",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("restored: lacks %q:\n%s", want, out)
		}
	}
}
