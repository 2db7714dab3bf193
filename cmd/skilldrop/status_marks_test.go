package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
)

// hostileKey is an uploaded key whose name holds a C1 control sequence
// introducer (U+009B), a bidi override (U+202E) and a zero-width space.
const hostileKey = "skills/\u009b31m\u202edm.exe\u200b.md"

// TestStatusEscapesWhatWouldActOnATerminal: the table shows a hostile key
// escaped; --json keeps its exact value with those characters as \uXXXX.
func TestStatusEscapesWhatWouldActOnATerminal(t *testing.T) {
	bucket := t.TempDir()
	skilltest.WriteFiles(t, bucket, map[string]string{hostileKey: skillDoc("x")})
	if code, _, errOut := runCLI("reindex", "--dir", bucket); code != exitOK {
		t.Fatalf("reindex: exit %d, %s", code, errOut)
	}
	code, out, _ := runCLI("status", "--dir", bucket)
	if code != exitOK || !strings.Contains(out, `"skills/\u009b31m\u202edm.exe\u200b.md"`) {
		t.Fatalf("status: exit %d, the key is not shown escaped:\n%s", code, out)
	}
	for _, r := range []rune{0x9b, 0x202e, 0x200b} {
		if strings.ContainsRune(out, r) {
			t.Errorf("status prints %U raw", r)
		}
	}
	code, out, _ = runCLI("status", "--dir", bucket, "--json")
	if code != exitOK || !strings.Contains(out, `"key": "skills/\u009b31m\u202edm.exe\u200b.md"`) {
		t.Fatalf("status --json: exit %d:\n%s", code, out)
	}
	for _, r := range []rune{0x9b, 0x202e, 0x200b} {
		if strings.ContainsRune(out, r) {
			t.Errorf("status --json prints %U raw", r)
		}
	}
	var doc statusDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Rejections) != 1 || doc.Rejections[0].Key != hostileKey {
		t.Fatalf("status --json: %v, rejections %+v; want the exact key", err, doc.Rejections)
	}
}

// TestStatusMarksWhatBecameOfARejection: a rejection fixed by a later
// publish from its key, one whose key was deleted, and one a later
// rejection of the same key superseded are marked so; the rest are open.
func TestStatusMarksWhatBecameOfARejection(t *testing.T) {
	bucket := t.TempDir()
	skilltest.WriteFiles(t, bucket, map[string]string{
		"skills/fixed.md":   skillDoc("other"),
		"skills/deleted.md": skillDoc("other"),
		"skills/again.md":   skillDoc("other"),
		"skills/open.md":    skillDoc("other"),
	})
	reindex := func() {
		t.Helper()
		if code, _, errOut := runCLI("reindex", "--dir", bucket); code != exitOK {
			t.Fatalf("reindex: exit %d, %s", code, errOut)
		}
	}
	reindex()
	skilltest.WriteFiles(t, bucket, map[string]string{
		"skills/fixed.md": skillDoc("fixed"),
		"skills/again.md": "no frontmatter",
	})
	removeKey(t, bucket, "skills/deleted.md")
	reindex()
	code, out, _ := runCLI("status", "--dir", bucket, "--json")
	var doc statusDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
		t.Fatalf("status --json: exit %d, %v\n%s", code, err, out)
	}
	got := map[string][]string{}
	for _, r := range doc.Rejections {
		got[r.Key] = append(got[r.Key], r.Code+" "+r.State)
	}
	want := map[string][]string{
		"skills/fixed.md":   {"name_mismatch fixed"},
		"skills/deleted.md": {"name_mismatch deleted"},
		"skills/again.md":   {"invalid_frontmatter open", "name_mismatch superseded"},
		"skills/open.md":    {"name_mismatch open"},
	}
	for k, w := range want {
		if strings.Join(got[k], ",") != strings.Join(w, ",") {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	_, table, _ := runCLI("status", "--dir", bucket)
	for _, line := range []string{"fixed  skills/fixed.md", "deleted     skills/deleted.md", "open        skills/open.md"} {
		if !strings.Contains(collapse(table), collapse(line)) {
			t.Errorf("status table lacks %q:\n%s", line, table)
		}
	}
}

// TestStatusMarksTheConfigsRejections: agent-skills.yaml deleted is an
// open rejection while it stays deleted (not a key "deleted since"), fixed
// once the config in force is put back; an invalid one likewise, fixed when
// reverted to the bytes in force.
func TestStatusMarksTheConfigsRejections(t *testing.T) {
	bucket := t.TempDir()
	cfg := "version: 1\nskills:\n  - name: a\n    visibility: authenticated\n"
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/a.md": skillDoc("a"), "agent-skills.yaml": cfg})
	states := func(step string) []string { return rejectionStates(t, bucket, step) }
	states("indexed")
	removeKey(t, bucket, "agent-skills.yaml")
	if got := states("deleted"); strings.Join(got, ",") != "config_missing open" {
		t.Errorf("config deleted: %q, want config_missing open", got)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": cfg})
	if got := states("put back"); strings.Join(got, ",") != "config_missing fixed" {
		t.Errorf("config put back: %q, want config_missing fixed", got)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": strings.Replace(cfg, "visibility", "visibilty", 1)})
	if got := states("typo"); strings.Join(got, ",") != "invalid_config open,config_missing superseded" {
		t.Errorf("typo: %q, want invalid_config open", got)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": cfg})
	if got := states("reverted"); strings.Join(got, ",") != "invalid_config fixed,config_missing superseded" {
		t.Errorf("typo reverted: %q, want invalid_config fixed", got)
	}
}

// collapse squeezes runs of spaces, so a table row compares whatever the
// column widths.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestStatusJSONWithoutACatalog: nothing indexed is a document too.
func TestStatusJSONWithoutACatalog(t *testing.T) {
	code, out, _ := runCLI("status", "--dir", t.TempDir(), "--json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK || doc["catalog"] != nil || doc["skills"] == nil {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
}

// TestReindexCarriesTheConfigSuggestionAndReadableSizes: the indexer's
// rejections say what validate says: the misspelt key's suggestion, and
// sizes in binary units.
func TestReindexCarriesTheConfigSuggestionAndReadableSizes(t *testing.T) {
	// Two buckets: while a config is refused, publications are held and the
	// big drop would not be judged at all.
	withConfig, withDrop := t.TempDir(), t.TempDir()
	skilltest.WriteFiles(t, withConfig, map[string]string{
		"agent-skills.yaml": "version: 1\nskills:\n  - name: a\n    visibilty: authenticated\n",
	})
	big := bytes.Repeat([]byte("x"), 5<<20)
	if err := os.MkdirAll(filepath.Join(withDrop, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withDrop, "skills", "big.md"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	for bucket, want := range map[string]string{
		withConfig: `rejected agent-skills.yaml invalid_config: YAML: line 4: unknown key "visibilty" in an entry (did you mean "visibility"?)`,
		withDrop:   "rejected skills/big.md artifact_too_large: skills/big.md is larger than max_artifact_bytes: 5 MiB > 4 MiB",
	} {
		_, out, errOut := runCLI("reindex", "--dir", bucket)
		if !strings.Contains(out, want) {
			t.Errorf("reindex output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
}

// TestReindexNamesWhatItHolds: uploads held while the config is invalid
// are named, and counted in the summary.
func TestReindexNamesWhatItHolds(t *testing.T) {
	bucket := t.TempDir()
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\n", "skills/a.md": skillDoc("a")})
	if code, _, errOut := runCLI("reindex", "--dir", bucket); code != exitOK {
		t.Fatalf("reindex: exit %d, %s", code, errOut)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskils: []\n", "skills/b.md": skillDoc("b")})
	_, out, _ := runCLI("reindex", "--dir", bucket)
	if !strings.Contains(out, "held skills/b.md: waits for a valid agent-skills.yaml\n") || !strings.Contains(out, ", 1 held, ") {
		t.Fatalf("reindex output:\n%s", out)
	}
}

// TestStatusMarksARestoreFixed: a scan_blocked rejection (a stricter
// threshold) is fixed once the version is back in service (the threshold
// removed), not left open while the version is served.
func TestStatusMarksARestoreFixed(t *testing.T) {
	bucket := t.TempDir()
	rc := skilltest.SkillMD("rc", "1", "Adds an alias.") + "\necho \"alias ll=ls\" >> ~/.bashrc\n"
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/rc/SKILL.md": rc, "agent-skills.yaml": "version: 1\n"})
	state := func(step string) string { return strings.Join(rejectionStates(t, bucket, step), ",") }
	if got := state("warned"); got != "" {
		t.Fatalf("warned: rejections %q", got)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nscan:\n  block: medium\n"})
	if got := state("blocked"); got != "scan_blocked open" {
		t.Fatalf("blocked: %q, want scan_blocked open", got)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\n"})
	if got := state("restored"); got != "scan_blocked fixed" {
		t.Errorf("restored: %q, want scan_blocked fixed", got)
	}
}

// rejectionStates re-indexes bucket and lists its status document's
// rejections as "<code> <state>", in its order; step names the moment in
// messages.
func rejectionStates(t *testing.T, bucket, step string) []string {
	t.Helper()
	if code, _, errOut := runCLI("reindex", "--dir", bucket); code != exitOK {
		t.Fatalf("%s: reindex: exit %d, %s", step, code, errOut)
	}
	_, out, _ := runCLI("status", "--dir", bucket, "--json")
	var doc statusDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	var got []string
	for _, r := range doc.Rejections {
		got = append(got, r.Code+" "+r.State)
	}
	return got
}
