//go:build integration

package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/apikey/ssmparam"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// emulated is the request path wired as functions/api wires it, against
// the emulator: an S3 bucket, CloudWatch in a namespace of the test's own,
// and API key hashes in an SSM SecureString.
type emulated struct {
	srv       *Server
	s3        *s3.Client
	cfg       aws.Config
	bucket    string
	namespace string
	logs      *syncbuf.Buffer
	b         *bucket
	clock     *fakeClock
}

func newEmulated(t *testing.T) *emulated {
	t.Helper()
	cfg := awstest.Config(t)
	e := &emulated{s3: awstest.S3(cfg), cfg: cfg, bucket: awstest.Bucket(t, cfg), logs: &syncbuf.Buffer{}, clock: newClock()}
	e.namespace = "SkilldropTest/" + awstest.Name(t, "server")
	st := store.NewS3(cfg, e.bucket)
	e.b = standardBucket(t, st)

	param := "/" + awstest.Name(t, "skilldrop-test") + "/api-keys"
	awstest.SecureString(t, cfg, param, apikey.Hash(goodKey))
	keys, err := ssmparam.New(ssm.NewFromConfig(cfg), param, apikey.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logger := obs.NewLogger(e.logs, slog.LevelInfo)
	sink, err := cwmetrics.New(cwmetrics.NewClient(e.cfg), cwmetrics.Options{Namespace: e.namespace, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	e.srv, err = New(Config{Store: st, Keys: keys, Metrics: sink, Logger: logger, PublicBaseURL: "https://skills.example.com", Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *emulated) get(path string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for _, h := range headers {
		k, v, _ := bytes.Cut([]byte(h), []byte(": "))
		r.Header.Set(string(k), string(v))
	}
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, r)
	return w
}

func TestEmulatorKeysFromSSM(t *testing.T) {
	e := newEmulated(t)
	for _, tc := range []struct {
		name, path, auth string
		status           int
	}{
		{"anonymous public artifact", "/skills/deploy-via-pr.md", "", 200},
		{"anonymous hidden artifact", "/skills/secret-rotation/SKILL.md", "", 404},
		{"key from the SecureString", "/skills/secret-rotation/SKILL.md", goodKey, 200},
		{"key not in the SecureString", "/skills/secret-rotation/SKILL.md", otherKey, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{}
			if tc.auth != "" {
				hdr = append(hdr, "Authorization: Bearer "+tc.auth)
			}
			if w := e.get(tc.path, hdr...); w.Code != tc.status {
				t.Errorf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
		})
	}
}

// TestEmulatorTamperedBlob overwrites a validated blob through the S3 API,
// as an attacker with bucket access would, and checks all three outcomes
// at the RFC artifact path and the native /api/v1/ path alike: 503, the
// audit event, and the metric in CloudWatch.
func TestEmulatorTamperedBlob(t *testing.T) {
	e := newEmulated(t)
	if w := e.get("/skills/bundle-zip.zip"); w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), zipBody) {
		t.Fatalf("before tampering: %d", w.Code)
	}
	ver := e.b.cat.Skills["bundle-zip"].LatestVersion()
	tampered := append(append([]byte{}, zipBody...), "#!/bin/sh\nrm -rf ~\n"...)
	if _, err := e.s3.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(e.bucket), Key: aws.String(catalog.BlobKey(ver.Digest)), Body: bytes.NewReader(tampered),
	}); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-5 * time.Minute)

	w := e.get("/skills/bundle-zip.zip")
	if w.Code != http.StatusServiceUnavailable || bytes.Contains(w.Body.Bytes(), []byte("rm -rf")) || errorCode(t, w) != codeUnavailable {
		t.Fatalf("after tampering: %d %q", w.Code, w.Body)
	}

	// The same version's bytes under the native API are the same blob.
	native := e.get("/api/v1/skills/bundle-zip/" + ver.Label + "/archive.zip")
	if native.Code != http.StatusServiceUnavailable || bytes.Contains(native.Body.Bytes(), []byte("rm -rf")) {
		t.Fatalf("native bytes after tampering: %d %q", native.Code, native.Body)
	}

	var audits []map[string]any
	for _, l := range logLines(t, e.logs) {
		if l[obs.EventKey] == obs.EventDigestMismatch {
			audits = append(audits, l)
		}
	}
	if len(audits) != 2 {
		t.Fatalf("%d audit events, want one per request", len(audits))
	}
	for i, resp := range []*httptest.ResponseRecorder{w, native} {
		audit := audits[i]
		if audit["skill_name"] != "bundle-zip" || audit["expected_digest"] != ver.Digest.String() ||
			audit["observed_digest"] == ver.Digest.String() || audit["observed_digest"] == "" || audit["request_id"] != resp.Header().Get("X-Request-Id") {
			t.Errorf("audit event %v", audit)
		}
	}
	if bytes.Contains([]byte(e.logs.String()), []byte("metric not sent")) {
		t.Fatalf("the metric was not sent:\n%s", e.logs)
	}

	if series, want := awstest.MetricSeries(t, e.cfg, e.namespace, obs.DigestMismatch), []string{"DigestMismatch", "DigestMismatch Skill=bundle-zip"}; !slices.Equal(series, want) {
		t.Errorf("series %v, want %v", series, want)
	}
	sum := awstest.MetricSum(t, e.cfg, e.namespace, obs.DigestMismatch, map[string]string{obs.DimensionSkill: "bundle-zip"}, start, time.Now().Add(5*time.Minute))
	if sum != 2 {
		t.Errorf("DigestMismatch Skill=bundle-zip sums to %v, want 2", sum)
	}

	// The other artifacts are untouched and still served.
	if w := e.get("/skills/deploy-via-pr.md"); w.Code != http.StatusOK {
		t.Errorf("untampered artifact: %d", w.Code)
	}
}

// TestEmulatorPublishIsVisibleAfterOneInterval revalidates against S3 with
// a conditional GET (304 while unchanged) and sees a publish one interval
// after the catalog write.
func TestEmulatorPublishIsVisibleAfterOneInterval(t *testing.T) {
	e := newEmulated(t)
	names := func() []string {
		return indexNames(decodeIndex(t, e.get("/.well-known/agent-skills/index.json").Body.Bytes()))
	}
	before := names()
	e.clock.Advance(DefaultRevalidateEvery)
	if got := names(); !slices.Equal(got, before) {
		t.Fatalf("unchanged catalog revalidated to %v, want %v", got, before)
	}
	e.b.skill("aaa-fresh", "", catalog.Public, artifact.FormatMarkdown, skillMD("aaa-fresh"))
	e.b.publish()
	e.clock.Advance(DefaultRevalidateEvery)
	if got := names(); len(got) != len(before)+1 || got[0] != "aaa-fresh" {
		t.Errorf("after publish: %v", got)
	}
	if w := e.get("/skills/aaa-fresh.md"); w.Code != http.StatusOK {
		t.Errorf("fresh artifact: %d", w.Code)
	}
}
