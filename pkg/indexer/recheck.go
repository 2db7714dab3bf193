package indexer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/skilldrop/skilldrop/pkg/store"
)

// recheckByListing is the number of keys above which recheck lists the
// source prefixes instead of asking for each key.
const recheckByListing = 256

// recheck reports the keys whose state differs from the one they were read
// in. A round that read a key before a concurrent invocation wrote newer
// bytes may have published after it; reading the key again after the
// catalog write tells, and another round then publishes what is there now.
func (ix *Indexer) recheck(ctx context.Context, seen map[string]observation) ([]string, error) {
	if len(seen) == 0 {
		return nil, nil
	}
	now := map[string]observation{}
	if len(seen) > recheckByListing {
		infos, err := ix.listSources(ctx)
		if err != nil {
			return nil, fmt.Errorf("recheck: %w", err)
		}
		for _, info := range infos {
			now[info.Key] = observation{present: true, etag: info.ETag}
		}
	} else {
		keys := slices.Sorted(maps.Keys(seen))
		obs := make([]observation, len(keys))
		errs := make([]error, len(keys))
		var g errgroup.Group
		g.SetLimit(ix.workers)
		for i, key := range keys {
			g.Go(func() error {
				info, err := ix.store.Head(ctx, key)
				switch {
				case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidKey):
					obs[i] = observation{} // as prepare read it: nothing there
				case errors.Is(err, store.ErrAccessDenied):
					obs[i] = observation{present: true} // as decideConfig saw it: there, unreadable
				case err != nil:
					errs[i] = fmt.Errorf("recheck %s: %w", key, err)
					obs[i] = seen[key] // unknown: do not loop on it
				default:
					obs[i] = observation{present: true, etag: info.ETag}
				}
				return nil
			})
		}
		_ = g.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		for i, key := range keys {
			now[key] = obs[i]
		}
	}
	var changed []string
	for key, was := range seen {
		if now[key] != was {
			changed = append(changed, key)
		}
	}
	slices.Sort(changed)
	return changed, nil
}
