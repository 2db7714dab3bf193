package indexer

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/fetch"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// observation is the state a key was read in.
type observation struct {
	present bool
	etag    string
}

// prepared is a round's plan and what preparing it saw.
type prepared struct {
	plan *plan
	// seen holds every key read, to check afterwards that none changed
	// while the round ran.
	seen map[string]observation
	// warnings replace the status warnings of their keys (nil clears them).
	warnings map[string][]string
	ignored  []string
	config   string // Result.Config
	// failed are the keys that could not be read; the rest of the round
	// still publishes, and whoever asked about them is told.
	failed map[string]error
	// snap is the catalog the plan was prepared against, as read (info),
	// for the round's first update attempt.
	snap *catalog.Catalog
	info store.Info
	// raced is set when that attempt lost to another writer: the catalog
	// the round wrote over is not the one it prepared against.
	raced bool
	// disputed are the keys read in another state than the catalog the
	// round's write went onto records.
	disputed []string
}

// outcome is what a worker found about one key or config entry. Workers
// only read and write blobs; merge is the one place outcomes meet.
type outcome struct {
	key      string
	observed bool
	obs      observation
	claim    *claim
	absence  *absence
	rejects  []rejection
	warned   bool
	warnings []string
	also     map[string][]string // warnings of other keys (alsoWarn)
	ignored  bool
	held     bool
	err      error
}

func (o *outcome) observe(obs observation) { o.observed, o.obs = true, obs }

func (o *outcome) warn(w []string) { o.warned, o.warnings = true, w }

// alsoWarn records warnings about another key than the outcome's own (an
// inline or external config entry's bytes: entryWarningKey).
func (o *outcome) alsoWarn(key string, w []string) {
	if o.also == nil {
		o.also = map[string][]string{}
	}
	o.also[key] = w
}

// merge takes one outcome into the plan.
func (pr *prepared) merge(o outcome) {
	switch {
	case o.key == "" && o.claim == nil && o.err == nil:
		return // nothing to do
	case o.err != nil:
		pr.failed[o.key] = o.err
		return
	case o.ignored:
		pr.ignored = append(pr.ignored, o.key)
		return
	}
	if o.observed {
		pr.seen[o.key] = o.obs
	}
	if o.warned {
		pr.warnings[o.key] = o.warnings
	}
	for key, w := range o.also {
		pr.warnings[key] = w
	}
	if o.claim != nil {
		pr.plan.claims = append(pr.plan.claims, o.claim)
	}
	if o.absence != nil {
		pr.plan.absent = append(pr.plan.absent, *o.absence)
	}
	if o.held {
		pr.plan.held = append(pr.plan.held, o.key)
	}
	pr.plan.rejects = append(pr.plan.rejects, o.rejects...)
}

// prepare reads the config and then the keys (all source keys when full),
// and decides everything that needs I/O: validation, blob writes,
// external fetches. It fails when the config or the catalog cannot be read
// or the bucket cannot be listed; a key that cannot be read is left out of
// the plan (prepared.failed), so the other keys still publish.
func (ix *Indexer) prepare(ctx context.Context, keys []string, orphans []target, o runOptions) (*prepared, error) {
	snap, info, err := catalog.Load(ctx, ix.store)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if err := ix.neverIndexed(ctx); err != nil {
			return nil, err
		}
		snap, info = catalog.New(), store.Info{}
	case err != nil:
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	dec, err := ix.decideConfig(ctx, snap, o.full || o.rebuild, slices.Contains(keys, skillsconfig.Key))
	if err != nil {
		return nil, err
	}
	pr, err := ix.prepareWith(ctx, snap, dec, keys, orphans, o.full)
	if err != nil {
		return nil, err
	}
	pr.snap, pr.info = snap, info
	pr.plan.writeSources = o.writeSources
	return pr, nil
}

// ErrCatalogDeleted: the catalog's current version is a delete marker. The
// config in force is recorded in the catalog, so starting over would index
// the bucket as one that never had a config, and make public what the
// config hid (with agent-skills.yaml deleted too, as `aws s3 sync --delete`
// of a folder to the bucket's root does). Nothing is published until the
// catalog is restored, or every version of it deleted on purpose.
var ErrCatalogDeleted = errors.New("indexer: " + catalog.Key + " was deleted (its current version is a delete marker); " +
	"nothing is published until its last version is restored (aws s3api list-object-versions --prefix " + catalog.Key +
	", then copy that version back); to start over from an empty catalog on purpose, delete every version of it")

// ErrCatalogRemoved is ErrCatalogDeleted for a directory (serve --dir,
// reindex --dir): its catalog file is gone, and the directory store
// records that one was written there (store.DirTracks).
var ErrCatalogRemoved error = catalogRemoved{}

type catalogRemoved struct{}

func (catalogRemoved) Error() string {
	return "indexer: " + catalog.Key + " was deleted from the directory (.skilldrop/existed/ records that it was written there): " +
		"the config in force is recorded in it, so nothing is published until it is restored (from a backup or version control; " +
		"a deleted agent-skills.yaml stays missing, and what it hid stays hidden); to start over from an empty catalog on purpose, " +
		"delete .skilldrop/existed/" + catalog.Key
}

func (catalogRemoved) Is(target error) bool { return target == ErrCatalogDeleted }

// neverIndexed checks that a missing catalog is one that never existed:
// in a versioned bucket, a deleted one leaves a delete marker; in a
// directory, the store's record that it was written there.
func (ix *Indexer) neverIndexed(ctx context.Context) error {
	_, err := ix.store.Head(ctx, catalog.Key)
	switch {
	case errors.Is(err, store.ErrRemoved):
		return ErrCatalogRemoved
	case errors.Is(err, store.ErrDeleted):
		return ErrCatalogDeleted
	case err == nil, errors.Is(err, store.ErrNotFound):
		return nil // a catalog written meanwhile is the next attempt's
	default:
		return fmt.Errorf("head %s: %w", catalog.Key, err)
	}
}

// prepareWith prepares a plan against snap under the config decision dec.
func (ix *Indexer) prepareWith(ctx context.Context, snap *catalog.Catalog, dec *configDecision, keys []string, orphans []target, full bool) (*prepared, error) {
	pr := &prepared{
		plan: &plan{
			basis:      basisOf(snap),
			cfg:        dec.cfg,
			config:     dec.change,
			bucket:     dec.bucket,
			hold:       dec.hold,
			candidates: map[target]bool{},
			now:        ix.now().UTC(),
			defaultVis: ix.defaultVis,
			establish:  full,
		},
		seen:     map[string]observation{skillsconfig.Key: dec.observed},
		warnings: map[string][]string{},
		failed:   map[string]error{},
		config:   dec.result,
	}
	if dec.reject != nil {
		pr.plan.rejects = append(pr.plan.rejects, *dec.reject)
	}
	w := newWork()
	w.addKeys(keys...)
	w.addKeys(dec.reread...)
	if !dec.hold {
		// The first round that finds a config in force publishes what was held.
		for key, src := range snap.Sources {
			if src.Held {
				w.addKeys(key)
			}
		}
	}
	if full {
		if err := ix.queueEverything(ctx, snap, dec.cfg, w); err != nil {
			return nil, err
		}
	}
	if err := ix.addCandidates(ctx, append(dec.touched, orphans...), w, pr); err != nil {
		return nil, err
	}
	owned := map[string][]*catalog.Entry{} // the snapshot's entries by source
	for _, e := range allEntries(snap) {
		owned[e.Source] = append(owned[e.Source], e)
	}
	for !w.empty() {
		keys, targets := w.take()
		jobs := make([]func() outcome, 0, len(keys)+len(targets))
		for _, t := range targets {
			jobs = append(jobs, func() outcome { return ix.prepareEntry(ctx, t, snap, pr.plan) })
		}
		for _, key := range keys {
			if job := ix.jobFor(ctx, key, snap, pr.plan, w); job != nil {
				jobs = append(jobs, job)
			}
		}
		absent := len(pr.plan.absent)
		for _, o := range ix.runJobs(ctx, jobs) {
			pr.merge(o)
		}
		// A withdrawn owner's other claimants take over in the same round:
		// read them too.
		var takeovers []target
		for _, a := range pr.plan.absent[absent:] {
			if a.config != nil {
				takeovers = append(takeovers, *a.config)
				continue
			}
			// Withdrawn ones too: a takeover a failed read prevented is
			// retried with the invocation.
			for _, e := range owned[a.source] {
				takeovers = append(takeovers, targetOf(e))
			}
		}
		if err := ix.addCandidates(ctx, takeovers, w, pr); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// jobFor classifies key and returns the work reading it takes (nil: none).
// A files/ key brings the config entries that name it into the round.
func (ix *Indexer) jobFor(ctx context.Context, key string, snap *catalog.Catalog, p *plan, w *work) func() outcome {
	ignore := func() outcome { return outcome{key: key, ignored: true} }
	cls, k := classify(key)
	switch cls {
	case classHidden:
		ix.log.DebugContext(ctx, "ignoring a hidden key", "key", key)
		return ignore
	case classDrop:
		return func() outcome { return ix.prepareDrop(ctx, k, snap, p) }
	case classReport:
		return func() outcome { return ix.prepareReport(ctx, key) }
	case classFile:
		named := entriesNaming(p.cfg, key)
		for _, t := range named {
			w.addTarget(t)
		}
		if len(named) == 0 {
			return ignore
		}
		return nil
	case classConfig:
		return nil // read as state by decideConfig
	}
	return ignore
}

// runJobs runs jobs on at most ix.workers goroutines and returns their
// outcomes in the jobs' order.
func (ix *Indexer) runJobs(ctx context.Context, jobs []func() outcome) []outcome {
	out := make([]outcome, len(jobs))
	var g errgroup.Group
	g.SetLimit(ix.workers)
	for i, job := range jobs {
		g.Go(func() error {
			out[i] = job()
			return nil
		})
	}
	_ = g.Wait() // jobs report failures in their outcomes
	if ctx.Err() != nil {
		for i := range out {
			if out[i].err == nil && !out[i].ignored {
				out[i].err = ctx.Err()
			}
		}
	}
	return out
}

// queueEverything queues what a full re-index reads: every source key,
// the source and contenders of every entry, and every entry cfg defines.
func (ix *Indexer) queueEverything(ctx context.Context, snap *catalog.Catalog, cfg *skillsconfig.Config, w *work) error {
	infos, err := ix.listSources(ctx)
	if err != nil {
		return err
	}
	for _, info := range infos {
		w.addKeys(info.Key)
	}
	for key, src := range snap.Sources { // a gone one is dropped: a held upload deleted meanwhile
		if src.Present() {
			w.addKeys(key)
		}
	}
	for _, e := range allEntries(snap) {
		if e.Source != catalog.ConfigSource {
			w.addKeys(e.Source)
		}
		w.addKeys(e.Contenders...)
	}
	for _, ce := range definingEntries(cfg) {
		w.addTarget(target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name})
	}
	return nil
}

// listPerTarget is how many targets addCandidates finds the claimants of
// by listing each name's prefix; for more, one listing of every source key
// costs less (a config touching thousands of names).
const listPerTarget = 16

// addCandidates queues every key that could claim each target (found by
// listing the names' prefixes, or the whole bucket for many) and the
// target's config entry, and marks the targets as fully prepared.
func (ix *Indexer) addCandidates(ctx context.Context, targets []target, w *work, pr *prepared) error {
	var todo []target
	for _, t := range targets {
		if !pr.plan.candidates[t] {
			pr.plan.candidates[t] = true
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	var infos []store.Info
	if len(todo) > listPerTarget {
		var err error
		if infos, err = ix.listSources(ctx); err != nil {
			return fmt.Errorf("list claimants: %w", err)
		}
	} else {
		for _, t := range todo {
			got, err := ix.store.List(ctx, claimantPrefix(t))
			if err != nil {
				return fmt.Errorf("list claimants of %s: %w", t, err)
			}
			infos = append(infos, got...)
		}
	}
	wanted := make(map[target]bool, len(todo))
	for _, t := range todo {
		wanted[t] = true
	}
	for _, info := range infos {
		if cls, k := classify(info.Key); cls == classDrop && wanted[targetOfKey(k)] {
			w.addKeys(info.Key)
		}
	}
	for _, t := range todo {
		if defines(pr.plan.cfg, t) {
			w.addTarget(t)
		}
	}
	return nil
}

// prepareDrop reads a dropped skill or sub-agent and validates it with the
// caps the config sets for its name; a valid one is copied to its blob and
// becomes a claim. While publications are held it only asks whether the
// key is there.
func (ix *Indexer) prepareDrop(ctx context.Context, k artifact.Key, snap *catalog.Catalog, p *plan) outcome {
	o := outcome{key: k.Key}
	t := targetOfKey(k)
	if p.hold {
		return ix.holdKey(ctx, k.Key, snap, func(o *outcome) { o.absence = &absence{source: k.Key}; o.warn(nil) })
	}
	lim := ix.limitsFor(p.cfg.Touches(t.Kind, t.Listing, t.Name))
	data, info, err := ix.readBytes(ctx, bytesOf{key: k.Key}, lim.MaxArtifactBytes)
	switch {
	case ix.unholdable(ctx, k.Key, err):
		o.ignored = true
		return o
	case errors.Is(err, store.ErrNotFound):
		o.observe(observation{})
		o.absence = &absence{source: k.Key}
		o.warn(nil)
		return o
	case errors.Is(err, store.ErrTooLarge):
		o.observe(observation{present: true, etag: info.ETag})
		o.rejects = []rejection{{Key: k.Key, Code: archive.CodeTooLarge, Name: t.Name, ETag: info.ETag,
			Message: k.Key + " is " + tooLarge(info.Size, lim.MaxArtifactBytes)}}
		return o
	case err != nil:
		o.err = fmt.Errorf("read %s: %w", k.Key, err)
		return o
	}
	o.observe(observation{present: true, etag: info.ETag})
	v, err := validateDrop(k, data, lim)
	if err != nil {
		code, msg := rejectionOf(err, k.Key)
		o.rejects = []rejection{{Key: k.Key, Code: code, Message: msg, Name: t.Name, Digest: digest.Of(data)}}
		return o
	}
	if r := v.judge(p.cfg, p.cfg.Touches(t.Kind, t.Listing, t.Name), k.Key, t.Name); r != nil {
		o.rejects = []rejection{*r}
		return o
	}
	if err := ix.storeValidated(ctx, v, data); err != nil {
		o.err = err
		return o
	}
	v.SourceKey = k.Key
	o.warn(v.warnings)
	o.claim = &claim{target: t, source: k.Key, version: v.Version, modified: info.LastModified}
	return o
}

// holdKey is a drop's (or a files/ key's) preparation while publications
// are held: the key is asked about, not read. Present with bytes the
// catalog has not published from it, it is held; absent, gone(o) says
// what withdrawing it means.
func (ix *Indexer) holdKey(ctx context.Context, key string, snap *catalog.Catalog, gone func(o *outcome)) outcome {
	o := outcome{key: key}
	info, err := ix.store.Head(ctx, key)
	switch {
	case ix.unholdable(ctx, key, err):
		o.ignored = true
	case errors.Is(err, store.ErrNotFound):
		o.observe(observation{})
		gone(&o)
	case err != nil:
		o.err = fmt.Errorf("head %s: %w", key, err)
	default:
		o.observe(observation{present: true, etag: info.ETag})
		src, known := snap.Sources[key]
		o.held = !known || src.Held || !sameETag(src.ETag, info.ETag)
	}
	return o
}

// prepareReport handles keys that are only reported while they exist:
// files beside a SKILL.md or in no skill folder (a warning), and keys the
// contract cannot accept (a rejection: an invalid implied name, or none of
// its forms).
func (ix *Indexer) prepareReport(ctx context.Context, key string) outcome {
	o := outcome{key: key}
	info, err := ix.store.Head(ctx, key)
	switch {
	case ix.unholdable(ctx, key, err):
		o.ignored = true
		return o
	case errors.Is(err, store.ErrNotFound):
		o.observe(observation{})
		o.warn(nil)
		return o
	case err != nil:
		o.err = fmt.Errorf("head %s: %w", key, err)
		return o
	}
	o.observe(observation{present: true, etag: info.ETag})
	k, err := artifact.ParseKey(key)
	if err != nil {
		code, msg := rejectionOf(err, key)
		o.rejects = []rejection{{Key: key, Code: code, Message: msg, ETag: info.ETag}}
		return o
	}
	if k.Kind == artifact.KindBeside {
		o.warn([]string{besideWarning(k)})
		return o
	}
	code, msg, warning := contractMiss(key)
	if code != "" {
		o.rejects = []rejection{{Key: key, Code: code, Message: msg, ETag: info.ETag}}
		return o
	}
	o.warn([]string{warning})
	return o
}

// prepareEntry prepares the bytes of a config entry that defines its own:
// an inline body, a files/ key, or an external URL.
func (ix *Indexer) prepareEntry(ctx context.Context, t target, snap *catalog.Catalog, p *plan) outcome {
	ce := p.cfg.Touches(t.Kind, t.Listing, t.Name)
	if ce == nil || !ce.Defines() {
		return outcome{}
	}
	o := outcome{key: entryKey(ce)}
	switch {
	case p.hold && ce.FilePath != "":
		return ix.holdKey(ctx, ce.FilePath, snap, func(o *outcome) {
			o.absence = &absence{source: catalog.ConfigSource, config: &t}
			o.rejects = []rejection{entryRejection(ce, ce.FilePath, CodeMissingFile, ce.FilePath+" does not exist", digest.Digest{})}
		})
	case p.hold:
		// An inline or external entry belongs to the config in force,
		// which cannot change while publications are held.
		return outcome{}
	}
	lim := ix.limitsFor(ce)
	cl := &claim{target: t, source: catalog.ConfigSource, field: ce.Field}
	if ce.ExternalURL != "" && !ce.Digest.IsZero() {
		// A pinned external entry is never fetched: the operator vouches
		// for the digest, and the description comes from the config.
		cl.external = ce.ExternalURL
		cl.version = catalog.Version{
			Label: "sha256-" + ce.Digest.Short(), Digest: ce.Digest, Type: ce.Type,
			Format: externalFormat(ce, nil), SourceKey: ce.ExternalURL, Description: ce.Description,
		}
		o.alsoWarn(entryWarningKey(ce), excludeExternal(&cl.version, nil))
		o.claim = cl
		return o
	}
	if ce.ExternalURL != "" {
		cl.external = ce.ExternalURL
		if v, ok, err := fetchedBefore(t.entry(snap), ce.ExternalURL); err != nil {
			o.err = err
			return o
		} else if ok {
			// Fetched once already: an external URL is read when the
			// entry or its URL is new, not on every re-index.
			cl.version = v
			o.claim = cl
			return o
		}
	}
	data, info, err := ix.readBytes(ctx, bytesOf{key: ce.FilePath, body: ce.Body, url: ce.ExternalURL}, lim.MaxArtifactBytes)
	switch {
	case ce.FilePath != "" && (errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalidKey)):
		// A path the store cannot hold (a dot element in a local
		// directory) can hold no bytes either.
		o.observe(observation{})
		o.absence = &absence{source: catalog.ConfigSource, config: &t}
		o.rejects = []rejection{entryRejection(ce, ce.FilePath, CodeMissingFile, ce.FilePath+" does not exist", digest.Digest{})}
		return o
	case ce.FilePath != "" && errors.Is(err, store.ErrTooLarge):
		o.observe(observation{present: true, etag: info.ETag})
		r := entryRejection(ce, ce.FilePath, archive.CodeTooLarge,
			ce.FilePath+" is "+tooLarge(info.Size, lim.MaxArtifactBytes), digest.Digest{})
		r.ETag = info.ETag
		o.rejects = []rejection{r}
		return o
	case ce.ExternalURL != "" && err != nil:
		var connErr *fetch.ConnectError
		if errors.As(err, &connErr) {
			// The rejection's text hides the cause (it reaches the status
			// document and audit events); the operator's log keeps it.
			ix.log.WarnContext(ctx, "external fetch failed", "url", connErr.URL, "cause", connErr.Unwrap().Error())
		}
		o.rejects = []rejection{entryRejection(ce, skillsconfig.Key, CodeFetchFailed, err.Error(), digest.Digest{})}
		return o
	case err != nil:
		o.err = fmt.Errorf("read %s: %w", ce.FilePath, err)
		return o
	}
	if ce.FilePath != "" {
		o.observe(observation{present: true, etag: info.ETag})
	}
	v, err := validateEntry(ce, data, lim)
	if err != nil {
		key := entryKey(ce)
		code, msg := rejectionOf(err, key)
		if ce.ExternalURL != "" {
			key = skillsconfig.Key
			code, msg = rejectionOf(err, ce.ExternalURL)
		}
		o.rejects = []rejection{entryRejection(ce, key, code, msg, digest.Of(data))}
		return o
	}
	if r := v.judge(p.cfg, ce, "", ce.Name); r != nil {
		key := entryKey(ce)
		if ce.ExternalURL != "" {
			key = skillsconfig.Key
		}
		rej := entryRejection(ce, key, r.Code, r.Message, r.Digest)
		rej.blocking = r.blocking
		o.rejects = []rejection{rej}
		return o
	}
	switch {
	case ce.ExternalURL != "":
		v.SourceKey = ce.ExternalURL // not re-hosted: no blob
		o.alsoWarn(entryWarningKey(ce), excludeExternal(&v.Version, v.warnings))
	case ce.FilePath != "":
		v.SourceKey = ce.FilePath
		o.warn(v.warnings)
	default:
		v.SourceKey = skillsconfig.Key
		o.alsoWarn(entryWarningKey(ce), v.warnings)
	}
	if ce.ExternalURL == "" {
		if err := ix.storeValidated(ctx, v, data); err != nil {
			o.err = err
			return o
		}
	}
	cl.version = v.Version
	o.claim = cl
	return o
}

// entryKey is the key a config entry's outcome is about: its files/ key,
// else agent-skills.yaml.
func entryKey(ce *skillsconfig.Entry) string {
	if ce.FilePath != "" {
		return ce.FilePath
	}
	return skillsconfig.Key
}

// entryWarningKey is the status key of warnings about the bytes of an
// inline or external config entry, which have no key of their own: the
// entry as its rejections name it.
func entryWarningKey(ce *skillsconfig.Entry) string {
	return fmt.Sprintf("agent-skills.yaml %s (%s)", ce.Field, ce.Name)
}

func entryRejection(ce *skillsconfig.Entry, key, code, msg string, d digest.Digest) rejection {
	return rejection{Key: key, Code: code, Name: ce.Name, Digest: d,
		Message: fmt.Sprintf("agent-skills.yaml %s (%s): %s", ce.Field, ce.Name, msg)}
}

// fetchedBefore finds the version of e fetched from url, if e ever was.
func fetchedBefore(e *catalog.Entry, url string) (catalog.Version, bool, error) {
	if e == nil {
		return catalog.Version{}, false, nil
	}
	if err := e.LoadHistory(); err != nil {
		return catalog.Version{}, false, err
	}
	for _, v := range e.Versions {
		if v.SourceKey == url {
			return v, true, nil
		}
	}
	return catalog.Version{}, false, nil
}

// unholdable reports whether err is the store refusing key itself (a ".."
// or dot element, a backslash in a local directory). No object can exist
// under such a key, so the key is ignored with a log line: an event naming
// it must never fail the invocation, which would be retried forever.
func (ix *Indexer) unholdable(ctx context.Context, key string, err error) bool {
	if !errors.Is(err, store.ErrInvalidKey) {
		return false
	}
	ix.log.WarnContext(ctx, "ignoring a key the store cannot hold", "key", key, "error", err.Error())
	return true
}

// storeValidated writes validated bytes to their content-addressed blob,
// and each of their files to its own (putFiles).
func (ix *Indexer) storeValidated(ctx context.Context, v *validated, data []byte) error {
	if err := ix.putBlob(ctx, v.Digest, data, v.Format.ContentType()); err != nil {
		return fmt.Errorf("write blob %s: %w", v.Digest, err)
	}
	return ix.putFiles(ctx, v.Digest, v.files)
}

// askFirstFrom is the size from which putBlob asks whether a blob exists
// before writing it: below it, a create-only write that finds the blob
// there costs what the question would.
const askFirstFrom = 64 << 10

// putBlob writes validated bytes to their content-addressed key, create-only:
// a blob that already exists holds these very bytes. For large bytes it
// asks first, so a redelivery or re-index does not upload them again.
func (ix *Indexer) putBlob(ctx context.Context, d digest.Digest, data []byte, contentType string) error {
	key := catalog.BlobKey(d)
	if len(data) >= askFirstFrom {
		if _, err := ix.store.Head(ctx, key); err == nil {
			return nil
		}
	}
	_, err := ix.store.Put(ctx, key, data, store.PutOptions{IfNoneMatch: "*", ContentType: contentType})
	if err != nil && !errors.Is(err, store.ErrPreconditionFailed) {
		return err
	}
	return nil
}

// limitsFor returns the service caps with a config entry's own on top:
// max_artifact_bytes may only lower the service cap, the others replace it.
func (ix *Indexer) limitsFor(ce *skillsconfig.Entry) archive.Limits {
	return EntryLimits(ix.limits, ce)
}

// EntryLimits are lim with the caps of entry ce (nil: none) in force: a
// smaller artifact size, and the archive caps it sets.
func EntryLimits(lim archive.Limits, ce *skillsconfig.Entry) archive.Limits {
	if ce == nil {
		return lim
	}
	c := ce.Caps
	if c.MaxArtifactBytes > 0 && c.MaxArtifactBytes < lim.MaxArtifactBytes {
		lim.MaxArtifactBytes = c.MaxArtifactBytes
	}
	if c.MaxEntries > 0 {
		lim.MaxEntries = c.MaxEntries
	}
	if c.MaxExpandedBytes > 0 {
		lim.MaxExpandedBytes = c.MaxExpandedBytes
	}
	if c.MaxDecompressionRatio > 0 {
		lim.MaxRatio = c.MaxDecompressionRatio
	}
	if c.MaxClockSkewSecs > 0 {
		lim.MaxClockSkewSecs = c.MaxClockSkewSecs
	}
	return lim
}

// sourcePrefixes are where operators drop what the indexer reads: the keys
// a full re-index lists (never blobs/ or catalog/, which can be large and
// are the indexer's own).
var sourcePrefixes = artifact.SourcePrefixes()

// listSources lists every key operators drop (sourcePrefixes).
func (ix *Indexer) listSources(ctx context.Context) ([]store.Info, error) {
	var out []store.Info
	for _, p := range sourcePrefixes {
		infos, err := ix.store.List(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", p, err)
		}
		for _, info := range infos {
			if p == skillsconfig.Key && info.Key != p {
				continue // agent-skills.yaml.bak and the like
			}
			out = append(out, info)
		}
	}
	return out, nil
}
