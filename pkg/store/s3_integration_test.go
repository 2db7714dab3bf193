//go:build integration

package store_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go/logging"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/store/storetest"
)

// TestS3Contract runs the contract suite against the emulator (or real S3),
// with a fresh bucket per subtest. The concurrency cases are strict: real S3
// and LocalStack make conditional writes atomic, and the moto that
// scripts/emulator.sh starts is serialized for the same reason
// (scripts/moto_serial.py explains the race in a plain moto_server).
func TestS3Contract(t *testing.T) {
	cfg := awstest.Config(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return store.NewS3(cfg, awstest.Bucket(t, cfg))
	})
}

// TestS3VersionedContract runs the suite on a versioned bucket, as deployed:
// Put reports version ids and Get reads a version after an overwrite.
func TestS3VersionedContract(t *testing.T) {
	cfg := awstest.Config(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return store.NewS3(cfg, awstest.VersionedBucket(t, cfg))
	})
}

// TestS3PresignGetPinsTheVersion: a presigned URL reads the version it
// names, whatever was written to the key since, and no other key.
func TestS3PresignGetPinsTheVersion(t *testing.T) {
	cfg := awstest.Config(t)
	s := store.NewS3(cfg, awstest.VersionedBucket(t, cfg))
	ctx := t.Context()
	v1, err := s.Put(ctx, "rendered/doc.json", []byte(`{"v":1}`), store.PutOptions{ContentType: "application/json"})
	if err != nil || v1.VersionID == "" {
		t.Fatalf("Put = %+v, %v; want a version id", v1, err)
	}
	if _, err := s.Put(ctx, "rendered/doc.json", []byte(`{"v":2}`), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := s.PresignGet(ctx, "rendered/doc.json", v1.VersionID, time.Minute, store.ResponseHeaders{ContentType: "application/json"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u) //nolint:noctx // a test of the URL itself
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != `{"v":1}` {
		t.Errorf("GET presigned = %d %q, want 200 with the first version", resp.StatusCode, b)
	}
	if !strings.Contains(u, "versionId=") || !strings.Contains(u, "X-Amz-Expires=60") {
		t.Errorf("presigned URL %s does not pin the version or the expiry", u)
	}
}

// TestS3ContentEncodingIsTheClients: an object put with a Content-Encoding
// is answered with it to a client of a presigned GET (which then decodes
// it itself), while Get returns the bytes as stored, so what the indexer
// hashed is what the request path re-hashes.
func TestS3ContentEncodingIsTheClients(t *testing.T) {
	cfg := awstest.Config(t)
	s := store.NewS3(cfg, awstest.VersionedBucket(t, cfg))
	ctx := t.Context()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"skills":[]}`))
	_ = zw.Close()
	info, err := s.Put(ctx, "rendered/doc.json.gz", gz.Bytes(), store.PutOptions{ContentType: "application/json", ContentEncoding: "gzip"})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Get(ctx, "rendered/doc.json.gz", store.GetOptions{VersionID: info.VersionID})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(obj.Body)
	_ = obj.Body.Close()
	if !bytes.Equal(b, gz.Bytes()) {
		t.Errorf("Get returned %d bytes, not the %d gzip bytes stored", len(b), gz.Len())
	}
	u, err := s.PresignGet(ctx, "rendered/doc.json.gz", info.VersionID, time.Minute, store.ResponseHeaders{ContentType: "application/json", ContentEncoding: "gzip"})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Get(u) //nolint:noctx // a test of the URL itself
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(b, gz.Bytes()) {
		t.Errorf("GET presigned = %d, Content-Encoding %q, %d bytes; want the gzip bytes, labelled gzip",
			resp.StatusCode, resp.Header.Get("Content-Encoding"), len(b))
	}
}

// TestS3LogsNothingPerRequest pins the client settings NewS3 chooses: the
// emulator stores no checksum (moto keeps one only when the request names
// x-amz-sdk-checksum-algorithm), and the SDK's default response validation
// would then log "Response has no supported checksum" on every GET.
func TestS3LogsNothingPerRequest(t *testing.T) {
	cfg := awstest.Config(t)
	var logs bytes.Buffer
	cfg.Logger = logging.NewStandardLogger(&logs)
	s := store.NewS3(cfg, awstest.Bucket(t, cfg))
	ctx := t.Context()
	if _, err := s.Put(ctx, "skills/x.md", []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if b, _, err := store.ReadAll(ctx, s, "skills/x.md", 10); err != nil || string(b) != "x" {
			t.Fatalf("ReadAll = %q, %v", b, err)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("the S3 client logged:\n%s", logs.String())
	}
}

// TestS3MissingBucketIsNotAbsence: a misconfigured bucket must fail loudly,
// not read as "no catalog yet" (GET answers NoSuchBucket; HEAD has no body to
// tell the two apart, see S3's doc comment).
func TestS3MissingBucketIsNotAbsence(t *testing.T) {
	cfg := awstest.Config(t)
	s := store.NewS3(cfg, awstest.Name(t, "skilldrop-missing"))
	_, err := s.Get(t.Context(), "catalog/catalog.json", store.GetOptions{})
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get from a missing bucket = %v, want an error that is not ErrNotFound", err)
	}
	if _, err := s.List(t.Context(), ""); err == nil {
		t.Error("List of a missing bucket succeeded")
	}
}

// TestS3HeadTellsADeletedKey: in a versioned bucket, a key whose current
// version is a delete marker reads as ErrDeleted from Head (also
// ErrNotFound); one that never existed as ErrNotFound only.
func TestS3HeadTellsADeletedKey(t *testing.T) {
	cfg := awstest.Config(t)
	st := store.NewS3(cfg, awstest.VersionedBucket(t, cfg))
	ctx := context.Background()
	if _, err := st.Put(ctx, "a/deleted", []byte("x"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "a/deleted"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Head(ctx, "a/deleted"); !errors.Is(err, store.ErrDeleted) || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("head of a deleted key: %v, want ErrDeleted and ErrNotFound", err)
	}
	if _, err := st.Head(ctx, "a/never"); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrDeleted) {
		t.Fatalf("head of a key that never existed: %v, want ErrNotFound only", err)
	}
}
