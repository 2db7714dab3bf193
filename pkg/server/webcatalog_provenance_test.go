package server

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// copyable returns the text of a page's copyable block with the id, as a
// browser shows it; "" when the page has none.
func copyable(page, id string) string {
	m := regexp.MustCompile(`(?s)<code id="` + id + `">(.*?)</code>`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestSkillPageLinksItsProvenanceAndHowToVerifyIt: a signed version's page
// links the bundle the native version document links, and its cosign
// commands fetch this origin's key, the artifact and that bundle, which
// verifies against the key; skilldrop verify is given for skills (with the
// listing, and the key header for an authenticated one).
func TestSkillPageLinksItsProvenanceAndHowToVerifyIt(t *testing.T) {
	key, _ := signing.Generate()
	h := newHarness(t, signedBucket(t, key, signedFiles))
	const o = "https://skills.example.com"
	for _, tc := range []struct {
		page, doc, verify string
		headers           []string
	}{
		{"/catalog/skills/alpha", "/skills/v1/alpha/versions/1.0.json", "skilldrop verify " + o + " --key key.pem", nil},
		{"/catalog/subagents/reviewer", "/subagents/v1/reviewer/versions/1.json", "", nil},
		{"/catalog/listings/partner-a/skills/faq", "", "skilldrop verify " + o + " --key key.pem --listing partner-a", nil},
		{"/catalog/skills/secret", "/skills/v1/secret/versions/1.json",
			"skilldrop verify " + o + ` --key key.pem --key-header "Authorization: Bearer $SKILLDROP_API_KEY"`, []string{bearer(goodKey)}},
	} {
		w := h.do(http.MethodGet, tc.page, tc.headers...)
		page := w.Body.String()
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", tc.page, w.Code)
		}
		// A public bundle is linked; one that needs a key is its address as
		// text (a link would send no key), fetched as the commands do.
		link := regexp.MustCompile(`<a href="(` + o + `/[^"]+\.sigstore\.json)">Sigstore bundle</a>`).FindStringSubmatch(page)
		if tc.headers != nil {
			if link != nil {
				t.Errorf("%s links its bundle, which needs the key header", tc.page)
			}
			link = regexp.MustCompile(`Sigstore bundle, <code class="path">(` + o + `/[^"<]+\.sigstore\.json)</code>`).FindStringSubmatch(page)
		}
		if link == nil {
			t.Errorf("%s links no bundle", tc.page)
			continue
		}
		if tc.doc != "" && !strings.Contains(h.do(http.MethodGet, tc.doc, tc.headers...).Body.String(), `"bundle":"`+link[1]+`"`) {
			t.Errorf("%s: the bundle %s is not the one the native version document links", tc.page, link[1])
		}
		cosign := copyable(page, "verify-cosign")
		urls := regexp.MustCompile(`curl -fsSL (?:-H "Authorization: Bearer \$SKILLDROP_API_KEY" )?-o \S+ (\S+)\n`).FindAllStringSubmatch(cosign, -1)
		if !strings.HasPrefix(cosign, "curl -fsS "+o+"/.well-known/skilldrop/signing-key.pem > key.pem") || len(urls) != 2 ||
			urls[1][1] != link[1] || !strings.Contains(cosign, "cosign verify-blob-attestation --key key.pem --insecure-ignore-tlog=true") ||
			!strings.Contains(cosign, "--type "+provenance.PredicateType) {
			t.Errorf("%s: cosign commands\n%s", tc.page, cosign)
			continue
		}
		if (tc.headers != nil) != strings.Contains(cosign, "Authorization") {
			t.Errorf("%s: the downloads' key header is wrong:\n%s", tc.page, cosign)
		}
		// What the commands fetch verifies: the bundle attests the artifact's digest with the key.
		art := h.do(http.MethodGet, strings.TrimPrefix(urls[0][1], o), tc.headers...)
		b := h.do(http.MethodGet, strings.TrimPrefix(urls[1][1], o), tc.headers...)
		got, err := provenance.Verify(b.Body.Bytes(), key.Public())
		if art.Code != http.StatusOK || b.Code != http.StatusOK || err != nil || got.Subject != digest.Of(art.Body.Bytes()) {
			t.Errorf("%s: artifact %d, bundle %d: %v", tc.page, art.Code, b.Code, err)
		}
		if !strings.Contains(page, `<span class="digest">`+digest.Of(b.Body.Bytes()).String()+`</span>`) {
			t.Errorf("%s does not show the bundle's digest", tc.page)
		}
		if got := copyable(page, "verify-skilldrop"); got != tc.verify {
			t.Errorf("%s: skilldrop verify %q; want %q", tc.page, got, tc.verify)
		}
	}
	// Unsigned: no bundle, no commands.
	u := newHarness(t, indexed(t, map[string]string{"skills/alpha.md": skilltest.SkillMD("alpha", "1.0", "Alpha.")}))
	page := u.do(http.MethodGet, "/catalog/skills/alpha").Body.String()
	if !strings.Contains(page, "<dd>not signed</dd>") || strings.Contains(page, "sigstore") || copyable(page, "verify-cosign") != "" {
		t.Error("an unsigned version's page shows provenance")
	}
}

// TestAuthenticatedSkillPageLinksOnlyWhatTheCookieOpens: signed in, every
// link of an authenticated skill's page opens in the same browser (the
// cookie alone); the version history and the bundle, which need the key
// header, are addresses shown as text with the curl command that sends it.
func TestAuthenticatedSkillPageLinksOnlyWhatTheCookieOpens(t *testing.T) {
	key, _ := signing.Generate()
	h := newHarness(t, signedBucket(t, key, signedFiles), func(c *Config) { c.SessionSecret = testSecret })
	cookie := cookieHeader(signIn(t, h, goodKey))
	const o = "https://skills.example.com"
	w := h.do(http.MethodGet, "/catalog/skills/secret", cookie)
	page := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("page: %d", w.Code)
	}
	hrefs := regexp.MustCompile(`href="([^"#][^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(hrefs) == 0 {
		t.Fatal("the page links nothing")
	}
	for _, m := range hrefs {
		target := html.UnescapeString(m[1])
		if !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, o+"/") {
			continue
		}
		if r := h.do(http.MethodGet, strings.TrimPrefix(target, o), cookie); r.Code != http.StatusOK {
			t.Errorf("the page links %s, which answers the signed-in browser %d", target, r.Code)
		}
	}
	if !regexp.MustCompile(`<td>1 <span class="badge">latest</span><br><code class="path">` + o + `/api/v1/skills/secret/1/SKILL.md</code>`).MatchString(page) {
		t.Error("the version history does not show the versions' addresses")
	}
	if !strings.Contains(page, html.EscapeString(`curl -fsSL -H "Authorization: Bearer $SKILLDROP_API_KEY" -O <address>`)) {
		t.Error("the version history does not say how to fetch with the key header")
	}
}
