package indexer

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/dirwatch"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// FullListEvery is how often Watch lists every source key while the
// filesystem notifies it of changes: a safety net for a change no
// notification reported.
const FullListEvery = time.Minute

// localDir is a store kept in a local directory whose files are its keys
// (store.Dir): Watch can ask the filesystem what changed there.
type localDir interface {
	Path() string
}

// Watch keeps the catalog in step with a store that sends no events (the
// local directory `skilldrop serve` publishes from), and returns nil when
// ctx ends. Failures are logged and retried.
//
// In a local directory it reconciles the keys the filesystem reports
// changed, a burst at a time, and lists every source key only every
// FullListEvery (or when notifications may have been lost); elsewhere, or
// when the directory cannot be watched, it lists every interval and
// reconciles the keys that appeared, changed (ETag) or disappeared.
//
// It starts from the catalog: it reconciles only what a listing shows to
// differ from the sources the catalog records (the caller, as `skilldrop
// serve` does, has just re-indexed), and re-indexes when there is no
// catalog yet.
func (ix *Indexer) Watch(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return errors.New("indexer: watch interval must be positive")
	}
	var (
		w     *dirwatch.Watcher
		notes <-chan dirwatch.Batch
		every = interval
	)
	if dir, ok := ix.store.(localDir); ok {
		var err error
		if w, err = dirwatch.New(dir.Path(), dirwatch.Options{Prefixes: sourcePrefixes}); err != nil {
			ix.log.WarnContext(ctx, "watch: no change notifications; listing the directory instead", "error", err, "every", interval.String())
		} else {
			defer func() { _ = w.Close() }()
			notes, every = w.Batches(), max(FullListEvery, interval)
		}
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	poll := func(why string, err error) {
		ix.log.WarnContext(ctx, "watch: "+why+"; listing the directory instead", "error", err, "every", interval.String())
		_ = w.Close()
		notes = nil
		tick.Reset(interval)
	}
	var known map[string]string // key → ETag as of the last pass; nil before the first
	pass := func(what string, err error) {
		if err != nil && ctx.Err() == nil {
			ix.log.ErrorContext(ctx, "watch: "+what+" failed; retrying later", "error", err)
		}
	}
	pass("indexing", ix.watchOnce(ctx, &known))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			pass("indexing", ix.watchOnce(ctx, &known))
		case b, ok := <-notes:
			switch {
			case !ok:
				poll("change notifications stopped", nil)
			case errors.Is(b.Err, dirwatch.ErrUnwatched):
				poll("a directory cannot be watched", b.Err)
				pass("indexing", ix.watchOnce(ctx, &known))
			case b.Resync || known == nil:
				if b.Err != nil {
					ix.log.WarnContext(ctx, "watch: change notifications may have been lost; listing every key", "error", b.Err)
				}
				pass("indexing", ix.watchOnce(ctx, &known))
			default:
				pass("reconciling changed keys", ix.reconcileChanged(ctx, b.Keys, known))
			}
		}
	}
}

// watchOnce is one full pass of Watch. known is nil before the first,
// which catches up with the catalog.
func (ix *Indexer) watchOnce(ctx context.Context, known *map[string]string) error {
	if *known == nil {
		return ix.catchUp(ctx, known)
	}
	infos, err := ix.listSources(ctx)
	if err != nil {
		return err
	}
	cur := make(map[string]string, len(infos))
	for _, info := range infos {
		cur[info.Key] = info.ETag
	}
	var keys []string
	for k, etag := range cur {
		if old, ok := (*known)[k]; !ok || old != etag {
			keys = append(keys, k)
		}
	}
	for k := range *known {
		if _, ok := cur[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	if _, err := ix.Reconcile(ctx, keys...); err != nil {
		return err
	}
	*known = cur
	return nil
}

// catchUp is Watch's first pass: it reconciles the keys a listing shows
// to differ from the sources the catalog records, and agent-skills.yaml
// when it is not the object the catalog last judged, or re-indexes when
// no catalog was written yet. Nothing differing, it writes and logs
// nothing. The listing becomes known.
func (ix *Indexer) catchUp(ctx context.Context, known *map[string]string) error {
	snap, infos, err := ix.snapshotAndListing(ctx)
	if err != nil {
		return err
	}
	cur := make(map[string]string, len(infos))
	for _, info := range infos {
		cur[info.Key] = info.ETag
	}
	keys := differing(snap, infos)
	if configDiffers(snap, cur) {
		keys = append(keys, skillsconfig.Key)
	}
	switch {
	case snap.Revision == 0:
		_, err = ix.Reindex(ctx)
	case len(keys) > 0:
		_, err = ix.Reconcile(ctx, keys...)
	}
	if err != nil {
		return err
	}
	*known = cur
	return nil
}

// configDiffers reports whether the listed agent-skills.yaml (listed: key
// → ETag) is another object than the one snap last judged: the config in
// force, or the one it holds publications for.
func configDiffers(snap *catalog.Catalog, listed map[string]string) bool {
	recorded := ""
	switch {
	case snap.Bucket != nil:
		recorded = snap.Bucket.ETag
	case snap.Config != nil:
		recorded = snap.Config.ETag
	}
	return !sameETag(listed[skillsconfig.Key], recorded)
}

// reconcileChanged reconciles those of keys (reported by notifications)
// whose state differs from known, and records their new state there. Each
// is read before it is reconciled, so a later change is never recorded as
// seen; when reconciling fails, their state is forgotten, so the next full
// pass takes them up again.
func (ix *Indexer) reconcileChanged(ctx context.Context, keys []string, known map[string]string) error {
	var changed []string
	for _, k := range keys {
		old, had := known[k]
		info, err := ix.store.Head(ctx, k)
		switch {
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidKey):
			if had {
				delete(known, k)
				changed = append(changed, k)
			}
		case err != nil:
			known[k] = "" // unknown: the next full pass reconciles it
		case !had || old != info.ETag:
			known[k] = info.ETag
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	if _, err := ix.Reconcile(ctx, changed...); err != nil {
		for _, k := range changed {
			known[k] = ""
		}
		return err
	}
	return nil
}
