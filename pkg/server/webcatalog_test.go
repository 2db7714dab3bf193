package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/webcatalog"
	"github.com/skilldrop/skilldrop/pkg/websession"
)

var testSecret = []byte("web-catalog-test-secret-0123456789abcdef")

// keyStore is a key store whose keys a test can change (revocation).
type keyStore struct {
	mu   sync.Mutex
	keys []string
	err  error
}

func (k *keyStore) Hashes(context.Context) (apikey.Set, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return apikey.Set{}, k.err
	}
	var hs []string
	for _, key := range k.keys {
		hs = append(hs, apikey.Hash(key))
	}
	return apikey.ParseSet(strings.Join(hs, ","))
}

func (k *keyStore) set(keys ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys = keys
}

// webHarness serves the standard bucket, its documents' files recorded, with
// sign-in on and a key store the test controls.
func webHarness(t *testing.T, mut ...func(*Config)) (*harness, *keyStore) {
	t.Helper()
	st := store.NewMemory()
	b := standardBucket(t, st)
	withFiles(b)
	b.publish()
	keys := &keyStore{keys: []string{goodKey, otherKey}}
	h := newHarness(t, st, append([]func(*Config){func(c *Config) {
		c.Keys, c.SessionSecret = keys, testSecret
	}}, mut...)...)
	return h, keys
}

// withFiles records each markdown version's one file, as the indexer does.
func withFiles(b *bucket) {
	for _, m := range []map[string]*catalog.Entry{b.cat.Skills, b.cat.Subagents} {
		for _, e := range m {
			for i := range e.Versions {
				v := &e.Versions[i]
				if v.Format == artifact.FormatMarkdown && e.ExternalURL == "" {
					path := artifact.SkillFile
					if e.Kind == catalog.KindSubagent {
						path = artifact.AgentFile
					}
					v.Files = []catalog.File{{Path: path, Digest: v.Digest, Size: v.Size, MediaType: "text/markdown"}}
				}
			}
		}
	}
}

const origin = "Origin: https://skills.example.com"

// signIn posts key to the sign-in form and returns the session cookie.
func signIn(t *testing.T, h *harness, key string) *http.Cookie {
	t.Helper()
	w := h.postForm("/catalog/sign-in", "key="+url.QueryEscape(key), origin)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/catalog/" {
		t.Fatalf("sign-in: %d %q, location %q", w.Code, w.Body.String(), w.Header().Get("Location"))
	}
	for _, c := range w.Result().Cookies() {
		if c.Name == websession.SecureCookieName {
			return c
		}
	}
	t.Fatalf("sign-in set no session cookie: %q", w.Header().Values("Set-Cookie"))
	return nil
}

func (h *harness) postForm(target, form string, headers ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return h.serve(r, headers...)
}

func cookieHeader(c *http.Cookie) string { return "Cookie: " + c.Name + "=" + c.Value }

var entryNames = regexp.MustCompile(`<a class="name" href="[^"]*">([^<]*)</a>`)

// listed returns the names a list page shows.
func listed(t *testing.T, w *httptest.ResponseRecorder) []string {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("list: %d %s", w.Code, w.Body.String())
	}
	var out []string
	for _, m := range entryNames.FindAllStringSubmatch(w.Body.String(), -1) {
		out = append(out, m[1])
	}
	return out
}

func TestCatalogShowsWhatTheFeedsShowToTheSameCaller(t *testing.T) {
	h, _ := webHarness(t)
	cookie := signIn(t, h, goodKey)
	for _, tc := range []struct {
		name   string
		header []string
		want   []string
	}{
		{"anonymous", nil, []string{"bundle-tgz", "bundle-zip", "deploy-via-pr", "elsewhere", "partner-only", "reviewer"}},
		{"bearer key", []string{bearer(goodKey)}, []string{"bundle-tgz", "bundle-zip", "deploy-via-pr", "elsewhere",
			"hidden-only", "partner-only", "partner-secret", "reviewer", "secret-rotation"}},
		{"session", []string{cookieHeader(cookie)}, []string{"bundle-tgz", "bundle-zip", "deploy-via-pr", "elsewhere",
			"hidden-only", "partner-only", "partner-secret", "reviewer", "secret-rotation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := listed(t, h.do(http.MethodGet, "/catalog/", tc.header...))
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("listed %q; want %q", got, tc.want)
			}
			// Entry pages: seen exactly when listed; hidden is answered as missing.
			for _, p := range []struct{ path, name string }{
				{"/catalog/skills/secret-rotation", "secret-rotation"},
				{"/catalog/listings/partner-a/skills/partner-secret", "partner-secret"},
				{"/catalog/listings/hidden/skills/hidden-only", "hidden-only"},
				{"/catalog/skills/deploy-via-pr", "deploy-via-pr"},
				{"/catalog/subagents/reviewer", "reviewer"},
			} {
				w := h.do(http.MethodGet, p.path, tc.header...)
				visible := strings.Contains(strings.Join(tc.want, " "), p.name)
				if (w.Code == http.StatusOK) != visible {
					t.Errorf("%s: %d; want visible %v", p.path, w.Code, visible)
				}
			}
			hiddenListing := h.do(http.MethodGet, "/catalog/listings/hidden/", tc.header...)
			if (hiddenListing.Code == http.StatusOK) != (tc.header != nil) {
				t.Errorf("the listing of hidden skills: %d", hiddenListing.Code)
			}
		})
	}
	// Hidden and missing read alike, byte for byte but the request id.
	hidden := h.do(http.MethodGet, "/catalog/skills/secret-rotation")
	missing := h.do(http.MethodGet, "/catalog/skills/no-such-skill")
	if hidden.Code != http.StatusNotFound || hidden.Body.String() != missing.Body.String() {
		t.Errorf("hidden %d and missing %d differ", hidden.Code, missing.Code)
	}
	for _, p := range []string{"/catalog/listings/hidden/", "/catalog/?listing=hidden", "/catalog/listings/nope/"} {
		if w := h.do(http.MethodGet, p); w.Code != http.StatusNotFound || w.Body.String() != missing.Body.String() {
			t.Errorf("%s: %d; want the same 404", p, w.Code)
		}
	}
}

func TestSessionCookieIsHonouredOnCatalogPagesOnly(t *testing.T) {
	h, _ := webHarness(t)
	cookie := signIn(t, h, goodKey)
	c := cookieHeader(cookie)
	// The feeds and MCP answer a cookie-only request as anonymous.
	if w := h.do(http.MethodGet, "/.well-known/agent-skills/index.json", c); strings.Contains(w.Body.String(), "secret-rotation") {
		t.Error("the RFC index honoured the session cookie")
	}
	if w := h.do(http.MethodGet, "/api/v1/skills/secret-rotation", c); w.Code != http.StatusNotFound {
		t.Errorf("the native API honoured the session cookie: %d", w.Code)
	}
	if w := h.do(http.MethodGet, "/skills/secret-rotation/SKILL.md", c); w.Code != http.StatusNotFound {
		t.Errorf("the artifact honoured the session cookie: %d", w.Code)
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if w := h.serve(r, c); w.Code != http.StatusOK || strings.Contains(w.Body.String(), "secret-rotation") {
		t.Errorf("MCP: %d, honoured the session cookie: %v", w.Code, strings.Contains(w.Body.String(), "secret-rotation"))
	}
	// The page does, and names the key by its id only.
	w := h.do(http.MethodGet, "/catalog/skills/secret-rotation", c)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), apikey.KeyID(goodKey)) || strings.Contains(w.Body.String(), goodKey) {
		t.Errorf("page with session: %d", w.Code)
	}
	if got := w.Header().Get("Cache-Control"); got != ccNoStore {
		t.Errorf("signed-in page Cache-Control %q; want no-store", got)
	}
	if !strings.Contains(h.logs.String(), `"session":true`) || strings.Contains(h.logs.String(), goodKey) {
		t.Error("the access log does not mark the session, or names the key")
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	h, _ := webHarness(t)
	w := h.postForm("/catalog/sign-in", "key="+goodKey, origin)
	line := w.Header().Get("Set-Cookie")
	for _, want := range []string{websession.SecureCookieName + "=", "HttpOnly", "Secure", "SameSite=Strict", "Path=/", "Max-Age=43200"} {
		if !strings.Contains(line, want) {
			t.Errorf("Set-Cookie %q lacks %s", line, want)
		}
	}
	if strings.Contains(line, goodKey) || strings.Contains(line, apikey.Hash(goodKey)) {
		t.Errorf("the cookie carries the key or its hash: %q", line)
	}
	// On a plain-HTTP loopback origin the cookie cannot be Secure.
	local, _ := webHarness(t, func(c *Config) { c.PublicBaseURL, c.Local = "", true })
	w = local.postForm("/catalog/sign-in", "key="+goodKey, "Host: 127.0.0.1:8080", "Origin: http://127.0.0.1:8080")
	line = w.Header().Get("Set-Cookie")
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(line, websession.LoopbackCookieName+"-8080=") || strings.Contains(line, "Secure") {
		t.Errorf("loopback sign-in: %d %q", w.Code, line)
	}
}

// TestTwoLoopbackServersKeepTheirOwnSessions: a browser scopes cookies by
// host, not port, so two local servers on 127.0.0.1 (each with its own
// secret) share a jar; the cookie names its port, and signing in to one
// leaves the other signed in.
func TestTwoLoopbackServersKeepTheirOwnSessions(t *testing.T) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	type server struct {
		h    *harness
		host string
	}
	var servers []server
	for i, port := range []string{"8080", "8081"} {
		secret := append([]byte(nil), testSecret...)
		secret[0] ^= byte(i + 1)
		h, _ := webHarness(t, func(c *Config) { c.PublicBaseURL, c.Local, c.SessionSecret = "", true, secret })
		servers = append(servers, server{h, "127.0.0.1:" + port})
	}
	page := func(s server) string {
		r := httptest.NewRequest(http.MethodGet, "/catalog/", nil)
		u := &url.URL{Scheme: "http", Host: s.host, Path: "/catalog/"}
		var cookies []string
		for _, c := range jar.Cookies(u) {
			cookies = append(cookies, c.Name+"="+c.Value)
		}
		return s.h.serve(r, "Host: "+s.host, "Cookie: "+strings.Join(cookies, "; ")).Body.String()
	}
	for _, s := range servers {
		w := s.h.postForm("/catalog/sign-in", "key="+goodKey, "Host: "+s.host, "Origin: http://"+s.host)
		jar.SetCookies(&url.URL{Scheme: "http", Host: s.host, Path: "/"}, w.Result().Cookies())
	}
	for _, s := range servers {
		if p := page(s); !strings.Contains(p, apikey.KeyID(goodKey)) || strings.Contains(p, "Your session has ended") {
			t.Errorf("%s: signed out by the other server's sign-in", s.host)
		}
	}
}

// TestSignInOverPlainHTTPOffLoopbackSaysItCannotWork: there the cookie
// must be Secure and a browser drops it, so rather than a redirect that
// leaves the browser signed out, the sign-in page says why and sets no
// cookie; on https and on loopback the form is there.
func TestSignInOverPlainHTTPOffLoopbackSaysItCannotWork(t *testing.T) {
	local, _ := webHarness(t, func(c *Config) { c.PublicBaseURL, c.Local = "", true })
	const why = "Sign-in needs HTTPS: this catalog was reached over plain HTTP at skills.internal:8080"
	w := local.postForm("/catalog/sign-in", "key="+goodKey, "Host: skills.internal:8080", "Origin: http://skills.internal:8080")
	if line := w.Header().Get("Set-Cookie"); w.Code != http.StatusForbidden || line != "" || !strings.Contains(w.Body.String(), why) {
		t.Errorf("plain HTTP off loopback: %d, Set-Cookie %q; want 403, no cookie, the reason", w.Code, line)
	}
	page := local.do(http.MethodGet, "/catalog/sign-in", "Host: skills.internal:8080")
	if !strings.Contains(page.Body.String(), why) || strings.Contains(page.Body.String(), `<form class="signin"`) {
		t.Errorf("the sign-in page over plain HTTP off loopback offers the form or says nothing: %s", page.Body)
	}
	for _, host := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080"} {
		if p := local.do(http.MethodGet, "/catalog/sign-in", "Host: "+host).Body.String(); strings.Contains(p, "Sign-in needs HTTPS") || !strings.Contains(p, `<form class="signin"`) {
			t.Errorf("%s: the sign-in form is missing", host)
		}
	}
	h, _ := webHarness(t)
	if p := h.do(http.MethodGet, "/catalog/sign-in").Body.String(); strings.Contains(p, "Sign-in needs HTTPS") || !strings.Contains(p, `<form class="signin"`) {
		t.Error("https: the sign-in form is missing")
	}
}

func TestSessionEndsWithRevocationExpiryAndSignOut(t *testing.T) {
	h, keys := webHarness(t)
	page := "/catalog/skills/secret-rotation"
	c := cookieHeader(signIn(t, h, goodKey))
	if w := h.do(http.MethodGet, page, c); w.Code != http.StatusOK {
		t.Fatalf("signed in: %d", w.Code)
	}
	keys.set(otherKey) // revoked
	w := h.do(http.MethodGet, page, c)
	if w.Code != http.StatusNotFound || !strings.Contains(w.Header().Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("after revocation: %d, Set-Cookie %q; want 404 and the cookie cleared", w.Code, w.Header().Get("Set-Cookie"))
	}
	keys.set(goodKey, otherKey)
	if w := h.do(http.MethodGet, page, c); w.Code != http.StatusOK {
		t.Errorf("key restored: %d", w.Code)
	}
	keys.err = apikey.ErrUnavailable
	if w := h.do(http.MethodGet, page, c); w.Code != http.StatusServiceUnavailable {
		t.Errorf("key store down: %d; want 503, never anonymous", w.Code)
	}
	keys.err = nil
	h.clock.Advance(websession.MaxAge)
	if w := h.do(http.MethodGet, page, c); w.Code != http.StatusNotFound {
		t.Errorf("after 12 h: %d", w.Code)
	}
	c = cookieHeader(signIn(t, h, goodKey))
	w = h.postForm("/catalog/sign-out", "", c, origin)
	if w.Code != http.StatusSeeOther || !strings.Contains(w.Header().Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("sign-out: %d %q", w.Code, w.Header().Get("Set-Cookie"))
	}
	if w := h.do(http.MethodGet, "/catalog/sign-out", c); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET sign-out: %d; want 405", w.Code)
	}
	// A forged cookie (another secret) is no session.
	other, _ := websession.NewSigner([]byte(strings.Repeat("z", 40)))
	v, _ := other.Issue(apikey.KeyID(goodKey), apikey.Hash(goodKey), h.clock.Now(), time.Hour)
	if w := h.do(http.MethodGet, page, "Cookie: "+websession.SecureCookieName+"="+v); w.Code != http.StatusNotFound {
		t.Errorf("forged cookie: %d", w.Code)
	}
	// Without a secret there is no sign-in, and a cookie means nothing.
	off, _ := webHarness(t, func(c *Config) { c.SessionSecret = nil })
	if w := off.postForm("/catalog/sign-in", "key="+goodKey, origin); w.Code != http.StatusForbidden || w.Header().Get("Set-Cookie") != "" {
		t.Errorf("sign-in without a secret: %d", w.Code)
	}
}

func TestSignInFormRefusesBadKeysAndCrossOriginPosts(t *testing.T) {
	h, _ := webHarness(t)
	for _, tc := range []struct {
		name, form string
		headers    []string
		want       int
	}{
		{"unknown key", "key=sk-nope", []string{origin}, http.StatusUnauthorized},
		{"empty key", "key=", []string{origin}, http.StatusUnauthorized},
		{"two keys", "key=" + goodKey + "&key=" + otherKey, []string{origin}, http.StatusBadRequest},
		{"no Origin", "key=" + goodKey, nil, http.StatusForbidden},
		{"other Origin", "key=" + goodKey, []string{"Origin: https://evil.example"}, http.StatusForbidden},
		{"null Origin", "key=" + goodKey, []string{"Origin: null"}, http.StatusForbidden},
		{"http Origin", "key=" + goodKey, []string{"Origin: http://skills.example.com"}, http.StatusForbidden},
		{"huge body", "key=" + strings.Repeat("a", 8<<10), []string{origin}, http.StatusRequestEntityTooLarge},
	} {
		w := h.postForm("/catalog/sign-in", tc.form, tc.headers...)
		if w.Code != tc.want || w.Header().Get("Set-Cookie") != "" {
			t.Errorf("%s: %d, Set-Cookie %q; want %d and none", tc.name, w.Code, w.Header().Get("Set-Cookie"), tc.want)
		}
	}
	if w := h.postForm("/catalog/sign-out", "", "Origin: https://evil.example"); w.Code != http.StatusForbidden {
		t.Errorf("cross-origin sign-out: %d", w.Code)
	}
	if w := h.postForm("/catalog/", "", origin); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST to a page: %d", w.Code)
	}
}

func TestEveryCatalogResponseCarriesTheSecurityHeaders(t *testing.T) {
	h, _ := webHarness(t)
	var asset string
	if m := regexp.MustCompile(`/catalog/assets/[^"]+\.js`).FindString(h.do(http.MethodGet, "/catalog/").Body.String()); m != "" {
		asset = m
	} else {
		t.Fatal("the page loads no script")
	}
	for _, p := range []string{"/catalog/", "/catalog/?kind=skill&q=bundle", "/catalog/skills/deploy-via-pr",
		"/catalog/subagents/reviewer", "/catalog/listings/partner-a/", "/catalog/sign-in", "/catalog/nope",
		"/catalog/?page=0", asset} {
		w := h.do(http.MethodGet, p)
		hd := w.Header()
		csp := hd.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %s", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q allows something unsafe", p, csp)
		}
		if hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: nosniff %q, X-Frame-Options %q", p, hd.Get("X-Content-Type-Options"), hd.Get("X-Frame-Options"))
		}
		if hd.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: a catalog response allows other origins", p)
		}
		body := w.Body.String()
		if p != asset && (strings.Contains(body, "<script>") || strings.Contains(body, " style=") || regexp.MustCompile(`(?i)\son[a-z]+=`).MatchString(body)) {
			t.Errorf("%s: inline script or style in the page", p)
		}
		if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).MatchString(strings.ReplaceAll(body, `href="https://skills.example.com/`, "")) {
			t.Errorf("%s: loads or links something from another origin", p)
		}
	}
	if w := h.do(http.MethodOptions, "/catalog/sign-in", "Origin: https://evil.example", "Access-Control-Request-Method: POST"); w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Error("the sign-in form answers a CORS preflight")
	}
}

func TestBrowsersAreSentToTheCatalogAndJSONClientsKeepTheRoot(t *testing.T) {
	h, _ := webHarness(t)
	before := h.do(http.MethodGet, "/")
	if before.Code != http.StatusNotFound {
		t.Fatalf("GET / without Accept: %d", before.Code)
	}
	for _, accept := range []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html", "application/xhtml+xml"} {
		w := h.do(http.MethodGet, "/", "Accept: "+accept)
		if w.Code != http.StatusFound || w.Header().Get("Location") != "/catalog/" || !strings.Contains(w.Header().Get("Vary"), "Accept") {
			t.Errorf("Accept %q: %d to %q", accept, w.Code, w.Header().Get("Location"))
		}
	}
	for _, accept := range []string{"", "application/json", "*/*", "text/html;q=0", "application/json, text/plain"} {
		w := h.do(http.MethodGet, "/", "Accept: "+accept)
		if w.Code != before.Code || w.Body.String() != before.Body.String() || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("Accept %q: %d %q; want today's JSON answer", accept, w.Code, w.Body.String())
		}
	}
	if w := h.do(http.MethodPost, "/", "Accept: text/html"); w.Code == http.StatusFound {
		t.Error("a POST to / was redirected")
	}
}

func TestCatalogPagesAndSearches(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	for i := range 60 {
		name := fmt.Sprintf("tool-%02d", i)
		b.skill(name, "", catalog.Public, artifact.FormatMarkdown, skillMD(name))
	}
	b.cat.Skills["tool-07"].Description = "Converts invoices into spreadsheets."
	b.publish()
	h := newHarness(t, st)
	first := listed(t, h.do(http.MethodGet, "/catalog/"))
	if len(first) != webcatalog.PageSize || first[0] != "tool-00" {
		t.Fatalf("page 1: %q", first)
	}
	w := h.do(http.MethodGet, "/catalog/?page=3")
	if got := listed(t, w); len(got) != 10 || got[0] != "tool-50" || strings.Contains(w.Body.String(), `rel="next"`) {
		t.Errorf("page 3: %q", got)
	}
	if !strings.Contains(h.do(http.MethodGet, "/catalog/?page=2").Body.String(), `href="/catalog/?page=3" rel="next"`) {
		t.Error("page 2 does not link page 3")
	}
	if got := listed(t, h.do(http.MethodGet, "/catalog/?q=invoice+spreadsheets")); len(got) != 1 || got[0] != "tool-07" {
		t.Errorf("search: %q", got)
	}
	if got := listed(t, h.do(http.MethodGet, "/catalog/?kind=subagent")); len(got) != 0 {
		t.Errorf("no sub-agents: %q", got)
	}
	for _, bad := range []string{"?page=0", "?page=x", "?page=02", "?kind=other", "?q=a&q=b", "?q=" + strings.Repeat("a", 300), "?listing=UPPER"} {
		if w := h.do(http.MethodGet, "/catalog/"+bad); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d; want 400", bad, w.Code)
		}
	}
}

func TestCatalogPageShowsTheVerifiedDocumentOrNothing(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	doc := []byte("---\nname: tampered\ndescription: d\n---\n# Heading\n\nBody <script>window.x=1</script> text.\n")
	e := b.skill("tampered", "", catalog.Public, artifact.FormatMarkdown, doc)
	withFiles(b)
	b.publish()
	h := newHarness(t, st)
	w := h.do(http.MethodGet, "/catalog/skills/tampered")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "<h1>Heading</h1>") || strings.Contains(w.Body.String(), "<script>window") {
		t.Fatalf("page: %d %s", w.Code, w.Body.String())
	}
	// A fresh server (no rendering kept) over a blob changed in storage.
	if _, err := st.Put(context.Background(), catalog.BlobKey(e.LatestVersion().Digest), bytes.Replace(doc, []byte("Body"), []byte("Evil"), 1), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, st)
	w = h.do(http.MethodGet, "/catalog/skills/tampered")
	if w.Code != http.StatusServiceUnavailable || strings.Contains(w.Body.String(), "Evil") {
		t.Errorf("tampered: %d", w.Code)
	}
	if h.metrics.Total(obs.DigestMismatch) == 0 || !strings.Contains(h.logs.String(), "agent_skill.digest_mismatch") {
		t.Error("no audit event or metric for the tampered document")
	}
}

// pageBudget is the issue's bound on a catalog page without images.
const pageBudget = 60 << 10

func TestPagesStayUnderTheirBudgetWhateverTheyShow(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	long := strings.Repeat("Describes a long thing in many words. ", 27)[:1024]
	for i := range 40 {
		name := fmt.Sprintf("long-%02d", i)
		e := b.skill(name, "", catalog.Public, artifact.FormatMarkdown, skillMD(name))
		e.Description = long
	}
	var body strings.Builder
	body.WriteString("---\nname: huge\ndescription: d\n---\n")
	for i := range 20000 {
		fmt.Fprintf(&body, "- item *%d* with [a link](https://example.com/%d) and `code`\n", i, i)
	}
	e := b.skill("huge", "", catalog.Public, artifact.FormatMarkdown, []byte(body.String()))
	for range 200 {
		e = b.skill("huge", "", catalog.Public, artifact.FormatMarkdown, []byte(body.String()+fmt.Sprint(len(e.Versions))))
	}
	withFiles(b)
	v := &e.Versions[len(e.Versions)-1]
	for i := range 1000 {
		v.Files = append(v.Files, catalog.File{Path: fmt.Sprintf("dir/file-%04d.txt", i), Digest: digest.Of([]byte{byte(i)}), Size: 1})
	}
	v.Bundle = &catalog.Bundle{BlobRef: catalog.BlobRef{Digest: digest.Of([]byte("bundle")), Size: 6}, Key: "k"}
	v.Scan = &scan.Result{Verdict: scan.Warn, Engine: "1"}
	for i := range 1000 {
		v.Scan.Findings = append(v.Scan.Findings, scan.Finding{Rule: "persistence.shell-rc", Severity: scan.SeverityMedium,
			File: fmt.Sprintf("dir/%s-%04d.sh", strings.Repeat("long", 100), i), Line: i + 1, Message: long + long})
		v.Scan.Allowed = append(v.Scan.Allowed, scan.Allowed{Rule: fmt.Sprintf("rule-%d", i), Reason: long})
	}
	b.publish()
	h := newHarness(t, st)
	for _, p := range []string{"/catalog/", "/catalog/skills/huge"} {
		w := h.do(http.MethodGet, p)
		t.Logf("%s: %d bytes", p, w.Body.Len())
		if w.Code != http.StatusOK || w.Body.Len() > pageBudget {
			t.Errorf("%s: %d, %d bytes; want at most %d", p, w.Code, w.Body.Len(), pageBudget)
		}
	}
	if w := h.do(http.MethodGet, "/catalog/skills/huge"); !strings.Contains(w.Body.String(), "download it") || !strings.Contains(w.Body.String(), "more files") ||
		!strings.Contains(w.Body.String(), "980 more findings") || !strings.Contains(w.Body.String(), "cosign verify-blob-attestation") {
		t.Error("the cut document, the file list or the findings do not say there is more, or the provenance is missing")
	}
}

// TestSkillPageWorstCaseStaysUnderTheBudgetOnTheWire fills every section
// of a page to what the validator lets an author write (frontmatter keys
// and values, file paths, findings) with text that compresses badly, and
// measures what a browser receives (gzip, as it asks).
func TestSkillPageWorstCaseStaysUnderTheBudgetOnTheWire(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	noise := func(n int) string {
		const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789&'-_.éß中"
		r := []rune(chars)
		var b strings.Builder
		for range n {
			b.WriteRune(r[rnd.IntN(len(r))])
		}
		return b.String()
	}
	st := store.NewMemory()
	b := newBucket(t, st)
	var body strings.Builder
	body.WriteString("---\nname: worst\ndescription: d\n---\n")
	for body.Len() < 200<<10 {
		fmt.Fprintf(&body, "- %s [%s](https://example.com/%s) `%s`\n", noise(40), noise(10), noise(20), noise(10))
	}
	var e *catalog.Entry
	for range 30 {
		e = b.skill("worst", "", catalog.Public, artifact.FormatMarkdown, []byte(body.String()+noise(8)))
	}
	withFiles(b)
	v := &e.Versions[len(e.Versions)-1]
	fm := map[string]string{"name": "worst", "description": noise(1024)}
	for range 60 {
		fm[noise(300)] = noise(2000)
	}
	v.Frontmatter, _ = json.Marshal(fm)
	for range 200 {
		v.Files = append(v.Files, catalog.File{Path: noise(2000), Digest: digest.Of([]byte(noise(8))), Size: 1 << 20})
	}
	v.Bundle = &catalog.Bundle{BlobRef: catalog.BlobRef{Digest: digest.Of([]byte("bundle")), Size: 6}, Key: "k"}
	v.Scan = &scan.Result{Verdict: scan.Warn, Engine: noise(100)}
	for range 200 {
		v.Scan.Findings = append(v.Scan.Findings, scan.Finding{Rule: noise(100), Severity: scan.SeverityMedium, File: noise(2000), Line: 99999, Message: noise(2000)})
		v.Scan.Allowed = append(v.Scan.Allowed, scan.Allowed{Rule: noise(100), Reason: noise(2000)})
	}
	b.publish()
	w := newHarness(t, st).do(http.MethodGet, "/catalog/skills/worst", "Accept-Encoding: gzip")
	t.Logf("%d bytes on the wire (%s)", w.Body.Len(), w.Header().Get("Content-Encoding"))
	if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != "gzip" || w.Body.Len() > pageBudget {
		t.Errorf("%d %q, %d bytes; want gzip, at most %d", w.Code, w.Header().Get("Content-Encoding"), w.Body.Len(), pageBudget)
	}
}

// TestInstallCommandsWorkForTheCallerTheyAreShownTo: the skills CLI sends
// no credentials, so a listing restricted to audiences and an authenticated
// skill are offered from a capability URL (README's Capability URLs), never
// from the origin's plain address, where the CLI would find nothing; the
// commands, given a key marked for path use, reach what the page shows.
func TestInstallCommandsWorkForTheCallerTheyAreShownTo(t *testing.T) {
	st := store.NewMemory()
	withFiles(standardBucket(t, st))
	keys, err := apikey.Parse(`{"keys":[{"id":"cli","sha256":"` + apikey.Hash(goodKey) + `","path":true}]}`)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, func(c *Config) { c.Keys = keys })
	const o = "https://skills.example.com"
	cli := regexp.MustCompile(`^npx skills add "` + regexp.QuoteMeta(o) + `/k/\$\{SKILLDROP_PATH_KEY\}([^"]*)"(?: --skill (\S+))?$`)
	for _, tc := range []struct{ page, id, rest, skill string }{
		{"/catalog/listings/hidden/", "install-listing", "/listings/hidden", ""},
		{"/catalog/skills/secret-rotation", "install-cli", "", "secret-rotation"},
		{"/catalog/listings/partner-a/skills/partner-secret", "install-cli", "/listings/partner-a", "partner-secret"},
	} {
		w := h.do(http.MethodGet, tc.page, bearer(goodKey))
		cmd := copyable(w.Body.String(), tc.id)
		m := cli.FindStringSubmatch(cmd)
		if w.Code != http.StatusOK || m == nil || m[1] != tc.rest || m[2] != tc.skill {
			t.Errorf("%s: %d, command %q; want the capability URL of %q", tc.page, w.Code, cmd, tc.rest)
			continue
		}
		if !strings.Contains(w.Body.String(), o+"/k/&lt;key&gt;") {
			t.Errorf("%s does not say what a capability URL is", tc.page)
		}
		// What the CLI asks for, with the key in the URL, holds the skill.
		idx := h.do(http.MethodGet, routes.Capability(goodKey, m[1]+routes.RFCIndex))
		want := tc.skill
		if want == "" {
			want = "hidden-only"
		}
		if idx.Code != http.StatusOK || !strings.Contains(idx.Body.String(), `"name":"`+want+`"`) {
			t.Errorf("%s: the capability URL's index: %d, lacks %s", tc.page, idx.Code, want)
		}
		// The plain address would not: it is not offered.
		if plain := h.do(http.MethodGet, m[1]+routes.RFCIndex); strings.Contains(plain.Body.String(), `"name":"`+want+`"`) {
			t.Errorf("%s: the plain address holds %s (the test's premise is wrong)", tc.page, want)
		}
		if strings.Contains(w.Body.String(), "npx skills add "+o+m[1]+"\n") || strings.Contains(w.Body.String(), "npx skills add "+o+m[1]+"<") {
			t.Errorf("%s still offers the plain address", tc.page)
		}
	}
	// A listing with public skills keeps its plain command, and names capability URLs for the rest.
	w := h.do(http.MethodGet, "/catalog/listings/partner-a/")
	if got := copyable(w.Body.String(), "install-listing"); got != "npx skills add "+o+"/listings/partner-a" || !strings.Contains(w.Body.String(), "capability URL") {
		t.Errorf("partner-a: %q", got)
	}
}

// TestRelativeLinksInADocumentLeadToTheSkillsOwnFiles: a SKILL.md's
// relative link names a file of its skill; on the page it leads to that
// file's row, and a link to no file of the version (or to another skill)
// is text, never a catalog page.
func TestRelativeLinksInADocumentLeadToTheSkillsOwnFiles(t *testing.T) {
	doc := skilltest.SkillMD("linked", "1.0", "Links its files.") +
		"\nSee [the reference](reference.md), [the script](scripts/run.sh), [a missing file](missing.md) and [another skill](../other/SKILL.md).\n"
	zip := skilltest.Zip(t, map[string]string{"SKILL.md": doc, "reference.md": "# Reference\n", "scripts/run.sh": "echo hi\n"})
	h := newHarness(t, indexed(t, map[string]string{"skills/linked.zip": string(zip), "skills/other.md": skilltest.SkillMD("other", "1", "Other.")}))
	w := h.do(http.MethodGet, "/catalog/skills/linked")
	page := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("page: %d", w.Code)
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile(`<tr id="(file-\d+)"><td>([^<]*)</td>`).FindAllStringSubmatch(page, -1) {
		rows[m[2]] = m[1]
	}
	for text, file := range map[string]string{"the reference": "reference.md", "the script": "scripts/run.sh"} {
		if rows[file] == "" || !strings.Contains(page, `<a href="#`+rows[file]+`" rel="nofollow noopener noreferrer">`+text+`</a>`) {
			t.Errorf("%q does not lead to the row of %s (rows %v)", text, file, rows)
		}
	}
	for _, text := range []string{"a missing file", "another skill"} {
		if !strings.Contains(page, `<span class="dead-link">`+text+`</span>`) {
			t.Errorf("%q is not plain text", text)
		}
	}
	article := page[strings.Index(page, `<article class="doc"`):]
	article = article[:strings.Index(article, "</article>")]
	if strings.Contains(article, `href="reference.md"`) || strings.Contains(article, "/catalog/") || strings.Contains(article, `href="../`) {
		t.Errorf("a relative link resolves against the catalog's pages: %s", article)
	}
}

// TestCatalogNavigation: /catalog sends a browser to /catalog/ as / does
// (a JSON client gets the 404), /catalog/listings/ to the list, whose
// filter names the visible listings, and a page past the end of the list
// is the 404 page, not an empty page with a Previous link.
func TestCatalogNavigation(t *testing.T) {
	h, _ := webHarness(t)
	const html = "Accept: text/html,application/xhtml+xml,*/*;q=0.8"
	for _, p := range []string{"/catalog", "/catalog/listings/"} {
		if w := h.do(http.MethodGet, p, html); w.Code != http.StatusFound || w.Header().Get("Location") != "/catalog/" {
			t.Errorf("%s: %d to %q; want 302 to /catalog/", p, w.Code, w.Header().Get("Location"))
		}
	}
	// A listing's page without its slash: the same redirect for a visible,
	// a hidden and a missing listing, so it tells nothing of which exist.
	for _, l := range []string{"partner-a", "hidden", "no-such-listing"} {
		w := h.do(http.MethodGet, "/catalog/listings/"+l+"?kind=skill", html)
		if w.Code != http.StatusFound || w.Header().Get("Location") != "/catalog/listings/"+l+"/?kind=skill" {
			t.Errorf("/catalog/listings/%s: %d to %q; want 302 to its page", l, w.Code, w.Header().Get("Location"))
		}
	}
	if w := h.do(http.MethodGet, "/catalog"); w.Code != http.StatusNotFound || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("/catalog for a JSON client: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	list := h.do(http.MethodGet, "/catalog/", html).Body.String()
	if !strings.Contains(list, `<option value="partner-a"`) || strings.Contains(list, `<option value="hidden"`) {
		t.Error("the list's listing filter does not name exactly the visible listings")
	}
	missing := h.do(http.MethodGet, "/catalog/no-such-page")
	for _, p := range []string{"/catalog/?page=2", "/catalog/?q=bundle&page=2", "/catalog/listings/partner-a/?page=2", "/catalog/?kind=subagent&page=3"} {
		if w := h.do(http.MethodGet, p); w.Code != http.StatusNotFound || w.Body.String() != missing.Body.String() {
			t.Errorf("%s (past the end): %d; want the 404 page", p, w.Code)
		}
	}
	if w := h.do(http.MethodGet, "/catalog/?page=1"); w.Code != http.StatusOK || len(listed(t, w)) == 0 {
		t.Errorf("the first page: %d", w.Code)
	}
}

// TestSearchesWithNoWordAreThePlainList: the API answers a query with no
// letters or digits as no query (every entry, in name order); the page
// does too, instead of calling them results "best first", and never echoes
// a control character (a NUL would show as U+FFFD).
func TestSearchesWithNoWordAreThePlainList(t *testing.T) {
	h, _ := webHarness(t)
	plain := h.do(http.MethodGet, "/catalog/")
	want := listed(t, plain)
	summary := regexp.MustCompile(`\d+ in all, by name[^<]*`).FindString(plain.Body.String())
	if summary == "" {
		t.Fatal("the plain list has no summary")
	}
	for _, q := range []string{"!!!", "%20", "%00", "%09%0A", "-+.+%E2%80%94"} {
		w := h.do(http.MethodGet, "/catalog/?q="+q)
		body := w.Body.String()
		if got := listed(t, w); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("q=%s lists %q; want the plain list %q", q, got, want)
		}
		if strings.Contains(body, "best first") || !strings.Contains(body, summary) || strings.Contains(body, "\ufffd") {
			t.Errorf("q=%s: not the plain list's summary, or echoes a control character", q)
		}
		api := h.do(http.MethodGet, "/api/v1/skills?q="+q)
		all := h.do(http.MethodGet, "/api/v1/skills")
		if api.Code != http.StatusOK || api.Body.String() != all.Body.String() {
			t.Errorf("the API answers q=%s otherwise than no query (the page's premise)", q)
		}
	}
	w := h.do(http.MethodGet, "/catalog/?q=bundle%00zip")
	if body := w.Body.String(); strings.Contains(body, "\ufffd") || strings.Contains(body, "\x00") || !strings.Contains(body, "“bundle zip”") {
		t.Error("a NUL in a search is echoed, or the search is not the words around it")
	}
}
