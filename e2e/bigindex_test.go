//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// bigCatalog is the catalog of issue 11's hardest case: 50,000 skills with
// 1,000-character descriptions, every tenth authenticated. Its RFC index is
// about 60 MB, and still tens of megabytes gzipped: far past Lambda's 6 MB.
func bigCatalog() catalogtest.Spec {
	spec := catalogtest.Default(50000)
	spec.DescriptionLen = 1000
	return spec
}

// seedBigBucket writes into a versioned bucket the config and the catalog
// of gen, as an indexer that had indexed it would have written them (the
// skills' own objects are left out: the feeds' documents are rendered from
// the catalog), then has pkg/indexer render the large documents for the
// API's origin into the bucket, as the deployed indexer does with
// SKILLDROP_ORIGINS.
func seedBigBucket(t *testing.T, cfg aws.Config, bucket string, gen *catalogtest.Bucket) *catalog.Catalog {
	t.Helper()
	ctx := context.Background()
	st := store.NewS3(cfg, bucket)
	yaml := gen.Config()
	info, err := st.Put(ctx, skillsconfig.Key, []byte(yaml), store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := gen.Catalog(t)
	c.Config = &catalog.ConfigState{Digest: digest.Of([]byte(yaml)), ETag: info.ETag, AppliedAt: catalogtest.Epoch, YAML: yaml}
	raw, err := catalog.Encode(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, catalog.Key, raw, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	origin, _ := url.Parse(gatewayOrigin)
	ix, err := indexer.New(indexer.Config{Store: st, Origins: []*url.URL{origin}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("catalog %.1f MB; documents rendered into the bucket in %v", float64(len(raw))/1e6, time.Since(start).Round(time.Millisecond))
	got, _, err := catalog.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// invokeAPI sends one request through the api binary under aws-lambda-rie.
func invokeAPI(t *testing.T, fn *function, c call) events.APIGatewayV2HTTPResponse {
	t.Helper()
	raw, err := json.Marshal(gatewayEvent(c, fmt.Sprintf("big-%d", time.Now().UnixNano()), time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	payload := fn.mustInvoke(t, raw)
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &resp); err != nil || resp.StatusCode == 0 {
		t.Fatalf("%s %s: no API Gateway response (%v): %s", c.method, c.target, err, clip(payload))
	}
	return resp
}

// follow fetches a redirect's Location as a plain HTTP client does: no
// Accept-Encoding unless asked for (Go's transport would add gzip), no
// credentials of the API's.
func follow(t *testing.T, location string, acceptGzip bool) (fetched, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, location, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptGzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 2 * time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", location, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fetched{StatusCode: resp.StatusCode, Header: resp.Header}, b
}

// fetched is what a client read of a response: its status and headers.
type fetched struct {
	StatusCode int
	Header     http.Header
}

// TestTheBigIndexReachesEveryClient: at 50,000 skills with 1,000-character
// descriptions the api binary under aws-lambda-rie answers the RFC index
// and the page of everything with a 302 to a presigned GET of the version
// the indexer wrote, and a client that follows it (asking for gzip or not)
// reads exactly the document the catalog records, with the headers the API
// would have sent; the redirect expires within 60 s and is never cached. A
// document overwritten in the bucket is still read as written (the
// redirect pins its version), and one whose version is gone is never
// redirected to.
func TestTheBigIndexReachesEveryClient(t *testing.T) {
	if testing.Short() {
		t.Skip("50,000 skills")
	}
	cfg := awstest.Config(t)
	bucket := awstest.VersionedBucket(t, cfg)
	gen := catalogtest.Generate(bigCatalog())
	c := seedBigBucket(t, cfg, bucket, gen)
	keys := newAPIKeys(t, cfg)
	env := templateEnv(t, apiID, map[string]string{
		"SKILLDROP_BUCKET":            bucket,
		"SKILLDROP_METRIC_NAMESPACE":  metricNamespace(t),
		"SKILLDROP_API_KEY_PARAMETER": keys.parameter,
	})
	api := start(t, "api", bootstrap(t, runtime.GOARCH, "api"), env)

	public := 0
	for _, e := range c.Skills {
		if e.Listing == "" && e.Visibility == catalog.Public && e.Live() {
			public++
		}
	}
	for _, tc := range []struct {
		name, path string
		gzip, auth bool
		skills     int
	}{
		{name: "index, no Accept-Encoding", path: routes.RFCIndex, skills: public},
		{name: "index, gzip", path: routes.RFCIndex, gzip: true, skills: public},
		{name: "index, a key holder", path: routes.RFCIndex, auth: true, skills: len(gen.Skills) - countListingOnly(gen)},
		{name: "pages/all.json", path: "/skills/v1/pages/all.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := c.Document(gatewayOrigin, tc.path, callerOf(tc.auth))
			if d == nil {
				d = c.Document("", tc.path, callerOf(tc.auth))
			}
			if d == nil {
				t.Fatalf("the indexer stored no %s", tc.path)
			}
			rend := d.Identity
			hdr := map[string]string{}
			if tc.gzip {
				rend = *d.Gzip
				hdr["Accept-Encoding"] = "gzip"
			}
			if tc.auth {
				hdr["Authorization"] = "Bearer " + keys.key
			}
			if rend.Size <= lambdaMaxPayload {
				t.Fatalf("%s is %d bytes: it would fit a response, this test wants one that does not", tc.path, rend.Size)
			}
			resp := invokeAPI(t, api, call{method: http.MethodGet, target: tc.path, header: hdr})
			h := answer{APIGatewayV2HTTPResponse: resp}
			loc := h.header("Location")
			if resp.StatusCode != http.StatusFound || loc == "" || h.header("Cache-Control") != "no-store" || h.header("ETag") == "" {
				t.Fatalf("status %d, headers %v; want a 302 that is not stored", resp.StatusCode, resp.Headers)
			}
			u, err := url.Parse(loc)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			if exp, _ := strconv.Atoi(q.Get("X-Amz-Expires")); exp <= 0 || exp > 60 || q.Get("versionId") != rend.VersionID {
				t.Errorf("presigned for %s s, version %q; want at most 60 s of version %q", q.Get("X-Amz-Expires"), q.Get("versionId"), rend.VersionID)
			}
			// What S3 answers the client with (moto leaves response-* out).
			cc := "public, max-age=60"
			if tc.auth {
				cc = "private, max-age=60"
			}
			if q.Get("response-cache-control") != cc || q.Get("response-content-type") != "application/json" {
				t.Errorf("the presigned answer carries Cache-Control %q, Content-Type %q", q.Get("response-cache-control"), q.Get("response-content-type"))
			}
			got, body := follow(t, loc, tc.gzip)
			if got.StatusCode != http.StatusOK || !digest.Of(body).Equal(rend.Digest) || int64(len(body)) != rend.Size {
				t.Fatalf("following the redirect: %d, %d bytes; want the %d bytes the catalog records", got.StatusCode, len(body), rend.Size)
			}
			if ct := got.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if tc.gzip {
				if got.Header.Get("Content-Encoding") != "gzip" {
					t.Errorf("Content-Encoding %q", got.Header.Get("Content-Encoding"))
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil || !digest.Of(body).Equal(d.Identity.Digest) {
					t.Fatalf("the gzip rendition is not the document: %v", err)
				}
			}
			if tc.skills > 0 {
				var idx rfcIndex
				if err := json.Unmarshal(body, &idx); err != nil {
					t.Fatal(err)
				}
				if len(idx.Skills) != tc.skills {
					t.Errorf("%d skills in the index, want %d", len(idx.Skills), tc.skills)
				}
			}
		})
	}

	d := c.Document(gatewayOrigin, routes.RFCIndex, audience.Anonymous)
	client := awstest.S3(cfg)
	t.Run("overwritten in the bucket: the pinned version is read", func(t *testing.T) {
		if _, err := client.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(d.Identity.Key), Body: bytes.NewReader([]byte(`{"skills":[]}`)),
		}); err != nil {
			t.Fatal(err)
		}
		resp := invokeAPI(t, api, call{method: http.MethodGet, target: routes.RFCIndex})
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if got, body := follow(t, answer{APIGatewayV2HTTPResponse: resp}.header("Location"), false); got.StatusCode != http.StatusOK || !digest.Of(body).Equal(d.Identity.Digest) {
			t.Fatalf("%d, %d bytes: not the document the catalog records", got.StatusCode, len(body))
		}
	})
	t.Run("the pinned version deleted: never redirected to", func(t *testing.T) {
		if _, err := client.DeleteObject(context.Background(), &s3.DeleteObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(d.Identity.Key), VersionId: aws.String(d.Identity.VersionID),
		}); err != nil {
			t.Fatal(err)
		}
		api.stop()
		cold := start(t, "api", bootstrap(t, runtime.GOARCH, "api"), env)
		resp := invokeAPI(t, cold, call{method: http.MethodGet, target: routes.RFCIndex})
		if loc := (answer{APIGatewayV2HTTPResponse: resp}).header("Location"); resp.StatusCode != http.StatusServiceUnavailable || loc != "" {
			t.Fatalf("status %d, Location %q; want 503 and no redirect", resp.StatusCode, loc)
		}
	})
}

// countListingOnly is how many of gen's skills are published only in a listing.
func countListingOnly(gen *catalogtest.Bucket) int {
	n := 0
	for _, it := range gen.Skills {
		if it.Listing != "" {
			n++
		}
	}
	return n
}

// callerOf is the caller the tests mean by auth: a key of every audience,
// or none.
func callerOf(auth bool) audience.Caller {
	if auth {
		return audience.Unrestricted
	}
	return audience.Anonymous
}
