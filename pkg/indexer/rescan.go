package indexer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// maxRescan bounds the versions one call of Rescan scans again: a larger
// catalog is rescanned over successive reconciles, each taking up where
// the last stopped (a version records the engine that scanned it).
const maxRescan = 500

// rescanned is one version scanned again.
type rescanned struct {
	target
	label  string
	digest digest.Digest
	result scan.Result
	policy scan.Policy
}

// Rescan scans again, under this build's rule pack, the published versions
// an older rule pack scanned (or none: published before scanning; or one
// whose engine does not parse, scan.CompareEngines), and records the new
// results; a version that now blocks is taken out of service
// (Version.Gone, scan_blocked) with an audit event, and one that no
// longer does is back. A version a newer pack judged keeps that
// judgement: an older build cannot judge better. When every version is
// current, the catalog records this build's engine, and later calls read
// nothing but the catalog; after a downgrade that is the older engine,
// so an upgrade rescans what the older build published. The scheduled
// reconcile and a re-index call it. External entries (not re-hosted) keep
// the scan of their fetch; revoked versions are not scanned.
func (ix *Indexer) Rescan(ctx context.Context) (*Result, error) {
	res := &Result{}
	snap, info, err := catalog.Load(ctx, ix.store)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	engine := scan.Engine()
	if snap.ScanEngine == engine {
		return res, nil
	}
	cfg, err := configInForce(snap)
	if err != nil {
		return nil, err
	}
	type job struct {
		target
		v catalog.Version
	}
	var todo []job
	pending := 0
	for _, e := range allEntries(snap) {
		if e.Withdrawn || e.ExternalURL != "" {
			continue
		}
		if err := e.LoadHistory(); err != nil {
			return nil, err
		}
		for _, v := range e.Versions {
			if (v.Gone != nil && v.Gone.Code == catalog.GoneRevoked) || scannedSince(v.Scan, engine) ||
				strings.HasPrefix(v.SourceKey, "https://") {
				continue
			}
			pending++
			if len(todo) < maxRescan {
				todo = append(todo, job{targetOf(e), v})
			}
		}
	}
	out := make([]*rescanned, len(todo))
	jobs := make([]func() outcome, len(todo))
	for i, j := range todo {
		jobs[i] = func() outcome {
			r, err := ix.rescanOne(ctx, cfg, j.target, j.v)
			out[i] = r
			return outcome{key: j.v.SourceKey, err: err}
		}
	}
	failed := 0
	for _, o := range ix.runJobs(ctx, jobs) {
		if o.err != nil {
			failed++
			ix.log.WarnContext(ctx, "rescan: a version could not be read; the next reconcile tries again", "key", o.key, "error", o.err.Error())
		}
	}
	complete := failed == 0 && len(todo) == pending
	rec := newRecorder()
	var d *decisions // the decisions of the write that happened
	c, _, err := catalog.UpdateWith(ctx, ix.store, func(c *catalog.Catalog) error {
		d = &decisions{}
		now := ix.now().UTC()
		for _, r := range out {
			if r == nil {
				continue
			}
			if err := d.recordRescan(c, r, now); err != nil {
				return err
			}
		}
		if complete && c.ScanEngine != engine {
			c.ScanEngine, d.changed = engine, true
		}
		if !d.changed {
			return catalog.ErrNoChange
		}
		rec.gone, rec.restored = d.gone, d.restored
		if _, err := ix.renderDocuments(ctx, c, true); err != nil {
			return err
		}
		return ix.signCatalogsInWrite(ctx, c)
	}, catalog.UpdateOptions{Limit: ix.maxCatalog, Read: snap, ReadInfo: info})
	if err != nil && !errors.Is(err, catalog.ErrNoChange) {
		return nil, fmt.Errorf("update catalog: %w", err)
	}
	var errs []error
	if err == nil && c != nil {
		// What came back is published again, as a round's revivals are:
		// signed at this revision, counted, its allows audited.
		res.Published = d.published
		if c, res.Resigned, err = ix.signPublished(ctx, c, d, false); err != nil {
			errs = append(errs, err)
		}
		res.Revision = c.Revision
	}
	for _, g := range rec.gone {
		res.Gone = append(res.Gone, g.change())
	}
	for _, r := range rec.restored {
		res.Restored = append(res.Restored, r.change())
	}
	if err := ix.record(ctx, rec, c, res); err != nil {
		errs = append(errs, err)
	}
	ix.countPublished(ctx, res)
	ix.auditGone(ctx, rec)
	ix.log.InfoContext(ctx, "rescanned", "engine", engine, "versions", len(todo)-failed, "pending", pending-len(todo)+failed,
		"withdrawn", len(rec.gone), "restored", len(rec.restored))
	res.sort()
	return res, errors.Join(errs...)
}

// rescanOne reads a version's blob, validates it again (which scans it)
// and judges the scan under the config's policy and the allows its entry
// gives these bytes.
func (ix *Indexer) rescanOne(ctx context.Context, cfg *skillsconfig.Config, t target, v catalog.Version) (*rescanned, error) {
	data, _, err := store.ReadAll(ctx, ix.store, catalog.BlobKey(v.Digest), v.Size+1)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", v.Digest, err)
	}
	if !digest.Of(data).Equal(v.Digest) {
		return nil, fmt.Errorf("blob %s does not hold its bytes (skilldrop reindex --verify repairs it)", v.Digest)
	}
	kind := artifact.KindSkill
	if t.Kind == catalog.KindSubagent {
		kind = artifact.KindSubagent
	}
	ce := cfg.Touches(t.Kind, t.Listing, t.Name)
	k := artifact.Key{Key: v.SourceKey, Kind: kind, Name: t.Name, Listing: t.Listing, Type: v.Type, Format: v.Format}
	a, err := artifact.Validate(k, data, ix.limitsFor(ce))
	if err != nil {
		return nil, fmt.Errorf("validate %s again: %w", v.Digest, err)
	}
	pol := cfg.Policy()
	return &rescanned{target: t, label: v.Label, digest: v.Digest, result: pol.Judge(a.Scan, ce.Allows(v.Digest)), policy: pol}, nil
}

// recordRescan records a rescan's result on its version (when the catalog
// still has it with those bytes): a block takes it out of service, and
// bytes a rescan had withdrawn that no longer block are back.
func (d *decisions) recordRescan(c *catalog.Catalog, r *rescanned, now time.Time) error {
	e := r.entry(c)
	if e == nil {
		return nil
	}
	if err := e.LoadHistory(); err != nil {
		return err
	}
	v := e.Version(r.label)
	if v == nil || !v.Digest.Equal(r.digest) || (v.Gone != nil && v.Gone.Code == catalog.GoneRevoked) || r.result.Equal(v.Scan) ||
		scannedSince(v.Scan, r.result.Engine) {
		return nil
	}
	res := r.result
	v.Scan, d.changed = &res, true
	switch {
	case res.Verdict == scan.Block:
		d.scanWithdraw(c, e, v, r.policy, now)
	case v.Gone != nil:
		d.restore(c, e, v)
	}
	return nil
}

// scannedSince reports whether s is a scan by engine or a newer one, which
// a scan by engine does not replace (nil, never scanned: false).
func scannedSince(s *scan.Result, engine string) bool {
	return s != nil && scan.CompareEngines(s.Engine, engine) >= 0
}
