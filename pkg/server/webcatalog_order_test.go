package server

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

var (
	inAll          = regexp.MustCompile(`(\d+) in all, by name`)
	listingSelect  = regexp.MustCompile(`(?s)<select id="listing".*?</select>`)
	listingOptions = regexp.MustCompile(`<option value="([^"]+)"`)
)

// TestCatalogListIsEachRevisionsAndEachAudienceSets: the list's order,
// count and listing filter, kept per catalog revision and per set of
// audiences, are each caller's own: callers of different audience sets, interleaved, are shown
// what a server that never answered anyone else shows them, anonymous
// never an entry or a count of what needs a key; and a new revision is
// listed, counts included, at the next revalidation.
func TestCatalogListIsEachRevisionsAndEachAudienceSets(t *testing.T) {
	st := store.NewMemory()
	b := standardBucket(t, st)
	b.cat.Skills["secret-rotation"].Audiences = audience.NewSet("partner-b")
	b.skill("for-partner-a", "", catalog.Authenticated, artifact.FormatMarkdown, skillMD("for-partner-a")).Audiences = audience.NewSet("partner-a")
	b.listing("partners-b", "deploy-via-pr")
	b.cat.Listings["partners-b"].Audiences = audience.NewSet("partner-b")
	b.cat.Skills["deploy-via-pr"].Listings = []string{"partner-a", "partners-b"}
	withFiles(b)
	b.publish()
	keys, err := apikey.Parse(`{"keys":[{"id":"partner-a","sha256":"` + apikey.Hash(goodKey) + `","audiences":["partner-a"]},` +
		`{"id":"partner-b","sha256":"` + apikey.Hash(otherKey) + `","audiences":["partner-b"]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	server := func() *harness {
		return newHarness(t, st, func(c *Config) { c.Keys, c.SessionSecret = keys, testSecret })
	}
	type shown struct {
		names, listings []string
		count           int
	}
	// list is the first page for key ("" anonymous), signed in on h.
	list := func(h *harness, key string) shown {
		t.Helper()
		var hdr []string
		if key != "" {
			hdr = append(hdr, cookieHeader(signIn(t, h, key)))
		}
		w := h.do(http.MethodGet, "/catalog/", hdr...)
		m := inAll.FindStringSubmatch(w.Body.String())
		if m == nil {
			t.Fatalf("key %q: no count on the list: %s", key, w.Body.String())
		}
		n, _ := strconv.Atoi(m[1])
		var listings []string
		for _, o := range listingOptions.FindAllStringSubmatch(listingSelect.FindString(w.Body.String()), -1) {
			listings = append(listings, o[1])
		}
		return shown{listed(t, w), listings, n}
	}
	callers := []string{"", goodKey, otherKey}
	alone := map[string]shown{}
	for _, key := range callers {
		alone[key] = list(server(), key)
	}
	for key, s := range alone {
		if s.count != len(s.names) {
			t.Errorf("key %q: %d in all, %d listed", key, s.count, len(s.names))
		}
	}
	for key, want := range map[string][]string{"": {"partner-a"}, goodKey: {"hidden", "partner-a"}, otherKey: {"hidden", "partner-a", "partners-b"}} {
		if got := alone[key].listings; !slices.Equal(got, want) {
			t.Errorf("key %q: listings to filter by %v, want %v", key, got, want)
		}
	}
	for _, tc := range []struct {
		key, name string
		sees      bool
	}{
		{"", "deploy-via-pr", true}, {"", "for-partner-a", false}, {"", "secret-rotation", false}, {"", "partner-secret", false},
		{goodKey, "for-partner-a", true}, {goodKey, "secret-rotation", false},
		{otherKey, "secret-rotation", true}, {otherKey, "for-partner-a", false},
	} {
		if slices.Contains(alone[tc.key].names, tc.name) != tc.sees {
			t.Errorf("key %q lists %v; want %s there: %v", tc.key, alone[tc.key].names, tc.name, tc.sees)
		}
	}

	// The skill page links the listings that include it and the caller can see.
	h := server()
	for _, key := range []string{otherKey, "", goodKey} {
		var hdr []string
		if key != "" {
			hdr = append(hdr, cookieHeader(signIn(t, h, key)))
		}
		body := h.do(http.MethodGet, "/catalog/skills/deploy-via-pr", hdr...).Body.String()
		if got, want := strings.Contains(body, `href="/catalog/listings/partners-b/"`), key == otherKey; got != want ||
			!strings.Contains(body, `href="/catalog/listings/partner-a/"`) {
			t.Errorf("key %q: the skill page links partner-a: %v, partners-b: %v; want true, %v",
				key, strings.Contains(body, `href="/catalog/listings/partner-a/"`), got, want)
		}
	}
	for _, key := range []string{goodKey, "", otherKey, goodKey, otherKey, ""} {
		if got, want := list(h, key), alone[key]; got.count != want.count || !slices.Equal(got.names, want.names) || !slices.Equal(got.listings, want.listings) {
			t.Errorf("key %q after other callers: %d in all, %v, listings %v; alone %d, %v, listings %v",
				key, got.count, got.names, got.listings, want.count, want.names, want.listings)
		}
	}

	b.skill("aaa-new", "", catalog.Public, artifact.FormatMarkdown, skillMD("aaa-new"))
	b.skill("aab-new", "", catalog.Authenticated, artifact.FormatMarkdown, skillMD("aab-new")).Audiences = audience.NewSet("partner-a")
	b.publish()
	h.clock.Advance(DefaultRevalidateEvery)
	for key, added := range map[string][]string{"": {"aaa-new"}, goodKey: {"aaa-new", "aab-new"}, otherKey: {"aaa-new"}} {
		got, was := list(h, key), alone[key]
		if got.count != was.count+len(added) || !slices.Equal(got.names[:len(added)], added) || len(got.names) != len(was.names)+len(added) {
			t.Errorf("key %q after a new revision: %d in all, %v; want %v added to %d, %v", key, got.count, got.names, added, was.count, was.names)
		}
	}
}
