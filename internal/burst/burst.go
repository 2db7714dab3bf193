// Package burst measures what issue 9 measured: a burst of uploads, as
// `aws s3 sync` makes one, reaching the catalog through the bucket's
// notifications, delivered in batches (the SQS event source mapping) or
// one event per invocation (the first version's delivery). It uploads,
// lets the delivery invoke the indexer, and reports how long until every
// upload is visible in the catalog and what the catalog's traffic was.
package burst

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/internal/eventsource"
	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// Delivery is how notifications reach the indexer.
type Delivery string

// The deliveries compared.
const (
	// Batched is the template's event source mapping: batches of up to
	// 100 messages within a second, at most two at once.
	Batched Delivery = "batched"
	// PerEvent is one invocation per notification, all at once.
	PerEvent Delivery = "per-event"
)

// The template's event source mapping (template.yaml, IndexerFunction's
// SQS event; internal/samtemplate pins them there).
const (
	BatchSize   = 100
	BatchWindow = time.Second
	Writers     = 2
)

// uploaders is how many uploads run at once (aws s3 sync runs 10).
const uploaders = 10

// Setup is a bucket whose notifications go to a queue, with the catalog's
// traffic counted.
type Setup struct {
	S3       *s3.Client
	SQS      *sqs.Client
	Bucket   string
	QueueURL string
	QueueARN string
	// Store reads the bucket directly (not through Traffic), to see what
	// is visible.
	Store   store.Store
	Traffic *awstest.Traffic
	// IndexerEndpoint is where the indexer under test reaches the
	// emulator, so that its catalog traffic is counted.
	IndexerEndpoint string
	Invoke          eventsource.Invoke
}

// Figures are one burst's.
type Figures struct {
	// Visible is the time from the first upload until every upload was in
	// the catalog: until the start of the first read of the catalog that
	// found them all (the catalog is read after each invocation ends, so
	// this is at most the read's own time late, never early).
	Visible time.Duration
	// Uploaded is the time the uploads took (the last one's event is sent
	// then).
	Uploaded time.Duration
	// Catalog is the catalog object's traffic during the burst: Writes
	// (new objects under catalog/catalog.json), LostWrites (conditional
	// writes refused) and the bytes moved.
	Catalog awstest.TrafficCounts
	// Size is the catalog's size at the end.
	Size int64
	// Invocations of the indexer, and how many failed.
	Invocations, Failed int
}

// Run uploads n new skills named prefix-<i> into s's bucket, delivers
// their notifications by d, and measures until all are visible. limit ends
// a burst that does not settle (an error, not a figure).
func Run(ctx context.Context, s Setup, d Delivery, prefix string, n int, limit time.Duration) (Figures, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	var (
		mu        sync.Mutex
		fig       Figures
		invoked   = make(chan struct{}, 1)
		visibleAt time.Time
	)
	after := func(_ int, err error) {
		mu.Lock()
		fig.Invocations++
		if err != nil {
			fig.Failed++
		}
		mu.Unlock()
		select { // a pending signal covers this one: the checker reads the latest
		case invoked <- struct{}{}:
		default:
		}
	}
	want := 0 // skills the catalog holds once all are in
	if h, err := catalog.ReadHead(ctx, s.Store, ""); err == nil {
		want = h.Skills + n
	} else if !errors.Is(err, store.ErrNotFound) {
		return Figures{}, err
	}
	before := s.Traffic.Counts()
	dctx, stopDeliver := context.WithCancel(ctx)
	defer stopDeliver()
	delivered := make(chan error, 1)
	go func() {
		switch d {
		case Batched:
			m := &eventsource.Mapping{Client: s.SQS, QueueURL: s.QueueURL, QueueARN: s.QueueARN, BatchSize: BatchSize,
				Window: BatchWindow, Consumers: Writers, Invoke: s.Invoke, Invoked: after}
			delivered <- m.Run(dctx)
		case PerEvent:
			p := &eventsource.PerEvent{Client: s.SQS, QueueURL: s.QueueURL, Invoke: s.Invoke, Retries: 2, Invoked: after}
			delivered <- p.Run(dctx)
		default:
			delivered <- fmt.Errorf("burst: unknown delivery %q", d)
		}
	}()

	start := time.Now()
	if err := upload(ctx, s, names); err != nil {
		return fig, err
	}
	uploaded := time.Since(start)
	var etag string
	var size int64
	for visibleAt.IsZero() {
		select {
		case <-ctx.Done():
			return fig, fmt.Errorf("burst: not all %d uploads visible within %s (%d invocations): %w", n, limit, fig.Invocations, ctx.Err())
		case err := <-delivered:
			return fig, fmt.Errorf("burst: the delivery stopped: %w", err)
		case <-invoked:
		}
		at := time.Now()
		h, err := catalog.ReadHead(ctx, s.Store, etag)
		switch {
		case errors.Is(err, store.ErrNotModified), errors.Is(err, store.ErrNotFound):
			continue
		case err != nil:
			return fig, err
		}
		etag, size = h.ETag, h.Size
		if h.Skills < want {
			continue // not all there yet: no need to read the entries
		}
		v, err := h.View(ctx, s.Store)
		if errors.Is(err, catalog.ErrChanged) {
			continue
		} else if err != nil {
			return fig, err
		}
		if allVisible(v, names) {
			visibleAt = at
		}
	}
	stopDeliver()
	if err := <-delivered; err != nil {
		return fig, err
	}
	mu.Lock()
	defer mu.Unlock()
	fig.Visible, fig.Uploaded = visibleAt.Sub(start), uploaded
	fig.Catalog = s.Traffic.Counts().Sub(before)
	fig.Size = size
	return fig, nil
}

func allVisible(v *catalog.View, names []string) bool {
	for _, name := range names {
		if v.Skill(name, audience.Unrestricted) == nil {
			return false
		}
	}
	return true
}

// Body is the skill-md uploaded for name.
func Body(name string) string {
	return skilltest.SkillMD(name, "1.0.0", "A skill uploaded in a burst, as aws s3 sync uploads a folder of skills, "+
		"one object per skill and ten at a time, each a notification of its own.")
}

// upload puts a skill-md for each name, uploaders at a time.
func upload(ctx context.Context, s Setup, names []string) error {
	work := make(chan string)
	errs := make(chan error, uploaders)
	var wg sync.WaitGroup
	for range uploaders {
		wg.Go(func() {
			for name := range work {
				key := artifact.SkillKey("", name, artifact.FormatMarkdown)
				body := Body(name)
				_, err := s.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.Bucket, Key: &key, Body: strings.NewReader(body)})
				if err != nil {
					errs <- fmt.Errorf("upload %s: %w", name, err)
					return
				}
			}
		})
	}
	var err error
feed:
	for _, name := range names {
		select {
		case work <- name:
		case err = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

// Origin is the origin the indexers of a burst render the large documents
// for, as a deployment's indexer does for its API's domain.
var Origin = &url.URL{Scheme: "https", Host: "skills.example.com"}

// Prepare makes a bucket of skills generated skills (catalogtest.Default)
// indexed by an in-process indexer rendering for Origin, as a deployment
// would have it, routes its notifications to a new queue, and counts the
// catalog's traffic through a proxy: the indexer under test must reach the
// emulator at IndexerEndpoint. Invoke is the caller's to set.
func Prepare(tb testing.TB, cfg aws.Config, skills int) *Setup {
	tb.Helper()
	ctx := context.Background()
	bucket := awstest.Bucket(tb, cfg)
	st := store.NewS3(cfg, bucket)
	catalogtest.Generate(catalogtest.Default(skills)).Put(tb, ctx, st)
	ix, err := indexer.New(indexer.Config{Store: st, Bucket: bucket, Origins: []*url.URL{Origin}})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := ix.Reindex(ctx); err != nil {
		tb.Fatalf("index the generated bucket: %v", err)
	}
	q := awstest.RouteEvents(tb, cfg, bucket, artifact.SourcePrefixes(), func([]byte) (int, error) { return 0, nil })
	tr := awstest.CountTraffic(tb, aws.ToString(cfg.BaseEndpoint), bucket, catalog.Key)
	return &Setup{
		S3: awstest.S3(cfg), SQS: sqs.NewFromConfig(cfg), Bucket: bucket, QueueURL: q.URL(), QueueARN: q.ARN(),
		Store: st, Traffic: tr, IndexerEndpoint: tr.URL,
	}
}

// Bench is one case of a burst benchmark: for each round of b.Loop, Uploads
// new skills into s's bucket, delivered by d; then Report.
func Bench(b *testing.B, s *Setup, d Delivery, c Case) {
	var figs []Figures
	for b.Loop() {
		f, err := Run(context.Background(), *s, d, fmt.Sprintf("burst-%d", len(figs)), c.Uploads, Limit)
		if err != nil {
			b.Fatal(err)
		}
		figs = append(figs, f)
	}
	Report(b, figs)
}

// Name is a case's sub-benchmark name under d.
func (c Case) Name(d Delivery) string {
	return fmt.Sprintf("%s/skills=%d/uploads=%d", d, c.Skills, c.Uploads)
}

// Report reports the figures of a benchmark's rounds: the median time to
// visible (s-visible), and per round the catalog writes, the lost
// conditional writes, the catalog bytes moved (MB-moved, and x-catalog:
// over the catalog's size) and the invocations. Each round is logged too.
func Report(b *testing.B, figs []Figures) {
	b.Helper()
	if len(figs) == 0 {
		return
	}
	var visible []time.Duration
	var writes, lost, invocations, failed float64
	var moved, ratio, size float64
	for i, f := range figs {
		b.Logf("round %d: visible after %s (uploads took %s), %d catalog writes, %d lost conditional writes, %.1f MB moved (catalog %.2f MB), %d invocations (%d failed)",
			i+1, f.Visible.Round(time.Millisecond), f.Uploaded.Round(time.Millisecond), f.Catalog.Writes, f.Catalog.LostWrites, float64(f.Catalog.Moved())/1e6, float64(f.Size)/1e6, f.Invocations, f.Failed)
		visible = append(visible, f.Visible)
		writes += float64(f.Catalog.Writes)
		lost += float64(f.Catalog.LostWrites)
		invocations += float64(f.Invocations)
		failed += float64(f.Failed)
		moved += float64(f.Catalog.Moved()) / 1e6
		ratio += float64(f.Catalog.Moved()) / float64(f.Size)
		size += float64(f.Size) / 1e6
	}
	slices.Sort(visible)
	n := float64(len(figs))
	b.ReportMetric(visible[len(visible)/2].Seconds(), "s-visible")
	b.ReportMetric(writes/n, "writes/op")
	b.ReportMetric(lost/n, "lost-writes/op")
	b.ReportMetric(moved/n, "MB-moved/op")
	b.ReportMetric(ratio/n, "x-catalog/op")
	b.ReportMetric(size/n, "MB-catalog")
	b.ReportMetric(invocations/n, "invocations/op")
	b.ReportMetric(failed/n, "failed/op")
}

// Case is one burst the issue measures: Uploads into a bucket of Skills.
type Case struct{ Skills, Uploads int }

// Cases are issue 9's: 200 uploads into 1,000 skills, 50 into 10,000.
var Cases = []Case{{1000, 200}, {10000, 50}}

// Limit is how long a burst may take before it is an error: ten times the
// slowest baseline measured so far.
const Limit = 30 * time.Minute
