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
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/fetch"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/queue"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// Defaults of Config.
const (
	DefaultFetchTimeout = 10 * time.Second
	DefaultConcurrency  = 32
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
	// Fetcher reads the external URLs of agent-skills.yaml entries (nil:
	// fetch.New's production client, which reaches only public addresses).
	// FetchTimeout bounds one fetch, whatever the Fetcher.
	Fetcher      *fetch.Client
	FetchTimeout time.Duration
	// Now is the clock for publish, withdrawal and rejection times (nil: time.Now).
	Now func() time.Time
	// Concurrency bounds parallel reads and blob writes in one round.
	Concurrency int
	// Origins are the public origins (scheme://host) the indexer renders
	// the large feed documents for (none: the request path renders them).
	// With KeepOrigins and no Origins, it renders for the origins the
	// catalog records, as the deployment's indexer configured them: a
	// workstation's re-index or publish then keeps what the deployment serves.
	Origins     []*url.URL
	KeepOrigins bool
	// Queue is the indexer's own queue, where a reconcile or re-index with
	// more than InlineKeys keys feeds them in chunks (nil: it reads them
	// itself, as a workstation does).
	Queue      queue.Sender
	InlineKeys int
	// MinStoredDocument is the smallest document rendered into the bucket
	// for Origins (DefaultMinStoredDocument when zero).
	MinStoredDocument int64
	// DefaultVisibility is the deployment's default visibility
	// (SKILLDROP_DEFAULT_VISIBILITY, the template's DefaultVisibility): what
	// an entry gets when agent-skills.yaml sets neither its visibility nor
	// a default_visibility. It is recorded in the catalog; "" keeps the one
	// recorded there (public when none is), as a workstation's re-index
	// or publish must.
	DefaultVisibility catalog.Visibility
	// ConfigSettle is how long agent-skills.yaml must have been left
	// unchanged before a round reads a new one (0: at once). A local
	// directory's file can be read while an editor or a copy is still
	// writing it, and a config cut short may hide less than the whole one;
	// S3 objects are written whole, so the Lambda needs none.
	ConfigSettle time.Duration
	// Signer, when set, signs each version it publishes (a Sigstore bundle)
	// and each catalog revision's AI Catalog for Origins. Without one,
	// nothing is signed, and a catalog an indexer with a key signed is
	// never written (ErrUnsigned).
	Signer signing.Signer
	// MaxCatalogBytes is the largest catalog the indexer writes
	// (catalog.MaxBytes when zero); uploads that would grow it further are
	// refused (catalog_full).
	MaxCatalogBytes int64
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
	fetcher      *fetch.Client
	fetchTimeout time.Duration
	now          func() time.Time
	workers      int
	maxCatalog   int64
	minStored    int64
	queue        queue.Sender
	inline       int
	origins      []*url.URL
	keepOrigins  bool
	defaultVis   catalog.Visibility
	settle       time.Duration
	key          *signingKey
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
		fetcher:      cfg.Fetcher,
		fetchTimeout: cfg.FetchTimeout,
		now:          cfg.Now,
		workers:      cfg.Concurrency,
		maxCatalog:   cfg.MaxCatalogBytes,
		minStored:    cfg.MinStoredDocument,
		queue:        cfg.Queue,
		inline:       cfg.InlineKeys,
		origins:      slices.Clone(cfg.Origins),
		keepOrigins:  cfg.KeepOrigins,
		defaultVis:   cfg.DefaultVisibility,
		settle:       cfg.ConfigSettle,
		key:          newSigningKey(cfg.Signer),
	}
	if _, err := catalog.ParseVisibility(string(cfg.DefaultVisibility)); err != nil {
		return nil, fmt.Errorf("indexer: default %w", err)
	}
	slices.SortFunc(ix.origins, func(a, b *url.URL) int { return strings.Compare(a.String(), b.String()) })
	if ix.metrics == nil {
		ix.metrics = obs.Nop{}
	}
	if ix.log == nil {
		ix.log = slog.New(slog.DiscardHandler)
	}
	if ix.fetcher == nil {
		ix.fetcher = fetch.New(fetch.Options{})
	}
	if ix.fetchTimeout <= 0 {
		ix.fetchTimeout = DefaultFetchTimeout
	}
	if ix.now == nil {
		ix.now = time.Now
	}
	if ix.minStored <= 0 {
		ix.minStored = DefaultMinStoredDocument
	}
	if ix.workers <= 0 {
		ix.workers = DefaultConcurrency
	}
	if ix.inline <= 0 {
		ix.inline = DefaultInlineKeys
	}
	if ix.maxCatalog <= 0 {
		ix.maxCatalog = catalog.MaxBytes
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
	Published []Change `json:"published,omitempty"` // new versions, revivals, a former version made latest again
	Withdrawn []Change `json:"withdrawn,omitempty"`
	// Gone are versions taken out of service: revoked, or blocked by the
	// content scan after they were published.
	Gone []Change `json:"gone,omitempty"`
	// Restored are versions put back in service (each also in
	// Published), their Gone why they had been out.
	Restored []Change    `json:"restored,omitempty"`
	Rejected []Rejection `json:"rejected,omitempty"`
	// Unchanged are keys whose current bytes were already the latest version.
	Unchanged []string `json:"unchanged,omitempty"`
	// Resigned is how many latest versions were signed again because an
	// earlier key had signed them (at most maxResign per round).
	Resigned int `json:"resigned,omitempty"`
	// Ignored are keys outside the bucket contract (or the indexer's own).
	Ignored []string `json:"ignored,omitempty"`
	// Held are keys whose publication waits for a valid agent-skills.yaml.
	Held []string `json:"held,omitempty"`
	// Config is ConfigApplied when a new agent-skills.yaml was put in
	// force, ConfigRejected when the bucket's is not (deleted, unreadable
	// or invalid: publications are held), else "".
	Config string `json:"config,omitempty"`
	// Revision is the catalog's revision afterwards (0: no catalog yet).
	Revision int64 `json:"revision"`
	// Queued is how many keys were fed to the queue, as job Job.
	Queued int    `json:"queued,omitempty"`
	Job    string `json:"job,omitempty"`
	// Batch is the answer to an SQS batch: the messages to deliver again.
	Batch *BatchResponse `json:"-"`
}

// sort puts every list in a fixed order: keys are read concurrently, so the
// order they finish in carries no meaning and a result must be reproducible.
func (r *Result) sort() {
	byChange := func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Listing, b.Listing), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Source, b.Source))
	}
	slices.SortStableFunc(r.Published, byChange)
	slices.SortStableFunc(r.Withdrawn, byChange)
	slices.SortStableFunc(r.Gone, byChange)
	slices.SortStableFunc(r.Restored, byChange)
	slices.SortStableFunc(r.Rejected, func(a, b Rejection) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Code, b.Code))
	})
	slices.Sort(r.Unchanged)
	slices.Sort(r.Ignored)
	slices.Sort(r.Held)
}

// What happened to agent-skills.yaml (Result.Config).
const (
	ConfigApplied  = "applied"
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
	// Scan is the published version's scan (warnings and allows used).
	Scan *scan.Result `json:"scan,omitempty"`
	// Gone says why a version was taken out of service (Result.Gone).
	Gone *catalog.Gone `json:"gone,omitempty"`
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
	// Findings are the findings that block a scan_blocked rejection's bytes.
	Findings []scan.Blocker `json:"findings,omitempty"`
	// Repeated is set when the same rejection (key, code, bytes and message) was
	// already the newest recorded for the key, as on a redelivered event:
	// it is not recorded, audited or counted again.
	Repeated bool `json:"repeated,omitempty"`
}
