package indexer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// recheckByListing is the number of keys above which recheck lists the
// source prefixes instead of asking for each key.
const recheckByListing = 256

// recheckable are the keys a round reads again after its catalog write,
// with the state it read them in; d is what the round decided. A key
// changed after the round read it has an event of its own, and the round
// that handles it reads the key after this one did: if it writes after
// this round, it publishes on top; if it wrote before (this round then
// lost its race), it recorded what it read in the catalog this round's
// write went onto, so the key is disputed there: recorded with another
// ETag, or as gone (a round that finds a key gone writes, and records a
// tombstone, catalog.Source.Gone). What stays are those disputed keys (also
// a key changed back to the recorded state meanwhile, which would look
// unchanged to the round reading it then, which therefore writes nothing)
// and the keys the round rejects, so that no rejection of bytes replaced
// meanwhile is recorded. A round older than half a tombstone's life may
// have missed one since pruned: it reads every key again (now is the
// indexer's clock).
func (pr *prepared) recheckable(d *decisions, now time.Time) map[string]observation {
	if pr.raced && now.Sub(pr.plan.now) > catalog.GoneFor/2 {
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

// disputedKeys are the keys of seen that c records in another state
// (another ETag, there while seen found them gone, or gone while seen found
// them there). It must be called before the plan is applied to c.
func disputedKeys(c *catalog.Catalog, seen map[string]observation) []string {
	var out []string
	for k, o := range seen {
		if k == skillsconfig.Key {
			continue // decided against the catalog's Config and Bucket in every round
		}
		src, ok := c.Sources[k]
		switch {
		case !ok:
		case !src.Present():
			if o.present {
				out = append(out, k)
			}
		case !o.present || !sameETag(src.ETag, o.etag):
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
