package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// Reconcile reads the current state of each key and reconciles the catalog
// with it. A key that could not be read fails the call (after the others
// were reconciled).
func (ix *Indexer) Reconcile(ctx context.Context, keys ...string) (*Result, error) {
	res, failed, err := ix.run(ctx, keys, false)
	return res, errors.Join(err, joinFailed(failed))
}

// Reindex reconciles every key of the bucket, and withdraws the entries
// whose source is gone. The version history in the catalog is kept, so the
// result equals what incremental indexing produced. Claims that collide
// and are not in the catalog yet (as in a rebuild from an empty catalog)
// are decided as incremental indexing in write order decided them: the
// older object wins, whether two drops claim a name or agent-skills.yaml
// and a drop claim a name or a served path.
func (ix *Indexer) Reindex(ctx context.Context) (*Result, error) {
	res, failed, err := ix.run(ctx, nil, true)
	if err = errors.Join(err, joinFailed(failed)); err != nil {
		return res, err
	}
	return res, ix.rescanInto(ctx, res)
}

// rescanInto runs Rescan and adds what it took out of service and put
// back to res.
func (ix *Indexer) rescanInto(ctx context.Context, res *Result) error {
	rs, err := ix.Rescan(ctx)
	if rs != nil {
		res.Gone = append(res.Gone, rs.Gone...)
		res.Restored = append(res.Restored, rs.Restored...)
		res.Published = append(res.Published, rs.Published...)
		res.Resigned += rs.Resigned
		res.Revision = max(res.Revision, rs.Revision)
		res.sort()
	}
	if err != nil {
		return fmt.Errorf("rescan: %w", err)
	}
	return nil
}

// joinFailed is the error of keys that could not be read, in key order.
func joinFailed(failed map[string]error) error {
	keys := make([]string, 0, len(failed))
	for k := range failed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	errs := make([]error, len(keys))
	for i, k := range keys {
		errs[i] = failed[k]
	}
	return errors.Join(errs...)
}

// runOptions say how wide an invocation's first round reads.
type runOptions struct {
	// full reads every source key (a re-index); it implies rebuild.
	full bool
	// rebuild decides a new config as incremental indexing in write order
	// decided it (olderDrops), as a re-index must.
	rebuild bool
	// rerender writes the stored documents again, trusting no pinned
	// version (a reconcile found one no longer current).
	rerender bool
	// writeSources writes the sources the round read even when nothing
	// else changed (a reconcile: else the next one reads a rejected
	// upload again, and again).
	writeSources bool
}

func (ix *Indexer) run(ctx context.Context, keys []string, full bool) (*Result, map[string]error, error) {
	return ix.runWith(ctx, keys, runOptions{full: full, rebuild: full})
}

// runWith is one invocation: rounds of prepare, apply and recheck, then
// one status update. failed are the keys that could not be read (the round
// published the rest); err means the invocation did not finish its work.
func (ix *Indexer) runWith(ctx context.Context, keys []string, o runOptions) (res *Result, failed map[string]error, err error) {
	res = &Result{}
	failed = map[string]error{}
	rec := newRecorder()
	full := o.full || o.rebuild
	// A re-index or a reconcile also looks for configs under a wrong name.
	strays := full || o.writeSources
	var errs []error
	var orphans []target
	var cat *catalog.Catalog
	for round := 1; ; round++ {
		pr, d, c, err := ix.round(ctx, keys, orphans, o)
		if err != nil {
			errs = append(errs, err)
			break
		}
		var resigned int
		if c, resigned, err = ix.signPublished(ctx, c, d, pr.plan.establish); err != nil {
			errs = append(errs, err)
		}
		res.Resigned += resigned
		cat = c
		for k, e := range pr.failed {
			failed[k] = e
		}
		changed, err := ix.recheck(ctx, pr.recheckable(d, ix.now()))
		if err != nil {
			errs = append(errs, err)
		}
		rec.add(pr, d, changed, res)
		keys, orphans, o = changed, d.orphans, runOptions{}
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
	rec.judgeConfig(cat, res, full)
	if strays && len(errs) == 0 {
		keys, err := StrayConfigs(ctx, ix.store)
		if err != nil {
			errs = append(errs, err)
		}
		rec.strays, rec.strayed = keys, err == nil
	}
	if err := ix.record(ctx, rec, cat, res); err != nil {
		errs = append(errs, err)
	}
	ix.countPublished(ctx, res)
	ix.auditGone(ctx, rec)
	res.sort()
	ix.log.InfoContext(ctx, "indexed",
		"published", len(res.Published), "withdrawn", len(res.Withdrawn), "gone", len(res.Gone), "rejected", len(res.Rejected),
		"unchanged", len(res.Unchanged), "held", len(res.Held), "ignored", len(res.Ignored), "failed", len(failed),
		"resigned", res.Resigned, "config", res.Config, "revision", res.Revision)
	return res, failed, errors.Join(errs...)
}

// round prepares a plan and applies it in one catalog update, preparing
// again when the catalog's config changed under the plan, and refusing the
// uploads that would make the catalog larger than its limit.
func (ix *Indexer) round(ctx context.Context, keys []string, orphans []target, o runOptions) (*prepared, *decisions, *catalog.Catalog, error) {
	for attempt := 1; ; attempt++ {
		pr, err := ix.prepare(ctx, keys, orphans, o)
		if err != nil {
			return nil, nil, nil, err
		}
		pr.plan.seen = pr.seen
		var disputed []string // against the catalog the write went onto
		rerender := o.rerender
		var refused []rejection
		// The first attempt updates the catalog the plan was prepared
		// against; a write that loses finds out, and the next reads again.
		read, readInfo := pr.snap, pr.info
		onSnapshot := true // this update's first attempt applies to pr.snap
		for {
			var d *decisions
			var size int64
			attempts := 0
			c, _, err := catalog.UpdateWith(ctx, ix.store, func(c *catalog.Catalog) error {
				attempts++
				size = c.StoredSize()
				disputed = disputedKeys(c, pr.seen)
				var err error
				d, err = apply(c, pr.plan)
				unchanged := errors.Is(err, catalog.ErrNoChange)
				stale := ix.signingStale(c)
				if err != nil && (!unchanged || (!rerender && !ix.documentsStale(c) && !stale)) {
					return err
				}
				// The documents are rendered from what this write publishes.
				rendered, rerr := ix.renderDocuments(ctx, c, !rerender)
				switch {
				case rerr != nil:
					return rerr
				case err != nil && !rendered && !stale:
					return err // ErrNoChange
				}
				// The write happens: its part of the signing.
				return ix.signInWrite(ctx, c, d, pr.plan.establish)
			}, catalog.UpdateOptions{Limit: ix.maxCatalog, Read: read, ReadInfo: readInfo})
			// Another writer won a race, or the catalog was read again.
			raced := attempts > 1 || !onSnapshot
			read, onSnapshot = nil, false
			var full *catalog.FullError
			switch {
			case errors.Is(err, errReprepare) && attempt < maxPrepares:
				ix.log.InfoContext(ctx, "config changed while preparing; preparing again", "attempt", attempt)
			case errors.As(err, &full) && d != nil && len(d.grew) > 0:
				drop := overflow(d.grew, full.Size-full.Limit)
				ix.log.WarnContext(ctx, "the catalog is full; refusing the uploads that grow it",
					"size", size, "would_be", full.Size, "limit", full.Limit, "refused", len(drop))
				for _, cl := range drop {
					refused = append(refused, catalogFull(cl, size, full.Limit))
				}
				pr.plan.claims = slices.DeleteFunc(pr.plan.claims, func(cl *claim) bool { return slices.Contains(drop, cl) })
				continue
			case err != nil:
				return nil, nil, nil, fmt.Errorf("update catalog: %w", err)
			default:
				d.rejections = append(d.rejections, refused...)
				pr.raced, pr.disputed = raced, disputed
				return pr, d, c, nil
			}
			break
		}
	}
}

// overflow picks the growing claims to refuse so that the catalog sheds at
// least excess bytes: the last ones in apply's order, by an estimate of
// what each adds (its version twice over: the entry line and, once it is
// no longer the latest, the history line).
func overflow(grew []*claim, excess int64) []*claim {
	var out []*claim
	for i := len(grew) - 1; i >= 0 && excess > 0; i-- {
		b, _ := json.Marshal(grew[i].version) // our own type: cannot fail
		excess -= int64(2*len(b)) + 512
		out = append(out, grew[i])
	}
	return out
}

// catalogFull is the rejection of a claim the catalog has no room for.
func catalogFull(cl *claim, size, limit int64) rejection {
	return rejection{
		Key: cl.rejectKey(), Code: CodeCatalogFull, Name: cl.Name, Digest: cl.version.Digest,
		Message: fmt.Sprintf("%s: the catalog is full: %s of its %s limit (%d%%); withdraw skills or versions that are no longer needed, "+
			"then upload again", claimant(cl), bytesize.Format(size), bytesize.Format(limit), 100*size/max(limit, 1)),
	}
}
