//go:build clients

package main

import (
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/cosigntest"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// TestClientRunsTheCatalogPagesVerifyCommands copies the verify commands a
// signed skill's page in the web catalog gives, as a person would, and
// runs them in a shell against skilldrop serve, with the pinned cosign and
// the built skilldrop on PATH: they verify. With another key in key.pem,
// cosign refuses.
func TestClientRunsTheCatalogPagesVerifyCommands(t *testing.T) {
	cosigntest.Need(t)
	sv := signedServe(t)
	bin := t.TempDir()
	for name, target := range map[string]string{"cosign": os.Getenv(cosigntest.Env), "skilldrop": sv.bin} {
		abs, err := filepath.Abs(target)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	copyable := func(page, id string) string {
		m := regexp.MustCompile(`(?s)<code id="` + id + `">(.*?)</code>`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return html.UnescapeString(m[1])
	}
	sh := func(dir, script string) (string, error) {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = dir
		// Offline for cosign: no TUF root to fetch, no home to write one into.
		cmd.Env = []string{"HOME=" + dir, "TUF_ROOT=" + filepath.Join(dir, "tuf"), "PATH=" + bin + ":/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	other, _ := signing.Generate()
	for _, p := range []struct{ page, verify string }{
		{"/catalog/skills/pdf-tools", "skilldrop verify " + sv.origin + " --key key.pem"},
		{"/catalog/listings/partner-a/skills/partner-faq", "skilldrop verify " + sv.origin + " --key key.pem --listing partner-a"},
		{"/catalog/subagents/changelog-reviewer", ""},
	} {
		page := string(fetch(t, sv.origin+p.page))
		script, verify := copyable(page, "verify-cosign"), copyable(page, "verify-skilldrop")
		if script == "" || verify != p.verify {
			t.Errorf("%s: cosign commands %q, skilldrop verify %q; want %q", p.page, script, verify, p.verify)
			continue
		}
		dir := t.TempDir()
		if out, err := sh(dir, script); err != nil || !strings.Contains(out, "Verified OK") {
			t.Errorf("%s: the page's cosign commands: %v\n%s\n%s", p.page, err, script, out)
		}
		if verify != "" {
			if out, err := sh(dir, verify); err != nil || !strings.Contains(out, "catalog ok") {
				t.Errorf("%s: %s: %v\n%s", p.page, verify, err, out)
			}
		}
		// Another key pinned: the same commands, but the key's fetch, fail.
		if err := os.WriteFile(filepath.Join(dir, "key.pem"), signing.PublicKeyPEM(other.Public()), 0o644); err != nil {
			t.Fatal(err)
		}
		rest := script[strings.Index(script, "\n")+1:]
		if out, err := sh(dir, rest); err == nil {
			t.Errorf("%s: cosign verified with another key:\n%s", p.page, out)
		}
	}
}
