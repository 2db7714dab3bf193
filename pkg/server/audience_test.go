package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// audienceKeys are named keys of the tests below, by id: each id is its
// key's audiences.
var audienceKeys = map[string][]string{"a": {"partner-a"}, "b": {"partner-b"}, "ab": {"partner-a", "partner-b"}, "none": nil, "all": {"*"}}

func audienceStore(t testing.TB) apikey.Set {
	t.Helper()
	var entries []string
	for id, aud := range audienceKeys {
		q := make([]string, len(aud))
		for i, a := range aud {
			q[i] = `"` + a + `"`
		}
		entries = append(entries, fmt.Sprintf(`{"id":%q,"sha256":%q,"audiences":[%s],"path":true}`, id, apikey.Hash("sk-"+id+"-key"), strings.Join(q, ",")))
	}
	s, err := apikey.Parse(`{"keys":[` + strings.Join(entries, ",") + `]}`)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStoredDocumentsPerClass: the indexer stores the large documents once
// per class of caller (anonymous, and each audience set the config can
// tell apart), and every caller is answered the stored document of its
// class, byte for byte the document rendered for it alone.
func TestStoredDocumentsPerClass(t *testing.T) {
	st := store.NewVersionedMemory()
	ctx := context.Background()
	var cfg strings.Builder
	cfg.WriteString("version: 1\nskills:\n")
	for i := range 400 {
		name := fmt.Sprintf("skill-%04d", i)
		body := fmt.Sprintf("---\nname: %s\ndescription: %s\n---\nBody.\n", name, strings.Repeat(fmt.Sprintf("Skill %d does one careful thing. ", i), 8))
		if _, err := st.Put(ctx, "skills/"+name+".md", []byte(body), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		switch i % 4 {
		case 1:
			fmt.Fprintf(&cfg, "  - name: %s\n    audiences: [partner-a]\n", name)
		case 2:
			fmt.Fprintf(&cfg, "  - name: %s\n    audiences: [partner-b]\n", name)
		case 3:
			fmt.Fprintf(&cfg, "  - name: %s\n    visibility: authenticated\n", name)
		}
	}
	if _, err := st.Put(ctx, "agent-skills.yaml", []byte(cfg.String()), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	origin, _ := url.Parse("https://skills.example.com")
	ix, err := indexer.New(indexer.Config{Store: st, Origins: []*url.URL{origin}, MinStoredDocument: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	c, _, err := catalog.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var classes []string
	for _, d := range c.Documents {
		if d.Path == routes.RFCIndex {
			classes = append(classes, d.Class().String())
		}
	}
	// anonymous, any key, partner-a, partner-b, both.
	if want := "anonymous,authenticated,audiences partner-a,audiences partner-a,partner-b,audiences partner-b"; strings.Join(classes, ",") != want {
		t.Fatalf("stored RFC indexes for %v, want %s", classes, want)
	}
	h := newHarness(t, st, func(c *Config) { c.Keys = audienceStore(t) })
	v := catalog.Compile(c, "")
	for id, aud := range map[string][]string{"": nil, "a": audienceKeys["a"], "b": audienceKeys["b"], "ab": audienceKeys["ab"], "none": nil, "all": nil} {
		caller := audience.Anonymous
		var hdr []string
		if id != "" {
			caller = audience.Caller{Authenticated: true, All: id == "all", Audiences: audience.NewSet(aud...)}
			hdr = []string{bearer("sk-" + id + "-key")}
		}
		for path, want := range map[string][]byte{
			routes.RFCIndex: feeddoc.Render(discovery.TopLevel(v, caller, origin), feeddoc.StoredLevel).Body,
			routes.AllPage(routes.SkillFeed): feeddoc.Render((&manifest.Feed{View: v, Caller: caller}).Page(catalog.KindSkill, manifest.Range{}),
				feeddoc.StoredLevel).Body,
		} {
			w := h.do(http.MethodGet, path, hdr...)
			if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), want) {
				t.Errorf("key %q, %s: status %d, %d bytes; want the %d bytes rendered for it", id, path, w.Code, w.Body.Len(), len(want))
			}
			if d := c.Document(discovery.Origin(origin), path, caller); path == routes.RFCIndex && d == nil {
				t.Errorf("key %q: no stored index for its class", id)
			}
		}
	}
}

// TestCapabilityURLs: under /k/<key>/ the RFC feed is answered as for the
// key (the documents' URLs under it too), with Referrer-Policy no-referrer
// and Cache-Control private; nothing else is served there; a key that is
// not a path key, a path with a header too, and an unknown key are 401;
// and the key never reaches the log, where the path names the key's id.
func TestCapabilityURLs(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	keys, err := apikey.Parse(`{"keys":[{"id":"cli","sha256":"` + apikey.Hash(goodKey) + `","path":true},` +
		`{"id":"header-only","sha256":"` + apikey.Hash(otherKey) + `"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, func(c *Config) { c.Keys = keys })
	k := routes.Capability(goodKey, "")
	idx := h.do(http.MethodGet, k+routes.RFCIndex)
	if idx.Code != http.StatusOK || idx.Header().Get("Referrer-Policy") != "no-referrer" || !strings.HasPrefix(idx.Header().Get("Cache-Control"), "private") {
		t.Fatalf("index: %d, Referrer-Policy %q, Cache-Control %q", idx.Code, idx.Header().Get("Referrer-Policy"), idx.Header().Get("Cache-Control"))
	}
	if !strings.Contains(idx.Body.String(), `"url":"https://skills.example.com`+k+`/skills/secret-rotation/SKILL.md"`) {
		t.Fatalf("the index does not point under the capability URL, or hides the authenticated skill: %s", idx.Body)
	}
	art := h.do(http.MethodGet, k+"/skills/secret-rotation/SKILL.md")
	if art.Code != http.StatusOK || art.Header().Get("Cache-Control") != ccPrivate || art.Header().Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("artifact: %d, Cache-Control %q", art.Code, art.Header().Get("Cache-Control"))
	}
	if pub := h.do(http.MethodGet, k+"/skills/bundle-zip.zip"); pub.Code != http.StatusOK || pub.Header().Get("Cache-Control") != ccPrivate {
		t.Errorf("a public artifact under the key: %d, Cache-Control %q, want private", pub.Code, pub.Header().Get("Cache-Control"))
	}
	for _, p := range []string{routes.Manifest, routes.SkillAPI, routes.MCP, "", "/"} {
		if w := h.do(http.MethodGet, k+p); w.Code != http.StatusNotFound || w.Header().Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s under the key: %d, want 404 with no referrer", p, w.Code)
		}
	}
	for name, w := range map[string]*httptest.ResponseRecorder{
		"a header-only key": h.do(http.MethodGet, routes.Capability(otherKey, routes.RFCIndex)),
		"an unknown key":    h.do(http.MethodGet, routes.Capability("sk-unknown", routes.RFCIndex)),
		"a header too":      h.do(http.MethodGet, k+routes.RFCIndex, bearer(goodKey)),
		"no key":            h.do(http.MethodGet, routes.CapabilityPrefix),
		"a base64 key":      h.do(http.MethodGet, routes.Capability("q8+Zx1w==", routes.RFCIndex)),
	} {
		if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d, want 401 with a challenge", name, w.Code)
		}
	}
	logs := h.logs.String()
	if strings.Contains(logs, goodKey) || strings.Contains(logs, otherKey) {
		t.Fatalf("a key is in the log:\n%s", logs)
	}
	for _, want := range []string{`"path":"/k/[cli]/.well-known/agent-skills/index.json"`, `"path":"/k/[header-only]/.well-known/agent-skills/index.json"`,
		`"auth_failure":"not_a_path_key"`, `"auth_failure":"path_key_characters"`, `"event":"agent_skill.credential_refused","key_id":"header-only","audiences":[],"reason":"not_a_path_key"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log has no %s", want)
		}
	}
}

// TestCatalogSessionsSeeTheirKeysAudiences: a web catalog session is its
// key's caller, audiences included, as the key store says now: it lists
// what the feeds give the key, and ends when the key expires.
func TestCatalogSessionsSeeTheirKeysAudiences(t *testing.T) {
	st := store.NewMemory()
	b := standardBucket(t, st)
	b.cat.Skills["secret-rotation"].Audiences = audience.NewSet("partner-b")
	withFiles(b)
	b.publish()
	now := newClock().Now()
	store := func(expires string) apikey.Set {
		s, err := apikey.Parse(`{"keys":[{"id":"partner-a","sha256":"` + apikey.Hash(goodKey) + `","audiences":["partner-a"]` + expires + `},` +
			`{"id":"partner-b","sha256":"` + apikey.Hash(otherKey) + `","audiences":["partner-b"]}]}`)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	keys := &swappable{set: store("")}
	h := newHarness(t, st, func(c *Config) { c.Keys, c.SessionSecret = keys, testSecret })
	for key, sees := range map[string]bool{goodKey: false, otherKey: true} {
		page := listed(t, h.do(http.MethodGet, "/catalog/?kind=skill", cookieHeader(signIn(t, h, key))))
		feed := fetchIndexNames(t, h, key)
		if slices.Contains(page, "secret-rotation") != sees || slices.Contains(feed, "secret-rotation") != sees {
			t.Errorf("key %s: the catalog lists %v, the feed %v; want secret-rotation there: %v", key[:12], page, feed, sees)
		}
	}
	c := cookieHeader(signIn(t, h, goodKey))
	keys.swap(store(`,"expires":"` + now.Add(-time.Second).Format(time.RFC3339) + `"`))
	if w := h.do(http.MethodGet, "/catalog/", c); !strings.Contains(w.Header().Get("Set-Cookie"), "Max-Age=0") && !strings.Contains(w.Header().Get("Set-Cookie"), "Expires=") {
		t.Errorf("after the key expired the session cookie was not cleared: %q", w.Header().Get("Set-Cookie"))
	}
	// The line that starts a session names the key's audiences, as the
	// audit events do.
	for _, want := range []string{`"key_id":"partner-a","audiences":["partner-a"],"expires":`,
		`"key_id":"partner-b","audiences":["partner-b"],"expires":`} {
		if !strings.Contains(h.logs.String(), want) {
			t.Errorf("the log has no %s:\n%s", want, h.logs.String())
		}
	}
}

// swappable is a key store a test replaces.
type swappable struct {
	mu  sync.Mutex
	set apikey.Set
}

func (s *swappable) Hashes(context.Context) (apikey.Set, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set, nil
}

func (s *swappable) swap(set apikey.Set) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set = set
}

// fetchIndexNames is the RFC index's names for a key.
func fetchIndexNames(t *testing.T, h *harness, key string) []string {
	t.Helper()
	w := h.do(http.MethodGet, routes.RFCIndex, bearer(key))
	var idx discovery.Index
	if err := json.Unmarshal(w.Body.Bytes(), &idx); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range idx.Skills {
		out = append(out, s.Name)
	}
	return out
}

// TestRefusedKeysAreAuditedWithTheirAudiences: the credential_refused event
// of a known key names its audiences as the store has them ("*" for every
// audience, [] for none), never null; the access line of a valid key with
// no audiences writes [] too.
func TestRefusedKeysAreAuditedWithTheirAudiences(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	keys, err := apikey.Parse(`{"keys":[` +
		`{"id":"old-partner","sha256":"` + apikey.Hash("sk-old-partner") + `","audiences":["partner-b","partner-a"],"expires":"2020-01-01T00:00:00Z","path":true},` +
		`{"id":"old-staff","sha256":"` + apikey.Hash("sk-old-staff") + `","audiences":["*"],"expires":"2020-01-01T00:00:00Z"},` +
		`{"id":"plain","sha256":"` + apikey.Hash("sk-plain") + `"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, st, func(c *Config) { c.Keys = keys })
	for _, r := range []struct{ target, header string }{
		{routes.RFCIndex, bearer("sk-old-partner")},
		{routes.Capability("sk-old-partner", routes.RFCIndex), ""},
		{routes.RFCIndex, bearer("sk-old-staff")},
		{routes.Capability("sk-plain", routes.RFCIndex), ""},
	} {
		var hdr []string
		if r.header != "" {
			hdr = append(hdr, r.header)
		}
		if w := h.do(http.MethodGet, r.target, hdr...); w.Code != http.StatusUnauthorized {
			t.Fatalf("%s: %d, want 401", r.target, w.Code)
		}
	}
	if w := h.do(http.MethodGet, routes.RFCIndex, bearer("sk-plain")); w.Code != http.StatusOK {
		t.Fatalf("a valid key: %d", w.Code)
	}
	logs := h.logs.String()
	if strings.Contains(logs, `"audiences":null`) {
		t.Errorf("a line writes audiences as null:\n%s", logs)
	}
	for _, want := range []string{
		`"key_id":"old-partner","audiences":["partner-a","partner-b"],"reason":"expired_key","path":"/.well-known/agent-skills/index.json"`,
		`"key_id":"old-partner","audiences":["partner-a","partner-b"],"reason":"expired_key","path":"/k/[old-partner]/.well-known/agent-skills/index.json"`,
		`"key_id":"old-staff","audiences":["*"],"reason":"expired_key"`,
		`"key_id":"plain","audiences":[],"reason":"not_a_path_key"`,
		`"authenticated":true,"key_id":"plain","audiences":[]`,
		// The access lines of the refused known keys name their audiences too.
		`"authenticated":false,"key_id":"old-partner","audiences":["partner-a","partner-b"],"auth_failure":"expired_key"`,
		`"authenticated":false,"key_id":"old-staff","audiences":["*"],"auth_failure":"expired_key"`,
		`"authenticated":false,"key_id":"plain","audiences":[],"auth_failure":"not_a_path_key"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log has no %s:\n%s", want, logs)
		}
	}
}

// TestASessionIsItsOwnKeysNotItsIDs: a session is the caller of the key it
// was issued for (its id and hash), not of whichever key the store lists
// first under that id. Here a named key's id spells a bare hash's id (the
// first 8 hex of its hash), and the bare key sees every audience: the named
// key's session must still see only partner-a's entries, and after the
// named key is re-created under its id with another secret, its old session
// is not revived.
func TestASessionIsItsOwnKeysNotItsIDs(t *testing.T) {
	st := store.NewMemory()
	b := standardBucket(t, st)
	b.cat.Skills["secret-rotation"].Audiences = audience.NewSet("partner-b")
	withFiles(b)
	b.publish()
	bare, err := apikey.ParseSet(apikey.Hash(otherKey))
	if err != nil {
		t.Fatal(err)
	}
	named := func(key string) apikey.Set {
		s, err := apikey.Parse(`{"keys":[{"id":"` + apikey.KeyID(otherKey) + `","sha256":"` + apikey.Hash(key) + `","audiences":["partner-a"]}]}`)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	keys := &swappable{set: bare.Union(named(goodKey))}
	h := newHarness(t, st, func(c *Config) { c.Keys, c.SessionSecret = keys, testSecret })
	if feed := fetchIndexNames(t, h, goodKey); slices.Contains(feed, "secret-rotation") {
		t.Fatalf("the feed gives the partner-a key %v", feed)
	}
	c := cookieHeader(signIn(t, h, goodKey))
	if page := listed(t, h.do(http.MethodGet, "/catalog/?kind=skill", c)); slices.Contains(page, "secret-rotation") || !slices.Contains(page, "deploy-via-pr") {
		t.Errorf("the partner-a key's session lists %v: another key's view, or none", page)
	}
	keys.swap(bare.Union(named("sk-recreated-partner-a-key")))
	if w := h.do(http.MethodGet, "/catalog/?kind=skill", c); !strings.Contains(w.Header().Get("Set-Cookie"), "Max-Age=0") && !strings.Contains(w.Header().Get("Set-Cookie"), "Expires=") {
		t.Errorf("after the key was re-created with another secret, its session was not cleared: %q", w.Header().Get("Set-Cookie"))
	}
}
