package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// tamper writes body over the blob of the bytes pinned as d in the
// directory bucket (an in-place edit, as a failing disk or a hand would).
func tamper(t *testing.T, bucket string, pinned []byte, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(bucket, filepath.FromSlash(catalog.BlobKey(digest.Of(pinned)))), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func reindexDir(t *testing.T, bucket string) {
	t.Helper()
	if code, _, errOut := runCLI("reindex", "--dir", bucket); code != exitOK {
		t.Fatalf("reindex: exit %d: %s", code, errOut)
	}
}

// TestReindexVerifyRepairsAndReports: --verify repairs what its source
// still gives (exit 0), names what it cannot (exit 1), and status shows
// the record it leaves in the status document.
func TestReindexVerifyRepairsAndReports(t *testing.T) {
	bucket := t.TempDir()
	deploy := skilltest.SkillMD("deploy", "1.0", "Does deploys.")
	pdf := skilltest.Zip(t, map[string]string{"SKILL.md": skilltest.SkillMD("pdf", "1", "PDFs."), "scripts/fill.py": "print(1)\n"})
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/deploy.md": deploy, "skills/pdf.zip": string(pdf)})
	reindexDir(t, bucket)

	tamper(t, bucket, []byte(deploy), strings.ToUpper(deploy))
	code, out, errOut := runCLI("reindex", "--dir", bucket, "--verify")
	want := "repaired skill deploy 1.0 - " + digest.Of([]byte(deploy)).String() + " (other bytes) from skills/deploy.md (pinned by 1 more)\n" +
		"verified " + printable(bucket) + ": 4 blobs, 3 verified, 1 repaired, 0 unrecoverable, 0 failed; 0 versions skipped (external or withdrawn)\n"
	if code != exitOK || out != want || errOut != "" {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errOut)
	}

	// The archive's blob broken and its source gone (an event not yet handled).
	tamper(t, bucket, pdf, "not a zip")
	if err := os.Remove(filepath.Join(bucket, "skills", "pdf.zip")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI("reindex", "--dir", bucket, "--verify")
	line := "unrecoverable skill pdf 1 - " + digest.Of(pdf).String() + " source_missing: "
	if code != exitFailure || !strings.HasPrefix(out, line) || !strings.Contains(out, ": 4 blobs, 3 verified, 0 repaired, 1 unrecoverable, 0 failed;") {
		t.Fatalf("exit %d, stdout:\n%s", code, out)
	}
	code, out, _ = runCLI("status", "--dir", bucket)
	if code != exitOK || !strings.Contains(out, "\nlast verify (reindex --verify), finished ") ||
		!strings.Contains(out, ": 4 blobs, 3 verified, 0 repaired, 1 unrecoverable, 0 failed; 0 versions skipped (external or withdrawn)\n  "+line) {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("status", "--dir", bucket, "--json")
	var doc statusDoc
	if err := json.Unmarshal([]byte(out), &doc); code != exitOK || err != nil || doc.Verify == nil || doc.Verify.Unrecoverable != 1 ||
		len(doc.Verify.Problems) != 1 || doc.Verify.Problems[0].Entry != "pdf" {
		t.Fatalf("status --json: exit %d, %v\n%s", code, err, out)
	}
}

// TestReindexVerifyJSONIsTheREADMEs: --verify --json has the README's
// fields, for a repair and a problem that name a file pinned twice.
func TestReindexVerifyJSONIsTheREADMEs(t *testing.T) {
	bucket := t.TempDir()
	zip := func(name, version, shared string) []byte {
		return skilltest.Zip(t, map[string]string{"SKILL.md": skilltest.SkillMD(name, version, "Does "+name+"."), "NOTICE": shared})
	}
	for _, v := range []string{"1", "2"} {
		skilltest.WriteFiles(t, bucket, map[string]string{"skills/a.zip": string(zip("a", v, "shared by a's versions")), "skills/b.zip": string(zip("b", v, "shared by b's versions"))})
		reindexDir(t, bucket)
	}
	// b's NOTICE: repaired from b 2's intact artifact blob.
	tamper(t, bucket, []byte("shared by b's versions"), "tampered")
	// a's NOTICE and both of a's artifacts: a's key now holds a 3, not yet indexed.
	tamper(t, bucket, []byte("shared by a's versions"), "tampered")
	tamper(t, bucket, zip("a", "1", "shared by a's versions"), "tampered")
	tamper(t, bucket, zip("a", "2", "shared by a's versions"), "tampered")
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/a.zip": string(zip("a", "3", "other"))})

	code, out, _ := runCLI("reindex", "--dir", bucket, "--verify", "--json")
	if code != exitFailure {
		t.Fatalf("exit %d, want 1 (unrecoverable blobs)\n%s", code, out)
	}
	sameShape(t, "reindex --verify --json", jsonExample(t, "`skilldrop reindex --verify --json`"), []byte(out))
	var doc struct {
		Target   string                `json:"target"`
		Problems []catalog.BlobProblem `json:"problems"`
		Repairs  []json.RawMessage     `json:"repairs"`
		Blobs    int                   `json:"blobs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Target != bucket || len(doc.Problems) != 3 || len(doc.Repairs) != 1 || doc.Blobs != 10 {
		t.Fatalf("%v\n%s", err, out)
	}

	// Nothing indexed yet: nothing to verify, and the same shape.
	code, out, _ = runCLI("reindex", "--dir", t.TempDir(), "--verify", "--json")
	if code != exitOK || !strings.Contains(out, `"blobs": 0`) || !strings.Contains(out, `"problems": []`) {
		t.Fatalf("an empty target: exit %d\n%s", code, out)
	}
}

// TestReindexVerifyUsageAndProgress: flags that mean nothing with (or
// without) --verify are usage errors; progress goes to stderr, only for
// a catalog of many blobs.
func TestReindexVerifyUsageAndProgress(t *testing.T) {
	bucket := t.TempDir()
	for _, args := range [][]string{
		{"reindex", "--dir", bucket, "--json"},
		{"reindex", "--dir", bucket, "--verify", "--metric-namespace", "X"},
	} {
		if code, out, errOut := runCLI(args...); code != exitUsage || out != "" || errOut == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error", args, code, out, errOut)
		}
	}
	if code, out, _ := runCLI("reindex", "--dir", bucket, "--verify"); code != exitOK || !strings.Contains(out, "has no catalog yet: nothing to verify") {
		t.Fatalf("an empty target: exit %d, %q", code, out)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/a.md": skillDoc("a"), "skills/b.md": skillDoc("b")})
	reindexDir(t, bucket)
	if _, _, errOut := runCLI("reindex", "--dir", bucket, "--verify"); errOut != "" {
		t.Fatalf("progress for 2 blobs: %q", errOut)
	}
	defer func(n int) { progressFrom = n }(progressFrom)
	progressFrom = 2
	if _, _, errOut := runCLI("reindex", "--dir", bucket, "--verify"); errOut != "skilldrop reindex --verify: 1 of 2 blobs checked\nskilldrop reindex --verify: 2 of 2 blobs checked\n" {
		t.Fatalf("progress %q", errOut)
	}
}
