package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMakeRunGivesAWorkingCapabilityURL: the key store `make run` writes
// (make run-keys) serves the example bucket with the demo key as a header
// key and partner-a's demo path key as a capability URL, which `make run`
// prints for `skills add`: the URL answers the RFC index under the key with
// the authenticated skills, the header key works too, and the header key is
// refused in a path.
func TestMakeRunGivesAWorkingCapabilityURL(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root := filepath.Join("..", "..")
	keys := filepath.Join(t.TempDir(), "keys.json")
	if out, err := exec.Command("make", "-s", "-C", root, "run-keys", "RUN_KEYS="+keys).CombinedOutput(); err != nil {
		t.Fatalf("make run-keys: %v\n%s", err, out)
	}
	dry, err := exec.Command("make", "-n", "-C", root, "run", "RUN_ADDR=127.0.0.1:9", "RUN_KEYS="+keys, "RUN_DIR="+t.TempDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run: %v\n%s", err, dry)
	}
	const printed = "npx skills add http://127.0.0.1:9/k/skilldrop-demo-partner-a"
	if !strings.Contains(string(dry), printed) || !strings.Contains(string(dry), "--keys "+keys) {
		t.Fatalf("make run neither prints %q nor serves with --keys %s:\n%s", printed, keys, dry)
	}
	dir := filepath.Join(t.TempDir(), "bucket")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples", "bucket"))); err != nil {
		t.Fatal(err)
	}
	origin := serveBuilt(t, dir, "--keys", keys)
	index := func(path, key string) (int, []string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, origin+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		var idx struct{ Skills []struct{ Name, URL string } }
		_ = json.Unmarshal(b, &idx)
		var names []string
		for _, s := range idx.Skills {
			names = append(names, s.Name)
			if strings.HasPrefix(path, "/k/") && !strings.HasPrefix(s.URL, origin+"/k/skilldrop-demo-partner-a/") {
				t.Errorf("%s under the capability URL points at %s", s.Name, s.URL)
			}
		}
		return resp.StatusCode, names
	}
	const rfc = "/.well-known/agent-skills/index.json"
	if code, names := index("/k/skilldrop-demo-partner-a"+rfc, ""); code != http.StatusOK || !slices.Contains(names, "internal-rotate-secret") {
		t.Errorf("the printed capability URL: %d %v; want the index with the authenticated skill", code, names)
	}
	if code, names := index(rfc, "skilldrop-demo-key"); code != http.StatusOK || !slices.Contains(names, "internal-rotate-secret") {
		t.Errorf("the demo header key: %d %v", code, names)
	}
	if code, _ := index("/k/skilldrop-demo-key"+rfc, ""); code != http.StatusUnauthorized {
		t.Errorf("the header key in a path: %d, want 401", code)
	}

	// README's "Try audiences locally": release-notes for partner-b leaves
	// partner-a's URL and the anonymous index, and stays in the demo key's.
	cfgPath := filepath.Join(dir, "agent-skills.yaml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), "skills:\n", "skills:\n  - name: release-notes\n    audiences: [partner-b]\n", 1))
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "release-notes leaves the capability URL's index", func() bool {
		_, names := index("/k/skilldrop-demo-partner-a"+rfc, "")
		return !slices.Contains(names, "release-notes") && slices.Contains(names, "internal-rotate-secret")
	})
	if _, names := index(rfc, ""); slices.Contains(names, "release-notes") {
		t.Errorf("the anonymous index still lists release-notes: %v", names)
	}
	if _, names := index(rfc, "skilldrop-demo-key"); !slices.Contains(names, "release-notes") {
		t.Errorf("the demo key (every audience) lost release-notes: %v", names)
	}
}
