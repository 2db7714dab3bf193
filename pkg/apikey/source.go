package apikey

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"time"
)

// ErrUnavailable is wrapped by every error a Source returns: the key store
// could not be read, and the server answers 503.
var ErrUnavailable = errors.New("API key hashes unavailable")

// Source supplies the keys of the store as they are now.
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

// Defaults of CacheOptions' backoff after failed fetches, and of the time
// one fetch may take.
const (
	DefaultMinBackoff   = time.Second
	DefaultMaxBackoff   = 30 * time.Second
	DefaultFetchTimeout = 10 * time.Second
)

// FetchFunc reads the key store (what Parse reads) from wherever it is
// kept.
type FetchFunc func(ctx context.Context) (string, error)

// CacheOptions configure a Cached source. The zero value means the defaults.
type CacheOptions struct {
	TTL time.Duration    // <= 0 is DefaultTTL
	Now func() time.Time // the clock; nil is time.Now (tests inject theirs)
	// MinBackoff and MaxBackoff bound the wait after a failed fetch before
	// the next one (<= 0: the defaults); FetchTimeout bounds one fetch.
	MinBackoff, MaxBackoff, FetchTimeout time.Duration
}

// Cached is a Source that fetches the hash list on first use and again
// once TTL has passed since the previous fetch began; in between it answers
// from memory, whatever key is presented, so unknown keys cost no fetch.
// Concurrent callers share one fetch, which runs detached from any one
// caller's context (bounded by FetchTimeout), so a caller that gives up
// neither cancels it for the others nor counts as a failure of the store.
// It is safe for concurrent use.
//
// It fails closed: when a fetch fails, or returns a list that does not
// parse, Hashes returns an error (wrapping ErrUnavailable) instead of the
// previous set. Serving the old set would keep a revoked key valid for as
// long as the store stays unreachable, breaking the promise that
// revocation takes at most TTL; serving no set would turn every key holder
// into an invalid caller (401) or, worse, show them the anonymous catalog,
// from which syncing clients conclude that the authenticated skills were
// deleted. A 503 tells them to retry instead.
//
// After a failure it backs off: until a wait of MinBackoff, doubling with
// each consecutive failure up to MaxBackoff and jittered down by up to a
// half, has passed, Hashes repeats the failure without fetching, so a store
// that is down or throttling sees a few fetches a minute, not one per
// request.
type Cached struct {
	name  string
	fetch FetchFunc
	ttl   time.Duration
	now   func() time.Time
	// jitter returns a wait in [d/2, d]; a field so tests can pin it.
	jitter                             func(d time.Duration) time.Duration
	minBackoff, maxBackoff, fetchLimit time.Duration

	mu sync.Mutex
	// Guarded by mu.
	set      Set
	fetched  time.Time // when the fetch of set began
	loaded   bool
	err      error     // the last fetch's failure, repeated until retryAt
	failures int       // consecutive failed fetches
	retryAt  time.Time // no fetch before this after a failure
	flight   *fetchFlight
}

// fetchFlight is one fetch in progress, which callers wait for.
type fetchFlight struct {
	done chan struct{}
	set  Set
	err  error
}

// NewCached returns a Cached source over fetch; name identifies the store
// in errors (e.g. `SSM parameter "/skilldrop/api-keys"`).
func NewCached(name string, fetch FetchFunc, opts CacheOptions) *Cached {
	c := &Cached{
		name: name, fetch: fetch, ttl: opts.TTL, now: opts.Now, jitter: halfJitter,
		minBackoff: opts.MinBackoff, maxBackoff: opts.MaxBackoff, fetchLimit: opts.FetchTimeout,
	}
	if c.ttl <= 0 {
		c.ttl = DefaultTTL
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.minBackoff <= 0 {
		c.minBackoff = DefaultMinBackoff
	}
	if c.maxBackoff <= 0 {
		c.maxBackoff = DefaultMaxBackoff
	}
	c.maxBackoff = max(c.maxBackoff, c.minBackoff)
	if c.fetchLimit <= 0 {
		c.fetchLimit = DefaultFetchTimeout
	}
	return c
}

// halfJitter is a uniformly random wait in [d/2, d]: spread, so that many
// functions failing together do not retry in step, and never shorter than
// half the backoff.
func halfJitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// Hashes returns the cached set, fetching it first when it is older than
// the TTL (or was never fetched, or the clock went backwards), unless a
// failed fetch is still backing off.
func (c *Cached) Hashes(ctx context.Context) (Set, error) {
	c.mu.Lock()
	now := c.now()
	switch {
	case c.loaded && !now.Before(c.fetched) && now.Sub(c.fetched) < c.ttl:
		set := c.set
		c.mu.Unlock()
		return set, nil
	case c.err != nil && now.Before(c.retryAt) && !c.retryAt.After(now.Add(c.maxBackoff)):
		err := c.err
		c.mu.Unlock()
		return Set{}, err
	}
	f := c.flight
	if f == nil {
		f = &fetchFlight{done: make(chan struct{})}
		c.flight = f
		go c.run(context.WithoutCancel(ctx), f, now)
	}
	c.mu.Unlock()

	select {
	case <-f.done:
		return f.set, f.err
	case <-ctx.Done():
		return Set{}, fmt.Errorf("%w: %s: %w", ErrUnavailable, c.name, ctx.Err())
	}
}

// run fetches for flight f, begun at began, and records the outcome.
func (c *Cached) run(ctx context.Context, f *fetchFlight, began time.Time) {
	defer close(f.done)
	ctx, cancel := context.WithTimeout(ctx, c.fetchLimit)
	defer cancel()
	set, err := c.get(ctx)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.flight = nil
	if err != nil {
		c.loaded, c.failures = false, c.failures+1
		wait := c.minBackoff << min(c.failures-1, 30)
		if wait <= 0 || wait > c.maxBackoff {
			wait = c.maxBackoff
		}
		c.err, c.retryAt = err, c.now().Add(c.jitter(wait))
		f.err = err
		return
	}
	// Age counts from before the fetch, so a slow fetch never stretches the
	// revocation delay beyond the TTL.
	c.set, c.fetched, c.loaded = set, began, true
	c.err, c.failures = nil, 0
	f.set = set
}

// get fetches and parses the list, recovering from a panicking fetch so
// that its waiters are released with an error.
func (c *Cached) get(ctx context.Context) (set Set, err error) {
	defer func() {
		if p := recover(); p != nil {
			set, err = Set{}, fmt.Errorf("%w: read %s: panic: %v", ErrUnavailable, c.name, p)
		}
	}()
	raw, err := c.fetch(ctx)
	if err != nil {
		return Set{}, fmt.Errorf("%w: read %s: %w", ErrUnavailable, c.name, err)
	}
	if set, err = Parse(raw); err != nil {
		return Set{}, fmt.Errorf("%w: %s: %w", ErrUnavailable, c.name, err)
	}
	return set, nil
}

var (
	_ Source = Set{}
	_ Source = union(nil)
	_ Source = (*Cached)(nil)
)

// FileFetch returns a FetchFunc that reads the key store from a file, at
// most MaxStoreBytes of it (`skilldrop serve --keys FILE`).
func FileFetch(path string) FetchFunc {
	return func(context.Context) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer func() { _ = f.Close() }()
		b, err := io.ReadAll(io.LimitReader(f, MaxStoreBytes+1))
		if err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		if len(b) > MaxStoreBytes {
			return "", fmt.Errorf("%s is larger than %d bytes", path, MaxStoreBytes)
		}
		return string(b), nil
	}
}

// ParseRefresh reads how often a key store is read again (EnvRefresh): a
// Go duration from 1s to DefaultTTL, the longest a revoked key may keep
// working; "" is DefaultTTL.
func ParseRefresh(s string) (time.Duration, error) {
	if s == "" {
		return DefaultTTL, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d > DefaultTTL {
		return 0, fmt.Errorf("%q: want a duration from 1s to %s", s, DefaultTTL)
	}
	return d, nil
}
