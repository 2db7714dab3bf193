package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
)

// TestPublishSaysHeld, through the built command on a directory: while the
// directory's agent-skills.yaml is invalid, an upload is held, and publish
// says so (text and JSON, exit 3) instead of published; once the config is
// fixed the same bytes publish, and publish says published because the
// catalog holds them.
func TestPublishSaysHeld(t *testing.T) {
	bucket, src := t.TempDir(), t.TempDir()
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskills:\n  - name: first\n"})
	skilltest.WriteFiles(t, src, map[string]string{
		"first.md": skillDoc("first"),
		"new.md":   skillDoc("new"),
	})
	if code, out, errOut := builtRun(t, src, "publish", "--dir", bucket, "first.md"); code != exitOK || !strings.HasPrefix(out, "published skills/first.md first ") {
		t.Fatalf("publish under a valid config: exit %d, %q %q", code, out, errOut)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskills:\n  - name: new\n    visibilty: authenticated\n"})
	code, out, errOut := builtRun(t, src, "publish", "--dir", bucket, "new.md")
	if code != exitHeld || !strings.HasPrefix(out, "held skills/new.md new ") ||
		!strings.Contains(errOut, "note new.md: the bucket's agent-skills.yaml is invalid") {
		t.Fatalf("publish under an invalid config: exit %d, stdout %q, stderr %q; want exit 3, held and why", code, out, errOut)
	}
	// A rejection while the config is invalid warns of it too.
	skilltest.WriteFiles(t, src, map[string]string{"bad.md": "no frontmatter"})
	if code, out, errOut := builtRun(t, src, "publish", "--dir", bucket, "bad.md"); code != exitFailure || !strings.HasPrefix(out, "rejected bad.md ") ||
		!strings.Contains(errOut, "warning bad.md: ") || !strings.Contains(errOut, "agent-skills.yaml") {
		t.Fatalf("publish of a rejected file under an invalid config: exit %d, stdout %q, stderr %q; want rejected and the warning", code, out, errOut)
	}
	code, out, _ = builtRun(t, src, "publish", "--dir", bucket, "--json", "new.md")
	var p publication
	if err := json.Unmarshal([]byte(out), &p); err != nil || code != exitHeld || p.Result != "held" || !strings.Contains(p.Message, "invalid") {
		t.Fatalf("publish --json under an invalid config: exit %d, %v, %s", code, err, out)
	}
	if _, out, _ := builtRun(t, bucket, "status", "--dir", bucket); !strings.Contains(out, "held (published once a valid agent-skills.yaml is in force): 1") {
		t.Fatalf("status does not list the held upload:\n%s", out)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskills:\n  - name: new\n    visibility: authenticated\n"})
	if code, out, errOut := builtRun(t, src, "publish", "--dir", bucket, "new.md"); code != exitOK || !strings.HasPrefix(out, "published skills/new.md new ") {
		t.Fatalf("publish once the config is fixed: exit %d, %q %q", code, out, errOut)
	}
}

// TestPublishSaysUnchangedWhileHeld, through the built command on a
// directory: the bytes the catalog already serves from a key, uploaded
// again while the config is invalid, are unchanged (exit 0, JSON too), not
// held: nothing waits for a config, and the URL serves them.
func TestPublishSaysUnchangedWhileHeld(t *testing.T) {
	bucket, src := t.TempDir(), t.TempDir()
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskills:\n  - name: first\n"})
	skilltest.WriteFiles(t, src, map[string]string{"first.md": skillDoc("first")})
	if code, out, errOut := builtRun(t, src, "publish", "--dir", bucket, "first.md"); code != exitOK || !strings.HasPrefix(out, "published skills/first.md first ") {
		t.Fatalf("publish under a valid config: exit %d, %q %q", code, out, errOut)
	}
	skilltest.WriteFiles(t, bucket, map[string]string{"agent-skills.yaml": "version: 1\nskills:\n  - name: first\n    visibilty: authenticated\n"})
	code, out, errOut := builtRun(t, src, "publish", "--dir", bucket, "first.md")
	if code != exitOK || !strings.HasPrefix(out, "unchanged skills/first.md first ") {
		t.Fatalf("the same bytes again under an invalid config: exit %d, stdout %q, stderr %q; want exit 0, unchanged", code, out, errOut)
	}
	if !strings.Contains(errOut, "agent-skills.yaml is invalid") {
		t.Errorf("publish does not warn that the bucket's config is invalid: %q", errOut)
	}
	code, out, _ = builtRun(t, src, "publish", "--dir", bucket, "--json", "first.md")
	var p publication
	if err := json.Unmarshal([]byte(out), &p); err != nil || code != exitOK || p.Result != "unchanged" {
		t.Fatalf("publish --json of the same bytes under an invalid config: exit %d, %v, %s", code, err, out)
	}
}
