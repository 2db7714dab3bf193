package indexer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// target names one catalog entry: a top-level skill, a listing-only skill
// or a sub-agent.
type target struct {
	Kind    catalog.Kind
	Listing string
	Name    string
}

func targetOf(e *catalog.Entry) target {
	return target{Kind: e.Kind, Listing: e.Listing, Name: e.Name}
}

// id is the entry's key in its collection.
func (t target) id() string {
	if t.Kind == catalog.KindSubagent {
		return t.Name
	}
	return catalog.ID(t.Listing, t.Name)
}

func (t target) String() string {
	if t.Kind == catalog.KindSubagent {
		return "sub-agent " + t.Name
	}
	if t.Listing != "" {
		return fmt.Sprintf("skill %s (listing %s)", t.Name, t.Listing)
	}
	return "skill " + t.Name
}

func (t target) collection(c *catalog.Catalog) map[string]*catalog.Entry {
	if t.Kind == catalog.KindSubagent {
		return c.Subagents
	}
	return c.Skills
}

func (t target) entry(c *catalog.Catalog) *catalog.Entry { return t.collection(c)[t.id()] }

// claim is a validated artifact that wants to be the latest version of its
// target. Its bytes (if re-hosted) are already in their blob.
type claim struct {
	target
	// source owns the name if the claim wins: the bucket key it was dropped
	// as, or catalog.ConfigSource.
	source string
	// external is the URL an external config entry is served from verbatim.
	external string
	version  catalog.Version
	// modified is when the source object was last written: among new
	// claimants of a name the oldest wins, so a re-index from scratch
	// keeps the owner incremental indexing chose.
	modified time.Time
	// field locates a config entry in agent-skills.yaml, for messages.
	field string
}

// rejectKey is the bucket key a rejection of the claim is recorded under.
func (c *claim) rejectKey() string {
	if c.source == catalog.ConfigSource && c.version.SourceKey != "" && !strings.Contains(c.version.SourceKey, "://") {
		return c.version.SourceKey // the files/ key holding the bytes
	}
	return c.source
}

// absence says that a source has no bytes any more: what it owns is withdrawn.
type absence struct {
	source string
	// config is set for a config entry whose bytes are gone (its files/
	// key was deleted); a dropped key withdraws whatever it owns.
	config *target
}

// rejection is one refused key, config or config entry.
type rejection struct {
	Key, Code, Message, Name string
	Digest                   digest.Digest
	ETag                     string
	// blocking are the findings of a scan_blocked rejection that blocked,
	// and scan the whole judged scan (nil for other rejections).
	blocking []scan.Finding
	scan     *scan.Result
}

// configChange is a new agent-skills.yaml to put in force (refresh: the
// one in force, under a new ETag).
type configChange struct {
	state   catalog.ConfigState
	cfg     *skillsconfig.Config
	refresh bool
}

// basis is the state of the catalog a plan was prepared against: the
// config in force and what the bucket held instead. Validation caps,
// config entries and holds depend on it, so apply refuses to run against a
// catalog in another state.
type basis struct {
	config      digest.Digest
	bucketState string
	bucketETag  string
}

func basisOf(c *catalog.Catalog) basis {
	var b basis
	if c.Config != nil {
		b.config = c.Config.Digest
	}
	if c.Bucket != nil {
		b.bucketState, b.bucketETag = c.Bucket.State, c.Bucket.ETag
	}
	return b
}

func (b basis) equal(o basis) bool {
	return sameDigest(b.config, o.config) && b.bucketState == o.bucketState && b.bucketETag == o.bucketETag
}

// plan is everything a round decided outside the catalog update: the
// catalog update function (apply) turns it into catalog changes against
// whatever catalog it is handed.
type plan struct {
	basis  basis
	config *configChange
	// bucket is what the catalog records of the bucket's config (nil: it
	// holds the config in force); hold holds publications meanwhile.
	bucket *catalog.BucketConfig
	hold   bool
	// cfg is the config in force once the plan is applied (nil: none).
	cfg *skillsconfig.Config
	// defaultVis is the deployment's default visibility to record ("":
	// keep the catalog's).
	defaultVis catalog.Visibility
	absent     []absence
	claims     []*claim
	held       []string // keys whose publication waits for a valid config
	rejects    []rejection
	// seen are the keys the round read, recorded as the catalog's sources.
	seen map[string]observation
	// candidates holds the targets whose every possible claimant was
	// prepared, so a withdrawal of one of them is taken over in this round.
	candidates map[target]bool
	now        time.Time
	// establish is set for a full re-index, which has seen the whole
	// bucket: it writes a catalog that does not exist yet even when nothing
	// is published (readers must not take "empty" from a missing catalog),
	// and the sources it read even when nothing else changed.
	establish bool
	// writeSources writes the sources read even when nothing else changed,
	// as establish does, without establish's other duties (a reconcile).
	writeSources bool
}

// decisions are what one run of apply decided. apply may run several times
// (lost races), so they are collected afresh on every run.
type decisions struct {
	published  []Change
	withdrawn  []Change
	unchanged  []string
	rejections []rejection
	// orphans are targets withdrawn in this run whose claimants were not
	// prepared: the next round reads them so one can take over.
	orphans []target
	// grew are the claims that add to the catalog: a new entry or version,
	// the ones refused first when it would be too large.
	grew []*claim
	// gone are the versions this write took out of service, restored the
	// ones it put back.
	gone     []goneChange
	restored []restoredChange
	// changed says whether apply changed anything at all.
	changed bool
}

// errReprepare makes a round prepare its plan again: the catalog's config
// state changed since the plan was prepared against it.
var errReprepare = errors.New("indexer: the config changed while preparing; preparing again")

// The rejection codes the catalog update decides. Validation codes come
// from pkg/artifact, pkg/archive and pkg/skillmd unchanged.
const (
	// CodeNameConflict: another live source already publishes the name.
	CodeNameConflict = "name_conflict"
	// CodeVersionExists: the version label is published with other bytes.
	CodeVersionExists = "version_exists"
	// CodePathConflict: another live entry is already served at the path.
	CodePathConflict = "path_conflict"
	// CodeMissingFile: a config entry's path: names a files/ key that does not exist.
	CodeMissingFile = "missing_file"
	// CodeFetchFailed: an external URL could not be fetched (timeout, status, size).
	CodeFetchFailed = "fetch_failed"
	// CodeInvalidConfig: agent-skills.yaml was rejected whole.
	CodeInvalidConfig = skillsconfig.CodeInvalidConfig
	// CodeCatalogFull: publishing the upload would make the catalog larger
	// than its readers accept.
	CodeCatalogFull = "catalog_full"
	// CodeScanBlocked: the content scan found what the policy blocks (and
	// agent-skills.yaml allows none of it for these bytes).
	CodeScanBlocked = scan.CodeBlocked
)

func sameDigest(a, b digest.Digest) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Equal(b)
}

// sameETag compares ETags as S3 does: the quotes are optional.
func sameETag(a, b string) bool { return strings.Trim(a, `"`) == strings.Trim(b, `"`) }

func ptr[T any](v T) *T { return &v }
