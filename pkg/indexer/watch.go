package indexer

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Watch keeps the catalog in step with a store that sends no events (the
// local directory `skilldrop serve` publishes from): it re-indexes once,
// then every interval lists the source keys and reconciles those that
// appeared, changed (ETag) or disappeared since the last listing. A failed
// listing or reconciliation is logged and tried again at the next tick. It
// returns nil when ctx ends.
func (ix *Indexer) Watch(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return errors.New("indexer: watch interval must be positive")
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var known map[string]string // key → ETag as of the last successful pass
	for {
		if err := ix.watchOnce(ctx, &known); err != nil && ctx.Err() == nil {
			ix.log.ErrorContext(ctx, "watch: indexing failed; retrying at the next tick", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// watchOnce is one pass of Watch. known is nil before the first full re-index.
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
