//go:build integration

package main

import (
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/awstest"
)

// TestPublishStatusReindexOnABucket runs the operator commands against a
// bucket of the emulator (configuration from the environment, as an
// operator's shell has it).
func TestPublishStatusReindexOnABucket(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	src := t.TempDir()
	t.Chdir(src)
	writeTree(t, src, map[string]string{
		"deploy/SKILL.md":       skillMD("deploy-via-pr", "1.0", "Deploy through a pull request."),
		"deploy/scripts/run.sh": "echo deploy",
		"bad.md":                "no frontmatter",
	})
	steps := []struct {
		args   []string
		code   int
		stdout []string
	}{
		{[]string{"status", "--bucket", bucket}, exitOK, []string{"no catalog yet"}},
		{[]string{"publish", "--bucket", bucket, "deploy"}, exitOK, []string{"published skills/deploy-via-pr.zip deploy-via-pr 1.0 sha256:"}},
		{[]string{"publish", "--bucket", bucket, "bad.md"}, exitFailure, []string{"rejected bad.md invalid_frontmatter"}},
		// No Lambda runs here: a re-index indexes what was uploaded.
		{[]string{"reindex", "--bucket", bucket}, exitOK, []string{"published skill deploy-via-pr 1.0 skills/deploy-via-pr.zip", "1 published"}},
		{[]string{"publish", "--bucket", bucket, "deploy"}, exitOK, []string{"published skills/deploy-via-pr.zip"}},
		{[]string{"reindex", "--bucket", bucket}, exitOK, []string{"0 published, 0 withdrawn, 0 rejected, 1 unchanged"}},
		{[]string{"status", "--bucket", bucket}, exitOK, []string{"s3://" + bucket, "deploy-via-pr", "1.0", "archive", "recent rejections: none"}},
		{[]string{"status", "--bucket", awstest.Name(t, "skilldrop-missing")}, exitFailure, nil},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(s.args...)
		if code != s.code {
			t.Fatalf("%v: exit %d, want %d; stdout %q stderr %q", s.args, code, s.code, out, errOut)
		}
		for _, want := range s.stdout {
			if !strings.Contains(out, want) {
				t.Fatalf("%v: stdout lacks %q:\n%s", s.args, want, out)
			}
		}
	}
}
