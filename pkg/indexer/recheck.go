package indexer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// recheckByListing is the number of keys above which recheck lists the
// source prefixes instead of asking for each key.
const recheckByListing = 256

// recheckable are the keys a round reads again after its catalog write,
// with the state it read them in; d is what the round decided. A round that lost no race wrote over the
// very catalog it prepared against, so no other round published in between,
// and a round that writes after it applies its own reads on top of this
// one's: the keys the round saw first need no second look. A round writes
// whenever it finds a key gone (apply), so one that read the key before
// the deletion always loses its race. What stays are the keys the catalog
// recorded in another state (disputed): a key changed back to the recorded
// state meanwhile would look unchanged to the round reading it then, which
// therefore writes nothing; and the keys it rejects, so that no rejection
// of bytes replaced meanwhile is recorded. A round that lost a race reads
// every key again.
func (pr *prepared) recheckable(d *decisions) map[string]observation {
	if pr.raced {
		return pr.seen
	}
	out := make(map[string]observation, len(pr.disputed))
	for _, k := range pr.disputed {
		out[k] = pr.seen[k]
	}
	for _, r := range d.rejections {
		if o, ok := pr.seen[r.Key]; ok {
			out[r.Key] = o
		}
	}
	return out
}

// disputedKeys are the keys of seen that snap records in another state
// (another ETag, or there while seen found them gone). It must be called
// before the plan is applied to snap.
func disputedKeys(snap *catalog.Catalog, seen map[string]observation) []string {
	var out []string
	for k, o := range seen {
		if k == skillsconfig.Key {
			continue // decided against the catalog's Config and Bucket in every round
		}
		if src, ok := snap.Sources[k]; ok && (!o.present || !sameETag(src.ETag, o.etag)) {
			out = append(out, k)
		}
	}
	return out
}

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
