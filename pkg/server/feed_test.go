package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// lowerDigest is the only digest form the feeds may carry.
var lowerDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func decodeIndex(t testing.TB, b []byte) discovery.Index {
	t.Helper()
	var idx discovery.Index
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&idx); err != nil {
		t.Fatalf("index %s: %v", b, err)
	}
	return idx
}

func indexNames(idx discovery.Index) []string {
	out := []string{}
	for _, s := range idx.Skills {
		out = append(out, s.Name)
	}
	return out
}

// TestEveryAdvertisedURLServesItsDigest behaves like an RFC client over a
// real listener: for both auth classes, the top level and every listing,
// it requires the exact $schema and lowercase digests, resolves each url
// against the index URL, and every URL on this origin answers 200 with a
// body hashing to its digest.
func TestEveryAdvertisedURLServesItsDigest(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st, func(c *Config) { c.PublicBaseURL, c.Local = "", true })
	ts := httptest.NewServer(h.srv)
	defer ts.Close()

	for _, tc := range []struct {
		name    string
		auth    string
		indexes map[string][]string // index path -> names
	}{
		{"anonymous", "", map[string][]string{
			"/.well-known/agent-skills/index.json":           {"bundle-tgz", "bundle-zip", "deploy-via-pr", "elsewhere"},
			"/.well-known/agent-skills/partner-a/index.json": {"deploy-via-pr", "partner-only"},
		}},
		{"authenticated", goodKey, map[string][]string{
			"/.well-known/agent-skills/index.json":           {"bundle-tgz", "bundle-zip", "deploy-via-pr", "elsewhere", "secret-rotation"},
			"/.well-known/agent-skills/partner-a/index.json": {"deploy-via-pr", "partner-only", "partner-secret", "secret-rotation"},
			"/.well-known/agent-skills/hidden/index.json":    {"hidden-only"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(u string) *http.Response {
				t.Helper()
				req, _ := http.NewRequest(http.MethodGet, u, nil)
				if tc.auth != "" {
					req.Header.Set("Authorization", "Bearer "+tc.auth)
				}
				// Ask for gzip explicitly: the transport then leaves the
				// body encoded, so the test sees what was sent.
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := ts.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			fetched := 0
			for path, want := range tc.indexes {
				resp := get(ts.URL + path)
				body := readAll(t, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
				}
				if resp.Header.Get("Content-Encoding") == "gzip" {
					body = gunzip(t, body)
				}
				idx := decodeIndex(t, body)
				if idx.Schema != discovery.SchemaURL {
					t.Errorf("%s: $schema %q", path, idx.Schema)
				}
				if got := indexNames(idx); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: names %v, want %v", path, got, want)
				}
				indexURL, err := url.Parse(ts.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range idx.Skills {
					if !lowerDigest.MatchString(s.Digest) {
						t.Errorf("%s: %s digest %q is not sha256:<64 lowercase hex>", path, s.Name, s.Digest)
					}
					ref, err := url.Parse(s.URL)
					if err != nil {
						t.Errorf("%s: %s url %q: %v", path, s.Name, s.URL, err)
						continue
					}
					// What an RFC client does with any url, absolute or not.
					target := indexURL.ResolveReference(ref).String()
					if target != s.URL {
						t.Errorf("%s: %s url %q is not absolute (resolves to %s)", path, s.Name, s.URL, target)
					}
					if !strings.HasPrefix(target, ts.URL+"/") {
						if target != "https://cdn.example.org/skills/elsewhere.md?sig=a&b=c" {
							t.Errorf("%s: %s has foreign URL %s", path, s.Name, target)
						}
						continue
					}
					d, err := digest.Parse(s.Digest)
					if err != nil {
						t.Errorf("%s: %s digest %q: %v", path, s.Name, s.Digest, err)
						continue
					}
					resp := get(target)
					b := readAll(t, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("%s (%s): %d", s.URL, s.Name, resp.StatusCode)
						continue
					}
					if ce := resp.Header.Get("Content-Encoding"); ce != "" {
						t.Errorf("%s: Content-Encoding %q on an artifact", s.URL, ce)
					}
					if !d.Verify(b) {
						t.Errorf("%s: body does not hash to %s", s.URL, s.Digest)
					}
					if resp.Header.Get("ETag") != `"`+s.Digest+`"` {
						t.Errorf("%s: ETag %q", s.URL, resp.Header.Get("ETag"))
					}
					fetched++
				}
			}
			if fetched == 0 {
				t.Fatal("no artifact fetched")
			}
		})
	}
}

func TestArtifactContentTypes(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	for _, tc := range []struct {
		path, auth, want string
	}{
		{"/skills/deploy-via-pr.md", "", "text/markdown; charset=utf-8"},
		{"/skills/secret-rotation/SKILL.md", goodKey, "text/markdown; charset=utf-8"},
		{"/skills/bundle-zip.zip", "", "application/zip"},
		{"/skills/bundle-tgz.tar.gz", "", "application/gzip"},
		{"/.well-known/agent-skills/partner-a/skills/partner-only.md", "", "text/markdown; charset=utf-8"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			hdr := []string{"Accept-Encoding: gzip"}
			if tc.auth != "" {
				hdr = append(hdr, bearer(tc.auth))
			}
			w := h.do(http.MethodGet, tc.path, hdr...)
			if w.Code != http.StatusOK || w.Header().Get("Content-Type") != tc.want {
				t.Errorf("status %d content type %q, want 200 %q", w.Code, w.Header().Get("Content-Type"), tc.want)
			}
			if w.Header().Get("Content-Encoding") != "" {
				t.Errorf("Content-Encoding %q", w.Header().Get("Content-Encoding"))
			}
			if w.Header().Get("Content-Length") == "" {
				t.Error("no Content-Length")
			}
		})
	}
}

func TestVisibilityEverywhere(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	for _, tc := range []struct {
		path     string
		anon     int
		authed   int
		hiddenIn string // a name that must not appear in the anonymous body
	}{
		{"/skills/secret-rotation/SKILL.md", 404, 200, ""},
		{"/.well-known/agent-skills/partner-a/skills/partner-secret.md", 404, 200, ""},
		{"/.well-known/agent-skills/hidden/skills/hidden-only.md", 404, 200, ""},
		{"/.well-known/agent-skills/hidden/index.json", 404, 200, ""},
		{"/.well-known/agent-skills/index.json", 200, 200, "secret-rotation"},
		{"/.well-known/agent-skills/partner-a/index.json", 200, 200, "partner-secret"},
		{"/skills/gone.md", 404, 404, ""},
		{"/.well-known/agent-skills/nope/index.json", 404, 404, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			anon := h.do(http.MethodGet, tc.path)
			if anon.Code != tc.anon {
				t.Errorf("anonymous: %d, want %d", anon.Code, tc.anon)
			}
			if anon.Code == http.StatusNotFound && errorCode(t, anon) != codeNotFound {
				t.Error("404 without the not_found code")
			}
			if tc.hiddenIn != "" && strings.Contains(anon.Body.String(), tc.hiddenIn) {
				t.Errorf("anonymous body mentions %s", tc.hiddenIn)
			}
			authed := h.do(http.MethodGet, tc.path, bearer(goodKey))
			if authed.Code != tc.authed {
				t.Errorf("authenticated: %d, want %d", authed.Code, tc.authed)
			}
			if tc.hiddenIn != "" && !strings.Contains(authed.Body.String(), tc.hiddenIn) {
				t.Errorf("authenticated body lacks %s", tc.hiddenIn)
			}
		})
	}
}

func TestIndexURLsUseTheBaseURL(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	w := h.do(http.MethodGet, "/.well-known/agent-skills/index.json", "Host: attacker.example")
	idx := decodeIndex(t, w.Body.Bytes())
	got := map[string]string{}
	for _, s := range idx.Skills {
		got[s.Name] = s.URL
	}
	want := map[string]string{
		"bundle-tgz":    "https://skills.example.com/skills/bundle-tgz.tar.gz",
		"bundle-zip":    "https://skills.example.com/skills/bundle-zip.zip",
		"deploy-via-pr": "https://skills.example.com/skills/deploy-via-pr.md",
		"elsewhere":     "https://cdn.example.org/skills/elsewhere.md?sig=a&b=c",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("urls %v\nwant %v", got, want)
	}
	if !sort.SliceIsSorted(idx.Skills, func(i, j int) bool { return idx.Skills[i].Name < idx.Skills[j].Name }) {
		t.Error("not sorted by name")
	}
}

// TestRendersOncePerRevisionAuthAndOrigin pins the render cache: the same
// bytes for repeated requests, other bytes for another origin or class.
func TestRendersOncePerRevisionAuthAndOrigin(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st, func(c *Config) { c.PublicBaseURL, c.Local = "", true })
	get := func(host string, hdr ...string) *httptest.ResponseRecorder {
		return h.do(http.MethodGet, "/.well-known/agent-skills/index.json", append(hdr, "Host: "+host)...)
	}
	a1, a2 := get("a.example"), get("a.example")
	b1 := get("b.example")
	auth := get("a.example", bearer(goodKey))
	if a1.Body.String() != a2.Body.String() || a1.Header().Get("ETag") != a2.Header().Get("ETag") {
		t.Error("repeated request differs")
	}
	if !strings.Contains(b1.Body.String(), "http://b.example/skills/") || b1.Header().Get("ETag") == a1.Header().Get("ETag") {
		t.Error("another origin did not get its own document")
	}
	if auth.Header().Get("ETag") == a1.Header().Get("ETag") {
		t.Error("authenticated and anonymous documents share an ETag")
	}
	snap, err := h.srv.catalog.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := snap.renders.len(); n != 3 {
		t.Errorf("%d renders cached, want 3", n)
	}
	for i := 0; i < maxRenders+10; i++ {
		get("h" + string(rune('a'+i%26)) + strings.Repeat("x", i) + ".example")
	}
	if n, _ := snap.renders.len(); n > maxRenders {
		t.Errorf("%d renders cached, bound is %d", n, maxRenders)
	}
}

func TestExternalAndEmptyCatalog(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	b.publish()
	h := newHarness(t, st)
	w := h.do(http.MethodGet, "/.well-known/agent-skills/index.json")
	if w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"$schema":"`+discovery.SchemaURL+`","skills":[]}` {
		t.Errorf("empty catalog: %d %s", w.Code, w.Body)
	}
	// A new publish is what makes a skill appear; an artifact type other
	// than the published one never leaks in.
	b.skill("fresh", "", catalog.Public, artifact.FormatMarkdown, skillMD("fresh"))
	b.publish()
	h.clock.Advance(DefaultRevalidateEvery)
	w = h.do(http.MethodGet, "/.well-known/agent-skills/index.json")
	if idx := decodeIndex(t, w.Body.Bytes()); len(idx.Skills) != 1 || idx.Skills[0].Name != "fresh" {
		t.Errorf("after publish: %s", w.Body)
	}
	u, _ := url.Parse("https://skills.example.com/skills/fresh.md")
	if w := h.do(http.MethodGet, u.Path); w.Code != http.StatusOK {
		t.Errorf("fresh artifact: %d", w.Code)
	}
}
