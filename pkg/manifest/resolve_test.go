package manifest

import (
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// crawl follows every href from /manifest.json (and the search routes) like
// a client would, and returns each document's JSON by path and every
// artifact url met. It fails the test on any href that is not a document.
func crawl(t *testing.T, f *Feed) (docs map[string][]byte, urls map[string]string) {
	t.Helper()
	docs, urls = map[string][]byte{}, map[string]string{}
	queue := []string{"/manifest.json", "/api/v1/skills", "/api/v1/subagents"}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if _, seen := docs[path]; seen {
			continue
		}
		res := get(t, f, path)
		if res.Outcome != Document {
			t.Fatalf("href %s: outcome %v (%v), want a document", path, res.Outcome, res.Err)
		}
		body, err := json.Marshal(res.Document)
		if err != nil {
			t.Fatal(err)
		}
		docs[path] = body
		var tree any
		if err := json.Unmarshal(body, &tree); err != nil {
			t.Fatal(err)
		}
		walkJSON(tree, func(obj map[string]any) {
			if href, ok := obj["href"].(string); ok {
				if !strings.HasPrefix(href, "/") || strings.HasPrefix(href, "//") {
					t.Errorf("%s: href %q is not origin-root-absolute", path, href)
				}
				u, err := url.Parse(href)
				if err != nil {
					t.Fatalf("%s: href %q: %v", path, href, err)
				}
				queue = append(queue, u.Path)
			}
			if u, ok := obj["url"].(string); ok {
				urls[u], _ = obj["digest"].(string)
			}
		})
	}
	return docs, urls
}

func walkJSON(v any, fn func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(v)
		for _, c := range v {
			walkJSON(c, fn)
		}
	case []any:
		for _, c := range v {
			walkJSON(c, fn)
		}
	}
}

func TestCrawlEveryHrefAndURLResolves(t *testing.T) {
	fx := newFixture(t)
	for _, auth := range []bool{false, true} {
		for _, pageSize := range []int{0, 2} {
			f := fx.feed(auth)
			f.PageSize = pageSize
			docs, urls := crawl(t, f)
			for u, want := range urls {
				parsed, err := url.Parse(u)
				if err != nil || !parsed.IsAbs() {
					t.Errorf("url %q is not absolute", u)
					continue
				}
				if parsed.Host != base.Host {
					if u != "https://cdn.vendor.example/skills/vendor-skill/SKILL.md" {
						t.Errorf("url %q points off-origin", u)
					}
					continue
				}
				res := get(t, f, parsed.Path)
				if res.Outcome != Bytes {
					t.Errorf("url %s: outcome %v, want bytes", u, res.Outcome)
					continue
				}
				if got := res.Version.Digest.String(); got != want {
					t.Errorf("url %s serves %s, the document promised %s", u, got, want)
				}
				if !res.Version.Digest.Verify(fx.blobs[want]) {
					t.Errorf("url %s: the fixture's bytes do not verify", u)
				}
			}
			// Every visible version of every visible entry is reachable by links.
			for _, e := range append(f.View.Skills(callerOf(auth)), f.View.Subagents(callerOf(auth))...) {
				c := collectionOf(e.Kind)
				for _, v := range e.Versions {
					if _, ok := docs[c.versionHref(e.Name, v.Label)]; !ok {
						t.Errorf("auth=%v pageSize=%d: %s %s is not linked from the feed", auth, pageSize, e.Name, v.Label)
					}
				}
			}
			if !auth {
				for path, body := range docs {
					for _, hidden := range append(slices.Clone(hiddenNames), withdrawnNames...) {
						if strings.Contains(string(body), hidden) {
							t.Errorf("anonymous %s mentions %s", path, hidden)
						}
					}
				}
			}
			for path, body := range docs {
				for _, gone := range append(slices.Clone(withdrawnNames), "partner-only") {
					if strings.Contains(string(body), gone) {
						t.Errorf("auth=%v %s mentions %s", auth, path, gone)
					}
				}
			}
		}
	}
}

// pathsOf lists every route that names an entry, for the entry's first version.
func pathsOf(kind catalog.Kind, name, label, file string) []string {
	c := collectionOf(kind)
	return []string{
		c.identityHref(name),
		c.versionHref(name, label),
		c.api + "/" + name,
		c.api + "/" + name + "/latest",
		c.api + "/" + name + "/" + label,
		c.api + "/" + name + "/" + label + "/" + file,
	}
}

func TestHiddenAndWithdrawnAreNotFoundEverywhere(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name       string
		kind       catalog.Kind
		entry      string
		label      string
		file       string
		visibleTo  []bool // which callers find it
		searchTerm string
	}{
		{"authenticated skill", catalog.KindSkill, "internal-runbook", "1.0.0", "SKILL.md", []bool{true}, "runbook"},
		{"authenticated sub-agent", catalog.KindSubagent, "security-reviewer", "0.9.0", "agent.md", []bool{true}, "security"},
		{"withdrawn skill", catalog.KindSkill, "old-skill", "1.0.0", "SKILL.md", nil, "old"},
		{"withdrawn sub-agent", catalog.KindSubagent, "retired-agent", "1.0.0", "agent.md", nil, "retired"},
		{"listing-only skill", catalog.KindSkill, "partner-only", "1.0.0", "SKILL.md", nil, "partner"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, auth := range []bool{false, true} {
				f := fx.feed(auth)
				want := slices.Contains(tc.visibleTo, auth)
				for _, p := range pathsOf(tc.kind, tc.entry, tc.label, tc.file) {
					res := get(t, f, p)
					if found := res.Outcome != NotFound; found != want {
						t.Errorf("auth=%v %s: found=%v, want %v", auth, p, found, want)
					}
					if res.Outcome == NotFound && *res.Err != *errNotFound {
						t.Errorf("auth=%v %s: not-found body %+v differs from the unknown-name one", auth, p, *res.Err)
					}
				}
				c := collectionOf(tc.kind)
				res := get(t, f, c.api+"?q="+tc.searchTerm)
				hits := 0
				for _, s := range res.Document.([]Summary) {
					if s.Name == tc.entry {
						hits++
					}
				}
				if (hits == 1) != want {
					t.Errorf("auth=%v search %q finds %s %d times, want found=%v", auth, tc.searchTerm, tc.entry, hits, want)
				}
				answers := f.CheckUpdates([]UpdateQuery{{tc.entry, tc.label}, {"never-published", tc.label}})
				if tc.kind == catalog.KindSkill && answers[0].Found != want {
					t.Errorf("auth=%v check-updates found=%v, want %v", auth, answers[0].Found, want)
				}
				if !want || tc.kind == catalog.KindSubagent {
					answers[1].Name = answers[0].Name
					a, b := mustJSON(t, answers[0]), mustJSON(t, answers[1])
					if a != b {
						t.Errorf("auth=%v check-updates answers %s for %s but %s for an unknown name", auth, a, tc.entry, b)
					}
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNotFound(t *testing.T) {
	fx := newFixture(t)
	f := fx.feed(true)
	for _, p := range []string{
		"/", "", "manifest.json", "/manifest.json/", "/manifest", "/Manifest.json",
		"/skills", "/skills/v1", "/skills/v1/", "/skills/v2/index.json", "/skills/v1/index.json/",
		"/skills/v1/pages/all", "/skills/v1/pages/ALL.json", "/skills/v1/pages/.json",
		"/skills/v1/pages/~.json", "/skills/v1/pages/m~m.json", "/skills/v1/pages/t~m.json",
		"/skills/v1/pages/a~b~c.json", "/skills/v1/pages/A~.json", "/skills/v1/pages/a_b~.json",
		"/skills/v1/pages/" + strings.Repeat("a", 65) + "~.json", "/skills/v1/pages/m~t",
		"/skills/v1/nope/index.json", "/skills/v1/deploy-via-pr", "/skills/v1/deploy-via-pr/index",
		"/skills/v1/deploy-via-pr/versions/9.9.9.json", "/skills/v1/deploy-via-pr/versions/1.0.0",
		"/skills/v1/deploy-via-pr/versions/latest.json", "/skills/v1/deploy-via-pr/versions/.json",
		"/skills/v1/deploy-via-pr/version/1.0.0.json", "/skills/v1/technical-support-diagnostician/index.json",
		"/subagents/v1/deploy-via-pr/index.json", "/subagents/v1/pages/~a.json/x",
		"/api", "/api/v1", "/api/v2/skills", "/api/v1/things", "/api/v1/skills/", "/api/v1/skills/nope",
		"/api/v1/skills/check-updates", "/api/v1/subagents/check-updates", "/api/v1/skills/deploy-via-pr/9.9.9",
		"/api/v1/skills/deploy-via-pr/1.0.0/agent.md", "/api/v1/skills/deploy-via-pr/1.0.0/skill.md",
		"/api/v1/skills/deploy-via-pr/latest/SKILL.md", "/api/v1/skills/deploy-via-pr/1.0.0/SKILL.md/x",
		"/api/v1/skills/pdf-tools/2.1.0/SKILL.md", "/api/v1/skills/pdf-tools/2.1.0/archive.tar.gz",
		"/api/v1/skills/log-digest/0.3.0/archive.zip", "/api/v1/subagents/changelog-reviewer/1.0.0/SKILL.md",
		"/api/v1/skills/vendor-skill/sha256-04fb442a6c25/SKILL.md",
		"/api/v1/subagents/deploy-via-pr", "/.well-known/agent-skills/index.json", "/skills/deploy-via-pr.md",
	} {
		res := get(t, f, p)
		if res.Outcome != NotFound || res.Err == nil || *res.Err != *errNotFound {
			t.Errorf("%q: outcome %v err %v, want not found", p, res.Outcome, res.Err)
		}
	}
}

func TestBytes(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		path   string
		auth   bool
		name   string
		label  string
		format artifact.Format
	}{
		{"/api/v1/skills/deploy-via-pr/1.0.0/SKILL.md", false, "deploy-via-pr", "1.0.0", artifact.FormatMarkdown},
		{"/api/v1/skills/deploy-via-pr/1.2.0+build.5/SKILL.md", false, "deploy-via-pr", "1.2.0+build.5", artifact.FormatMarkdown},
		{"/api/v1/skills/deploy-via-pr/1.2.0%2Bbuild.5/SKILL.md", false, "deploy-via-pr", "1.2.0+build.5", artifact.FormatMarkdown},
		{"/api/v1/skills/pdf-tools/2.0.0/archive.zip", false, "pdf-tools", "2.0.0", artifact.FormatZip},
		{"/api/v1/skills/log-digest/0.3.0/archive.tar.gz", false, "log-digest", "0.3.0", artifact.FormatTarGz},
		{"/api/v1/skills/internal-runbook/1.0.0/SKILL.md", true, "internal-runbook", "1.0.0", artifact.FormatMarkdown},
		{"/api/v1/subagents/changelog-reviewer/1.0.0/agent.md", false, "changelog-reviewer", "1.0.0", artifact.FormatMarkdown},
		{"/api/v1/subagents/security-reviewer/0.9.0/agent.md", true, "security-reviewer", "0.9.0", artifact.FormatMarkdown},
	}
	for _, tc := range tests {
		res := get(t, fx.feed(tc.auth), tc.path)
		if res.Outcome != Bytes {
			t.Errorf("%s: outcome %v, want bytes", tc.path, res.Outcome)
			continue
		}
		if res.Entry.Name != tc.name || res.Version.Label != tc.label || res.Version.Format != tc.format {
			t.Errorf("%s: got %s %s %s, want %s %s %s", tc.path, res.Entry.Name, res.Version.Label, res.Version.Format, tc.name, tc.label, tc.format)
		}
	}
}

func TestVersionLabelWithPlusRoundTrips(t *testing.T) {
	fx := newFixture(t)
	f := fx.feed(false)
	doc, ok, err := f.Identity(t.Context(), catalog.KindSkill, "deploy-via-pr")
	if err != nil || !ok {
		t.Fatalf("identity not found: %v", err)
	}
	href := doc.Versions[0].Href
	if doc.Versions[0].Version != "1.2.0+build.5" || href != "/skills/v1/deploy-via-pr/versions/1.2.0+build.5.json" {
		t.Fatalf("newest version link = %+v", doc.Versions[0])
	}
	// As emitted, resolved against the base URL, and as the reference
	// client builds it (Uri.EscapeDataString turns '+' into %2B).
	for _, target := range []string{href, base.ResolveReference(&url.URL{Path: href}).String(),
		"/skills/v1/deploy-via-pr/versions/1.2.0%2Bbuild.5.json"} {
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		res := get(t, f, u.Path)
		if res.Outcome != Document {
			t.Errorf("%s: outcome %v, want the version document", target, res.Outcome)
			continue
		}
		if v := res.Document.(SkillVersion); v.Version != "1.2.0+build.5" || v.Links.Self.Href != href {
			t.Errorf("%s: got version %q self %q", target, v.Version, v.Links.Self.Href)
		}
	}
}

func TestSearchParameters(t *testing.T) {
	fx := newFixture(t)
	f := fx.feed(false)
	bad := []struct{ query, mention string }{
		{"take=0", "take"}, {"take=201", "take"}, {"take=-1", "negative"}, {"take=abc", "not a whole number"},
		{"take=", "not a whole number"}, {"take=1e3", "not a whole number"}, {"take=+5", "not a whole number"},
		{"take=%205", "not a whole number"}, {"take=0x10", "not a whole number"},
		{"skip=-1", "negative"}, {"skip=99999999999999999999999", "out of range"}, {"skip=100001", "out of range"},
		{"take=1&take=2", "once"}, {"q=a&q=b", "once"}, {"q=" + strings.Repeat("x", 257), "at most 256"},
	}
	for _, tc := range bad {
		for _, route := range []string{"/api/v1/skills", "/api/v1/subagents"} {
			res := get(t, f, route+"?"+tc.query)
			if res.Outcome != BadRequest || res.Err.Code != CodeInvalidParameter || !strings.Contains(res.Err.Message, tc.mention) {
				t.Errorf("%s?%s: outcome %v err %+v, want bad request mentioning %q", route, tc.query, res.Outcome, res.Err, tc.mention)
			}
		}
	}
	good := []struct {
		query string
		want  []string
	}{
		{"", []string{"deploy-via-pr", "log-digest", "pdf-tools", "release-notes", "security-audit", "support-triage", "vendor-skill"}},
		{"q=&skip=0&take=200", []string{"deploy-via-pr", "log-digest", "pdf-tools", "release-notes", "security-audit", "support-triage", "vendor-skill"}},
		{"take=2", []string{"deploy-via-pr", "log-digest"}},
		{"skip=5", []string{"support-triage", "vendor-skill"}},
		{"skip=100000", []string{}},
		{"q=pdf&take=1", []string{"pdf-tools"}},
		{"q=security+audit", []string{"security-audit"}},
		{"q=notes&unknown=ignored", []string{"release-notes"}},
	}
	for _, tc := range good {
		res := get(t, f, "/api/v1/skills?"+tc.query)
		if res.Outcome != Document {
			t.Errorf("?%s: outcome %v (%v)", tc.query, res.Outcome, res.Err)
			continue
		}
		var got []string
		for _, s := range res.Document.([]Summary) {
			got = append(got, s.Name)
		}
		if len(got)+len(tc.want) > 0 && !slices.Equal(got, tc.want) {
			t.Errorf("?%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	// An empty result is an empty array, not null.
	if b := mustJSON(t, get(t, f, "/api/v1/skills?q=kubernetes").Document); b != "[]" {
		t.Errorf("no hits marshal as %s, want []", b)
	}
}

func TestDefaultTake(t *testing.T) {
	fx := &fixture{cat: catalog.New(), blobs: map[string][]byte{}}
	for i := range 260 {
		name := "skill-" + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + "-x"
		fx.add(catalog.KindSkill, name+string(rune('a'+i/676)), catalog.Public, ver{label: "1", body: []byte(name), format: artifact.FormatMarkdown})
	}
	f := fx.feed(false)
	if n := len(get(t, f, "/api/v1/skills").Document.([]Summary)); n != DefaultTake {
		t.Errorf("default take returned %d items, want %d", n, DefaultTake)
	}
	if n := len(get(t, f, "/api/v1/skills?take=200").Document.([]Summary)); n != MaxTake {
		t.Errorf("take=200 returned %d items, want %d", n, MaxTake)
	}
}

func TestResolveWithoutCatalogIsAnError(t *testing.T) {
	if _, err := Resolve(t.Context(), nil, audience.Anonymous, base, "/manifest.json", nil); !errors.Is(err, ErrNoCatalog) {
		t.Errorf("nil view: err = %v, want ErrNoCatalog", err)
	}
	v := newFixture(t).view()
	for _, b := range []*url.URL{nil, {Host: "x"}, {Scheme: "https"}} {
		if _, err := Resolve(t.Context(), v, audience.Anonymous, b, "/manifest.json", nil); err == nil {
			t.Errorf("base %v: no error", b)
		}
	}
	if res, err := Resolve(t.Context(), v, audience.Anonymous, base, "/manifest.json", nil); err != nil || res.Outcome != Document {
		t.Errorf("package Resolve: %v %v", res.Outcome, err)
	}
}

func TestSearchClampsNegativeArguments(t *testing.T) {
	f := newFixture(t).feed(false)
	if got := f.Search("skill", "", -5, 2); len(got) != 2 || got[0].Name != "deploy-via-pr" {
		t.Errorf("Search(skip=-5, take=2) = %d items", len(got))
	}
	if got := f.Search("skill", "", 0, -1); len(got) != 0 {
		t.Errorf("Search(take=-1) = %d items, want 0", len(got))
	}
}

func TestZeroResultIsNotFound(t *testing.T) {
	if (Result{}).Outcome != NotFound {
		t.Error("the zero Result must hide, not serve")
	}
}

func TestVersionsNewestFirstByPublishTime(t *testing.T) {
	fx := &fixture{cat: catalog.New(), blobs: map[string][]byte{}}
	md := func(label string, hour int) ver {
		return ver{label: label, body: []byte(label), format: artifact.FormatMarkdown, hour: hour}
	}
	// Publish order a, b, c, d; b and c share an instant, and d was
	// published after c with an older-looking label.
	fx.add(catalog.KindSkill, "s", catalog.Public, md("1.0.0", 1), md("1.1.0", 2), md("1.2.0", 2), md("0.9.1", 3))
	f := fx.feed(false)
	doc, _, _ := f.Identity(t.Context(), catalog.KindSkill, "s")
	var got []string
	for _, v := range doc.Versions {
		got = append(got, v.Version)
	}
	if want := []string{"0.9.1", "1.2.0", "1.1.0", "1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("versions = %v, want %v (ties keep reverse publish order)", got, want)
	}
	sums, _, _ := f.Versions(t.Context(), catalog.KindSkill, "s")
	if sums[0].Version != "0.9.1" || !sums[0].IsLatest || sums[1].IsLatest {
		t.Errorf("/api/v1/skills/s = %+v, want the latest first and only it marked latest", sums)
	}
	page := f.Page(catalog.KindSkill, Range{})
	if vr := page.Items[0].VersionRange; vr != (VersionRange{Min: "1.0.0", Max: "0.9.1", Count: 4}) {
		t.Errorf("versionRange = %+v, want first published, latest, 4", vr)
	}
}
