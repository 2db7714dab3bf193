//go:build e2e

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// inProcessIndexer is pkg/indexer wired as functions/indexer wires it (S3
// store, CloudWatch metrics, audit events and logs as JSON lines), over
// bucket; its log lines go to the test log if the test fails.
func inProcessIndexer(t testing.TB, cfg aws.Config, bucket, namespace string) *indexer.Indexer {
	t.Helper()
	logs := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("in-process indexer log:\n%s", logs)
		}
	})
	logger := obs.NewLogger(logs, slog.LevelInfo)
	metrics, err := cwmetrics.New(cwmetrics.NewClient(cfg), cwmetrics.Options{Namespace: namespace, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := indexer.New(indexer.Config{
		Store:   store.NewS3(cfg, bucket),
		Bucket:  bucket,
		Metrics: metrics,
		Auditor: obs.NewAuditor(logger),
		Logger:  logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// startIndexer runs the host-architecture indexer binary under
// aws-lambda-rie with template.yaml's environment, for bucket.
func startIndexer(t testing.TB, bucket, namespace string) *function {
	t.Helper()
	return start(t, "indexer", bootstrap(t, runtime.GOARCH, "indexer"), templateEnv(t, indexerID, indexerEnv(bucket, namespace)))
}

// indexerEnv is what the test sets of the indexer's template environment:
// the bucket and namespace of its own, and, like the in-process indexer it
// is compared with, no queue (it reads every key itself) and no origins to
// render documents for (the template passes the stack's queue and origin),
// and no signing key (the template passes the stack's; the provenance test
// gives one of the emulator's).
func indexerEnv(bucket, namespace string) map[string]string {
	return map[string]string{
		"SKILLDROP_BUCKET":           bucket,
		"SKILLDROP_METRIC_NAMESPACE": namespace,
		"SKILLDROP_QUEUE_URL":        "",
		"SKILLDROP_ORIGINS":          "",
		"SKILLDROP_SIGNING_KEY":      "",
	}
}

func decodeResult(t testing.TB, b []byte) *indexer.Result {
	t.Helper()
	var r indexer.Result
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("the indexer's response is no indexer.Result: %v\n%s", err, clip(b))
	}
	return &r
}

func dumpJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// TestIndexerThroughTheRuntimeAPI uploads the example bucket (plus archives
// at both edges of the 4 MiB cap, a misnamed skill and one to delete) into
// a bucket whose notifications go to a queue, and invokes the indexer binary
// under aws-lambda-rie with each message the emulator delivered, then with a
// deletion's record and the reindex payload. A second bucket gets the same
// uploads and the same events (renamed to it) through pkg/indexer in-process:
// every invocation's result must be the same, and so must the catalogs and
// status documents in the end (modulo times). The binary's audit events
// reach its stdout and its metrics reach CloudWatch.
func TestIndexerThroughTheRuntimeAPI(t *testing.T) {
	cfg := awstest.Config(t)
	s3c := awstest.S3(cfg)
	files := bucketFiles(t)

	rieBucket := awstest.Bucket(t, cfg)
	queue := newEventQueue(t, cfg, rieBucket)
	namespace := metricNamespace(t)
	fn := startIndexer(t, rieBucket, namespace)

	refBucket := awstest.Bucket(t, cfg)
	ref := inProcessIndexer(t, cfg, refBucket, metricNamespace(t))

	upload(t, s3c, rieBucket, files)
	upload(t, s3c, refBucket, files)
	bodies := queue.Receive(t, len(files))

	ctx := context.Background()
	// invoke hands payload to the binary and, renamed to the second bucket,
	// to the in-process indexer, and compares the results.
	invoke := func(name string, payload []byte) *indexer.Result {
		t.Helper()
		got := decodeResult(t, fn.mustInvoke(t, payload))
		want, err := ref.Handle(ctx, bytes.ReplaceAll(payload, []byte(rieBucket), []byte(refBucket)))
		if err != nil {
			t.Fatalf("%s in-process: %v", name, err)
		}
		if g, w := dumpJSON(sortedResult(got)), dumpJSON(sortedResult(want)); g != w {
			t.Errorf("%s: the binary's result differs from the in-process one\nbinary:\n%s\nin-process:\n%s", name, g, w)
		}
		return got
	}

	var published, rejected []string
	testEvents := 0
	config := ""
	for i, body := range bodies {
		p, _ := indexer.DecodePayload(body)
		testEvents += p.TestEvents
		r := invoke(fmt.Sprintf("message %d of %d", i+1, len(bodies)), body)
		for _, c := range r.Published {
			published = append(published, string(c.Kind)+" "+catalog.ID(c.Listing, c.Name))
			if c.Source == atTheCapKey && !c.Digest.Equal(digest.Of(files[atTheCapKey])) {
				t.Errorf("%s published with digest %s, want the uploaded bytes' %s", atTheCapKey, c.Digest, digest.Of(files[atTheCapKey]))
			}
		}
		for _, rj := range r.Rejected {
			rejected = append(rejected, rj.Key+" "+rj.Code)
		}
		if r.Config != "" {
			config = r.Config
		}
	}
	if testEvents == 0 {
		t.Errorf("no s3:TestEvent among the %d messages the emulator delivered", len(bodies))
	}
	for _, want := range []string{
		"skill at-the-cap", "skill deploy-via-pr", "skill pdf-tools", "skill release-notes",
		"skill internal-rotate-secret", "skill short-lived", "skill partner-a/partner-onboarding",
		"subagent changelog-reviewer", "subagent security-auditor",
	} {
		if !slices.Contains(published, want) {
			t.Errorf("%s was not published; published: %v", want, published)
		}
	}
	slices.Sort(rejected)
	if want := []string{misnamedKey + " " + artifact.CodeNameMismatch, overTheCapKey + " " + artifact.CodeTooLarge}; !slices.Equal(rejected, want) {
		t.Errorf("rejected %v, want %v", rejected, want)
	}
	if config != indexer.ConfigApplied {
		t.Errorf("agent-skills.yaml: %q, want %q", config, indexer.ConfigApplied)
	}

	// A deletion: moto sends ObjectRemoved:Delete on an unversioned bucket.
	remove(t, s3c, rieBucket, shortLivedKey)
	remove(t, s3c, refBucket, shortLivedKey)
	for _, body := range queue.Receive(t, 1) {
		r := invoke("deletion", body)
		if len(r.Withdrawn) != 1 || r.Withdrawn[0].Name != "short-lived" {
			t.Errorf("deleting %s withdrew %v", shortLivedKey, r.Withdrawn)
		}
	}

	// A full re-index over a bucket that is already indexed changes nothing.
	if r := invoke("reindex", []byte(indexer.ReindexPayload)); len(r.Published)+len(r.Withdrawn) > 0 {
		t.Errorf("reindex changed the catalog: %s", dumpJSON(r))
	}

	rieStore, refStore := store.NewS3(cfg, rieBucket), store.NewS3(cfg, refBucket)
	gotCat, wantCat := loadCatalog(t, rieStore), loadCatalog(t, refStore)
	if gotCat.Revision == 0 || len(gotCat.Skills) == 0 {
		t.Fatalf("the binary wrote an empty catalog: %s", dumpJSON(gotCat))
	}
	if g, w := dumpJSON(withoutTimes(gotCat)), dumpJSON(withoutTimes(wantCat)); g != w {
		t.Errorf("catalogs differ (modulo times)\nbinary:\n%s\nin-process:\n%s", g, w)
	}
	if g, w := dumpJSON(statusWithoutTimes(t, rieStore)), dumpJSON(statusWithoutTimes(t, refStore)); g != w {
		t.Errorf("status documents differ (modulo times)\nbinary:\n%s\nin-process:\n%s", g, w)
	}

	// The audit event reached the function's stdout (CloudWatch Logs in Lambda).
	audited := false
	for _, l := range jsonLines(fn.out.String()) {
		if l[obs.EventKey] == obs.EventRejected && l["key"] == misnamedKey && l["code"] == artifact.CodeNameMismatch {
			audited = true
		}
	}
	if !audited {
		t.Errorf("no %s audit event for %s in the function's output", obs.EventRejected, misnamedKey)
	}
	if got, want := awstest.MetricSeries(t, cfg, namespace, obs.UploadRejected), []string{
		"UploadRejected", "UploadRejected Reason=" + artifact.CodeTooLarge, "UploadRejected Reason=" + artifact.CodeNameMismatch,
	}; !sameSet(got, want) {
		t.Errorf("metric series %v, want %v", got, want)
	}
}

// sortedResult orders r's lists: an invocation prepares keys concurrently,
// and a result lists them in the order their work finished.
func sortedResult(r *indexer.Result) *indexer.Result {
	cp := *r
	change := func(a, b indexer.Change) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Listing, b.Listing), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Source, b.Source))
	}
	cp.Published = slices.SortedFunc(slices.Values(r.Published), change)
	cp.Withdrawn = slices.SortedFunc(slices.Values(r.Withdrawn), change)
	cp.Rejected = slices.SortedFunc(slices.Values(r.Rejected), func(a, b indexer.Rejection) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Code, b.Code))
	})
	cp.Unchanged = slices.Sorted(slices.Values(r.Unchanged))
	cp.Ignored = slices.Sorted(slices.Values(r.Ignored))
	return &cp
}

func loadCatalog(t testing.TB, st store.Store) *catalog.Catalog {
	t.Helper()
	c, _, err := catalog.Load(context.Background(), st)
	if err == nil {
		err = c.LoadHistories()
	}
	if err != nil {
		t.Fatalf("load the catalog: %v", err)
	}
	return c
}

// withoutTimes zeroes every time in c (publish, withdrawal, update and
// config times differ between two runs however alike).
func withoutTimes(c *catalog.Catalog) *catalog.Catalog {
	c.UpdatedAt = time.Time{}
	for _, coll := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
		for _, e := range coll {
			e.WithdrawnAt, e.FirstPublished = nil, time.Time{}
			if e.Head != nil {
				e.Head.PublishedAt = time.Time{}
			}
			for i := range e.Versions {
				e.Versions[i].PublishedAt = time.Time{}
			}
		}
	}
	if c.Config != nil {
		c.Config.AppliedAt = time.Time{}
	}
	for k, src := range c.Sources {
		if src.Gone != 0 { // a tombstone's time: when that run's round found the key deleted
			src.Gone = 1
			c.Sources[k] = src
		}
	}
	return c
}

func statusWithoutTimes(t testing.TB, st store.Store) *catalog.Status {
	t.Helper()
	s, _, err := catalog.LoadStatus(context.Background(), st)
	if errors.Is(err, store.ErrNotFound) {
		t.Fatal("no status document, although uploads were rejected")
	}
	if err != nil {
		t.Fatalf("load the status document: %v", err)
	}
	s.UpdatedAt = time.Time{}
	for i := range s.Rejections {
		s.Rejections[i].Time = time.Time{}
	}
	return s
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
