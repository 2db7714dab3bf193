package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// fakePresigner records what it presigns.
type fakePresigner struct {
	key, version string
	expires      time.Duration
	headers      store.ResponseHeaders
}

func (p *fakePresigner) PresignGet(_ context.Context, key, version string, expires time.Duration, h store.ResponseHeaders) (string, error) {
	p.key, p.version, p.expires, p.headers = key, version, expires, h
	return "https://bucket.example/" + key + "?versionId=" + url.QueryEscape(version) + "&signed=1", nil
}

// indexedBucket indexes n skills with long descriptions (every tenth
// authenticated) through the indexer, which renders the large documents
// for https://skills.example.com (from 64 KiB).
func indexedBucket(t *testing.T, st store.Store, n int) {
	t.Helper()
	var cfg strings.Builder
	cfg.WriteString("version: 1\nskills:\n")
	ctx := context.Background()
	for i := range n {
		name := fmt.Sprintf("skill-%04d", i)
		body := fmt.Sprintf("---\nname: %s\ndescription: %s\n---\nBody.\n", name, strings.Repeat(fmt.Sprintf("Skill %d does one careful thing. ", i), 8))
		if _, err := st.Put(ctx, "skills/"+name+".md", []byte(body), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			fmt.Fprintf(&cfg, "  - name: %s\n    visibility: authenticated\n", name)
		}
	}
	if _, err := st.Put(ctx, "agent-skills.yaml", []byte(cfg.String()), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	origin, _ := url.Parse("https://skills.example.com")
	// Rendered into the bucket from 64 KiB, so a few hundred skills do.
	ix, err := indexer.New(indexer.Config{Store: st, Origins: []*url.URL{origin}, MinStoredDocument: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStoredDocumentsAnswerOrRedirect: a pre-rendered index that fits is
// answered from the bucket's bytes, equal to what the request path renders;
// one that does not is a 302 to a presigned GET of the pinned version; both
// keep ETags, 304, HEAD, Cache-Control, Vary and visibility.
func TestStoredDocumentsAnswerOrRedirect(t *testing.T) {
	st := store.NewVersionedMemory()
	indexedBucket(t, st, 300)
	c, _, err := catalog.Load(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	stored := c.Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous)
	if stored == nil {
		t.Fatal("the indexer stored no index")
	}
	// What the request path renders itself, for the same catalog.
	plain := newHarness(t, st, func(c *Config) { c.PublicBaseURL = "https://other.example" })
	rendered := plain.do(http.MethodGet, routes.RFCIndex)

	t.Run("fits: answered from the bucket", func(t *testing.T) {
		h := newHarness(t, st)
		w := h.do(http.MethodGet, routes.RFCIndex)
		if w.Code != http.StatusOK || !digest.Of(w.Body.Bytes()).Equal(stored.Identity.Digest) {
			t.Fatalf("%d, %d bytes, want the stored document", w.Code, w.Body.Len())
		}
		if !bytes.Equal(bytes.ReplaceAll(w.Body.Bytes(), []byte("https://skills.example.com"), []byte("https://other.example")), rendered.Body.Bytes()) {
			t.Error("the stored index is not what the request path renders")
		}
		etag := w.Header().Get("ETag")
		if w.Header().Get("Cache-Control") != ccPublic || !strings.Contains(strings.Join(w.Header().Values("Vary"), ", "), "Accept-Encoding") || etag == "" {
			t.Errorf("headers %v", w.Header())
		}
		if w := h.do(http.MethodGet, routes.RFCIndex, "If-None-Match: "+etag); w.Code != http.StatusNotModified {
			t.Errorf("If-None-Match: %d", w.Code)
		}
		gz := h.do(http.MethodGet, routes.RFCIndex, "Accept-Encoding: gzip")
		zr, err := gzip.NewReader(gz.Body)
		if err != nil || gz.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("gzip: %v %v", err, gz.Header())
		}
		if b, _ := io.ReadAll(zr); !digest.Of(b).Equal(stored.Identity.Digest) {
			t.Error("the gzip rendition is not the document")
		}
		head := h.do(http.MethodHead, routes.RFCIndex)
		if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Length") != fmt.Sprint(stored.Identity.Size) {
			t.Errorf("HEAD: %d, %d bytes, Content-Length %s", head.Code, head.Body.Len(), head.Header().Get("Content-Length"))
		}
		if bytes.Contains(w.Body.Bytes(), []byte(`"skill-0010"`)) {
			t.Error("an authenticated skill in the anonymous index")
		}
		if w := h.do(http.MethodGet, routes.RFCIndex, bearer(goodKey)); !bytes.Contains(w.Body.Bytes(), []byte(`"skill-0010"`)) || w.Header().Get("Cache-Control") != ccPrivate {
			t.Error("the authenticated index misses the authenticated skill, or is not private")
		}
	})

	t.Run("too large: a redirect to the pinned version", func(t *testing.T) {
		p := &fakePresigner{}
		h := newHarness(t, st, func(c *Config) { c.MaxResponseBytes, c.Presigner = 1<<10, p })
		w := h.do(http.MethodGet, routes.RFCIndex)
		if w.Code != http.StatusFound || w.Body.Len() != 0 {
			t.Fatalf("%d with %d bytes, want a 302", w.Code, w.Body.Len())
		}
		if p.key != stored.Identity.Key || p.version != stored.Identity.VersionID || p.expires > time.Minute ||
			p.headers.ContentType != "application/json" || p.headers.CacheControl != ccPublic || p.headers.ContentEncoding != "" {
			t.Errorf("presigned %+v", p)
		}
		if loc := w.Header().Get("Location"); !strings.HasPrefix(loc, "https://bucket.example/"+stored.Identity.Key) {
			t.Errorf("Location %q", loc)
		}
		if w.Header().Get("Cache-Control") != ccNoStore || w.Header().Get("ETag") == "" {
			t.Errorf("the redirect's headers %v", w.Header())
		}
		if w := h.do(http.MethodGet, routes.RFCIndex, "If-None-Match: "+w.Header().Get("ETag")); w.Code != http.StatusNotModified {
			t.Errorf("If-None-Match on a redirected document: %d", w.Code)
		}
		if w := h.do(http.MethodHead, routes.RFCIndex); w.Code != http.StatusOK || w.Header().Get("Content-Length") == "" {
			t.Errorf("HEAD of a redirected document: %d %v", w.Code, w.Header())
		}
		h.do(http.MethodGet, routes.RFCIndex, "Accept-Encoding: gzip")
		if p.key != stored.Gzip.Key || p.headers.ContentEncoding != "gzip" {
			t.Errorf("a client accepting gzip is sent to %s (encoding %q), want the gzip rendition", p.key, p.headers.ContentEncoding)
		}
		h.do(http.MethodGet, routes.RFCIndex, bearer(goodKey))
		if auth := c.Document("https://skills.example.com", routes.RFCIndex, audience.Unrestricted); p.key != auth.Identity.Key || p.headers.CacheControl != ccPrivate {
			t.Errorf("a key holder is sent to %s (%s), want the authenticated rendition, private", p.key, p.headers.CacheControl)
		}
	})

	t.Run("the gzip rendition fits where the JSON does not", func(t *testing.T) {
		p := &fakePresigner{}
		h := newHarness(t, st, func(c *Config) { c.MaxResponseBytes, c.Presigner = stored.Gzip.Size+1, p })
		if w := h.do(http.MethodGet, routes.RFCIndex); w.Code != http.StatusFound {
			t.Errorf("identity: %d, want a redirect", w.Code)
		}
		p.key = ""
		w := h.do(http.MethodGet, routes.RFCIndex, "Accept-Encoding: gzip")
		if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != "gzip" || p.key != "" {
			t.Errorf("gzip: %d, encoding %q, presigned %q; want it answered directly", w.Code, w.Header().Get("Content-Encoding"), p.key)
		}
	})

	t.Run("another origin: rendered on the request path", func(t *testing.T) {
		if rendered.Code != http.StatusOK || !bytes.Contains(rendered.Body.Bytes(), []byte("https://other.example/skills/")) {
			t.Fatalf("%d %s", rendered.Code, clip(rendered.Body.String()))
		}
	})
}

// TestATamperedStoredDocumentIsNeverServed: bytes at a stored document's
// key that are not the pinned digest (a store without versions) are never
// sent nor redirected to: the document is rendered on the request path,
// with the audit event and the metric of a digest mismatch.
func TestATamperedStoredDocumentIsNeverServed(t *testing.T) {
	st := store.NewMemory()
	indexedBucket(t, st, 300)
	c, _, err := catalog.Load(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous)
	tampered := bytes.Repeat([]byte("x"), int(d.Identity.Size))
	if _, err := st.Put(context.Background(), d.Identity.Key, tampered, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	p := &fakePresigner{}
	h := newHarness(t, st, func(c *Config) { c.Presigner = p })
	w := h.do(http.MethodGet, routes.RFCIndex)
	if w.Code != http.StatusOK || !digest.Of(w.Body.Bytes()).Equal(d.Identity.Digest) || p.key != "" {
		t.Fatalf("%d, digest %s, presigned %q; want the document as rendered", w.Code, digest.Of(w.Body.Bytes()), p.key)
	}
	if got := h.metrics.Total(obs.DigestMismatch); got != 1 {
		t.Errorf("DigestMismatch counted %d", got)
	}
	if lines := auditLines(t, h); len(lines) != 1 || lines[0]["path"] != routes.RFCIndex {
		t.Errorf("audit %v", lines)
	}
}

// TestARedirectNeedsThePinnedVersion: a document too large to answer is
// redirected to only when its rendition has a version (a store without
// versioning could change it under the client) and that version is there
// and is the object written; otherwise the answer is the request path's
// own (here a 503: the document does not fit either), never a redirect.
func TestARedirectNeedsThePinnedVersion(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		versioned bool
		change    func(t *testing.T, st store.Store, key string)
		redirect  bool
	}{
		{name: "pinned version there", versioned: true, redirect: true},
		{name: "current object deleted, the version stays", versioned: true, redirect: true,
			change: func(t *testing.T, st store.Store, key string) {
				if err := st.Delete(ctx, key); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a store without versions"},
		{name: "the pinned version is gone", versioned: true,
			change: func(t *testing.T, st store.Store, _ string) {
				pinRenditions(t, st, func(r *catalog.Rendition) { r.VersionID = "v999999" })
			}},
		{name: "the pinned version is another object", versioned: true,
			change: func(t *testing.T, st store.Store, _ string) {
				pinRenditions(t, st, func(r *catalog.Rendition) { r.ETag = `"0123456789abcdef0123456789abcdef"` })
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := store.NewMemory()
			if tc.versioned {
				st = store.NewVersionedMemory()
			}
			indexedBucket(t, st, 300)
			c, _, err := catalog.Load(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			d := c.Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous)
			if tc.change != nil {
				tc.change(t, st, d.Identity.Key)
			}
			p := &fakePresigner{}
			h := newHarness(t, st, func(c *Config) { c.MaxResponseBytes, c.Presigner = 1<<10, p })
			for range 2 { // the second answer comes from what the first learned
				w := h.do(http.MethodGet, routes.RFCIndex)
				switch {
				case tc.redirect && (w.Code != http.StatusFound || p.key != d.Identity.Key):
					t.Fatalf("%d, presigned %q; want a redirect to %s", w.Code, p.key, d.Identity.Key)
				case !tc.redirect && (w.Code != http.StatusServiceUnavailable || p.key != ""):
					t.Fatalf("%d, presigned %q; want 503 and no redirect", w.Code, p.key)
				}
			}
		})
	}
}

// pinRenditions changes what the catalog records of each stored document's
// identity rendition.
func pinRenditions(t *testing.T, st store.Store, change func(*catalog.Rendition)) {
	t.Helper()
	if _, err := catalog.Update(context.Background(), st, func(c *catalog.Catalog) error {
		for i := range c.Documents {
			change(&c.Documents[i].Identity)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// foreignVersion is a version id the bucket never issued: S3's example
// one, as a catalog copied from a versioned bucket into one without
// versioning pins.
const foreignVersion = "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"

// s3InvalidVersion is S3's answer to a GET naming a version id in a bucket
// without versioning (moto's is a 404 NoSuchVersion instead). See
// pkg/store's TestS3ErrorMapping for the documentation.
const s3InvalidVersion = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidArgument</Code>` +
	`<Message>Invalid version id specified</Message><ArgumentName>versionId</ArgumentName>` +
	`<ArgumentValue>` + foreignVersion + `</ArgumentValue></Error>`

// versionGets is a store whose Gets of a version are answered by
// byVersion, and counted; everything else by Store.
type versionGets struct {
	store.Store
	byVersion store.Store
	n         atomic.Int32
}

func (s *versionGets) Get(ctx context.Context, key string, opts store.GetOptions) (*store.Object, error) {
	if opts.VersionID == "" {
		return s.Store.Get(ctx, key, opts)
	}
	s.n.Add(1)
	return s.byVersion.Get(ctx, key, opts)
}

// TestAVersionTheBucketCannotServe: a catalog that pins versions its
// bucket cannot serve (copied from a versioned bucket into one without
// versioning) gets the documents rendered on the request path when they
// fit, a 503 when they do not, never a redirect nor a 500, and the store
// is asked once per revision, not per request: the store's
// ErrNoSuchVersion is final. Both answers are checked: an S3 endpoint's
// 400 InvalidArgument, from a fake that answers as S3 does, and moto's 404
// (as the memory store without versions answers; over the wire in
// TestAVersionAnUnversionedBucketNeverHad).
func TestAVersionTheBucketCannotServe(t *testing.T) {
	s3Fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("versionId") != foreignVersion {
			t.Errorf("the fake S3 was asked %s", r.URL)
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, s3InvalidVersion)
	}))
	defer s3Fake.Close()
	s3Store := store.NewS3FromClient(s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s3Fake.URL), UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1,
	}), "skilldrop-fake")
	for _, tc := range []struct {
		name      string
		byVersion func(mem store.Store) store.Store
	}{
		{"S3 answers 400 InvalidArgument", func(store.Store) store.Store { return s3Store }},
		{"the store answers no such version (moto: 404)", func(mem store.Store) store.Store { return mem }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := store.NewMemory()
			checkUnservablePins(t, mem, tc.byVersion(mem))
		})
	}
}

// checkUnservablePins indexes into st a catalog whose stored documents pin
// a version the bucket never issued, which byVersion is asked for, and
// checks that the RFC index is answered as rendered where it fits and 503
// where it does not, twice, with one read of the version per server.
func checkUnservablePins(t *testing.T, st, byVersion store.Store) {
	t.Helper()
	indexedBucket(t, st, 300)
	pinRenditions(t, st, func(r *catalog.Rendition) { r.VersionID = foreignVersion })
	c, _, err := catalog.Load(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous)
	counted := &versionGets{Store: st, byVersion: byVersion}
	p := &fakePresigner{}
	direct := newHarness(t, counted, func(c *Config) { c.Presigner = p })
	redirecting := newHarness(t, counted, func(c *Config) { c.MaxResponseBytes, c.Presigner = 1<<10, p })
	for i := range 2 {
		if w := direct.do(http.MethodGet, routes.RFCIndex); w.Code != http.StatusOK || !digest.Of(w.Body.Bytes()).Equal(d.Identity.Digest) {
			t.Fatalf("answered directly: %d, digest %s; want the document as rendered", w.Code, digest.Of(w.Body.Bytes()))
		}
		if w := redirecting.do(http.MethodGet, routes.RFCIndex); w.Code != http.StatusServiceUnavailable || p.key != "" {
			t.Fatalf("too large to answer: %d, presigned %q; want 503 and no redirect", w.Code, p.key)
		}
		if got := counted.n.Load(); got != 2 {
			t.Fatalf("after %d requests to each server, %d reads of the pinned version; want one each", i+1, got)
		}
	}
}
