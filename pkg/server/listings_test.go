package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// listingsBucket is the standard catalog plus a listing large enough for
// its index to be gzip-encoded.
func listingsBucket(t testing.TB, st store.Store) {
	b := standardBucket(t, st)
	b.listing("big")
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("big-%02d", i)
		b.skill(name, "big", catalog.Public, artifact.FormatMarkdown, skillMD(name))
	}
	b.publish()
}

// TestListingAtItsScope: a listing's index is also served at
// /listings/<listing>/.well-known/agent-skills/index.json, the URL a client
// that takes an origin plus a path prefix builds (skills add
// <origin>/listings/<listing>). It checks the new path answers what a
// client needs, then that every answer there, whatever the request, equals
// the seed-style path's: entries, visibility (nothing visible is a 404 like
// an unknown listing's), ETag and 304, Cache-Control, Vary, CORS, gzip,
// HEAD, 405 with Allow, the preflight, the 401 of a bad key.
func TestListingAtItsScope(t *testing.T) {
	st := store.NewMemory()
	listingsBucket(t, st)
	h := newHarness(t, st)

	scoped := routes.ListingScopedIndex("partner-a")
	if scoped != "/listings/partner-a/.well-known/agent-skills/index.json" {
		t.Fatalf("ListingScopedIndex = %q", scoped)
	}
	w := h.do(http.MethodGet, scoped)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %s", scoped, w.Code, w.Body)
	}
	idx := decodeIndex(t, w.Body.Bytes())
	if got, want := indexNames(idx), []string{"deploy-via-pr", "partner-only"}; !reflect.DeepEqual(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
	for _, s := range idx.Skills {
		// The artifacts keep their URLs: nothing moves under /listings/.
		if s.Name == "partner-only" && s.URL != "https://skills.example.com/.well-known/agent-skills/partner-a/skills/partner-only.md" {
			t.Errorf("partner-only url %q", s.URL)
		}
	}
	etag := w.Header().Get("ETag")
	if etag == "" || w.Header().Get("Cache-Control") != ccPublic || w.Header().Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(w.Header().Get("Vary"), "Authorization") {
		t.Errorf("headers %v", w.Header())
	}
	if w := h.do(http.MethodGet, scoped, "If-None-Match: "+etag); w.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", w.Code)
	}
	if w := h.do(http.MethodPost, scoped); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != allowRead {
		t.Errorf("POST: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
	for _, p := range []string{"/listings/partner-a/skills/partner-only.md", "/listings/partner-a/.well-known/agent-skills/skills/partner-only.md"} {
		if w := h.do(http.MethodGet, p); w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404 (artifacts are served at their own URLs only)", p, w.Code)
		}
	}

	bigETag := h.do(http.MethodGet, routes.ListingIndex("big")).Header().Get("ETag")
	variants := []struct {
		name    string
		method  string
		headers []string
	}{
		{"GET", http.MethodGet, nil},
		{"GET, gzip", http.MethodGet, []string{"Accept-Encoding: gzip"}},
		{"GET with a key", http.MethodGet, []string{bearer(goodKey)}},
		{"GET with a key, gzip", http.MethodGet, []string{bearer(goodKey), "Accept-Encoding: gzip"}},
		{"HEAD", http.MethodHead, nil},
		{"HEAD, gzip", http.MethodHead, []string{"Accept-Encoding: gzip"}},
		{"If-None-Match", http.MethodGet, []string{"If-None-Match: " + etag}},
		{"If-None-Match of big", http.MethodGet, []string{"If-None-Match: " + bigETag}},
		{"POST", http.MethodPost, nil},
		{"DELETE", http.MethodDelete, nil},
		{"OPTIONS", http.MethodOptions, []string{"Origin: https://app.example", "Access-Control-Request-Method: GET"}},
		{"a bad key", http.MethodGet, []string{bearer("sk-not-a-key")}},
	}
	for _, listing := range []string{"partner-a", "big", "hidden", "nope"} {
		for _, v := range variants {
			seed := h.do(v.method, routes.ListingIndex(listing), v.headers...)
			at := h.do(v.method, routes.ListingScopedIndex(listing), v.headers...)
			if d := answerDiff(seed, at); d != "" {
				t.Errorf("%s, %s: the two paths answer differently: %s", listing, v.name, d)
			}
		}
	}
	if w := h.do(http.MethodGet, routes.ListingScopedIndex("big"), "Accept-Encoding: gzip"); w.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("big listing not gzip-encoded: the comparison does not cover gzip")
	}
	// Nothing visible anonymously is indistinguishable from unknown.
	hidden := h.do(http.MethodGet, routes.ListingScopedIndex("hidden"))
	unknown := h.do(http.MethodGet, routes.ListingScopedIndex("nope"))
	if hidden.Code != http.StatusNotFound || answerDiff(hidden, unknown) != "" {
		t.Errorf("hidden listing: %d %s; unknown: %d %s", hidden.Code, hidden.Body, unknown.Code, unknown.Body)
	}
	if w := h.do(http.MethodGet, routes.ListingScopedIndex("hidden"), bearer(goodKey)); w.Code != http.StatusOK ||
		!reflect.DeepEqual(indexNames(decodeIndex(t, w.Body.Bytes())), []string{"hidden-only"}) {
		t.Errorf("hidden listing with a key: %d %s", w.Code, w.Body)
	}
}

// answerDiff describes how two answers differ, "" when they do not: the
// status, every header but the request id, and the body.
func answerDiff(a, b *httptest.ResponseRecorder) string {
	if a.Code != b.Code {
		return fmt.Sprintf("status %d vs %d", a.Code, b.Code)
	}
	ha, hb := a.Header().Clone(), b.Header().Clone()
	ha.Del("X-Request-Id")
	hb.Del("X-Request-Id")
	if !reflect.DeepEqual(ha, hb) {
		return fmt.Sprintf("headers %v vs %v", ha, hb)
	}
	if a.Body.String() != b.Body.String() {
		return fmt.Sprintf("body %.200q vs %.200q", a.Body, b.Body)
	}
	return ""
}
