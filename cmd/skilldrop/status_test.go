package main

import (
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

func TestStatusAndReindexOfADirectory(t *testing.T) {
	bucket := t.TempDir()
	if code, out, _ := runCLI("status", "--dir", bucket); code != exitOK || !strings.Contains(out, "no catalog yet") {
		t.Fatalf("status of an unindexed directory: exit %d, %q", code, out)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{
		"skills/alpha.md":           skilltest.SkillMD("alpha", "3", "Alpha."),
		"skills/beta/SKILL.md":      skilltest.SkillMD("beta", "1", "Beta."),
		"skills/beta/notes.txt":     "beside",
		"skills/wrong.md":           skilltest.SkillMD("other", "1", "Mismatch."),
		"subagents/reviewer.md":     "---\nname: reviewer\ndescription: Reviews.\n---\nYou review.\n",
		"agent-skills.yaml":         "version: 1\nskills:\n  - name: alpha\n    visibility: authenticated\n",
		"listings/l/skills/solo.md": skilltest.SkillMD("solo", "1", "Solo."),
	})
	code, out, errOut := runCLI("reindex", "--dir", bucket)
	if code != exitOK {
		t.Fatalf("reindex: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"published skill alpha 3 skills/alpha.md",
		"published skill l/solo 1 listings/l/skills/solo.md",
		"published subagent reviewer ",
		"rejected skills/wrong.md name_mismatch:",
		"reindexed " + bucket + ": 4 published, 0 withdrawn, 1 rejected",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("reindex output lacks %q:\n%s", want, out)
		}
	}
	// Again: nothing new, and the rejection is reported as already recorded.
	if code, out, _ := runCLI("reindex", "--dir", bucket); code != exitOK ||
		!strings.Contains(out, "rejected skills/wrong.md name_mismatch: ") || !strings.Contains(out, " (already recorded)\n") ||
		!strings.Contains(out, "0 published, 0 withdrawn, 1 rejected (1 already recorded), 4 unchanged") {
		t.Fatalf("second reindex: exit %d\n%s", code, out)
	}
	if n := len(loadFrom(t, bucket, catalog.LoadStatus).Rejections); n != 1 {
		t.Fatalf("%d rejections recorded after the second reindex, want 1", n)
	}
	code, out, errOut = runCLI("status", "--dir", bucket)
	if code != exitOK {
		t.Fatalf("status: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"config: agent-skills.yaml sha256:",
		"alpha", "authenticated", "skills/alpha.md",
		"l/solo", "reviewer", "agent-md",
		"recent rejections (newest first)", "skills/wrong.md", "name_mismatch",
		"warnings", "skills/beta/notes.txt: ignored: a skill folder publishes only its SKILL.md (skills/beta/SKILL.md)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// A withdrawn skill shows only with --all.
	if code, _, _ := runCLI("reindex", "--dir", bucket); code != exitOK {
		t.Fatal(code)
	}
	skilltest.WriteFiles(t, bucket, nil)
	removeKey(t, bucket, "skills/alpha.md")
	if code, out, _ := runCLI("reindex", "--dir", bucket); code != exitOK || !strings.Contains(out, "withdrawn skill alpha 3 skills/alpha.md") {
		t.Fatalf("reindex after a deletion: exit %d\n%s", code, out)
	}
	_, out, _ = runCLI("status", "--dir", bucket)
	if strings.Contains(out, "  alpha ") {
		t.Fatalf("a withdrawn skill is listed without --all:\n%s", out)
	}
	_, out, _ = runCLI("status", "--dir", bucket, "--all", "--rejections", "0")
	if !strings.Contains(out, "withdrawn") || strings.Contains(out, "recent rejections") {
		t.Fatalf("status --all --rejections 0:\n%s", out)
	}
}

func TestStatusAndReindexUsage(t *testing.T) {
	for _, args := range [][]string{
		{"status"},
		{"reindex"},
		{"status", "--dir", "a", "--bucket", "b"},
		{"reindex", "--dir", "a", "extra"},
		{"reindex", "--dir", "a", "--log-level", "LOUD"},
		{"reindex", "--bucket", "b", "--metric-namespace", "AWS/S3"},
		{"status", "--dir", t.TempDir(), "--rejections", "-1"},
	} {
		if code, _, _ := runCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestReindexThatFailsPrintsNoSummary: a failed re-index says so on stderr
// and exits 1; a summary on stdout would read as a run that found nothing.
func TestReindexThatFailsPrintsNoSummary(t *testing.T) {
	bucket := t.TempDir()
	skilltest.WriteFiles(t, bucket, map[string]string{
		"skills/alpha.md":      skilltest.SkillMD("alpha", "1", "Alpha."),
		"catalog/catalog.json": "{not json",
	})
	code, out, errOut := runCLI("reindex", "--dir", bucket)
	if code != exitFailure || strings.Contains(out, "reindexed") || !strings.Contains(errOut, "skilldrop reindex: ") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1, no summary, the error on stderr", code, out, errOut)
	}
}

// TestStatusShowsFullnessAndHolds: status says how full the catalog is, and
// while the bucket's config is refused, that publications are held and which.
func TestStatusShowsFullnessAndHolds(t *testing.T) {
	bucket := t.TempDir()
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/x.md": skillDoc("x")})
	if code, _, errOut := runCLI("reindex", "--dir", bucket); code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	_, out, _ := runCLI("status", "--dir", bucket)
	if !strings.Contains(out, "catalog: ") || !strings.Contains(out, "of its 256 MiB limit (0%)") || strings.Contains(out, "held") {
		t.Fatalf("status of a healthy bucket:\n%s", out)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "skills: [\n", "skills/later.md": skillDoc("later")})
	if code, _, errOut := runCLI("reindex", "--dir", bucket); code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	_, out, _ = runCLI("status", "--dir", bucket)
	for _, want := range []string{"the bucket's agent-skills.yaml is invalid since", "held (published once a valid agent-skills.yaml is in force): 1", "  skills/later.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
