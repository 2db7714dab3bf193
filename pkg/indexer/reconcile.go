package indexer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// Events get lost, and a re-index can be larger than one invocation. A
// reconcile (the schedule's payload) lists the bucket and compares it with
// the sources the catalog records, reading only the keys that differ: its
// cost grows with what changed, not with the bucket. Every round reads the
// config as state, so a lost config event is repaired by the next
// reconcile, and a visibility is never relaxed by one. When the keys to
// read are more than one invocation should take, they are fed to the
// indexer's queue in chunks, and the batches take them.

// Defaults of Config.
const (
	// DefaultInlineKeys is how many keys a reconcile or re-index reads
	// itself before it feeds them to the queue instead.
	DefaultInlineKeys = 500
	// keysPerMessage is how many keys one queue message carries: a batch of
	// 100 messages is then at most 2,000 keys, well within a timeout.
	keysPerMessage = 20
)

// The kinds of queued jobs.
const (
	jobReindex   = "reindex"
	jobReconcile = "reconcile"
)

// ReconcileBucket reconciles what a listing of the bucket shows to differ
// from the sources the catalog records (new, changed and deleted keys),
// and the config.
func (ix *Indexer) ReconcileBucket(ctx context.Context) (*Result, error) {
	snap, infos, err := ix.snapshotAndListing(ctx)
	if err != nil {
		return nil, err
	}
	keys := differing(snap, infos)
	stale, err := ix.staleRenditions(ctx, snap)
	if err != nil {
		return nil, err
	}
	ix.log.InfoContext(ctx, "reconcile", "listed", len(infos), "differing", len(keys), "documents_rewritten", stale)
	var res *Result
	if stale && len(keys) <= ix.inline {
		var failed map[string]error
		res, failed, err = ix.runWith(ctx, keys, runOptions{rerender: true, writeSources: true})
		if err = errors.Join(err, joinFailed(failed)); err != nil {
			return res, err
		}
	} else if res, err = ix.readOrQueue(ctx, keys, jobReconcile, false); err != nil {
		return res, err
	}
	// A new rule pack scans the published versions again.
	if err := ix.rescanInto(ctx, res); err != nil {
		return res, err
	}
	// Rendered documents no revision pins any more.
	if cur, _, err := catalog.Load(ctx, ix.store); err == nil {
		n, err := ix.collectRendered(ctx, cur)
		if err != nil {
			return res, err
		}
		if n > 0 {
			ix.log.InfoContext(ctx, "deleted rendered documents no catalog pins", "objects", n)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return res, fmt.Errorf("load catalog: %w", err)
	}
	return res, nil
}

// CatchUp indexes what changed since the catalog was written: with no
// catalog, everything (Reindex, which settles colliding claims by the
// objects' write times); else what a listing shows to differ from the
// sources it records (ReconcileBucket), so that a restart over a large,
// unchanged bucket reads no artifact.
func (ix *Indexer) CatchUp(ctx context.Context) (*Result, error) {
	if _, err := ix.store.Head(ctx, catalog.Key); errors.Is(err, store.ErrNotFound) {
		return ix.Reindex(ctx)
	} else if err != nil {
		return nil, fmt.Errorf("head %s: %w", catalog.Key, err)
	}
	return ix.ReconcileBucket(ctx)
}

// reindexCommand is the reindex payload: a full re-index where one
// invocation can take it, else the config decided first (as a rebuild
// decides it) and every key fed to the queue in write order.
func (ix *Indexer) reindexCommand(ctx context.Context) (*Result, error) {
	if ix.queue == nil {
		return ix.Reindex(ctx)
	}
	snap, infos, err := ix.snapshotAndListing(ctx)
	if err != nil {
		return nil, err
	}
	keys := everyKey(snap, infos)
	if len(keys) <= ix.inline {
		return ix.Reindex(ctx)
	}
	return ix.readOrQueue(ctx, keys, jobReindex, true)
}

// readOrQueue reconciles keys itself when they are few, else decides the
// config in a round of its own and feeds the keys to the queue.
func (ix *Indexer) readOrQueue(ctx context.Context, keys []string, kind string, rebuild bool) (*Result, error) {
	if ix.queue == nil || len(keys) <= ix.inline {
		res, failed, err := ix.runWith(ctx, keys, runOptions{writeSources: true})
		return res, errors.Join(err, joinFailed(failed))
	}
	res, failed, err := ix.runWith(ctx, nil, runOptions{rebuild: rebuild})
	if err = errors.Join(err, joinFailed(failed)); err != nil {
		return res, err
	}
	job := catalog.Job{ID: fmt.Sprintf("%s-%d", kind, ix.now().UnixNano()), Kind: kind, Started: ix.now().UTC(), Keys: len(keys)}
	// Recorded first: a batch that takes a chunk before the job is known
	// would have nothing to count it against.
	if err := catalog.UpdateStatus(ctx, ix.store, func(st *catalog.Status) error {
		st.StartJob(job)
		return nil
	}); err != nil {
		return res, fmt.Errorf("record job %s: %w", job.ID, err)
	}
	var bodies [][]byte
	for chunk := range slices.Chunk(keys, keysPerMessage) {
		b, err := json.Marshal(keysMessage{Skilldrop: commandKeys, Job: job.ID, Keys: chunk})
		if err != nil {
			return res, fmt.Errorf("encode a queue message: %w", err)
		}
		bodies = append(bodies, b)
	}
	if err := ix.queue.Send(ctx, bodies); err != nil {
		return res, fmt.Errorf("queue job %s: %w", job.ID, err)
	}
	ix.log.InfoContext(ctx, "queued", "job", job.ID, "keys", len(keys), "messages", len(bodies))
	res.Queued, res.Job = len(keys), job.ID
	return res, nil
}

// snapshotAndListing reads the catalog (an empty one when there is none)
// and lists the source keys.
func (ix *Indexer) snapshotAndListing(ctx context.Context) (*catalog.Catalog, []store.Info, error) {
	snap, _, err := catalog.Load(ctx, ix.store)
	switch {
	case errors.Is(err, store.ErrNotFound):
		snap = catalog.New()
	case err != nil:
		return nil, nil, fmt.Errorf("load catalog: %w", err)
	}
	infos, err := ix.listSources(ctx)
	if err != nil {
		return nil, nil, err
	}
	return snap, infos, nil
}

// differing returns the keys a listing shows to differ from what snap
// records, oldest write first: listed keys that are new or have another
// ETag, and recorded keys (sources, owners, contenders) no longer listed.
// Keys a round would not read (hidden, outside the contract) are left out.
func differing(snap *catalog.Catalog, infos []store.Info) []string {
	listed := make(map[string]bool, len(infos))
	var out []store.Info
	for _, info := range infos {
		listed[info.Key] = true
		if !readable(info.Key) {
			continue
		}
		if src, ok := snap.Sources[info.Key]; !ok || !sameETag(src.ETag, info.ETag) {
			out = append(out, info)
		}
	}
	return append(byWriteTime(out), unlisted(snap, listed, false)...)
}

// unlisted are the keys snap knows of that listed lacks, sorted: recorded
// sources, the sources of entries (withdrawn ones too with withdrawn), and
// contenders.
func unlisted(snap *catalog.Catalog, listed map[string]bool, withdrawn bool) []string {
	gone := map[string]bool{}
	for key, src := range snap.Sources {
		if src.Present() && !listed[key] {
			gone[key] = true
		}
	}
	for _, m := range []map[string]*catalog.Entry{snap.Skills, snap.Subagents} {
		for _, e := range m {
			if e.Source != catalog.ConfigSource && (withdrawn || !e.Withdrawn) && !listed[e.Source] {
				gone[e.Source] = true
			}
			for _, k := range e.Contenders {
				if !listed[k] {
					gone[k] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(gone))
}

// readable reports whether a round reads key (a hidden key, one outside
// the contract, and the config, read as state, are not sent as work).
func readable(key string) bool {
	cls, _ := classify(key)
	return cls != classHidden && cls != classIgnored && cls != classConfig
}

// everyKey is what a full re-index reads: every listed key in write
// order, then the recorded sources, owners and contenders no longer listed.
func everyKey(snap *catalog.Catalog, infos []store.Info) []string {
	keys := byWriteTime(slices.DeleteFunc(slices.Clone(infos), func(info store.Info) bool { return !readable(info.Key) }))
	listed := make(map[string]bool, len(keys))
	for _, k := range keys {
		listed[k] = true
	}
	return append(keys, unlisted(snap, listed, true)...)
}

// byWriteTime returns the keys of infos oldest write first (ties by key),
// the order incremental indexing would have seen them in.
func byWriteTime(infos []store.Info) []string {
	sorted := slices.Clone(infos)
	slices.SortFunc(sorted, func(a, b store.Info) int {
		return cmp.Or(a.LastModified.Compare(b.LastModified), cmp.Compare(a.Key, b.Key))
	})
	keys := make([]string, len(sorted))
	for i, info := range sorted {
		keys[i] = info.Key
	}
	return keys
}

// noteJobs counts, for the queued jobs the batch's messages belong to, the
// keys of the messages it reconciled, and ends a job when all its keys are
// done. A failure to record progress is logged: the work itself is done.
func (ix *Indexer) noteJobs(ctx context.Context, msgs []Message, batch *BatchResponse) {
	failedMsg := map[string]bool{}
	for _, f := range batch.BatchItemFailures {
		failedMsg[f.ItemIdentifier] = true
	}
	done := map[string]int{}
	for _, m := range msgs {
		if m.Job != "" && !failedMsg[m.ID] {
			done[m.Job] += len(m.Hints)
		}
	}
	if len(done) == 0 {
		return
	}
	var finished []string
	err := catalog.UpdateStatus(ctx, ix.store, func(st *catalog.Status) error {
		finished = finished[:0]
		changed := false
		for id, n := range done {
			j := st.Job(id)
			if j == nil || j.Finished != nil {
				continue
			}
			j.Done = min(j.Keys, j.Done+n)
			if j.Done == j.Keys {
				j.Finished = ptr(ix.now().UTC())
				finished = append(finished, id)
			}
			changed = true
		}
		if !changed {
			return catalog.ErrNoChange
		}
		return nil
	})
	if err != nil {
		ix.log.WarnContext(ctx, "could not record the progress of queued jobs", "error", err.Error())
		return
	}
	for _, id := range finished {
		ix.log.InfoContext(ctx, "job finished", "job", id)
	}
	if len(finished) > 0 {
		ix.establish(ctx)
	}
}

// establish writes an empty catalog when a queued re-index ends without
// one (nothing in the bucket was publishable): readers must not take
// "empty" from a missing catalog.
func (ix *Indexer) establish(ctx context.Context) {
	_, err := catalog.Update(ctx, ix.store, func(c *catalog.Catalog) error {
		if c.Revision > 0 {
			return catalog.ErrNoChange
		}
		return nil
	})
	if err != nil {
		ix.log.WarnContext(ctx, "could not write the first catalog", "error", err.Error())
	}
}
