package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestHealthz: the health check is a row of the URL table, answers 503
// while the feeds would (no catalog yet) and 200 with the version once
// they can be answered, never cached, the same with or without a key and
// without a word of what is published; an invalid key is 401 there too.
func TestHealthz(t *testing.T) {
	if m := routes.Lookup(routes.Healthz); m.Surface != routes.SurfaceHealth {
		t.Fatalf("%s is answered by surface %v", routes.Healthz, m.Surface)
	}
	st := store.NewMemory()
	h := newHarness(t, st, func(c *Config) { c.Version = "v1.2.3" })
	if w := h.do(http.MethodGet, routes.Healthz); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("before any catalog: %d %s", w.Code, w.Body)
	}
	b := newBucket(t, st)
	b.skill("hidden", "", catalog.Authenticated, artifact.FormatMarkdown, skillMD("hidden"))
	b.publish()
	h = newHarness(t, st, func(c *Config) { c.Version = "v1.2.3" })
	for _, auth := range [][]string{nil, {bearer(goodKey)}} {
		w := h.do(http.MethodGet, routes.Healthz, auth...)
		if w.Code != http.StatusOK || w.Body.String() != `{"status":"ok","version":"v1.2.3"}`+"\n" ||
			w.Header().Get("Cache-Control") != ccNoStore || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("GET %s (key %v): %d %q, Cache-Control %q", routes.Healthz, auth != nil, w.Code, w.Body, w.Header().Get("Cache-Control"))
		}
		if strings.Contains(w.Body.String(), "hidden") {
			t.Errorf("the health check names a skill: %s", w.Body)
		}
	}
	if w := h.do(http.MethodHead, routes.Healthz); w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Errorf("HEAD: %d, %d bytes", w.Code, w.Body.Len())
	}
	if w := h.do(http.MethodPost, routes.Healthz); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}
	if w := h.do(http.MethodGet, routes.Healthz, bearer("wrong")); w.Code != http.StatusUnauthorized {
		t.Errorf("an invalid key: %d", w.Code)
	}
}
