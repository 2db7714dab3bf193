package apikey

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrUnavailable is wrapped by every error a Source returns: the configured
// hashes could not be read, and the server answers 503.
var ErrUnavailable = errors.New("API key hashes unavailable")

// Source supplies the current set of key hashes.
type Source interface {
	Hashes(ctx context.Context) (Set, error)
}

// Hashes returns s itself: a Set is a static Source, the form
// SKILLDROP_API_KEY_SHA256 takes.
func (s Set) Hashes(context.Context) (Set, error) { return s, nil }

// Union returns a Source whose set is the union of every source's. If any
// source fails, the union fails: a key store that cannot be read must not
// silently narrow the set of accepted keys to the others' (nor widen the
// caller's view to anonymous).
func Union(sources ...Source) Source { return union(sources) }

type union []Source

func (u union) Hashes(ctx context.Context) (Set, error) {
	var all Set
	for _, s := range u {
		set, err := s.Hashes(ctx)
		if err != nil {
			return Set{}, err
		}
		all = all.Union(set)
	}
	return all, nil
}

// DefaultTTL is how long a Cached source keeps a fetched set: the longest a
// revoked key keeps working after its hash is removed from the store.
const DefaultTTL = 60 * time.Second

// FetchFunc reads the raw hash list (the ParseSet syntax) from wherever it
// is kept.
type FetchFunc func(ctx context.Context) (string, error)

// CacheOptions configure a Cached source. The zero value means the defaults.
type CacheOptions struct {
	TTL time.Duration    // <= 0 is DefaultTTL
	Now func() time.Time // the clock; nil is time.Now (tests inject theirs)
}

// Cached is a Source that fetches the hash list on first use and again
// once TTL has passed since the previous fetch began; in between it answers
// from memory. Concurrent callers share one fetch. It is safe for
// concurrent use.
//
// It fails closed: when a fetch fails, or returns a list that does not
// parse, Hashes returns an error (wrapping ErrUnavailable) instead of the
// previous set, and tries again on the next call. Serving the old set would
// keep a revoked key valid for as long as the store stays unreachable,
// breaking the promise that revocation takes at most TTL; serving no set
// would turn every key holder into an invalid caller (401) or, worse, show
// them the anonymous catalog, from which syncing clients conclude that the
// authenticated skills were deleted. A 503 tells them to retry instead.
type Cached struct {
	name  string
	fetch FetchFunc
	ttl   time.Duration
	now   func() time.Time

	lock chan struct{} // held while fetching; a channel so waiters can give up on ctx

	// Guarded by lock.
	set     Set
	fetched time.Time
	loaded  bool
}

// NewCached returns a Cached source over fetch; name identifies the store
// in errors (e.g. `SSM parameter "/skilldrop/api-keys"`).
func NewCached(name string, fetch FetchFunc, opts CacheOptions) *Cached {
	c := &Cached{name: name, fetch: fetch, ttl: opts.TTL, now: opts.Now, lock: make(chan struct{}, 1)}
	if c.ttl <= 0 {
		c.ttl = DefaultTTL
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Hashes returns the cached set, fetching it first when it is older than
// the TTL (or was never fetched, or the clock went backwards).
func (c *Cached) Hashes(ctx context.Context) (Set, error) {
	select {
	case c.lock <- struct{}{}:
	case <-ctx.Done():
		return Set{}, fmt.Errorf("%w: %s: %w", ErrUnavailable, c.name, ctx.Err())
	}
	defer func() { <-c.lock }()

	now := c.now()
	if c.loaded && !now.Before(c.fetched) && now.Sub(c.fetched) < c.ttl {
		return c.set, nil
	}
	raw, err := c.fetch(ctx)
	if err != nil {
		c.loaded = false
		return Set{}, fmt.Errorf("%w: read %s: %w", ErrUnavailable, c.name, err)
	}
	set, err := ParseSet(raw)
	if err != nil {
		c.loaded = false
		return Set{}, fmt.Errorf("%w: %s: %w", ErrUnavailable, c.name, err)
	}
	// Age counts from before the fetch, so a slow fetch never stretches the
	// revocation delay beyond the TTL.
	c.set, c.fetched, c.loaded = set, now, true
	return set, nil
}

var (
	_ Source = Set{}
	_ Source = union(nil)
	_ Source = (*Cached)(nil)
)
