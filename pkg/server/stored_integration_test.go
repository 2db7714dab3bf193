//go:build integration

package server

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestRedirectsToThePinnedVersionInS3: in a versioned bucket, as deployed,
// a document too large for a response is a 302 to a presigned GET that
// reads the version the catalog pins, and one written over since (a
// tampered document) is never what a client gets, redirected or answered.
func TestRedirectsToThePinnedVersionInS3(t *testing.T) {
	cfg := awstest.Config(t)
	st := store.NewS3(cfg, awstest.VersionedBucket(t, cfg))
	indexedBucket(t, st, 300)
	c, _, err := catalog.Load(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous)
	if d == nil || d.Identity.VersionID == "" {
		t.Fatalf("stored document %+v: want one pinned to a version", d)
	}
	if _, err := st.Put(context.Background(), d.Identity.Key, []byte(`{"skills":[{"name":"planted"}]}`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	follow := func(h *harness, headers ...string) (int, []byte) {
		w := h.do(http.MethodGet, routes.RFCIndex, headers...)
		if w.Code != http.StatusFound {
			return w.Code, w.Body.Bytes()
		}
		resp, err := http.Get(w.Header().Get("Location")) //nolint:noctx // a test of the URL itself
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	redirecting := newHarness(t, st, func(c *Config) { c.MaxResponseBytes, c.Presigner = 1<<10, st })
	if code, b := follow(redirecting); code != http.StatusOK || !digest.Of(b).Equal(d.Identity.Digest) {
		t.Fatalf("after the redirect: %d, %d bytes with digest %s; want the pinned document", code, len(b), digest.Of(b))
	}
	direct := newHarness(t, st, func(c *Config) { c.Presigner = st })
	if code, b := follow(direct); code != http.StatusOK || !digest.Of(b).Equal(d.Identity.Digest) {
		t.Fatalf("answered directly: %d, digest %s; want the pinned document", code, digest.Of(b))
	}
}

// TestAVersionAnUnversionedBucketNeverHad: a bucket without versioning
// whose catalog pins versions (copied from a versioned bucket) gets its
// documents rendered on the request path, or a 503 when they do not fit,
// never a redirect or a 500, asking the bucket once per revision. Moto
// answers 404 NoSuchVersion where S3 answers 400 InvalidArgument
// (TestAVersionTheBucketCannotServe has that).
func TestAVersionAnUnversionedBucketNeverHad(t *testing.T) {
	cfg := awstest.Config(t)
	st := store.NewS3(cfg, awstest.Bucket(t, cfg))
	checkUnservablePins(t, st, st)
}
