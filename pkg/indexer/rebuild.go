package indexer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// A re-index from an empty catalog (a restored bucket) must decide what
// incremental indexing in write order decided: among drops the older
// object keeps a name (orderClaims), and between a drop and the config
// the older one wins too, which olderDrops decides.

// olderDrops decides a new config in a full re-index as incremental
// indexing in write order decided it: the drops written before it (or in
// the same instant: ties go to the drop, whose event a same-second config
// found indexed) were published when it arrived, so it must not collide
// with them, exactly as conflicts checks it against the live entries. It
// returns why the config cannot be put in force ("" when it can).
func (ix *Indexer) olderDrops(ctx context.Context, snap *catalog.Catalog, inForce, cfg *skillsconfig.Config, written time.Time) (string, error) {
	infos, err := ix.listSources(ctx)
	if err != nil {
		return "", err
	}
	colliding := mayCollide(cfg, infos, written)
	if len(colliding) == 0 {
		return "", nil
	}
	// The names at stake as if the config had not changed: every claimant
	// of each, validated with the caps of the config in force before this
	// one, as its event was.
	before, err := ix.prepareWith(ctx, snap, &configDecision{inForce: inForce, cfg: inForce}, nil, colliding, false)
	if err != nil {
		return "", err
	}
	if len(before.failed) > 0 {
		// Deciding on part of the bucket could put in force a config that
		// incremental indexing rejected; the invocation is retried instead.
		return "", fmt.Errorf("read the drops written before %s: %w", skillsconfig.Key, joinFailed(before.failed))
	}
	p := *before.plan
	p.claims = slices.DeleteFunc(slices.Clone(p.claims), func(cl *claim) bool {
		return cl.source != catalog.ConfigSource && cl.modified.After(written)
	})
	then, err := cloneCatalog(snap)
	if err != nil {
		return "", err
	}
	if _, err := apply(then, &p); err != nil && !errors.Is(err, catalog.ErrNoChange) {
		return "", fmt.Errorf("publish the drops written before %s: %w", skillsconfig.Key, err)
	}
	return conflicts(then, cfg), nil
}

// mayCollide returns the targets of the drops written no later than
// written that could collide with cfg: a key claiming a name cfg defines
// or includes by name, a name whose url cfg sets, or a key served at a
// path an entry of cfg takes. It reads nothing, and over-approximates (the
// drop may be invalid or lose its name to another), so that olderDrops
// reads only the claimants of names where the answer may depend on them.
func mayCollide(cfg *skillsconfig.Config, infos []store.Info, written time.Time) []target {
	tk := claimsOf(cfg)
	var out []target
	for _, info := range infos {
		// To the second: a listing may time objects more finely than the
		// read that timed the config (S3 answers a GET with an HTTP date).
		if info.LastModified.Truncate(time.Second).After(written) {
			continue
		}
		cls, k := classify(info.Key)
		if cls != classDrop {
			continue
		}
		t := targetOfKey(k)
		_, path := tk.paths[servedPath(t, info.Key, "", "", cfg)]
		if (tk.defines[t] != nil || tk.moves[t] || tk.refs[t] != "" || path) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// cloneCatalog returns a deep copy of c, histories loaded.
func cloneCatalog(c *catalog.Catalog) (*catalog.Catalog, error) {
	b, err := catalog.Encode(c, 0)
	if err != nil {
		return nil, fmt.Errorf("encode catalog: %w", err)
	}
	cp, err := catalog.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("copy catalog: %w", err)
	}
	if err := cp.LoadHistories(); err != nil {
		return nil, fmt.Errorf("copy catalog: %w", err)
	}
	return cp, nil
}
