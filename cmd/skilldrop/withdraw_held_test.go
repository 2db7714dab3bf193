package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
)

// TestWithdrawRemovesAHeldOrRejectedUpload, through the built command on a
// directory: an upload held while agent-skills.yaml is invalid is not
// published, yet withdraw deletes it (it said "not published", and the
// skill went live once the config was fixed), and so is a rejected one;
// withdraw says what it removed. A name nothing claims is still exit 1.
func TestWithdrawRemovesAHeldOrRejectedUpload(t *testing.T) {
	bucket, src := t.TempDir(), t.TempDir()
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskills:\n  - name: held-one\n    visibilty: authenticated\n"})
	skilltest.WriteFiles(t, src, map[string]string{"held-one.md": skillDoc("held-one")})
	if code, out, errOut := builtRun(t, src, "publish", "--dir", bucket, "held-one.md"); code != exitHeld || !strings.HasPrefix(out, "held skills/held-one.md ") {
		t.Fatalf("publish under an invalid config: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut := builtRun(t, src, "withdraw", "--dir", bucket, "held-one")
	if code != exitOK || out != "removed skill held-one skills/held-one.md held\n" || !strings.Contains(errOut, "was not published; deleted") {
		t.Fatalf("withdraw of a held upload: exit %d, %q %q; want it removed", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(bucket, "skills", "held-one.md")); !os.IsNotExist(err) {
		t.Fatalf("the held key is still there: %v", err)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskills:\n  - name: held-one\n    visibility: authenticated\n"})
	if code, _, errOut := builtRun(t, src, "reindex", "--dir", bucket); code != exitOK {
		t.Fatalf("reindex once the config is fixed: exit %d, %s", code, errOut)
	}
	if _, out, _ := builtRun(t, src, "status", "--dir", bucket, "--all"); !strings.Contains(out, "\nskills: none\n") {
		t.Fatalf("the withdrawn held upload is in the catalog once the config is fixed:\n%s", out)
	}

	// A rejected upload (written straight into the directory, as an
	// upload that publish did not check would be): removed, with its code.
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/broken.md": "---\nname: other\ndescription: Mismatched.\n---\nBody.\n"})
	if _, out, errOut := builtRun(t, src, "reindex", "--dir", bucket); !strings.Contains(out, "rejected skills/broken.md name_mismatch") {
		t.Fatalf("reindex did not reject a name mismatch: %q %q", out, errOut)
	}
	code, out, errOut = builtRun(t, src, "withdraw", "--dir", bucket, "--json", "broken")
	var w withdrawal
	if err := json.Unmarshal([]byte(out), &w); err != nil || code != exitOK || w.Result != "removed" || len(w.Removed) != 1 ||
		w.Removed[0].Key != "skills/broken.md" || w.Removed[0].State != "rejected" || w.Removed[0].Code != "name_mismatch" {
		t.Fatalf("withdraw --json of a rejected upload: exit %d, %v, %s %s", code, err, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(bucket, "skills", "broken.md")); !os.IsNotExist(err) {
		t.Fatalf("the rejected key is still there: %v", err)
	}
	if code, out, errOut := builtRun(t, src, "withdraw", "--dir", bucket, "broken"); code != exitFailure || out != "" || !strings.Contains(errOut, "is not published") {
		t.Fatalf("withdraw once nothing claims the name: exit %d, %q %q", code, out, errOut)
	}
}
