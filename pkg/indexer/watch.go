package indexer

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/skilldrop/skilldrop/pkg/dirwatch"
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
// It starts from the last full re-index this Indexer ran over a local
// directory, reconciling what changed since; without one, it re-indexes
// first.
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
	known := ix.baseline.take() // key → ETag as of the last pass; nil: re-index first
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

// watchOnce is one full pass of Watch. known is nil before the first full
// re-index.
func (ix *Indexer) watchOnce(ctx context.Context, known *map[string]string) error {
	infos, err := ix.listSources(ctx)
	if err != nil {
		return err
	}
	cur := make(map[string]string, len(infos))
	for _, info := range infos {
		cur[info.Key] = info.ETag
	}
	if *known == nil {
		if _, err := ix.Reindex(ctx); err != nil {
			return err
		}
		// What the re-index read overrides the listing before it.
		maps.Copy(cur, ix.baseline.take())
		*known = cur
		return nil
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

// baseline is what the last full re-index of a local directory read (key
// → ETag), kept for Watch to start from instead of re-indexing again. It
// is nil for other stores, which are never watched, so nothing is kept.
type baseline struct {
	mu    sync.Mutex
	known map[string]string
}

// record keeps what a re-index's rounds read, later rounds overriding.
func (b *baseline) record(rounds []map[string]observation) {
	if b == nil || len(rounds) == 0 {
		return
	}
	known := map[string]string{}
	for _, seen := range rounds {
		for k, o := range seen {
			if o.present {
				known[k] = o.etag
			} else {
				delete(known, k)
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.known = known
}

// take returns the recorded baseline, once; nil when there is none.
func (b *baseline) take() map[string]string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	known := b.known
	b.known = nil
	return known
}
