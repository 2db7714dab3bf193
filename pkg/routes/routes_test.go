package routes

import (
	"strings"
	"testing"
)

// belows are what the tests put for a pattern's "*": one file, a nested
// one, and nothing (the prefix itself).
var belows = []string{"x.md", "skills/x/SKILL.md", ""}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		path    string
		surface Surface
		post    bool
		listing string
	}{
		{"/.well-known/agent-skills/index.json", SurfaceIndex, false, ""},
		{"/.well-known/agent-skills/partner-a/index.json", SurfaceIndex, false, "partner-a"},
		{"/listings/partner-a/.well-known/agent-skills/index.json", SurfaceIndex, false, "partner-a"},
		{"/.well-known/agent-skills/partner-a/skills/x.md", SurfaceArtifact, false, "partner-a"},
		{"/.well-known/agent-skills/index.json/x", SurfaceArtifact, false, "index.json"},
		{"/.well-known/agent-skills/partner-a", SurfaceNone, false, ""},
		{"/.well-known/agent-skills/", SurfaceNone, false, ""},
		{"/.well-known/agent-skills//index.json", SurfaceNone, false, ""},
		{"/.well-known/agent-skills/a/b/index.json", SurfaceArtifact, false, "a"},
		{"/index.json", SurfaceArtifact, false, ""},
		{"/.well-known/skills/index.json", SurfaceNone, false, ""},
		{"/listings/partner-a", SurfaceNone, false, ""},
		{"/listings/partner-a/skills/x.md", SurfaceNone, false, ""},
		{"/listings/partner-a/.well-known/agent-skills/x/index.json", SurfaceNone, false, ""},
		{"/listings//.well-known/agent-skills/index.json", SurfaceNone, false, ""},
		{"/manifest.json", SurfaceNative, false, ""},
		{"/skills/v1", SurfaceNative, false, ""},
		{"/skills/v1/index.json", SurfaceNative, false, ""},
		{"/skills/v1x", SurfaceArtifact, false, ""},
		{"/skills/deploy.md", SurfaceArtifact, false, ""},
		{"/subagents/v1/pages/all.json", SurfaceNative, false, ""},
		{"/subagents/x.md", SurfaceNone, false, ""},
		{"/api/v1/skills", SurfaceNative, false, ""},
		{"/api/v1/skills/check-updates", SurfaceNative, true, ""},
		{"/api/v1/subagents/check-updates", SurfaceNative, true, ""},
		{"/api/v1/skills/x/1.0/SKILL.md", SurfaceNative, false, ""},
		{"/api/v2/skills", SurfaceNone, false, ""},
		{"/api", SurfaceArtifact, false, ""},
		{"/mcp", SurfaceMCP, true, ""},
		{"/mcp/x", SurfaceNone, false, ""},
		{"/catalog/catalog.json", SurfaceCatalog, false, ""},
		{"/catalog/", SurfaceCatalog, false, ""},
		{"/catalog/sign-in", SurfaceCatalog, true, ""},
		{"/catalog/sign-out", SurfaceCatalog, true, ""},
		{"/catalog/skills/x", SurfaceCatalog, false, ""},
		{"/catalog", SurfaceRoot, false, ""},
		{"/blobs/sha256/00", SurfaceNone, false, ""},
		{"/files/x.md", SurfaceNone, false, ""},
		{"/docs/guide.md", SurfaceArtifact, false, ""},
		{"/", SurfaceRoot, false, ""},
		{"relative", SurfaceNone, false, ""},
	} {
		m := Lookup(tc.path)
		if m.Surface != tc.surface || m.Post != tc.post || m.Listing != tc.listing {
			t.Errorf("Lookup(%q) = %q surface %d post %v listing %q; want surface %d post %v listing %q",
				tc.path, m.Pattern, m.Surface, m.Post, m.Listing, tc.surface, tc.post, tc.listing)
		}
	}
}

// TestEveryRouteIsReservedAndNothingElse pins the bargain between the
// router and agent-skills.yaml: a config entry may be served only where the
// server answers artifacts by their path (the top-level area, or its own
// listing's prefix), and every other path the table knows is reserved. A
// row added with a surface of its own is reserved by being there; a row
// shadowed by an earlier one fails here, as it would never answer.
func TestEveryRouteIsReservedAndNothingElse(t *testing.T) {
	for i := range table {
		r := &table[i]
		for _, below := range belows {
			p := r.Example("partner-a", below)
			m := Lookup(p)
			if m.Route != r {
				if strings.HasSuffix(r.Pattern, "*") && below == "" {
					continue // the bare prefix may belong to a row of its own ("/skills/v1")
				}
				t.Errorf("%s: %s is answered by %s, an earlier row", r.Pattern, p, m.Pattern)
				continue
			}
			owner := "" // who may put an artifact here
			if strings.Contains(r.Pattern, listingParam) {
				owner = "partner-a"
			}
			for _, listing := range []string{"", "partner-a", "partner-b"} {
				reason := Reserved(p, listing)
				free := r.Surface == SurfaceArtifact && listing == owner
				if free != (reason == "") {
					t.Errorf("%s: Reserved(%q, listing %q) = %q; want reserved: %v", r.Pattern, p, listing, reason, !free)
				}
			}
		}
	}
}

// TestPathsAreRoutes checks that every path the feeds link to is answered
// by the surface that serves it, so a link cannot point at an artifact
// area a config entry could take.
func TestPathsAreRoutes(t *testing.T) {
	for _, tc := range []struct {
		path    string
		surface Surface
		post    bool
	}{
		{RFCIndex, SurfaceIndex, false},
		{ListingIndex("partner-a"), SurfaceIndex, false},
		{ListingScopedIndex("partner-a"), SurfaceIndex, false},
		{ListingScope("partner-a") + RFCIndex, SurfaceIndex, false},
		{Manifest, SurfaceNative, false},
		{SkillFeed + "/index.json", SurfaceNative, false},
		{SubagentFeed + "/index.json", SurfaceNative, false},
		{SkillAPI, SurfaceNative, false},
		{SubagentAPI, SurfaceNative, false},
		{SkillAPI + "/x/1.0/SKILL.md", SurfaceNative, false},
		{SkillCheckUpdates, SurfaceNative, true},
		{SubagentCheckUpdates, SurfaceNative, true},
		{MCP, SurfaceMCP, true},
	} {
		m := Lookup(tc.path)
		if m.Surface != tc.surface || m.Post != tc.post {
			t.Errorf("%s: answered by %q (surface %d, post %v), want surface %d post %v", tc.path, m.Pattern, m.Surface, m.Post, tc.surface, tc.post)
		}
		if reason := Reserved(tc.path, ""); reason == "" {
			t.Errorf("%s is not reserved against config entries", tc.path)
		}
	}
	if got := ListingPrefix("partner-a") + "index.json"; got != ListingIndex("partner-a") {
		t.Errorf("ListingIndex = %q, want the index below ListingPrefix %q", ListingIndex("partner-a"), got)
	}
}

func TestPatternsAreWellFormed(t *testing.T) {
	for _, r := range All() {
		p := r.Pattern
		if !strings.HasPrefix(p, "/") || strings.Count(p, listingParam) > 1 || strings.Contains(strings.TrimSuffix(p, "*"), "*") {
			t.Errorf("pattern %q: want a path with at most one %s and a '*' only at the end", p, listingParam)
		}
		if _, after, ok := strings.Cut(p, listingParam); ok && !strings.HasPrefix(after, "/") {
			t.Errorf("pattern %q: %s must be followed by more segments", p, listingParam)
		}
		if r.What == "" {
			t.Errorf("pattern %q: no What", p)
		}
		if r.Post && r.Surface != SurfaceNative && r.Surface != SurfaceMCP && r.Surface != SurfaceCatalog {
			t.Errorf("pattern %q: only the native API, MCP and the web catalog's forms take POST", p)
		}
	}
	if last := table[len(table)-1]; last.Pattern != "/*" || last.Surface != SurfaceArtifact {
		t.Errorf("the last row is %q: want /* for the top-level artifacts", last.Pattern)
	}
}

func TestSkillURI(t *testing.T) {
	for _, tc := range []struct {
		listing, name, file, uri string
	}{
		{"", "pdf-tools", "SKILL.md", "skill://pdf-tools/SKILL.md"},
		{"", "pdf-tools", "scripts/extract.py", "skill://pdf-tools/scripts/extract.py"},
		{"", "pdf-tools", "", "skill://pdf-tools"},
		{"partner-a", "partner-faq", "SKILL.md", "skill://partner-a.listing/partner-faq/SKILL.md"},
		{"partner-a", "partner-faq", "", "skill://partner-a.listing/partner-faq"},
		{"", "x", "docs/a b#1%.md", "skill://x/docs/a%20b%231%25.md"},
		{"", "x", "naïve.md", "skill://x/na%C3%AFve.md"},
	} {
		if got := SkillURI(tc.listing, tc.name, tc.file); got != tc.uri {
			t.Errorf("SkillURI(%q, %q, %q) = %q, want %q", tc.listing, tc.name, tc.file, got, tc.uri)
		}
		l, n, f, ok := ParseSkillURI(tc.uri)
		if !ok || l != tc.listing || n != tc.name || f != tc.file {
			t.Errorf("ParseSkillURI(%q) = %q, %q, %q, %v", tc.uri, l, n, f, ok)
		}
	}
	for _, bad := range []string{
		"",
		"skill://",
		"skill:///SKILL.md",
		"file://x/SKILL.md",
		"Skill://x/SKILL.md",
		"skill://X/SKILL.md",
		"skill://x.y/SKILL.md",
		"skill://.listing/x/SKILL.md",
		"skill://a.listing",
		"skill://a.listing/",
		"skill://a.listing/b.c/SKILL.md",
		"skill://x/",
		"skill://x//SKILL.md",
		"skill://x/./SKILL.md",
		"skill://x/../y/SKILL.md",
		"skill://x/a%2Fb",
		"skill://x/a%2e%2e",
		"skill://x/%53KILL.md", // a second spelling of SKILL.md
		"skill://x/a b",
		"skill://x/%zz",
		"skill://x%41/SKILL.md",
	} {
		if l, n, f, ok := ParseSkillURI(bad); ok {
			t.Errorf("ParseSkillURI(%q) = %q, %q, %q, ok; want refused", bad, l, n, f)
		}
	}
}

// TestReservedNamesCoverTheTable derives the names a skill cannot have from
// the table itself: any segment of a pattern that, as a skill's name, would
// put its dropped files inside a route (skills/<name>/SKILL.md) or its API
// path on a POST route must be in ReservedNames, so a route added with a
// new segment fails here until the name is reserved too.
func TestReservedNamesCoverTheTable(t *testing.T) {
	reserved := map[string]bool{}
	for _, n := range ReservedNames {
		reserved[n] = true
	}
	for _, r := range All() {
		for _, seg := range strings.Split(strings.Trim(r.Pattern, "/*"), "/") {
			if seg == "" || seg == listingParam || !plainSegment(seg) {
				continue
			}
			shadowed := Lookup("/skills/"+seg+"/SKILL.md").Surface != SurfaceArtifact ||
				Lookup("/skills/"+seg+".md").Surface != SurfaceArtifact ||
				Lookup(SkillAPI+"/"+seg).Post || Lookup(SubagentAPI+"/"+seg).Post
			if shadowed && !reserved[seg] {
				t.Errorf("a skill named %q would be shadowed by %s: add it to ReservedNames", seg, r.Pattern)
			}
		}
	}
	for _, n := range ReservedNames {
		if !plainSegment(n) {
			t.Errorf("reserved name %q is not a name", n)
		}
	}
}

// TestCatalogPaths checks that ParseCatalog reads back every path the
// Catalog* helpers build, that they are answered by the web catalog, and
// that nothing else below /catalog/ names a page.
func TestCatalogPaths(t *testing.T) {
	for _, tc := range []struct {
		path string
		want CatalogPage
	}{
		{Catalog, CatalogPage{Kind: CatalogList}},
		{CatalogSignIn, CatalogPage{Kind: CatalogSignInPage}},
		{CatalogSignOut, CatalogPage{Kind: CatalogSignOutPage}},
		{CatalogAssets + "catalog.css", CatalogPage{Kind: CatalogAsset, Name: "catalog.css"}},
		{CatalogSkill("", "pdf-tools"), CatalogPage{Kind: CatalogSkillPage, Name: "pdf-tools"}},
		{CatalogSkill("partner-a", "faq"), CatalogPage{Kind: CatalogSkillPage, Listing: "partner-a", Name: "faq"}},
		{CatalogSubagent("reviewer"), CatalogPage{Kind: CatalogSubagentPage, Name: "reviewer"}},
		{CatalogListing("partner-a"), CatalogPage{Kind: CatalogListingPage, Listing: "partner-a"}},
		{"/catalog/listings/", CatalogPage{Kind: CatalogListings}},
		{"/catalog/listings/a", CatalogPage{Kind: CatalogListingNoSlash, Listing: "a"}},
	} {
		if got := ParseCatalog(tc.path); got != tc.want {
			t.Errorf("ParseCatalog(%q) = %+v; want %+v", tc.path, got, tc.want)
		}
		if m := Lookup(tc.path); m.Surface != SurfaceCatalog {
			t.Errorf("Lookup(%q) = surface %d; want the web catalog", tc.path, m.Surface)
		}
	}
	for _, p := range []string{
		"/catalog", "/catalog/listing/", "/catalog/skills/", "/catalog/skills/x/", "/catalog/skills/x/y",
		"/catalog/listings//", "/catalog/listings/a/skills/", "/catalog/listings/a/b/c", "/catalog/assets/",
		"/catalog/subagents/", "/catalog/sign-in/", "/catalog/other", "/catalog/catalog.json", "/skills/x",
	} {
		if got := ParseCatalog(p); got.Kind != CatalogUnknown {
			t.Errorf("ParseCatalog(%q) = %+v; want no page", p, got)
		}
	}
}

// TestBundles: the path of an artifact followed by BundleSuffix is its
// bundle, in every area artifacts are served from, and no config entry may
// be served at one.
func TestBundles(t *testing.T) {
	for _, tc := range []struct {
		path, artifact string
		surface        Surface
		listing        string
	}{
		{"/skills/x.md.sigstore.json", "/skills/x.md", SurfaceArtifact, ""},
		{"/docs/guide.md.sigstore.json", "/docs/guide.md", SurfaceArtifact, ""},
		{"/.well-known/agent-skills/partner-a/skills/x.zip.sigstore.json", "/.well-known/agent-skills/partner-a/skills/x.zip", SurfaceArtifact, "partner-a"},
		{"/api/v1/skills/x/1.0/SKILL.md.sigstore.json", "/api/v1/skills/x/1.0/SKILL.md", SurfaceNative, ""},
	} {
		m := Lookup(tc.path)
		if !m.Bundle || m.Artifact != tc.artifact || m.Surface != tc.surface || m.Listing != tc.listing {
			t.Errorf("Lookup(%q) = bundle %v of %q, surface %d, listing %q", tc.path, m.Bundle, m.Artifact, m.Surface, m.Listing)
		}
		if tc.surface == SurfaceArtifact && !strings.Contains(Reserved(tc.path, tc.listing), "bundles") {
			t.Errorf("Reserved(%q, %q) = %q, want the bundles named", tc.path, tc.listing, Reserved(tc.path, tc.listing))
		}
	}
	for _, p := range []string{"/.sigstore.json", "/skills/.sigstore.json", "/skills/x.md", "/.well-known/agent-skills/index.json.sigstore.json",
		"/.well-known/ai-catalog.json.sigstore.json"} {
		if m := Lookup(p); m.Bundle {
			t.Errorf("Lookup(%q) is a bundle of %q", p, m.Artifact)
		}
	}
	if got := Bundle("/skills/x.md"); got != "/skills/x.md.sigstore.json" {
		t.Errorf("Bundle = %q", got)
	}
}

func TestProvenanceRoutes(t *testing.T) {
	for _, p := range []string{AICatalog, DIDDocument, SigningKey} {
		m := Lookup(p)
		if m.Surface != SurfaceProvenance || m.Post {
			t.Errorf("%s: surface %d post %v", p, m.Surface, m.Post)
		}
		if Reserved(p, "") == "" {
			t.Errorf("%s is not reserved against config entries", p)
		}
	}
	if m := Lookup("/.well-known/skilldrop/other"); m.Surface != SurfaceNone {
		t.Errorf("/.well-known/skilldrop/other is answered by %q", m.Pattern)
	}
}

// TestRedactCapability: a capability URL's key is named by its id, and any
// path where a key could follow a "k" segment (doubled or leading slashes,
// case, dot segments, percent-encoding) has every segment after it
// redacted, the routed rest of a well-formed one aside.
func TestRedactCapability(t *testing.T) {
	const tok = "pathbeta0123456789"
	for path, want := range map[string]string{
		"/k/" + tok + "/.well-known/agent-skills/index.json": "/k/[cli]/.well-known/agent-skills/index.json",
		"/k/" + tok:                            "/k/[cli]",
		"/k//" + tok + "/.well-known/x":        "/k//[…]/[…]/[…]",
		"/k/./" + tok + "/x":                   "/k/./[…]/[…]",
		"//k/" + tok + "/x":                    "//k/[…]/[…]",
		"/K/" + tok + "/x":                     "/K/[…]/[…]",
		"/./k/" + tok:                          "/./k/[…]",
		"/x/../k/" + tok + "/y":                "/x/../k/[…]/[…]",
		"/%6b/" + tok:                          "/%6b/[…]",
		"/%256B/" + tok:                        "/%256B/[…]",
		"/k%2f" + tok + "/y":                   "/[…]/[…]",
		"/a\\k\\" + tok:                        "/[…]",
		"/.well-known/agent-skills/index.json": "/.well-known/agent-skills/index.json",
		"/skills/kit/SKILL.md":                 "/skills/kit/SKILL.md",
	} {
		if got := RedactCapability(path, "cli"); got != want {
			t.Errorf("RedactCapability(%q) = %q, want %q", path, got, want)
		}
	}
}
