package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/skilldrop/skilldrop/pkg/store"
)

// fakeS3 answers each "METHOD /bucket/key" with a canned response and
// records the requests, so the fast tier can pin the error mapping and the
// headers S3 sends without an emulator.
type fakeS3 struct {
	mu       sync.Mutex
	answers  map[string]fakeAnswer
	requests []*http.Request
}

type fakeAnswer struct {
	status int
	header map[string]string
	code   string // S3 XML error code; none for HEAD-style empty bodies
	body   string // an XML body for a success (with code unset)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r)
	a, ok := f.answers[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if !ok {
		a = fakeAnswer{status: http.StatusInternalServerError, code: "UnexpectedRequest"}
	}
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	if a.code == "" {
		if a.body != "" {
			w.Header().Set("Content-Type", "application/xml")
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(a.status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>canned</Message></Error>`, a.code)
}

func (f *fakeS3) last() *http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}

// newFakeS3 serves answers on loopback and returns a store over bucket "skilldrop-fake"
// whose client finds the endpoint the way production does: from
// AWS_ENDPOINT_URL_S3 in the environment.
func newFakeS3(t *testing.T, answers map[string]fakeAnswer) (*store.S3, *fakeS3) {
	t.Helper()
	f := &fakeS3{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	for k, v := range map[string]string{
		// A host name, not an IP: the SDK picks path style by itself for IPs.
		"AWS_ENDPOINT_URL_S3":         strings.Replace(srv.URL, "127.0.0.1", "localhost", 1),
		"AWS_ENDPOINT_URL":            "",
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "us-east-1",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRetryMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseEndpoint != nil {
		t.Fatalf("BaseEndpoint = %q; the test means to exercise AWS_ENDPOINT_URL_S3 alone", *cfg.BaseEndpoint)
	}
	return store.NewS3(cfg, "skilldrop-fake"), f
}

func TestS3ErrorMapping(t *testing.T) {
	cases := []struct {
		name   string
		answer fakeAnswer
		call   func(ctx context.Context, s *store.S3) error
		want   error // nil: no sentinel (and for wantOK, no error)
		wantOK bool
	}{
		{"GET NoSuchKey is not found", fakeAnswer{status: 404, code: "NoSuchKey"}, get, store.ErrNotFound, false},
		{"HEAD 404 without a body is not found", fakeAnswer{status: 404}, head, store.ErrNotFound, false},
		{"GET NoSuchBucket is an error, not absence", fakeAnswer{status: 404, code: "NoSuchBucket"}, get, nil, false},
		{"GET 403 is an error, not absence", fakeAnswer{status: 403, code: "AccessDenied"}, get, nil, false},
		{"GET 304 is not modified", fakeAnswer{status: 304}, get, store.ErrNotModified, false},
		{"PUT 412 is precondition failed", fakeAnswer{status: 412, code: "PreconditionFailed"}, put, store.ErrPreconditionFailed, false},
		{"PUT 409 ConditionalRequestConflict is precondition failed", fakeAnswer{status: 409, code: "ConditionalRequestConflict"}, put, store.ErrPreconditionFailed, false},
		{"PUT 409 of another kind is an error", fakeAnswer{status: 409, code: "OperationAborted"}, put, nil, false},
		{"PUT IfMatch on a missing key is not found", fakeAnswer{status: 404, code: "NoSuchKey"}, put, store.ErrNotFound, false},
		{"DELETE of a missing key succeeds", fakeAnswer{status: 404, code: "NoSuchKey"}, del, nil, true},
		{"DELETE refused is an error", fakeAnswer{status: 403, code: "AccessDenied"}, del, nil, false},
		// Real S3, not moto (which answers 404): see invalidVersionID.
		{"GET of a version, in a bucket without versioning, is no such version", fakeAnswer{status: 400, body: invalidVersionID}, getVersion, store.ErrNoSuchVersion, false},
		{"GET of a version the key does not have is no such version", fakeAnswer{status: 404, code: "NoSuchVersion"}, getVersion, store.ErrNoSuchVersion, false},
		{"GET without a version answered InvalidArgument is an error, not absence", fakeAnswer{status: 400, body: invalidVersionID}, get, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			answers := map[string]fakeAnswer{}
			for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete} {
				answers[m+" /skilldrop-fake/k"] = tc.answer
			}
			s, _ := newFakeS3(t, answers)
			err := tc.call(t.Context(), s)
			switch {
			case tc.wantOK:
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
			case err == nil:
				t.Fatal("got success, want an error")
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("got %v, want %v", err, tc.want)
			case tc.want == nil:
				for _, sentinel := range []error{store.ErrNotFound, store.ErrNotModified, store.ErrPreconditionFailed} {
					if errors.Is(err, sentinel) {
						t.Fatalf("got %v, which reads as %v", err, sentinel)
					}
				}
			}
		})
	}
}

// invalidVersionID is S3's answer to a GET naming a version id in a
// bucket without versioning (as LocalStack reproduces it; moto answers 404
// NoSuchVersion). Such a bucket has one version per key, whose id is "null"
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/versioning-workflows.html:
// objects stored while versioning was never enabled have version ID null);
// https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html lists
// InvalidArgument as a 400, and NoSuchVersion, a version ID that matches no
// existing version, as a 404.
const invalidVersionID = `<?xml version="1.0" encoding="UTF-8"?>` +
	`<Error><Code>InvalidArgument</Code><Message>Invalid version id specified</Message>` +
	`<ArgumentName>versionId</ArgumentName><ArgumentValue>3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY</ArgumentValue>` +
	`<RequestId>4442587FB7D0A2F9</RequestId></Error>`

func getVersion(ctx context.Context, s *store.S3) error {
	obj, err := s.Get(ctx, "k", store.GetOptions{VersionID: "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"})
	if obj != nil {
		_ = obj.Body.Close()
	}
	return err
}

func get(ctx context.Context, s *store.S3) error {
	obj, err := s.Get(ctx, "k", store.GetOptions{IfNoneMatch: `"e"`})
	if obj != nil {
		_ = obj.Body.Close()
	}
	return err
}

func head(ctx context.Context, s *store.S3) error {
	_, err := s.Head(ctx, "k")
	return err
}

func put(ctx context.Context, s *store.S3) error {
	_, err := s.Put(ctx, "k", []byte("x"), store.PutOptions{IfMatch: `"e"`})
	return err
}

func del(ctx context.Context, s *store.S3) error { return s.Delete(ctx, "k") }

func TestS3SendsConditionsPathStyle(t *testing.T) {
	date := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	ok := fakeAnswer{status: 200, header: map[string]string{"ETag": `"new"`, "Date": date.Format(http.TimeFormat)}}
	s, f := newFakeS3(t, map[string]fakeAnswer{
		"PUT /skilldrop-fake/skills/a b+c.md": ok,
		"GET /skilldrop-fake/skills/a b+c.md": {status: 200, header: map[string]string{"ETag": `"new"`, "Content-Length": "0"}},
	})
	ctx := t.Context()
	cases := []struct {
		name       string
		call       func() error
		header     string
		wantHeader string
	}{
		{"Put IfMatch", func() error {
			info, err := s.Put(ctx, "skills/a b+c.md", []byte("x"), store.PutOptions{IfMatch: `"old"`, ContentType: "text/markdown"})
			if err == nil && (info.ETag != `"new"` || !info.LastModified.Equal(date) || info.Size != 1) {
				return fmt.Errorf("Put returned %+v, want ETag \"new\", size 1, LastModified %v (the server's Date)", info, date)
			}
			return err
		}, "If-Match", `"old"`},
		{"Put IfNoneMatch", func() error {
			_, err := s.Put(ctx, "skills/a b+c.md", []byte("x"), store.PutOptions{IfNoneMatch: "*"})
			return err
		}, "If-None-Match", "*"},
		{"Get IfNoneMatch", func() error {
			obj, err := s.Get(ctx, "skills/a b+c.md", store.GetOptions{IfNoneMatch: `"old"`})
			if err == nil {
				_ = obj.Body.Close()
			}
			return err
		}, "If-None-Match", `"old"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err != nil {
				t.Fatal(err)
			}
			r := f.last()
			if got := r.Header.Get(tc.header); got != tc.wantHeader {
				t.Errorf("%s = %q, want %q", tc.header, got, tc.wantHeader)
			}
			// Path style: the bucket is the first path element, not a host name.
			if r.URL.Path != "/skilldrop-fake/skills/a b+c.md" {
				t.Errorf("request path %q, want path-style /skilldrop-fake/skills/a b+c.md", r.URL.Path)
			}
			if r.Header.Get("X-Amz-Checksum-Mode") != "" {
				t.Errorf("request asks for response checksums (%q), which makes the SDK log per GET when there are none", r.Header.Get("X-Amz-Checksum-Mode"))
			}
		})
	}
}

// listPage is a ListObjectsV2 answer holding keys as given (already
// encoded when encoding is "url").
func listPage(encoding string, keys ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	b.WriteString(`<Name>skilldrop-fake</Name><Prefix>skills%2F</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>`)
	if encoding != "" {
		b.WriteString("<EncodingType>" + encoding + "</EncodingType>")
	}
	for _, k := range keys {
		fmt.Fprintf(&b, `<Contents><Key>%s</Key><LastModified>2026-01-02T03:04:05.000Z</LastModified><ETag>&quot;e&quot;</ETag><Size>1</Size></Contents>`, k)
	}
	b.WriteString("</ListBucketResult>")
	return b.String()
}

// TestS3ListDecodesURLEncodedKeys pins the listing's encoding: a key with a
// byte XML cannot carry must not make the bucket unlistable, so List asks
// for URL-encoded keys and decodes them as S3 encodes them ('+' for a
// space, moto's %20 too); an endpoint that ignores the request says so by
// answering without EncodingType, and its keys are taken as they are.
func TestS3ListDecodesURLEncodedKeys(t *testing.T) {
	cases := []struct {
		name string
		page string
		want []string
	}{
		{"S3's encoding", listPage("url", "skills/%1Bbad.md", "skills/a+b%2Bc.md", "skills/%C3%A9%25.md"),
			[]string{"skills/\x1bbad.md", "skills/a b+c.md", "skills/é%.md"}},
		{"moto's encoding", listPage("url", "skills/a%20b%2Bc.md"), []string{"skills/a b+c.md"}},
		{"an endpoint that does not encode", listPage("", "skills/a+b%2Bc.md"), []string{"skills/a+b%2Bc.md"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newFakeS3(t, map[string]fakeAnswer{"GET /skilldrop-fake": {status: 200, body: tc.page}})
			infos, err := s.List(t.Context(), "skills/")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range infos {
				got = append(got, in.Key)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("List = %q, want %q", got, tc.want)
			}
			if q := f.last().URL.Query(); q.Get("encoding-type") != "url" || q.Get("prefix") != "skills/" {
				t.Errorf("request query %v, want encoding-type=url and prefix=skills/", q)
			}
		})
	}
	s, _ := newFakeS3(t, map[string]fakeAnswer{"GET /skilldrop-fake": {status: 200, body: listPage("url", "skills/%zz.md")}})
	if _, err := s.List(t.Context(), ""); err == nil {
		t.Error("List accepted a key that is not URL-encoded although the answer says it is")
	}
}
