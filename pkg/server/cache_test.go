package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// countingStore counts catalog reads (of the head: a revalidation reads the
// head, and the entries only when it changed), can fail them, and can hold
// them.
type countingStore struct {
	store.Store
	gets        atomic.Int64
	conditional atomic.Int64
	fail        atomic.Pointer[error]
	hold        chan struct{} // when set, catalog Gets wait for it to close
	entered     chan struct{} // receives once per held Get
}

func (c *countingStore) Get(ctx context.Context, key string, opts store.GetOptions) (*store.Object, error) {
	if key == catalog.Key && opts.Offset == 0 {
		c.gets.Add(1)
		if opts.IfNoneMatch != "" {
			c.conditional.Add(1)
		}
		if c.hold != nil {
			c.entered <- struct{}{}
			<-c.hold
		}
		if err := c.fail.Load(); err != nil {
			return nil, *err
		}
	}
	return c.Store.Get(ctx, key, opts)
}

func (c *countingStore) failWith(err error) {
	if err == nil {
		c.fail.Store(nil)
		return
	}
	c.fail.Store(&err)
}

func TestUnreadableCatalogIsNeverEmpty(t *testing.T) {
	routes := []struct{ method, path string }{
		{http.MethodGet, "/.well-known/agent-skills/index.json"},
		{http.MethodGet, "/.well-known/agent-skills/partner-a/index.json"},
		{http.MethodGet, "/skills/deploy-via-pr.md"},
		{http.MethodHead, "/.well-known/agent-skills/index.json"},
		{http.MethodGet, "/manifest.json"},
		{http.MethodGet, "/skills/v1/index.json"},
		{http.MethodGet, "/skills/v1/pages/all.json"},
		{http.MethodGet, "/subagents/v1/index.json"},
		{http.MethodGet, "/skills/v1/deploy-via-pr/index.json"},
		{http.MethodGet, "/skills/v1/deploy-via-pr/versions/1.0.0.json"},
		{http.MethodGet, "/api/v1/skills"},
		{http.MethodGet, "/api/v1/subagents?q=review"},
		{http.MethodGet, "/api/v1/skills/deploy-via-pr/latest"},
		{http.MethodGet, "/api/v1/skills/deploy-via-pr/1.0.0/SKILL.md"},
		{http.MethodHead, "/subagents/v1/pages/all.json"},
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, st store.Store) store.Store
	}{
		{"missing", func(*testing.T, store.Store) store.Store { return store.NewMemory() }},
		{"corrupt", func(t *testing.T, st store.Store) store.Store {
			if _, err := st.Put(context.Background(), catalog.Key, []byte(`{"schema":1,"skills":`), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"newer schema", func(t *testing.T, st store.Store) store.Store {
			if _, err := st.Put(context.Background(), catalog.Key, []byte(`{"schema":99,"skills":{}}`), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"store error", func(_ *testing.T, st store.Store) store.Store {
			c := &countingStore{Store: st}
			c.failWith(errors.New("AccessDenied"))
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := store.NewMemory()
			standardBucket(t, mem)
			h := newHarness(t, tc.setup(t, mem))
			for _, r := range routes {
				w := h.do(r.method, r.path)
				if w.Code != http.StatusServiceUnavailable {
					t.Errorf("%s %s: status %d, want 503", r.method, r.path, w.Code)
				}
				if r.method == http.MethodGet && errorCode(t, w) != codeUnavailable {
					t.Errorf("%s: code", r.path)
				}
			}
			if w := h.do(http.MethodPost, "/mcp", mcpHeaders...); w.Code != http.StatusServiceUnavailable {
				t.Errorf("mcp: status %d", w.Code)
			}
			for _, p := range []string{"/api/v1/skills/check-updates", "/api/v1/subagents/check-updates"} {
				r := httptest.NewRequest(http.MethodPost, p, strings.NewReader(`[{"name":"deploy-via-pr","version":"1.0.0"}]`))
				r.Header.Set("Content-Type", "application/json")
				if w := h.serve(r); w.Code != http.StatusServiceUnavailable || errorCode(t, w) != codeUnavailable {
					t.Errorf("POST %s: status %d %s", p, w.Code, w.Body)
				}
			}
			if !strings.Contains(h.logs.String(), "catalog unavailable") {
				t.Error("the failure is not logged")
			}
		})
	}
}

func TestRevalidation(t *testing.T) {
	mem := store.NewMemory()
	b := standardBucket(t, mem)
	cs := &countingStore{Store: mem}
	h := newHarness(t, cs)
	const index = "/.well-known/agent-skills/index.json"
	names := func() []string { return indexNames(decodeIndex(t, h.do(http.MethodGet, index).Body.Bytes())) }

	before := names()
	for i := 0; i < 20; i++ {
		h.do(http.MethodGet, index)
		h.do(http.MethodGet, "/skills/deploy-via-pr.md")
	}
	if n := cs.gets.Load(); n != 1 {
		t.Fatalf("%d catalog reads for requests within one interval, want 1", n)
	}
	h.clock.Advance(DefaultRevalidateEvery - time.Millisecond)
	h.do(http.MethodGet, index)
	if n := cs.gets.Load(); n != 1 {
		t.Fatalf("%d catalog reads before the interval ended, want 1", n)
	}
	h.clock.Advance(time.Millisecond)
	h.do(http.MethodGet, index)
	if n, c := cs.gets.Load(), cs.conditional.Load(); n != 2 || c != 1 {
		t.Fatalf("reads %d (conditional %d) after the interval, want 2 (1)", n, c)
	}

	// Publish; visible at the next revalidation, within the 5 s promise.
	b.skill("aaa-new", "", catalog.Public, artifact.FormatMarkdown, skillMD("aaa-new"))
	b.publish()
	if got := names(); len(got) != len(before) {
		t.Errorf("visible before the interval: %v", got)
	}
	h.clock.Advance(DefaultRevalidateEvery)
	if got := names(); len(got) != len(before)+1 || got[0] != "aaa-new" {
		t.Errorf("after the interval: %v", got)
	}
	if w := h.do(http.MethodGet, "/skills/aaa-new.md"); w.Code != http.StatusOK {
		t.Errorf("new artifact: %d", w.Code)
	}

	// Withdrawal takes effect the same way.
	b.cat.Skills["aaa-new"].Withdrawn = true
	b.publish()
	h.clock.Advance(DefaultRevalidateEvery)
	if w := h.do(http.MethodGet, "/skills/aaa-new.md"); w.Code != http.StatusNotFound {
		t.Errorf("withdrawn artifact: %d", w.Code)
	}
}

func TestConcurrentRequestsShareOneReload(t *testing.T) {
	mem := store.NewMemory()
	standardBucket(t, mem)
	cs := &countingStore{Store: mem, hold: make(chan struct{}), entered: make(chan struct{}, 100)}
	h := newHarness(t, cs)

	const n = 24
	var started, done sync.WaitGroup
	codes := make([]int, n)
	for i := 0; i < n; i++ {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			codes[i] = h.do(http.MethodGet, "/.well-known/agent-skills/index.json").Code
		}()
	}
	started.Wait()
	<-cs.entered // the one reload is in flight; release it
	close(cs.hold)
	done.Wait()
	if got := cs.gets.Load(); got != 1 {
		t.Errorf("%d catalog reads for %d concurrent requests, want 1", got, n)
	}
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: %d", i, c)
		}
	}
}

func TestStaleCatalogPolicy(t *testing.T) {
	mem := store.NewMemory()
	standardBucket(t, mem)
	cs := &countingStore{Store: mem}
	h := newHarness(t, cs, func(c *Config) { c.MaxStale = 30 * time.Second })
	const index = "/.well-known/agent-skills/index.json"
	if w := h.do(http.MethodGet, index); w.Code != http.StatusOK {
		t.Fatalf("first: %d", w.Code)
	}

	cs.failWith(errors.New("SlowDown"))
	steps := []struct {
		advance time.Duration
		status  int
		what    string
	}{
		{time.Second, 200, "a failed revalidation serves the last good catalog"},
		{10 * time.Second, 200, "still within MaxStale"},
		{19 * time.Second, 200, "exactly at MaxStale"},
		{time.Second, 503, "beyond MaxStale the catalog is unavailable"},
		{0, 503, "and stays so within the interval without another read"},
	}
	for _, s := range steps {
		h.clock.Advance(s.advance)
		if w := h.do(http.MethodGet, index); w.Code != s.status {
			t.Fatalf("%s: status %d, want %d", s.what, w.Code, s.status)
		}
	}
	if n := cs.gets.Load(); n != 5 {
		t.Errorf("%d catalog reads, want 5 (one per interval)", n)
	}
	if !strings.Contains(h.logs.String(), "serving the last good catalog") {
		t.Error("serving stale is not logged")
	}

	cs.failWith(nil)
	h.clock.Advance(DefaultRevalidateEvery)
	if w := h.do(http.MethodGet, index); w.Code != http.StatusOK {
		t.Errorf("after recovery: %d", w.Code)
	}

	t.Run("negative MaxStale never serves stale", func(t *testing.T) {
		cs := &countingStore{Store: mem}
		h := newHarness(t, cs, func(c *Config) { c.MaxStale = -1 })
		h.do(http.MethodGet, index)
		cs.failWith(errors.New("SlowDown"))
		h.clock.Advance(DefaultRevalidateEvery)
		if w := h.do(http.MethodGet, index); w.Code != http.StatusServiceUnavailable {
			t.Errorf("status %d", w.Code)
		}
	})
}
