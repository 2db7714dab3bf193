package manifest

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/routes"
)

// TestLinksAreNativeRoutes: every href and every url on this origin that a
// native document holds is a route the URL table gives the native feed, so
// no link of the feed can land where a config entry may be served, and
// Resolve answers each one with what it points at.
func TestLinksAreNativeRoutes(t *testing.T) {
	fx := newFixture(t)
	links := 0
	for _, tc := range goldenCases {
		f := fx.feed(tc.auth)
		f.PageSize = tc.pageSize
		raw, err := json.Marshal(get(t, f, tc.path).Document)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		walkLinks(doc, func(key, link string) {
			u, err := url.Parse(link)
			if err != nil {
				t.Errorf("%s: %s %q: %v", tc.path, key, link, err)
				return
			}
			if u.IsAbs() && u.Host != base.Host {
				return // an external entry's url, emitted verbatim
			}
			links++
			if m := routes.Lookup(u.Path); m.Surface != routes.SurfaceNative || m.Post {
				t.Errorf("%s: %s %q is answered by route %q, not the native feed", tc.path, key, link, m.Pattern)
			}
			if res := get(t, fx.feed(true), u.Path); res.Outcome == NotFound {
				t.Errorf("%s: %s %q is not found", tc.path, key, link)
			}
		})
	}
	if links < 50 {
		t.Fatalf("only %d links checked", links)
	}
}

// walkLinks calls fn for every string value under a key "href" or "url".
func walkLinks(v any, fn func(key, link string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "href" || k == "url") {
				fn(k, s)
				continue
			}
			walkLinks(x, fn)
		}
	case []any:
		for _, x := range v {
			walkLinks(x, fn)
		}
	}
}
