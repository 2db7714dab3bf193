// Package indexer turns what an operator drops into the bucket into the
// catalog the request path serves: it validates artifacts, copies the
// accepted bytes to content-addressed blobs, and publishes, withdraws or
// rejects them in one conditional catalog write per invocation.
//
// Events are hints. For every key it is told about, the indexer reads the
// key's current state and reconciles the catalog with it (present: index,
// absent: withdraw what the key owns), so redelivered, duplicated and
// reordered events converge, and a full re-index is the same reconciliation
// over a listing of the bucket.
//
// One invocation works in rounds. A round prepares a plan outside the
// catalog update (reads, validation, blob writes, external fetches), then
// applies all of it in one catalog.Update whose function decides name
// conflicts, version immutability and takeovers against the catalog it is
// handed, and then checks that every key it read is still as it was read.
// A key that changed meanwhile, or a name that was withdrawn without its
// other claimants at hand, is taken up by another round. Rejections are
// recorded once at the end, in the status document, as audit events and as
// UploadRejected metrics.
package indexer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// Defaults of Config.
const (
	DefaultFetchTimeout = 10 * time.Second
	DefaultConcurrency  = 8
)

// maxRounds bounds the rounds of one invocation; maxPrepares the plans
// prepared again because the config changed under them. Both are only
// reached when the bucket keeps changing, and then later events finish
// the work.
const (
	maxRounds   = 4
	maxPrepares = 8
)

// Config configures an Indexer. Only Store is required.
type Config struct {
	Store store.Store
	// Bucket is the bucket Store reads; hints for other buckets are ignored
	// (with a log line). Empty accepts every hint (the local directory store).
	Bucket  string
	Metrics obs.Metrics    // nil: obs.Nop
	Auditor *obs.Auditor   // nil: no audit events
	Logger  *slog.Logger   // nil: discard
	Limits  archive.Limits // service-wide caps; zero fields are the defaults
	// HTTPClient fetches external URLs of agent-skills.yaml entries (nil:
	// a client of its own); the indexer uses a copy with its own redirect
	// policy (https only, a few hops). FetchTimeout bounds one fetch.
	HTTPClient   *http.Client
	FetchTimeout time.Duration
	// Now is the clock for publish, withdrawal and rejection times (nil: time.Now).
	Now func() time.Time
	// Concurrency bounds parallel reads and blob writes in one round.
	Concurrency int
}

// Indexer reconciles the catalog with the bucket. It is safe for
// concurrent use, and any number of indexers (Lambda invocations) may run
// against one bucket at once.
type Indexer struct {
	store        store.Store
	bucket       string
	metrics      obs.Metrics
	audit        *obs.Auditor
	log          *slog.Logger
	limits       archive.Limits
	http         *http.Client
	fetchTimeout time.Duration
	now          func() time.Time
	workers      int
	baseline     *baseline // what the last full re-index read, for Watch (local directories only)
}

// New returns an Indexer for cfg.
func New(cfg Config) (*Indexer, error) {
	if cfg.Store == nil {
		return nil, errors.New("indexer: Config.Store is required")
	}
	lim, err := cfg.Limits.Effective()
	if err != nil {
		return nil, fmt.Errorf("indexer: limits: %w", err)
	}
	ix := &Indexer{
		store:        cfg.Store,
		bucket:       cfg.Bucket,
		metrics:      cfg.Metrics,
		audit:        cfg.Auditor,
		log:          cfg.Logger,
		limits:       lim,
		http:         cfg.HTTPClient,
		fetchTimeout: cfg.FetchTimeout,
		now:          cfg.Now,
		workers:      cfg.Concurrency,
	}
	if ix.metrics == nil {
		ix.metrics = obs.Nop{}
	}
	if ix.log == nil {
		ix.log = slog.New(slog.DiscardHandler)
	}
	// A copy, so the caller's client keeps its own redirect policy.
	hc := http.Client{}
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	}
	hc.CheckRedirect = fetchRedirects
	ix.http = &hc
	if ix.fetchTimeout <= 0 {
		ix.fetchTimeout = DefaultFetchTimeout
	}
	if ix.now == nil {
		ix.now = time.Now
	}
	if ix.workers <= 0 {
		ix.workers = DefaultConcurrency
	}
	if _, ok := cfg.Store.(localDir); ok {
		ix.baseline = &baseline{}
	}
	return ix, nil
}

// WithRequestID returns an Indexer whose log lines and audit events carry
// the invocation's request id (obs.RequestIDKey).
func (ix *Indexer) WithRequestID(id string) *Indexer {
	if id == "" {
		return ix
	}
	cp := *ix
	cp.log = ix.log.With(obs.RequestIDKey, id)
	cp.audit = ix.audit.With(obs.RequestIDKey, id)
	return &cp
}

// Result says what one invocation did.
type Result struct {
	Published []Change    `json:"published,omitempty"` // new versions, revivals, a former version made latest again
	Withdrawn []Change    `json:"withdrawn,omitempty"`
	Rejected  []Rejection `json:"rejected,omitempty"`
	// Unchanged are keys whose current bytes were already the latest version.
	Unchanged []string `json:"unchanged,omitempty"`
	// Ignored are keys outside the bucket contract (or the indexer's own).
	Ignored []string `json:"ignored,omitempty"`
	// Config is ConfigApplied, ConfigRemoved or ConfigRejected when
	// agent-skills.yaml changed, else "".
	Config string `json:"config,omitempty"`
	// Revision is the catalog's revision afterwards (0: no catalog yet).
	Revision int64 `json:"revision"`
}

// sort puts every list in a fixed order: keys are read concurrently, so the
// order they finish in carries no meaning and a result must be reproducible.
func (r *Result) sort() {
	byChange := func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Listing, b.Listing), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Source, b.Source))
	}
	slices.SortStableFunc(r.Published, byChange)
	slices.SortStableFunc(r.Withdrawn, byChange)
	slices.SortStableFunc(r.Rejected, func(a, b Rejection) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Code, b.Code))
	})
	slices.Sort(r.Unchanged)
	slices.Sort(r.Ignored)
}

// What happened to agent-skills.yaml (Result.Config).
const (
	ConfigApplied  = "applied"
	ConfigRemoved  = "removed"
	ConfigRejected = "rejected"
)

// Change is one published or withdrawn entry.
type Change struct {
	Kind    catalog.Kind  `json:"kind"`
	Listing string        `json:"listing,omitempty"`
	Name    string        `json:"name"`
	Source  string        `json:"source"`
	Version string        `json:"version,omitempty"`
	Digest  digest.Digest `json:"digest,omitzero"`
}

// ID is the entry's key in its catalog collection ("<listing>/<name>" for
// a listing-only skill, else the name).
func (c Change) ID() string { return catalog.ID(c.Listing, c.Name) }

// Rejection is one refused key, config or config entry.
type Rejection struct {
	Key     string        `json:"key"`
	Code    string        `json:"code"`
	Message string        `json:"message"`
	Name    string        `json:"name,omitempty"`
	Digest  digest.Digest `json:"digest,omitzero"`
	// Repeated is set when the same rejection (key, code, bytes and message) was
	// already the newest recorded for the key, as on a redelivered event:
	// it is not recorded, audited or counted again.
	Repeated bool `json:"repeated,omitempty"`
}

// Handle is the body of the indexer Lambda: it decodes the payload (S3
// events, directly or through SQS, s3:TestEvent, or ReindexPayload) and
// reconciles the keys it names, or the whole bucket. An error means the
// invocation should be retried; the catalog is consistent either way.
func (ix *Indexer) Handle(ctx context.Context, raw json.RawMessage) (*Result, error) {
	p, err := DecodePayload(raw)
	if err != nil {
		return nil, err
	}
	if p.Reindex {
		return ix.Reindex(ctx)
	}
	keys, foreign := p.Keys(ix.bucket)
	if foreign > 0 {
		ix.log.WarnContext(ctx, "ignoring events for another bucket", "bucket", ix.bucket, "events", foreign)
	}
	if p.TestEvents > 0 {
		ix.log.InfoContext(ctx, "ignoring s3:TestEvent", "events", p.TestEvents)
	}
	if len(keys) == 0 {
		return &Result{}, nil
	}
	return ix.Reconcile(ctx, keys...)
}

// Reconcile reads the current state of each key and reconciles the catalog
// with it.
func (ix *Indexer) Reconcile(ctx context.Context, keys ...string) (*Result, error) {
	return ix.run(ctx, keys, false)
}

// Reindex reconciles every key of the bucket, and withdraws the entries
// whose source is gone. The version history in the catalog is kept, so the
// result equals what incremental indexing produced. Claims that collide
// and are not in the catalog yet (as in a rebuild from an empty catalog)
// are decided as incremental indexing in write order decided them: the
// older object wins, whether two drops claim a name or agent-skills.yaml
// and a drop claim a name or a served path.
func (ix *Indexer) Reindex(ctx context.Context) (*Result, error) {
	return ix.run(ctx, nil, true)
}

// run is one invocation: rounds of prepare, apply and verify, then one
// status update.
func (ix *Indexer) run(ctx context.Context, keys []string, full bool) (*Result, error) {
	res := &Result{}
	rec := newRecorder()
	var errs []error
	var orphans []target
	var cat *catalog.Catalog
	reindex, read := full, []map[string]observation(nil)
	for round := 1; ; round++ {
		pr, d, c, err := ix.round(ctx, keys, orphans, full)
		if err != nil {
			errs = append(errs, err)
			break
		}
		cat, read = c, append(read, pr.seen)
		errs = append(errs, pr.errs...)
		changed, err := ix.verify(ctx, pr.seen)
		if err != nil {
			errs = append(errs, err)
		}
		rec.add(pr, d, changed, res)
		keys, orphans, full = changed, d.orphans, false
		if len(keys) == 0 && len(orphans) == 0 {
			break
		}
		if round == maxRounds {
			ix.log.WarnContext(ctx, "keys still changing; later events will finish", "keys", keys, "rounds", round)
			break
		}
	}
	if cat != nil {
		res.Revision = cat.Revision
	}
	if reindex {
		ix.baseline.record(read)
	}
	if err := ix.record(ctx, rec, cat, res); err != nil {
		errs = append(errs, err)
	}
	res.sort()
	ix.log.InfoContext(ctx, "indexed",
		"published", len(res.Published), "withdrawn", len(res.Withdrawn), "rejected", len(res.Rejected),
		"unchanged", len(res.Unchanged), "ignored", len(res.Ignored), "config", res.Config, "revision", res.Revision)
	return res, errors.Join(errs...)
}

// round prepares a plan and applies it in one catalog update, preparing
// again when the catalog's config changed under the plan.
func (ix *Indexer) round(ctx context.Context, keys []string, orphans []target, full bool) (*prepared, *decisions, *catalog.Catalog, error) {
	for attempt := 1; ; attempt++ {
		pr, err := ix.prepare(ctx, keys, orphans, full)
		if err != nil {
			return nil, nil, nil, err
		}
		var d *decisions
		c, err := catalog.Update(ctx, ix.store, func(c *catalog.Catalog) error {
			var err error
			d, err = apply(c, pr.plan)
			return err
		})
		switch {
		case errors.Is(err, errReprepare) && attempt < maxPrepares:
			ix.log.InfoContext(ctx, "config changed while preparing; preparing again", "attempt", attempt)
			continue
		case err != nil:
			return nil, nil, nil, fmt.Errorf("update catalog: %w", err)
		}
		return pr, d, c, nil
	}
}
