//go:build integration

package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// newS3Env is an indexer over a fresh bucket of the emulator at
// AWS_ENDPOINT_URL (deleted when the test ends).
func newS3Env(t testing.TB, mod ...func(*Config)) *env {
	t.Helper()
	cfg := awstest.Config(t)
	return newS3EnvFor(t, cfg, mod...)
}

func newS3EnvFor(t testing.TB, cfg aws.Config, mod ...func(*Config)) *env {
	t.Helper()
	bucket := awstest.Bucket(t, cfg)
	st := store.NewS3(cfg, bucket)
	return newEnvOn(t, st, append([]func(*Config){func(c *Config) { c.Bucket = bucket }}, mod...)...)
}

// TestS3 runs every behaviour of the suite against the emulator.
func TestS3(t *testing.T) {
	for _, s := range suite {
		t.Run(s.name, func(t *testing.T) { s.run(t, newS3Env) })
	}
}

// watchedPrefixes are the notification filters the template sets up: the
// indexer's own writes (blobs/, catalog/) never notify it.
var watchedPrefixes = []string{"skills/", "listings/", "subagents/", "files/", "agent-skills.yaml"}

// eventRecords counts the records of an event message as the indexer
// reads it, failing on one it cannot decode.
func eventRecords(body []byte) (int, error) {
	p, err := DecodePayload(body)
	return len(p.Hints), err
}

// TestEventsFromTheEmulator indexes from the event records the emulator
// itself sends through SQS: its shapes (zoneless eventTime, no sequencer,
// escaped keys), its s3:TestEvent, and a deletion on an unversioned bucket.
func TestEventsFromTheEmulator(t *testing.T) {
	cfg := awstest.Config(t)
	e := newS3EnvFor(t, cfg)
	bucket := e.ix.bucket
	queue := awstest.RouteEvents(t, cfg, bucket, watchedPrefixes, eventRecords)
	ctx := context.Background()
	e.put("skills/a.md", skillDoc("a", "1", "A."))
	e.put("listings/partner-a/skills/c.md", skillDoc("c", "1", "C in a listing."))
	e.put("subagents/b/agent.md", agentDoc("b", "1"))
	e.put("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: a\n    visibility: authenticated\n"))
	bodies := queue.Receive(t, 4)
	tests := 0
	for _, body := range bodies {
		if p, _ := DecodePayload(body); p.TestEvents > 0 {
			tests++
		}
	}
	if tests == 0 {
		t.Errorf("no s3:TestEvent among the %d messages", len(bodies))
	}
	for _, body := range bodies {
		if _, err := e.ix.Handle(ctx, body); err != nil {
			t.Fatalf("handle %s: %v", body, err)
		}
	}
	e.live(catalog.KindSkill, "partner-a/c")
	e.live(catalog.KindSubagent, "b")
	if a := e.live(catalog.KindSkill, "a"); a.Visibility != catalog.Authenticated {
		t.Fatalf("entry %s", dump(a))
	}
	// The same records again, as one SQS-triggered invocation: nothing changes.
	rev := e.catalog().Revision
	var records []map[string]any
	for _, b := range bodies {
		records = append(records, map[string]any{"messageId": "m", "eventSource": "aws:sqs", "body": string(b)})
	}
	wrapped, _ := json.Marshal(map[string]any{"Records": records})
	if _, err := e.invoke(wrapped); err != nil {
		t.Fatal(err)
	}
	if e.catalog().Revision != rev {
		t.Fatal("redelivered records wrote the catalog")
	}
	// A deletion in an unversioned bucket sends ObjectRemoved:Delete.
	e.del("skills/a.md")
	for _, body := range queue.Receive(t, 1) {
		if !strings.Contains(string(body), "ObjectRemoved") {
			t.Fatalf("expected a removal, got %s", body)
		}
		if _, err := e.ix.Handle(ctx, body); err != nil {
			t.Fatal(err)
		}
	}
	if e.skill("a").Live() {
		t.Fatal("a deleted key is still live")
	}
	// The indexer's own writes (blobs/, catalog/) notified nothing: a
	// marker written now is the next and only message.
	e.put("files/marker.md", []byte("marker"))
	for _, body := range queue.Receive(t, 1) {
		if strings.Contains(string(body), "blobs%2F") || strings.Contains(string(body), "catalog%2F") ||
			strings.Contains(string(body), "blobs/") || strings.Contains(string(body), "catalog/") {
			t.Fatalf("the indexer's own write sent an event: %s", body)
		}
	}
}

// TestDeleteMarkerOnAVersionedBucket covers what moto does not send: real
// S3's ObjectRemoved:DeleteMarkerCreated record (hand-written, and
// aws-lambda-go's fixture reshaped), for a key whose latest version is a
// delete marker, which must read as absent.
func TestDeleteMarkerOnAVersionedBucket(t *testing.T) {
	cfg := awstest.Config(t)
	e := newS3EnvFor(t, cfg)
	bucket := e.ix.bucket
	ctx := context.Background()
	_, err := awstest.S3(cfg).PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{
		Bucket:                  aws.String(bucket),
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, payload := range []func() []byte{
		func() []byte { return deleteMarkerRecord(bucket, "skills/x.md") },
		func() []byte { return fixtureFor(t, bucket, "skills/x.md", "ObjectRemoved:DeleteMarkerCreated") },
	} {
		e.drop("skills/x.md", skillDoc("x", "1", "Versioned."))
		e.del("skills/x.md")
		if _, err := e.invoke(payload()); err != nil {
			t.Fatal(err)
		}
		if en := e.skill("x"); en.Live() {
			t.Fatalf("a key behind a delete marker is still live: %s", dump(en))
		}
	}
}

// cutProxy forwards to an emulator and, once armed, cuts the connection of
// every request from the k-th on, without an answer: the emulator went away.
type cutProxy struct {
	srv   *httptest.Server
	k     atomic.Int64
	count atomic.Int64
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := p.k.Load(); k > 0 && p.count.Add(1) >= k {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// arm starts counting: the k-th request from now on is the first cut (0 disarms).
func (p *cutProxy) arm(k int64) { p.count.Store(0); p.k.Store(k) }

// TestConnectionCutMidIndexing cuts the connection to a private emulator
// at every request of an invocation in turn: the invocation must fail, the
// catalog must stay readable with every version's blob present, and a
// retry must reach what a clean run reaches.
func TestConnectionCutMidIndexing(t *testing.T) {
	proxy := newCutProxy(t, awstest.PrivateMoto(t).Endpoint)
	cfg := awstest.ConfigFor(t, proxy.srv.URL)
	cfg.RetryMaxAttempts = 1 // a cut request fails the call at once

	clean := newEnv(t)
	keys := scenario(t, clean)
	clean.reconcile(keys...)
	want := served(t, clean.catalog())

	// Count the requests of one clean invocation through the proxy.
	probe := newS3EnvFor(t, cfg)
	keys = scenario(t, probe)
	proxy.arm(1 << 40)
	probe.reconcile(keys...)
	total := proxy.count.Load()
	proxy.arm(0)
	if got := served(t, probe.catalog()); got != want {
		t.Fatalf("S3 and the local store disagree:\n%s\nwant:\n%s", got, want)
	}
	for k := int64(1); k <= total; k++ {
		t.Run(fmt.Sprintf("cut from request %d of %d", k, total), func(t *testing.T) {
			e := newS3EnvFor(t, cfg)
			keys := scenario(t, e)
			proxy.arm(k)
			_, err := e.ix.Reconcile(context.Background(), keys...)
			proxy.arm(0)
			if err == nil {
				t.Fatal("the invocation succeeded although the emulator went away")
			}
			consistent(t, e.st)
			e.reconcile(keys...)
			if got := served(t, e.catalog()); got != want {
				t.Fatalf("after the retry:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// stoppingStore pauses the emulator (SIGSTOP) before its k-th operation.
type stoppingStore struct {
	store.Store
	moto *awstest.Moto
	k    int
	ops  atomic.Int64
}

func (s *stoppingStore) maybeStop() {
	if s.ops.Add(1) == int64(s.k) {
		_ = s.moto.Pause()
	}
}

func (s *stoppingStore) Get(ctx context.Context, key string, o store.GetOptions) (*store.Object, error) {
	s.maybeStop()
	return s.Store.Get(ctx, key, o)
}

func (s *stoppingStore) Head(ctx context.Context, key string) (store.Info, error) {
	s.maybeStop()
	return s.Store.Head(ctx, key)
}

func (s *stoppingStore) Put(ctx context.Context, key string, b []byte, o store.PutOptions) (store.Info, error) {
	s.maybeStop()
	return s.Store.Put(ctx, key, b, o)
}

func (s *stoppingStore) List(ctx context.Context, prefix string) ([]store.Info, error) {
	s.maybeStop()
	return s.Store.List(ctx, prefix)
}

// TestPrivateEmulatorStoppedMidIndexing freezes a private emulator
// (SIGSTOP) early, midway and late in an invocation bounded by a deadline:
// the invocation fails, and once the emulator runs again (SIGCONT) the
// catalog is readable and consistent and a retry converges.
func TestPrivateEmulatorStoppedMidIndexing(t *testing.T) {
	moto := awstest.PrivateMoto(t)
	cfg := awstest.ConfigFor(t, moto.Endpoint)
	cfg.RetryMaxAttempts = 1

	clean := newEnv(t)
	keys := scenario(t, clean)
	clean.reconcile(keys...)
	want := served(t, clean.catalog())

	// Count one clean invocation's store operations to spread the stops over it.
	probe := newS3EnvFor(t, cfg)
	keys = scenario(t, probe)
	counter := &faultStore{Store: probe.st}
	probe.ix.store = counter
	probe.reconcile(keys...)
	total := int(counter.ops.Load())
	for _, k := range []int{2, total / 2, total - 1} {
		t.Run(fmt.Sprintf("stopped before operation %d", k), func(t *testing.T) {
			e := newS3EnvFor(t, cfg)
			keys := scenario(t, e)
			e.ix.store = &stoppingStore{Store: e.st, moto: moto, k: k}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			_, err := e.ix.Reconcile(ctx, keys...)
			cancel()
			if cerr := moto.Resume(); cerr != nil {
				t.Fatal(cerr)
			}
			if err == nil {
				t.Fatal("the invocation succeeded against a stopped emulator")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Logf("failed with %v", err)
			}
			e.ix.store = e.st
			consistent(t, e.st)
			e.reconcile(keys...)
			if got := served(t, e.catalog()); got != want {
				t.Fatalf("after the retry:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
