//go:build integration

package indexer_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/burst"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// inProcess is the indexer wired as functions/indexer wires it (S3 store,
// CloudWatch metrics, audit events, the signer if any), reaching the
// emulator at endpoint, and invoked as the Lambda runtime would: with the
// payload, answering JSON.
func inProcess(tb testing.TB, endpoint, bucket string, signer signing.Signer) func(context.Context, []byte) ([]byte, error) {
	tb.Helper()
	cfg := awstest.ConfigFor(tb, endpoint)
	logger := obs.NewLogger(io.Discard, slog.LevelWarn)
	metrics, err := cwmetrics.New(cwmetrics.NewClient(cfg), cwmetrics.Options{Namespace: awstest.Name(tb, "Burst"), Logger: logger})
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := indexer.New(indexer.Config{Store: store.NewS3(cfg, bucket), Bucket: bucket, Metrics: metrics,
		Auditor: obs.NewAuditor(logger), Logger: logger, Origins: []*url.URL{burst.Origin}, Signer: signer})
	if err != nil {
		tb.Fatal(err)
	}
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		v, err := ix.Respond(ctx, payload)
		if err != nil {
			return nil, err
		}
		return json.Marshal(v)
	}
}

// BenchmarkBurst is issue 9's measurement, in the test process: a burst of
// uploads into an indexed bucket, delivered through the template's event
// source mapping (batches of 100 within a second, two writers) and, as the
// baseline, one invocation per event, all at once. Each round uploads new
// skills into the same bucket; s-visible is the median over the rounds
// (-benchtime 3x for three). e2e's BenchmarkBurstThroughTheRuntimeAPI is
// the same through the indexer binary under aws-lambda-rie.
//
//	go test -tags integration -run '^$' -bench BenchmarkBurst -benchtime 3x -timeout 2h ./pkg/indexer/
func BenchmarkBurst(b *testing.B) {
	cfg := awstest.Config(b)
	for _, c := range burst.Cases {
		for _, d := range []burst.Delivery{burst.Batched, burst.PerEvent} {
			b.Run(c.Name(d), func(b *testing.B) {
				s := burst.Prepare(b, cfg, c.Skills)
				s.Invoke = inProcess(b, s.IndexerEndpoint, s.Bucket, nil)
				burst.Bench(b, s, d, c)
			})
		}
	}
}

// TestABurstIsAFewWrites runs a small burst through the same harness, in
// batches: every upload is visible, and the catalog was written once per
// batch at most, never once per upload.
func TestABurstIsAFewWrites(t *testing.T) {
	cfg := awstest.Config(t)
	start := time.Now()
	s := burst.Prepare(t, cfg, 100)
	s.Invoke = inProcess(t, s.IndexerEndpoint, s.Bucket, nil)
	t.Logf("prepared in %s", time.Since(start))
	const uploads = 40
	f, err := burst.Run(context.Background(), *s, burst.Batched, "few", uploads, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if f.Catalog.Writes == 0 || f.Catalog.Writes > int64(f.Invocations) || f.Catalog.Writes >= uploads/4 || f.Failed > 0 {
		t.Fatalf("%d uploads: %d catalog writes (%d lost) in %d invocations (%d failed)", uploads, f.Catalog.Writes, f.Catalog.LostWrites, f.Invocations, f.Failed)
	}
	t.Logf("%+v", f)
	if f.Catalog.BytesRead == 0 || f.Catalog.BytesWritten == 0 {
		t.Fatalf("the catalog's traffic was not counted: %+v", f.Catalog)
	}
}
