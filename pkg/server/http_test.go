package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/vouch"
)

func TestMethods(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	const (
		index    = "/.well-known/agent-skills/index.json"
		listing  = "/.well-known/agent-skills/partner-a/index.json"
		art      = "/skills/deploy-via-pr.md"
		hidden   = "/skills/secret-rotation/SKILL.md"
		unknown  = "/nothing/here"
		mcpRoute = "/mcp"
	)
	for _, tc := range []struct {
		method, path string
		auth         string
		status       int
		allow        string
	}{
		{http.MethodGet, index, "", 200, ""},
		{http.MethodHead, index, "", 200, ""},
		{http.MethodOptions, index, "", 204, allowRead},
		{http.MethodPost, index, "", 405, allowRead},
		{http.MethodPut, index, "", 405, allowRead},
		{http.MethodDelete, listing, "", 405, allowRead},
		{http.MethodPatch, listing, "", 405, allowRead},
		{http.MethodGet, art, "", 200, ""},
		{http.MethodHead, art, "", 200, ""},
		{http.MethodOptions, art, "", 204, allowRead},
		{http.MethodPut, art, "", 405, allowRead},
		{http.MethodDelete, art, "", 405, allowRead},
		// A hidden artifact does not exist for anonymous callers, whatever the method.
		{http.MethodPut, hidden, "", 404, ""},
		{http.MethodPut, hidden, goodKey, 405, allowRead},
		// A preflight carries no credential: it must succeed for hidden paths too.
		{http.MethodOptions, hidden, "", 204, allowRead},
		{http.MethodGet, unknown, "", 404, ""},
		{http.MethodPost, unknown, "", 404, ""},
		{"BREW", unknown, "", 404, ""},
		{http.MethodGet, mcpRoute, "", 405, allowPost},
		{http.MethodDelete, mcpRoute, "", 405, allowPost},
		{http.MethodOptions, mcpRoute, "", 204, allowPost},
		// The native feed: documents, search and bytes are read routes.
		{http.MethodGet, routes.Manifest, "", 200, ""},
		{http.MethodHead, routes.Manifest, "", 200, ""},
		{http.MethodOptions, routes.Manifest, "", 204, allowRead},
		{http.MethodPost, routes.Manifest, "", 405, allowRead},
		{http.MethodGet, "/skills/v1/index.json", "", 200, ""},
		{http.MethodDelete, "/skills/v1/index.json", "", 405, allowRead},
		{http.MethodHead, "/subagents/v1/pages/all.json", "", 200, ""},
		{http.MethodPatch, "/subagents/v1/pages/all.json", "", 405, allowRead},
		{http.MethodGet, "/api/v1/skills", "", 200, ""},
		{http.MethodPost, "/api/v1/skills", "", 405, allowRead},
		{http.MethodGet, "/api/v1/skills?take=0", "", 400, ""},
		{http.MethodPost, "/api/v1/skills?take=0", "", 405, allowRead},
		{http.MethodGet, "/api/v1/skills/deploy-via-pr/1.0.0/SKILL.md", "", 200, ""},
		{http.MethodHead, "/api/v1/skills/deploy-via-pr/1.0.0/SKILL.md", "", 200, ""},
		{http.MethodPut, "/api/v1/skills/deploy-via-pr/1.0.0/SKILL.md", "", 405, allowRead},
		{http.MethodGet, "/skills/v1/nope/index.json", "", 404, ""},
		{http.MethodPost, "/skills/v1/nope/index.json", "", 404, ""},
		// Hidden native documents and bytes do not exist for anonymous callers.
		{http.MethodPut, "/skills/v1/secret-rotation/index.json", "", 404, ""},
		{http.MethodPut, "/skills/v1/secret-rotation/index.json", goodKey, 405, allowRead},
		{http.MethodDelete, "/api/v1/skills/secret-rotation/1.0.0/SKILL.md", "", 404, ""},
		{http.MethodDelete, "/api/v1/skills/secret-rotation/1.0.0/SKILL.md", goodKey, 405, allowRead},
		{http.MethodOptions, "/api/v1/skills/secret-rotation/1.0.0/SKILL.md", "", 204, allowRead},
		// check-updates is a POST route, for skills and sub-agents.
		{http.MethodGet, "/api/v1/skills/check-updates", "", 405, allowPost},
		{http.MethodHead, "/api/v1/skills/check-updates", "", 405, allowPost},
		{http.MethodPut, "/api/v1/skills/check-updates", goodKey, 405, allowPost},
		{http.MethodOptions, "/api/v1/skills/check-updates", "", 204, allowPost},
		{http.MethodGet, "/api/v1/subagents/check-updates", "", 405, allowPost},
		{http.MethodOptions, "/api/v1/subagents/check-updates", "", 204, allowPost},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.auth, func(t *testing.T) {
			hdr := []string{}
			if tc.auth != "" {
				hdr = append(hdr, bearer(tc.auth))
			}
			w := h.do(tc.method, tc.path, hdr...)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d (%s)", w.Code, tc.status, w.Body)
			}
			if got := w.Header().Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			if w.Header().Get("Access-Control-Allow-Origin") != "*" {
				t.Error("no Access-Control-Allow-Origin: *")
			}
			switch {
			case tc.status == 405 && tc.method == http.MethodHead:
				if w.Body.Len() != 0 {
					t.Errorf("HEAD 405 with a %d-byte body", w.Body.Len())
				}
			case tc.status == 405:
				if errorCode(t, w) != codeMethodNotAllowed {
					t.Error("405 without its code")
				}
			case tc.status == 404:
				if errorCode(t, w) != codeNotFound {
					t.Error("404 without its code")
				}
			case tc.method == http.MethodHead:
				if w.Body.Len() != 0 || w.Header().Get("Content-Length") == "" {
					t.Errorf("HEAD body %d bytes, Content-Length %q", w.Body.Len(), w.Header().Get("Content-Length"))
				}
			case tc.method == http.MethodOptions:
				if w.Header().Get("Access-Control-Allow-Methods") != tc.allow ||
					!strings.Contains(w.Header().Get("Access-Control-Allow-Headers"), "Authorization") {
					t.Errorf("preflight headers %v", w.Header())
				}
			}
		})
	}
}

// rawRequest builds a request whose path is exactly what a client put on
// the request line, as net/http's server would parse it.
func rawRequest(t *testing.T, method, target string) *http.Request {
	t.Helper()
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: skills.example.com\r\n\r\n")))
	if err != nil {
		t.Fatalf("request line %q: %v", target, err)
	}
	return r
}

func TestPathTricksNeverReachUnpublishedBytes(t *testing.T) {
	st := store.NewMemory()
	b := standardBucket(t, st)
	blobHex := b.cat.Skills["deploy-via-pr"].LatestVersion().Digest.Hex()
	h := newHarness(t, st)
	targets := []string{
		"/catalog/catalog.json",
		"/catalog/status.json",
		"/blobs/sha256/" + blobHex,
		"/listings/partner-a/skills/partner-only.md",
		"/files/x.md",
		"/agent-skills.yaml",
		"/skills/../catalog/catalog.json",
		"/skills/%2e%2e/catalog/catalog.json",
		"/skills/%2E%2E/catalog/catalog.json",
		"/skills/.%2e/catalog/catalog.json",
		"/skills%2fdeploy-via-pr.md",
		"/skills%2Fdeploy-via-pr.md",
		"/skills%5cdeploy-via-pr.md",
		`/skills\deploy-via-pr.md`,
		"//skills/deploy-via-pr.md",
		"/skills//deploy-via-pr.md",
		"/./skills/deploy-via-pr.md",
		"/skills/./deploy-via-pr.md",
		"/skills/deploy-via-pr.md%00",
		"/skills/deploy-via-pr.md%00.png",
		"/skills/%252e%252e/catalog/catalog.json",
		"/.well-known/agent-skills/../../catalog/catalog.json",
		"/.well-known/agent-skills/partner-a/../hidden/index.json",
		"/.well-known/agent-skills/%2e%2e/index.json",
		"/skills/secret-rotation%2FSKILL.md",
		"/skills/deploy-via-pr.md/",
		"/skills/deploy-via-pr.md/.",
		"/SKILLS/deploy-via-pr.md",
	}
	for _, target := range targets {
		for _, auth := range []string{"", goodKey} {
			t.Run(target+" "+auth, func(t *testing.T) {
				r := rawRequest(t, http.MethodGet, target)
				hdr := []string{}
				if auth != "" {
					hdr = append(hdr, bearer(auth))
				}
				w := h.serve(r, hdr...)
				if w.Code != http.StatusNotFound {
					t.Fatalf("status %d, want 404 (%.80s)", w.Code, w.Body)
				}
				if strings.HasPrefix(target, routes.Catalog) { // the web catalog's own 404 page
					if strings.Contains(w.Body.String(), `"revision"`) || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
						t.Errorf("%s: not the catalog's 404 page", target)
					}
					return
				}
				if errorCode(t, w) != codeNotFound {
					t.Error("404 without its code")
				}
			})
		}
	}
	t.Run("a NUL or control byte in the decoded path", func(t *testing.T) {
		for _, p := range []string{"/skills/deploy-via-pr.md\x00", "/skills/\ndeploy-via-pr.md"} {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.URL = &url.URL{Path: p}
			if w := h.serve(r); w.Code != http.StatusNotFound {
				t.Errorf("%q: status %d", p, w.Code)
			}
		}
	})
	t.Run("the same artifact spelled plainly is served", func(t *testing.T) {
		if w := h.serve(rawRequest(t, http.MethodGet, "/skills/deploy-via-pr.md")); w.Code != http.StatusOK {
			t.Errorf("status %d", w.Code)
		}
	})
}

func TestAuthentication(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	routes := []string{
		"/.well-known/agent-skills/index.json",
		"/.well-known/agent-skills/partner-a/index.json",
		"/skills/deploy-via-pr.md",
		"/skills/secret-rotation/SKILL.md",
		"/nothing/here",
		"/catalog/catalog.json",
		"/mcp",
		"/manifest.json",
		"/skills/v1/index.json",
		"/subagents/v1/pages/all.json",
		"/api/v1/skills?q=deploy",
		"/api/v1/skills/secret-rotation/1.0.0/SKILL.md",
		"/api/v1/skills/check-updates",
		"/api/v1/subagents/check-updates",
	}
	invalid := []struct{ name, header string }{
		{"unknown key", "Authorization: Bearer sk-not-a-key"},
		{"basic scheme", "Authorization: Basic dXNlcjpwYXNz"},
		{"empty bearer", "Authorization: Bearer "},
		{"bare key", "Authorization: " + goodKey},
		{"key with a trailing byte", "Authorization: Bearer " + goodKey + "x"},
	}
	for _, route := range routes {
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodOptions} {
			for _, inv := range invalid {
				t.Run(method+" "+route+" "+inv.name, func(t *testing.T) {
					w := h.do(method, route, inv.header)
					if w.Code != http.StatusUnauthorized {
						t.Fatalf("status %d, want 401", w.Code)
					}
					if got := w.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, apikey.Challenge) {
						t.Errorf("WWW-Authenticate %q", got)
					}
					if method != http.MethodHead && errorCode(t, w) != codeUnauthorized {
						t.Error("401 without its code")
					}
				})
			}
		}
	}
	t.Run("both configured keys are valid", func(t *testing.T) {
		for _, k := range []string{goodKey, otherKey} {
			w := h.do(http.MethodGet, "/skills/secret-rotation/SKILL.md", bearer(k))
			if w.Code != http.StatusOK {
				t.Errorf("key %s: %d", apikey.KeyID(k), w.Code)
			}
		}
	})
	t.Run("logs name keys by their id, never the key", func(t *testing.T) {
		logs := h.logs.String()
		if strings.Contains(logs, goodKey) || strings.Contains(logs, otherKey) || strings.Contains(logs, "sk-not-a-key") {
			t.Error("a key appears in the logs")
		}
		if !strings.Contains(logs, `"key_id":"`+apikey.KeyID(goodKey)+`"`) || !strings.Contains(logs, `"key_id":"`+apikey.UnknownKeyID+`"`) {
			t.Error("key ids missing from the access lines")
		}
		// An unknown key is a secret sent by mistake, perhaps another
		// service's: not even a fingerprint of it is logged.
		if strings.Contains(logs, apikey.KeyID("sk-not-a-key")) || strings.Contains(logs, apikey.Hash("sk-not-a-key")[:6]) {
			t.Error("the logs name an unknown key by a fingerprint of it")
		}
	})
}

// brokenKeys is a key source that cannot be read.
type brokenKeys struct{}

func (brokenKeys) Hashes(context.Context) (apikey.Set, error) {
	return apikey.Set{}, fmt.Errorf("%w: ssm throttled", apikey.ErrUnavailable)
}

func TestKeySourceFailureFailsClosed(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st, func(c *Config) { c.Keys = brokenKeys{} })
	w := h.do(http.MethodGet, "/.well-known/agent-skills/index.json", bearer(goodKey))
	if w.Code != http.StatusServiceUnavailable || errorCode(t, w) != codeUnavailable {
		t.Errorf("credentialed request: %d %s", w.Code, w.Body)
	}
	if w := h.do(http.MethodGet, "/.well-known/agent-skills/index.json"); w.Code != http.StatusOK {
		t.Errorf("anonymous request: %d", w.Code)
	}
	t.Run("no keys configured: every key is invalid, anonymous works", func(t *testing.T) {
		h := newHarness(t, st, func(c *Config) { c.Keys = nil })
		if w := h.do(http.MethodGet, "/skills/deploy-via-pr.md", bearer(goodKey)); w.Code != http.StatusUnauthorized {
			t.Errorf("status %d", w.Code)
		}
		if w := h.do(http.MethodGet, "/skills/deploy-via-pr.md"); w.Code != http.StatusOK {
			t.Errorf("status %d", w.Code)
		}
	})
}

func TestCaching(t *testing.T) {
	st := store.NewMemory()
	b := standardBucket(t, st)
	h := newHarness(t, st)
	const index = "/.well-known/agent-skills/index.json"
	artETag := `"` + b.cat.Skills["deploy-via-pr"].LatestVersion().Digest.String() + `"`
	anon := h.do(http.MethodGet, index)
	jsonETag := anon.Header().Get("ETag")
	gz := h.do(http.MethodGet, index, "Accept-Encoding: gzip")
	gzETag := gz.Header().Get("ETag")
	if !strings.HasPrefix(jsonETag, `"`) || strings.HasPrefix(jsonETag, `W/`) || gzETag == jsonETag || gzETag == "" {
		t.Fatalf("ETags %q / %q", jsonETag, gzETag)
	}
	if got := gunzip(t, gz.Body.Bytes()); string(got) != anon.Body.String() {
		t.Errorf("gzip body decodes to %q", got)
	}

	for _, tc := range []struct {
		name         string
		path         string
		headers      []string
		status       int
		cacheControl string
		vary         []string
		encoding     string
	}{
		{"anonymous index is public", index, nil, 200, ccPublic, []string{"Authorization", "Accept-Encoding"}, ""},
		{"authenticated index is private", index, []string{bearer(goodKey)}, 200, ccPrivate, []string{"Authorization", "Accept-Encoding"}, ""},
		{"gzip when accepted", index, []string{"Accept-Encoding: br, gzip;q=0.8"}, 200, ccPublic, nil, "gzip"},
		{"gzip via *", index, []string{"Accept-Encoding: *"}, 200, ccPublic, nil, "gzip"},
		{"no gzip at q=0", index, []string{"Accept-Encoding: gzip;q=0, br"}, 200, ccPublic, nil, ""},
		{"no gzip when * is refused", index, []string{"Accept-Encoding: *;q=0"}, 200, ccPublic, nil, ""},
		{"matching ETag", index, []string{"If-None-Match: " + jsonETag}, 304, ccPublic, []string{"Authorization"}, ""},
		{"ETag in a list", index, []string{`If-None-Match: "nope", ` + jsonETag}, 304, ccPublic, nil, ""},
		{"weak form of the ETag", index, []string{"If-None-Match: W/" + jsonETag}, 304, ccPublic, nil, ""},
		{"star", index, []string{"If-None-Match: *"}, 304, ccPublic, nil, ""},
		{"gzip ETag while asking identity", index, []string{"If-None-Match: " + gzETag}, 304, ccPublic, nil, ""},
		{"other ETag", index, []string{`If-None-Match: "nope"`}, 200, ccPublic, nil, ""},
		{"authenticated ETag differs", index, []string{"If-None-Match: " + jsonETag, bearer(goodKey)}, 200, ccPrivate, nil, ""},
		{"public artifact", "/skills/deploy-via-pr.md", nil, 200, ccPublic, []string{"Authorization"}, ""},
		{"authenticated artifact is private", "/skills/secret-rotation/SKILL.md", []string{bearer(goodKey)}, 200, ccPrivate, nil, ""},
		{"artifact never gzip-encoded", "/skills/bundle-tgz.tar.gz", []string{"Accept-Encoding: gzip"}, 200, ccPublic, nil, ""},
		{"artifact ETag is the digest", "/skills/deploy-via-pr.md", []string{"If-None-Match: " + artETag}, 304, ccPublic, nil, ""},
		{"artifact star", "/skills/deploy-via-pr.md", []string{"If-None-Match: *"}, 304, ccPublic, nil, ""},
		{"errors are not stored", "/nothing", nil, 404, ccNoStore, []string{"Authorization"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := h.do(http.MethodGet, tc.path, tc.headers...)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			if got := w.Header().Get("Cache-Control"); got != tc.cacheControl {
				t.Errorf("Cache-Control %q, want %q", got, tc.cacheControl)
			}
			if n := len(w.Header().Values("Vary")); n != 1 {
				t.Errorf("%d Vary headers, want one", n)
			}
			vary := strings.Join(w.Header().Values("Vary"), ", ")
			for _, v := range tc.vary {
				if !strings.Contains(vary, v) {
					t.Errorf("Vary %q lacks %s", vary, v)
				}
			}
			if got := w.Header().Get("Content-Encoding"); got != tc.encoding {
				t.Errorf("Content-Encoding %q, want %q", got, tc.encoding)
			}
			if tc.status == 304 && (w.Body.Len() != 0 || w.Header().Get("ETag") == "") {
				t.Errorf("304 with %d body bytes, ETag %q", w.Body.Len(), w.Header().Get("ETag"))
			}
			if tc.status == 200 && w.Header().Get("ETag") == "" {
				t.Error("200 without an ETag")
			}
		})
	}
}

// TestVouchedRequestID: the request id the platform vouches for (set in
// the context by the adapter, never read from a header) is the one the
// answer and every log line carry; without one the server makes its own.
func TestVouchedRequestID(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	r := httptest.NewRequest(http.MethodGet, routes.RFCIndex, nil)
	r.Header.Set("X-Request-Id", "client-chosen")
	w := h.serve(r.WithContext(vouch.NewContext(r.Context(), vouch.Facts{RequestID: "apigw-42"})))
	if got := w.Header().Get("X-Request-Id"); got != "apigw-42" {
		t.Errorf("X-Request-Id %q, want the vouched apigw-42", got)
	}
	lines := logLines(t, h.logs)
	if len(lines) == 0 || lines[len(lines)-1]["request_id"] != "apigw-42" {
		t.Errorf("log lines %v: want request_id apigw-42", lines)
	}
	if got := h.do(http.MethodGet, routes.RFCIndex, "X-Request-Id: client-chosen").Header().Get("X-Request-Id"); got == "" || got == "client-chosen" {
		t.Errorf("without a vouched id: X-Request-Id %q, want one of the server's", got)
	}
}

func TestBaseURL(t *testing.T) {
	gw := vouch.Facts{Domain: "abc123.execute-api.eu-west-1.amazonaws.com", RequestID: "r-1"}
	for _, tc := range []struct {
		name    string
		cfg     func(*Config)
		gateway bool
		tls     bool
		host    string
		headers map[string]string
		want    string
		err     error
	}{
		{"configured base wins over everything", nil, true, false, "evil.example", map[string]string{"X-Forwarded-Host": "evil.example"}, "https://skills.example.com", nil},
		{"gateway domain with https; Host ignored", func(c *Config) { c.PublicBaseURL = "" }, true, false, "evil.example", nil, "https://abc123.execute-api.eu-west-1.amazonaws.com", nil},
		{"gateway domain even when local", func(c *Config) { c.PublicBaseURL, c.Local = "", true }, true, false, "evil.example", nil, "https://abc123.execute-api.eu-west-1.amazonaws.com", nil},
		{"forwarded headers ignored unless trusted", func(c *Config) { c.PublicBaseURL, c.Local = "", true }, false, false, "127.0.0.1:8080", map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}, "http://127.0.0.1:8080", nil},
		{"forwarded headers when trusted", func(c *Config) { c.PublicBaseURL, c.Local, c.TrustForwardedHeaders = "", true, true }, false, false, "127.0.0.1:8080", map[string]string{"X-Forwarded-Host": "Skills.Example.org, proxy.internal", "X-Forwarded-Proto": "https"}, "https://skills.example.org", nil},
		{"trusted forwarded with a bad proto", func(c *Config) { c.PublicBaseURL, c.TrustForwardedHeaders = "", true }, false, false, "x", map[string]string{"X-Forwarded-Host": "a.example", "X-Forwarded-Proto": "javascript"}, "", errBadHost},
		{"local Host", func(c *Config) { c.PublicBaseURL, c.Local = "", true }, false, false, "localhost:8080", nil, "http://localhost:8080", nil},
		{"local Host over TLS", func(c *Config) { c.PublicBaseURL, c.Local = "", true }, false, true, "[::1]:8443", nil, "https://[::1]:8443", nil},
		{"local Host that is not a host", func(c *Config) { c.PublicBaseURL, c.Local = "", true }, false, false, "a/b@c", nil, "", errBadHost},
		{"local Host with a port out of range", func(c *Config) { c.PublicBaseURL, c.Local = "", true }, false, false, "evil.example:99999", nil, "", errBadHost},
		{"local Host with port zero", func(c *Config) { c.PublicBaseURL, c.Local = "", true }, false, false, "evil.example:0", nil, "", errBadHost},
		{"not local and no gateway", func(c *Config) { c.PublicBaseURL = "" }, false, false, "a.example", nil, "", errNoBaseURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			muts := []func(*Config){}
			if tc.cfg != nil {
				muts = append(muts, tc.cfg)
			}
			h := newHarness(t, store.NewMemory(), muts...)
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Host = tc.host
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if tc.gateway {
				r = r.WithContext(vouch.NewContext(r.Context(), gw))
			}
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			u, err := h.srv.BaseURL(r)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || u.String() != tc.want {
				t.Fatalf("base %v (%v), want %s", u, err, tc.want)
			}
		})
	}
	t.Run("the index answers 400 for a bad Host and 500 without a base", func(t *testing.T) {
		st := store.NewMemory()
		standardBucket(t, st)
		local := newHarness(t, st, func(c *Config) { c.PublicBaseURL, c.Local = "", true })
		if w := local.do(http.MethodGet, "/.well-known/agent-skills/index.json", "Host: a b"); w.Code != http.StatusBadRequest {
			t.Errorf("bad host: %d", w.Code)
		}
		none := newHarness(t, st, func(c *Config) { c.PublicBaseURL = "" })
		if w := none.do(http.MethodGet, "/.well-known/agent-skills/index.json"); w.Code != http.StatusInternalServerError || errorCode(t, w) != codeNoBaseURL {
			t.Errorf("no base: %d", w.Code)
		}
	})
}

// TestVaryNamesTheHeadersTheOriginComesFrom: where documents take their
// origin from request headers, a shared cache must key on those headers.
func TestVaryNamesTheHeadersTheOriginComesFrom(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	for _, tc := range []struct {
		name   string
		cfg    func(*Config)
		want   []string
		absent []string
	}{
		{"configured base", nil, []string{"Authorization"}, []string{"Host", "X-Forwarded-Host"}},
		{"local serve", func(c *Config) { c.PublicBaseURL, c.Local = "", true }, []string{"Authorization", "Host"}, []string{"X-Forwarded-Host"}},
		{"trusted forwarded headers", func(c *Config) { c.PublicBaseURL, c.Local, c.TrustForwardedHeaders = "", true, true },
			[]string{"Authorization", "Host", "X-Forwarded-Host", "X-Forwarded-Proto"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var muts []func(*Config)
			if tc.cfg != nil {
				muts = append(muts, tc.cfg)
			}
			h := newHarness(t, st, muts...)
			w := h.do(http.MethodGet, "/.well-known/agent-skills/index.json")
			vary := strings.Join(w.Header().Values("Vary"), ", ")
			for _, v := range tc.want {
				if !strings.Contains(vary, v) {
					t.Errorf("Vary %q lacks %s", vary, v)
				}
			}
			for _, v := range tc.absent {
				if strings.Contains(vary, v) {
					t.Errorf("Vary %q names %s", vary, v)
				}
			}
		})
	}
}

func TestParseBaseURL(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"https://skills.example.com", "https://skills.example.com"},
		{"https://Skills.Example.com/", "https://skills.example.com"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"https://skills.example.com/prod", ""},
		{"https://skills.example.com?x=1", ""},
		{"ftp://skills.example.com", ""},
		{"skills.example.com", ""},
		{"https://user:pw@skills.example.com", ""},
		{"https://", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			u, err := ParseBaseURL(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Errorf("accepted as %v", u)
				}
				return
			}
			if err != nil || u.String() != tc.want {
				t.Errorf("%v (%v), want %s", u, err, tc.want)
			}
		})
	}
	if _, err := New(Config{Store: store.NewMemory(), PublicBaseURL: "https://x.example/prod"}); err == nil {
		t.Error("New accepted a base URL with a path")
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New accepted a config without a store")
	}
}

// TestRawRequestOverTCP sends request lines byte for byte, the way a hostile
// client would, through net/http's own parser.
func TestRawRequestOverTCP(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	ts := httptest.NewServer(h.srv)
	defer ts.Close()
	for _, tc := range []struct {
		line   string
		status int
	}{
		{"GET /skills/deploy-via-pr.md HTTP/1.1", 200},
		{"GET /skills/../catalog/catalog.json HTTP/1.1", 404},
		{"GET /skills/%2e%2e/catalog/catalog.json HTTP/1.1", 404},
		{"GET /blobs/sha256/" + strings.Repeat("a", 64) + " HTTP/1.1", 404},
		{`GET /skills\..\catalog\catalog.json HTTP/1.1`, 404},
		{"GET http://skills.example.com/skills/%2e%2e/catalog/catalog.json HTTP/1.1", 404},
	} {
		t.Run(tc.line, func(t *testing.T) {
			c, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			if _, err := io.WriteString(c, tc.line+"\r\nHost: skills.example.com\r\nConnection: close\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		target string
		ok     bool
	}{
		{"/", true},
		{"/skills/deploy-via-pr.md", true},
		{"/skills/bundle.tar.gz", true},
		{"/.well-known/agent-skills/partner-a/index.json", true},
		{"/skills/a%20b.md", true},
		{"/skills/%7Euser.md", true},
		{"/skills/a.md?x=../../", true},
		{"/skills/../a.md", false},
		{"/skills/%2e%2e/a.md", false},
		{"/skills/%2fa.md", false},
		{"/skills/%5ca.md", false},
		{"/skills/%25.md", false},
		{"/skills/%00.md", false},
		{"/skills/%0a.md", false},
		{"//a.md", false},
		{"/a/./b", false},
	} {
		t.Run(tc.target, func(t *testing.T) {
			if got := cleanPath(rawRequest(t, http.MethodGet, tc.target)); got != tc.ok {
				t.Errorf("cleanPath = %v, want %v", got, tc.ok)
			}
		})
	}
	// net/http refuses these request lines; a hand-built request may not.
	for _, raw := range []string{"/a%zz", "/a%", "/a%2"} {
		if cleanEscapes(raw) {
			t.Errorf("cleanEscapes(%q) accepted", raw)
		}
	}
}
