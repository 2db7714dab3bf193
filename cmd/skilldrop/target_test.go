package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/buildinfo"
)

// bareAWSEnvironment clears every setting the AWS SDK would read, so a test
// sees what an operator's shell without AWS configuration sees.
func bareAWSEnvironment(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for _, v := range []string{
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
	} {
		t.Setenv(v, "")
	}
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "no-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true") // off EC2, IMDS is where the chain ends
}

// TestBucketWithoutRegionOrCredentials: what is missing is said, with the
// flags and variables that give it, instead of the SDK's errors.
func TestBucketWithoutRegionOrCredentials(t *testing.T) {
	bareAWSEnvironment(t)
	code, out, errOut := runCLI("status", "--bucket", "b")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "no AWS region for s3://b: give --region REGION, or set AWS_REGION") ||
		strings.Contains(errOut, "endpoint rule") {
		t.Fatalf("no region: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runCLI("publish", "--bucket", "b", "--region", "eu-west-1", writeFile(t, t.TempDir(), "x.md", skillDoc("x")))
	if code != exitFailure || !strings.Contains(errOut, "no AWS credentials for s3://b: give --profile NAME, or set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") ||
		strings.Contains(errOut, "IMDS") {
		t.Fatalf("no credentials: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI("reindex", "--bucket", "b", "--profile", "nope")
	if code != exitUsage || !strings.Contains(errOut, "the AWS profile nope is in neither the AWS config file nor the credentials file") {
		t.Fatalf("unknown profile: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{
		{"status", "--bucket", "b", "--region", "not a region"},
		{"status", "--dir", t.TempDir(), "--region", "eu-west-1"},
	} {
		if code, _, errOut := runCLI(args...); code != exitUsage {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
}

// fakeS3 answers every request 404 NoSuchKey (a bucket with nothing
// indexed) and records the requests' headers.
type fakeS3 struct {
	mu      sync.Mutex
	headers []http.Header
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`))
}

func (f *fakeS3) first(t *testing.T) http.Header {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.headers) == 0 {
		t.Fatal("no request reached the endpoint")
	}
	return f.headers[0]
}

// TestBucketRegionProfileAndUserAgent: --region and --profile choose the
// configuration, and every request names the build in its User-Agent.
func TestBucketRegionProfileAndUserAgent(t *testing.T) {
	bareAWSEnvironment(t)
	s3 := &fakeS3{}
	srv := httptest.NewServer(s3)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)

	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	code, out, errOut := runCLI("status", "--bucket", "b", "--region", "eu-west-3")
	if code != exitOK || !strings.Contains(out, "s3://b has no catalog yet") {
		t.Fatalf("status --region: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	h := s3.first(t)
	if auth := h.Get("Authorization"); !strings.Contains(auth, "Credential=AKIDENV/") || !strings.Contains(auth, "/eu-west-3/s3/") {
		t.Errorf("Authorization %q: want the environment's key, signed for --region", auth)
	}
	if ua := h.Get("User-Agent"); !strings.Contains(ua, "app/"+buildinfo.AppID()) {
		t.Errorf("User-Agent %q lacks app/%s", ua, buildinfo.AppID())
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	config := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(config, []byte("[profile demo]\nregion = ap-south-1\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", config)
	s3.headers = nil
	if code, _, errOut := runCLI("status", "--bucket", "b", "--profile", "demo"); code != exitOK {
		t.Fatalf("status --profile: exit %d, stderr %q", code, errOut)
	}
	if auth := s3.first(t).Get("Authorization"); !strings.Contains(auth, "Credential=AKIDPROFILE/") || !strings.Contains(auth, "/ap-south-1/s3/") {
		t.Errorf("Authorization %q: want the profile's key and region", auth)
	}
}

// TestNoCredentialsThroughTheBinary runs the built command in a shell with
// no AWS configuration at all, where the SDK's chain ends at the instance
// metadata service (here a local one refusing tokens, as off EC2): the
// operator reads what is missing and how to give it, and no SDK log line.
func TestNoCredentialsThroughTheBinary(t *testing.T) {
	bin := builtCLI(t)
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	defer imds.Close()
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"AWS_CONFIG_FILE=" + filepath.Join(home, "no-config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "no-credentials"),
		"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL}
	for _, args := range [][]string{
		{"status", "--bucket", "b", "--region", "eu-west-1"},
		{"publish", "--bucket", "b", "--region", "eu-west-1", writeFile(t, t.TempDir(), "x.md", skillDoc("x"))},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != exitFailure || stdout.String() != "" ||
			!strings.HasPrefix(stderr.String(), "skilldrop "+args[0]+": no AWS credentials for s3://b: give --profile NAME") ||
			strings.Contains(stderr.String(), "SDK") || strings.Contains(stderr.String(), "IMDS") {
			t.Errorf("skilldrop %s: exit %d, stdout %q, stderr %q", args[0], code, stdout.String(), stderr.String())
		}
	}
}
