package awstest

import (
	"encoding/xml"
	"fmt"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// fakeBucket is an S3 endpoint holding one versioned bucket, answering as
// S3 documents it:
//
//   - ListObjectVersions with encoding-type=url encodes each Key and says
//     EncodingType url
//     (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html);
//     moto ignores the parameter, as ignoreEncoding does.
//   - A quiet DeleteObjects answers 200 naming only the keys it did not
//     delete, each in an Error element with a Code and Message; a key that
//     does not exist counts as deleted
//     (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html).
//   - DeleteObject with a versionId removes that version for good
//     (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
type fakeBucket struct {
	ignoreEncoding bool
	refuseBatch    string // the key DeleteObjects answers an Error for
	refuseAlone    string // the key DeleteObject answers 403 for
	keepAlone      string // the key DeleteObject answers 204 for, and keeps

	mu       sync.Mutex
	versions map[objectVersion]bool
	batched  []string // keys as each DeleteObjects named them
	alone    []string // keys DeleteObject was asked for
	lists    int
	deleted  bool
}

func (f *fakeBucket) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := r.URL.Query()
	key := strings.TrimPrefix(r.URL.Path, "/b/")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/b" && q.Has("versions"):
		f.lists++
		encode := q.Get("encoding-type") == "url" && !f.ignoreEncoding
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListVersionsResult><Name>b</Name><IsTruncated>false</IsTruncated>`)
		if encode {
			b.WriteString(`<EncodingType>url</EncodingType>`)
		}
		byKey := func(a, b objectVersion) int { return strings.Compare(a.key+a.version, b.key+b.version) }
		for _, v := range slices.SortedFunc(maps.Keys(f.versions), byKey) {
			k := html.EscapeString(v.key)
			if encode {
				k = url.QueryEscape(v.key)
			}
			fmt.Fprintf(&b, `<Version><Key>%s</Key><VersionId>%s</VersionId><IsLatest>true</IsLatest></Version>`, k, v.version)
		}
		b.WriteString(`</ListVersionsResult>`)
		_, _ = w.Write([]byte(b.String()))
	case r.Method == http.MethodPost && r.URL.Path == "/b" && q.Has("delete"):
		var req struct {
			Objects []struct{ Key, VersionId string } `xml:"Object"`
		}
		if err := xml.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><DeleteResult>`)
		for _, o := range req.Objects {
			f.batched = append(f.batched, o.Key)
			if o.Key == f.refuseBatch {
				fmt.Fprintf(&b, `<Error><Key>%s</Key><VersionId>%s</VersionId><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>`,
					html.EscapeString(o.Key), o.VersionId)
				continue
			}
			delete(f.versions, objectVersion{o.Key, o.VersionId})
		}
		b.WriteString(`</DeleteResult>`)
		_, _ = w.Write([]byte(b.String()))
	case r.Method == http.MethodDelete && key != r.URL.Path:
		f.alone = append(f.alone, key)
		switch key {
		case f.refuseAlone:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
			return
		case f.keepAlone:
		default:
			delete(f.versions, objectVersion{key, q.Get("versionId")})
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodDelete && r.URL.Path == "/b":
		f.deleted = true
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotImplemented)
	}
}

// errorsOf is a testing.TB that keeps the errors it is told.
type errorsOf struct {
	testing.TB
	errs []string
}

func (e *errorsOf) Helper() {}

func (e *errorsOf) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestDeleteBucketChecksEachKey: DeleteBucket deletes alone what a batch
// cannot carry or refused, and fails the test, at once, naming the key,
// when a key cannot be deleted or stays after its delete succeeded.
func TestDeleteBucketChecksEachKey(t *testing.T) {
	const (
		esc   = "skills/\x1bbad.md" // XML 1.0 cannot write ESC: https://www.w3.org/TR/xml/#charsets
		plain = "skills/a b+c%zz.md"
	)
	cases := []struct {
		name      string
		fake      *fakeBucket
		wantAlone []string // keys deleted one by one
		wantErr   string   // "": no error, and the bucket deleted
	}{
		{"every key deleted", &fakeBucket{}, []string{esc}, ""},
		{"an endpoint that ignores encoding-type (moto)", &fakeBucket{ignoreEncoding: true}, []string{esc}, ""},
		{"a key the batch refused is deleted alone", &fakeBucket{refuseBatch: plain}, []string{esc, plain, plain}, ""},
		{"a key that cannot be deleted fails the test", &fakeBucket{refuseBatch: plain, refuseAlone: plain}, []string{esc, plain}, `cannot delete key "skills/a b+c%zz.md" version v2`},
		{"a key left after its delete succeeded fails the test", &fakeBucket{keepAlone: esc}, []string{esc}, `key "skills/\x1bbad.md" version v1 is still there`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fake
			f.versions = map[objectVersion]bool{{esc, "v1"}: true, {plain, "v2"}: true, {plain, "v3"}: true, {"top", "null"}: true}
			srv := httptest.NewServer(f)
			defer srv.Close()
			client := s3.New(s3.Options{
				Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
				Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1,
			})
			rec := &errorsOf{TB: t}
			DeleteBucket(rec, client, "b")
			f.mu.Lock()
			defer f.mu.Unlock()
			if slices.Contains(f.batched, esc) || slices.Contains(f.batched, "skills/\uFFFDbad.md") {
				t.Errorf("DeleteObjects was sent the key XML cannot carry: %q", f.batched)
			}
			if !slices.Equal(f.alone, tc.wantAlone) {
				t.Errorf("deleted alone %q, want %q", f.alone, tc.wantAlone)
			}
			if tc.wantErr == "" {
				// A second listing finds the bucket empty: nothing was
				// left for a later round to find.
				if len(rec.errs) > 0 || len(f.versions) > 0 || !f.deleted || f.lists != 2 {
					t.Fatalf("errors %q, %d versions left after %d listings, bucket deleted %v; want everything deleted in one round",
						rec.errs, len(f.versions), f.lists, f.deleted)
				}
				return
			}
			if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], tc.wantErr) || f.deleted || f.lists > 2 {
				t.Fatalf("errors %q after %d listings, bucket deleted %v; want one error naming %s, after at most two listings, and the bucket kept",
					rec.errs, f.lists, f.deleted, tc.wantErr)
			}
		})
	}
}
