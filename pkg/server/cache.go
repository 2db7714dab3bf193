package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/webcatalog"
)

// reloadTimeout bounds one catalog read, whoever is waiting for it.
const reloadTimeout = 10 * time.Second

// catalogCache keeps the compiled catalog of the last successful read and
// revalidates it with a conditional Get (IfNoneMatch on its ETag) at most
// once per interval. Concurrent requests that find it due share one
// reload: the first runs it, the others wait for its outcome.
//
// When the store cannot be read (an error, a missing or corrupt catalog),
// the last good catalog keeps being served for maxStale after the store
// last confirmed it, so a blip in S3 is invisible; after that, requests
// fail (503) until a read succeeds, because an old catalog would keep a
// withdrawn skill served indefinitely. A failed read is retried only after
// the interval, so an outage does not multiply the load on the store.
type catalogCache struct {
	store    store.Store
	every    time.Duration
	maxStale time.Duration
	now      func() time.Time
	log      *slog.Logger

	mu      sync.Mutex
	cur     *snapshot // last good catalog, or nil
	checked time.Time // when the last read (of either outcome) finished
	good    time.Time // when the store last confirmed cur
	err     error     // the outcome to repeat until the next read: nil serves cur
	flight  *flight
}

type flight struct {
	done chan struct{}
	snap *snapshot
	err  error
}

func newCatalogCache(s store.Store, every, maxStale time.Duration, now func() time.Time, log *slog.Logger) *catalogCache {
	return &catalogCache{store: s, every: every, maxStale: maxStale, now: now, log: log}
}

// get returns the current snapshot, or why there is none to serve.
func (c *catalogCache) get(ctx context.Context) (*snapshot, error) {
	c.mu.Lock()
	if c.checked != (time.Time{}) && c.now().Sub(c.checked) < c.every && c.now().Sub(c.checked) >= 0 {
		snap, err := c.cur, c.err
		c.mu.Unlock()
		return snap, err
	}
	f := c.flight
	lead := f == nil
	if lead {
		f = &flight{done: make(chan struct{})}
		c.flight = f
	}
	c.mu.Unlock()

	if lead {
		c.lead(ctx, f)
		return f.snap, f.err
	}
	select {
	case <-f.done:
		return f.snap, f.err
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for catalog: %w", ctx.Err())
	}
}

// lead runs the reload of flight f and releases its waiters, whatever
// happens: a panic in decoding becomes an error instead of a hang.
func (c *catalogCache) lead(ctx context.Context, f *flight) {
	defer close(f.done)
	defer func() {
		if p := recover(); p != nil {
			f.snap, f.err = nil, fmt.Errorf("reload %s: panic: %v", catalog.Key, p)
			c.mu.Lock()
			c.flight = nil
			c.mu.Unlock()
		}
	}()
	// Detached from this request's cancellation: others wait for it.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reloadTimeout)
	defer cancel()
	f.snap, f.err = c.reload(rctx)
}

// reload reads the catalog conditionally and records the outcome.
func (c *catalogCache) reload(ctx context.Context) (*snapshot, error) {
	c.mu.Lock()
	cur := c.cur
	c.mu.Unlock()

	next, err := c.read(ctx, cur)

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.checked, c.flight = now, nil
	switch {
	case err == nil:
		c.cur, c.good, c.err = next, now, nil
	case cur != nil && c.maxStale >= 0 && now.Sub(c.good) <= c.maxStale:
		c.log.Warn("catalog revalidation failed; serving the last good catalog",
			"error", err, "revision", cur.head.Revision, "age_s", now.Sub(c.good).Seconds())
		c.err = nil
	default:
		c.err = err
	}
	return c.cur, c.err
}

// read returns cur when the store still holds it, else the new catalog.
func (c *catalogCache) read(ctx context.Context, cur *snapshot) (*snapshot, error) {
	etag := ""
	if cur != nil {
		etag = cur.head.ETag
	}
	h, err := catalog.ReadHead(ctx, c.store, etag)
	switch {
	case errors.Is(err, store.ErrNotModified) && cur != nil:
		return cur, nil
	case err != nil:
		return nil, err
	}
	return newSnapshot(h, c.store), nil
}

// invalidate makes the next get read the catalog again: a read of the
// current revision found it replaced (catalog.ErrChanged).
func (c *catalogCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked = time.Time{}
}

// maxRenders bounds the rendered documents one snapshot keeps. Keys include
// the origin, which a local Host header can vary at will.
const maxRenders = 64

// maxRenderBytes bounds the bodies of the rendered RFC indexes and listings
// one snapshot keeps, the least recently used dropped past it (and
// rendered again when next asked), the last rendered kept whatever its
// size: each class of caller has a document of its own, about 280 KB at
// 2,000 skills. A body's gzip, made on the first request that accepts it,
// is about a fifth more.
const maxRenderBytes = 8 << 20

// maxClasses bounds the classes of caller one snapshot keeps what it
// computed for; past it, a class's answer is computed per request.
const maxClasses = 64

// snapshot is one catalog revision: its head, read first, the entries,
// read when a route needs them (View), and the documents answered from it,
// each rendered or read once per (document, class of caller, origin): the
// RFC index and listings here, the native feed's root, indexes and pages
// in native.go, the pre-rendered documents in stored.go. A class
// (audience.Class) is the audience set that stands for every caller who
// sees the same document, so nothing is kept per key, and a document is
// rendered for its class's caller, never for the one who asked first.
type snapshot struct {
	head  *catalog.Head
	store store.Store

	viewMu sync.Mutex
	view   *catalog.View         // nil until loaded
	search *manifest.SearchIndex // the view's, built on its first search
	web    *webcatalog.Index     // the view's for the web catalog, built on first use

	visible *keptOnce[string, bool] // AnyVisible, by class over every skill

	renders       *boundedLRU[renderKey, indexRender]
	nativeRenders *keptOnce[nativeKey, nativeRender]
	stored        *keptOnce[string, storedBody]

	pageSets *keptOnce[pageKey, map[string]bool]
}

// View returns the revision's entries, reading them on first use. A
// failure is not kept: the next call reads again.
func (s *snapshot) View(ctx context.Context) (*catalog.View, error) {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	if s.view != nil {
		return s.view, nil
	}
	// Detached from this request's cancellation: others wait for it.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reloadTimeout)
	defer cancel()
	v, err := s.head.View(rctx, s.store)
	if err != nil {
		return nil, err
	}
	s.view, s.search, s.web = v, manifest.NewSearchIndex(v), webcatalog.NewIndex(v)
	return v, nil
}

// webIndex is the web catalog's index of the view View returned.
func (s *snapshot) webIndex() *webcatalog.Index {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	return s.web
}

// searchIndex is the search index of the view View returned.
func (s *snapshot) searchIndex() *manifest.SearchIndex {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	return s.search
}

// anyVisible is View.AnyVisible, computed once per class.
func (s *snapshot) anyVisible(v *catalog.View, c audience.Caller) bool {
	class := v.Class(catalog.ScopeAll, c)
	return s.visible.get(class.Key(), func() bool { return v.AnyVisible(class.Caller()) })
}

type renderKey struct {
	listing string
	class   string // audience.Class.Key
	origin  string
}

// indexRender is an RFC index or listing as snapshot.index returns it.
type indexRender struct {
	doc   *feeddoc.Doc
	found bool
}

// bytes is what a kept render is counted as: its body, and a little for
// the rest (so that many tiny documents are bounded too).
func (r indexRender) bytes() int64 {
	const overhead = 512
	if r.doc == nil {
		return overhead
	}
	return int64(len(r.doc.Body)) + overhead
}

func newSnapshot(h *catalog.Head, st store.Store) *snapshot {
	return &snapshot{
		head:          h,
		store:         st,
		renders:       newBoundedLRU[renderKey](maxRenders, maxRenderBytes, indexRender.bytes),
		nativeRenders: newKeptOnce[nativeKey, nativeRender](maxNativeRenders),
		stored:        newKeptOnce[string, storedBody](maxStored),
		visible:       newKeptOnce[string, bool](maxClasses),
		pageSets:      newKeptOnce[pageKey, map[string]bool](2 * maxClasses),
	}
}

// keptOnce computes a value once per key and keeps it, for at most max
// keys: past the bound a key's value is computed on every call and not
// kept, since the keys callers can name are unbounded.
type keptOnce[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	slots map[K]*onceSlot[V]
}

type onceSlot[V any] struct {
	once sync.Once
	v    V
}

func newKeptOnce[K comparable, V any](max int) *keptOnce[K, V] {
	return &keptOnce[K, V]{max: max, slots: map[K]*onceSlot[V]{}}
}

// get returns key's value, computing it with compute on the first call for
// a kept key (concurrent first calls wait for that one computation).
func (m *keptOnce[K, V]) get(key K, compute func() V) V {
	m.mu.Lock()
	slot, ok := m.slots[key]
	if !ok && len(m.slots) < m.max {
		slot = &onceSlot[V]{}
		m.slots[key] = slot
	}
	m.mu.Unlock()
	if slot == nil {
		return compute()
	}
	slot.once.Do(func() { slot.v = compute() })
	return slot.v
}

// forget drops key, so the next get computes it again: for a value that
// says only that computing it failed this time.
func (m *keptOnce[K, V]) forget(key K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.slots, key)
}

// size is how many keys are kept.
func (m *keptOnce[K, V]) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.slots)
}

// index returns the rendered RFC index (listing "") or a listing's; found
// is false for a listing the caller cannot see or that does not exist.
func (s *snapshot) index(v *catalog.View, listing string, c audience.Caller, base *url.URL) (doc *feeddoc.Doc, found bool) {
	scope := catalog.ScopeSkills
	if listing != "" {
		scope = catalog.ListingScope(listing)
	}
	class := v.Class(scope, c)
	render := func() (*feeddoc.Doc, bool) {
		if listing == "" {
			return feeddoc.Render(discovery.TopLevel(v, class.Caller(), base), feeddoc.RequestLevel), true
		}
		idx, ok := discovery.Listing(v, listing, class.Caller(), base)
		if !ok {
			return nil, false
		}
		return feeddoc.Render(idx, feeddoc.RequestLevel), true
	}
	// Only existing documents are cached: unknown listing names are
	// unbounded, and answering them costs one map lookup anyway.
	if listing != "" {
		if _, ok := v.Listing(listing, c); !ok {
			return nil, false
		}
	}
	key := renderKey{listing: listing, class: class.Key(), origin: discovery.Origin(base)}
	r := s.renders.get(key, func() indexRender {
		doc, found := render()
		return indexRender{doc, found}
	})
	return r.doc, r.found
}
