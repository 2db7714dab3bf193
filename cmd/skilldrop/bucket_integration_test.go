//go:build integration

package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestPublishStatusReindexOnABucket runs the operator commands against a
// bucket of the emulator (configuration from the environment, as an
// operator's shell has it).
func TestPublishStatusReindexOnABucket(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	src := t.TempDir()
	t.Chdir(src)
	skilltest.WriteFiles(t, src, map[string]string{
		"deploy-via-pr/SKILL.md":       skilltest.SkillMD("deploy-via-pr", "1.0", "Deploy through a pull request."),
		"deploy-via-pr/scripts/run.sh": "echo deploy",
		"bad.md":                       "no frontmatter",
	})
	steps := []struct {
		args   []string
		code   int
		stdout []string
		stderr string // "": none of noOrigin
	}{
		{[]string{"status", "--bucket", bucket}, exitOK, []string{"no catalog yet"}, ""},
		// No Lambda runs here: publish does not wait for one.
		{[]string{"publish", "--bucket", bucket, "--wait", "0", "deploy-via-pr"}, exitOK, []string{"uploaded skills/deploy-via-pr.zip deploy-via-pr 1.0 sha256:"}, ""},
		{[]string{"publish", "--bucket", bucket, "bad.md"}, exitFailure, []string{"rejected bad.md invalid_frontmatter"}, ""},
		// A re-index indexes what was uploaded.
		{[]string{"reindex", "--bucket", bucket}, exitOK, []string{"published skill deploy-via-pr 1.0 skills/deploy-via-pr.zip", "1 published"}, noOrigin},
		{[]string{"publish", "--bucket", bucket, "deploy-via-pr"}, exitOK, []string{"unchanged skills/deploy-via-pr.zip deploy-via-pr 1.0 sha256:"}, ""},
		{[]string{"reindex", "--bucket", bucket, "--origin", "https://skills.example.com"}, exitOK, []string{"0 published, 0 withdrawn, 0 gone, 0 rejected, 1 unchanged"}, ""},
		// The catalog now records the origin: a later re-index keeps it, and says nothing.
		{[]string{"reindex", "--bucket", bucket}, exitOK, []string{"0 published, 0 withdrawn, 0 gone, 0 rejected, 1 unchanged"}, ""},
		{[]string{"status", "--bucket", bucket}, exitOK, []string{"s3://" + bucket, "deploy-via-pr", "1.0", "archive", "recent rejections: none"}, ""},
		{[]string{"status", "--bucket", awstest.Name(t, "skilldrop-missing")}, exitFailure, nil, ""},
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
		if strings.Contains(errOut, noOrigin) != (s.stderr != "") {
			t.Fatalf("%v: stderr %q, want the no-origin warning: %v", s.args, errOut, s.stderr != "")
		}
		if s.stderr != "" && !strings.Contains(errOut, "--origin") {
			t.Fatalf("%v: the warning does not say how to fix it: %q", s.args, errOut)
		}
	}
}

// noOrigin starts the warning of a re-index whose catalog records no origin.
const noOrigin = "records no origin, so no document too large for a Lambda response"

// TestReindexOfABucketCountsItsRejections: a re-index from the CLI records
// rejections in the status document, which the Lambda then takes as
// already counted; so the CLI counts them itself, in the Lambda's namespace.
func TestReindexOfABucketCountsItsRejections(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	ns := "SkilldropTest/" + awstest.Name(t, "cli")
	ctx := context.Background()
	if _, err := store.NewS3(cfg, bucket).Put(ctx, "skills/wrong.md", []byte(skilltest.SkillMD("other", "1", "Mismatch.")), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Lambda's setting, as an operator's shell may have it, is the default.
	t.Setenv("SKILLDROP_METRIC_NAMESPACE", ns)
	code, out, errOut := runCLI("reindex", "--bucket", bucket)
	if code != exitOK || !strings.Contains(out, "rejected skills/wrong.md name_mismatch") {
		t.Fatalf("reindex: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if strings.Contains(errOut, "metric not sent") {
		t.Fatalf("a metric was not sent: %s", errOut)
	}
	series := awstest.MetricSeries(t, cfg, ns, "")
	if want := []string{"UploadRejected", "UploadRejected Reason=name_mismatch"}; !slices.Equal(series, want) {
		t.Fatalf("metrics in %s: %q, want %q", ns, series, want)
	}
}

// TestProfileAndRegionFlagsOnABucket: with no AWS settings in the
// environment but the endpoint, --profile and --region reach the bucket.
func TestProfileAndRegionFlagsOnABucket(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	home := t.TempDir()
	config := filepath.Join(home, "config")
	if err := os.WriteFile(config, []byte("[profile emulator]\naws_access_key_id = "+os.Getenv("AWS_ACCESS_KEY_ID")+
		"\naws_secret_access_key = "+os.Getenv("AWS_SECRET_ACCESS_KEY")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	region := cfg.Region
	for _, v := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_CONFIG_FILE", config)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "credentials"))
	src := t.TempDir()
	t.Chdir(src)
	skilltest.WriteFiles(t, src, map[string]string{"flagged/SKILL.md": skilltest.SkillMD("flagged", "1", "Reached with flags.")})
	if code, _, errOut := runCLI("publish", "--bucket", bucket, "--profile", "emulator", "flagged"); code != exitUsage || !strings.Contains(errOut, "no AWS region") {
		t.Fatalf("publish without a region: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut := runCLI("publish", "--bucket", bucket, "--profile", "emulator", "--region", region, "--wait", "0", "flagged")
	if code != exitOK || !strings.HasPrefix(out, "uploaded skills/flagged.zip flagged 1 ") {
		t.Fatalf("publish --profile --region: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
