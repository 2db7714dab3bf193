package verifier

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/jcs"
	"github.com/skilldrop/skilldrop/pkg/jws"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/store"
)

const apiKey = "sk-verifier-test-key"

var files = map[string]string{
	"agent-skills.yaml": "version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n" +
		"  - name: elsewhere\n    type: skill-md\n    url: https://cdn.example.com/elsewhere.md\n    description: Elsewhere.\n" +
		"    digest: sha256:" + strings.Repeat("ab", 32) + "\n" +
		"listings:\n  hidden:\n    skills:\n      - name: secret\n",
	"skills/alpha.md":                  skilltest.SkillMD("alpha", "1.0", "Alpha."),
	"skills/secret.md":                 skilltest.SkillMD("secret", "1", "Hidden."),
	"listings/partner-a/skills/faq.md": skilltest.SkillMD("faq", "1", "FAQ."),
}

// origin is a signed bucket served over HTTP by the Lambda's handler.
type origin struct {
	t   *testing.T
	st  store.Store
	url *url.URL
	key *signing.Local
	// replaced are documents served in place of the handler's, by path;
	// redirects are paths answered with a redirect to a URL (a request
	// with a query goes to the handler).
	replaced  map[string][]byte
	redirects map[string]string
}

func newOrigin(t *testing.T) *origin {
	t.Helper()
	o := &origin{t: t, st: store.NewMemory(), replaced: map[string][]byte{}, redirects: map[string]string{}}
	o.key, _ = signing.Generate()
	keys, err := apikey.ParseSet(apikey.Hash(apiKey))
	if err != nil {
		t.Fatal(err)
	}
	// Revalidated on every request: a test that indexes again reads the new revision.
	h, err := server.New(server.Config{Store: o.st, Keys: keys, Local: true, RevalidateEvery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := o.replaced[r.URL.Path]; ok {
			_, _ = w.Write(b)
			return
		}
		if to, ok := o.redirects[r.URL.Path]; ok && r.URL.RawQuery == "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	o.url, _ = url.Parse(ts.URL)
	for k, b := range files {
		o.put(k, []byte(b))
	}
	o.index(o.key)
	return o
}

func (o *origin) put(key string, b []byte) {
	o.t.Helper()
	if _, err := o.st.Put(context.Background(), key, b, store.PutOptions{}); err != nil {
		o.t.Fatal(err)
	}
}

func (o *origin) index(key signing.Signer) {
	o.t.Helper()
	ix, err := indexer.New(indexer.Config{Store: o.st, Signer: key, Origins: []*url.URL{o.url}})
	if err != nil {
		o.t.Fatal(err)
	}
	if _, err := ix.Reindex(context.Background()); err != nil {
		o.t.Fatal(err)
	}
}

func (o *origin) catalog() *catalog.Catalog {
	o.t.Helper()
	c, _, err := catalog.Load(context.Background(), o.st)
	if err != nil {
		o.t.Fatal(err)
	}
	return c
}

func (o *origin) verify(key *ecdsa.PublicKey, listing string, header ...string) *Report {
	o.t.Helper()
	var keys []*ecdsa.PublicKey
	if key != nil {
		keys = append(keys, key)
	}
	return o.verifyWith(keys, listing, header...)
}

func (o *origin) verifyWith(keys []*ecdsa.PublicKey, listing string, header ...string) *Report {
	o.t.Helper()
	h := http.Header{}
	for _, kv := range header {
		k, v, _ := strings.Cut(kv, ":")
		h.Add(k, strings.TrimSpace(v))
	}
	rep, err := Verify(context.Background(), Options{Origin: o.url, Keys: keys, Listing: listing, Header: h})
	if err != nil {
		o.t.Fatal(err)
	}
	return rep
}

// problems are every problem of a report, one string.
func problems(r *Report) string {
	out := r.Catalog.Problems
	for _, s := range r.Skills {
		for _, p := range s.Problems {
			out = append(out, s.Name+": "+p)
		}
	}
	return strings.Join(out, "\n")
}

func skill(r *Report, name string) *SkillCheck {
	for i := range r.Skills {
		if r.Skills[i].Name == name {
			return &r.Skills[i]
		}
	}
	return nil
}

func TestVerifyAnIntactOrigin(t *testing.T) {
	o := newOrigin(t)
	for _, pinned := range []*ecdsa.PublicKey{o.key.Public(), nil} {
		rep := o.verify(pinned, "")
		if !rep.OK {
			t.Fatalf("pinned %v: %s", pinned != nil, problems(rep))
		}
		if want := map[bool]string{true: "pinned", false: "published"}[pinned != nil]; rep.Catalog.KeySource != want || rep.Catalog.KeyID != signing.KeyID(o.key.Public()) {
			t.Errorf("catalog check %+v", rep.Catalog)
		}
		if len(rep.Skills) != 3 || skill(rep, "alpha").State != StateOK || skill(rep, "faq").State != StateOK ||
			skill(rep, "elsewhere").State != StateExternal || skill(rep, "secret") != nil {
			t.Errorf("skills %+v: want alpha, faq ok, elsewhere external, secret not seen", rep.Skills)
		}
		if r := skill(rep, "alpha").Revision; r == 0 || r > rep.Catalog.Revision {
			t.Errorf("alpha published at revision %d, the catalog is at %d", r, rep.Catalog.Revision)
		}
	}
	// With a key, the hidden listing is checked as the caller sees it.
	rep := o.verify(o.key.Public(), "hidden", "Authorization: Bearer "+apiKey)
	if !rep.OK || len(rep.Skills) != 1 || skill(rep, "secret").State != StateOK {
		t.Errorf("the hidden listing with a key: %+v\n%s", rep.Skills, problems(rep))
	}
	// Without, it does not exist.
	if rep := o.verify(o.key.Public(), "hidden"); rep.OK || !strings.Contains(problems(rep), "not found") {
		t.Errorf("the hidden listing without a key: %s", problems(rep))
	}
}

func TestVerifyNamesWhatWasTampered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(o *origin)
		pinned bool
		want   []string
	}{
		{"artifact", func(o *origin) {
			o.put(catalog.BlobKey(o.catalog().Skills["alpha"].LatestVersion().Digest), []byte("---\nname: alpha\n---\nevil\n"))
		}, true, []string{"alpha: artifact:", "503"}},
		{"bundle", func(o *origin) {
			o.put(catalog.BlobKey(o.catalog().Skills["alpha"].LatestVersion().Bundle.Digest), []byte(`{"forged":true}`))
		}, true, []string{"alpha: bundle:", "503"}},
		{"ai catalog", func(o *origin) {
			o.put(o.catalog().Signing.Catalogs[0].Rendition.Key, []byte(`{"specVersion":"1.0","entries":[]}`))
		}, true, []string{"ai-catalog:", "503"}},
		{"key in storage, pinned", func(o *origin) {
			other, _ := signing.Generate()
			o.put(catalog.BlobKey(o.catalog().Signing.CurrentKey().PEM.Digest), signing.PublicKeyPEM(other.Public()))
		}, true, []string{"key:", "503"}},
		{"key in storage, published", func(o *origin) {
			other, _ := signing.Generate()
			o.put(catalog.BlobKey(o.catalog().Signing.CurrentKey().PEM.Digest), signing.PublicKeyPEM(other.Public()))
		}, false, []string{"key:", "503"}},
		{"catalog: another artifact pinned", func(o *origin) {
			evil := []byte(skilltest.SkillMD("alpha", "1.0", "Evil."))
			d := digest.Of(evil)
			o.put(catalog.BlobKey(d), evil)
			c := o.catalog()
			e := c.Skills["alpha"]
			v := *e.LatestVersion()
			v.Digest, v.Size = d, int64(len(evil))
			e.Head = &v
			o.writeCatalog(c)
		}, true, []string{"alpha: bundle: signed for", "is not the document the AI Catalog signed"}},
		{"re-signed with another key, pinned", func(o *origin) {
			other, _ := signing.Generate()
			o.index(other)
		}, true, []string{"ai-catalog:", "does not verify with the pinned key"}},
		{"the key swapped in the catalog, pinned", func(o *origin) {
			other, _ := signing.Generate()
			o.index(other)
			c := o.catalog()
			c.Signing.Keys = c.Signing.Keys[1:]
			o.writeCatalog(c)
		}, true, []string{"does not publish the pinned key", "does not verify with the pinned key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t)
			tc.tamper(o)
			var pinned *ecdsa.PublicKey
			if tc.pinned {
				pinned = o.key.Public()
			}
			rep := o.verify(pinned, "")
			got := problems(rep)
			if rep.OK {
				t.Fatalf("a tampered %s verifies", tc.name)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the report does not say %q:\n%s", w, got)
				}
			}
		})
	}
}

// writeCatalog replaces the catalog object, as someone with write access
// to the bucket could.
func (o *origin) writeCatalog(c *catalog.Catalog) {
	o.t.Helper()
	b, err := catalog.Encode(c, 0)
	if err != nil {
		o.t.Fatal(err)
	}
	o.put(catalog.Key, b)
}

// TestVerifyFindsAnUnsignedVersion: a version without a bundle (published
// by an indexer without the key, into a catalog never signed) fails.
func TestVerifyFindsAnUnsignedOrigin(t *testing.T) {
	o := &origin{t: t, st: store.NewMemory()}
	h, _ := server.New(server.Config{Store: o.st, Local: true})
	ts := httptest.NewServer(h)
	defer ts.Close()
	o.url, _ = url.Parse(ts.URL)
	o.put("skills/alpha.md", []byte(skilltest.SkillMD("alpha", "1.0", "Alpha.")))
	o.index(nil)
	rep := o.verify(nil, "")
	if rep.OK || !strings.Contains(problems(rep), "/.well-known/did.json: not found") {
		t.Errorf("an unsigned origin: %s", problems(rep))
	}
	k, _ := signing.Generate()
	rep = o.verify(k.Public(), "")
	if rep.OK || skill(rep, "alpha") == nil || !strings.Contains(problems(rep), "alpha: bundle:") {
		t.Errorf("an unsigned origin with a pinned key: %s", problems(rep))
	}
}

// TestVerifyWithoutAKeySaysSo: with no key pinned and the origin's
// published key unreadable (the key blob swapped for another key, or an
// origin never signed), no bundle is reported as a signature that does not
// verify: each says no key was available to check it, and why.
func TestVerifyWithoutAKeySaysSo(t *testing.T) {
	o := newOrigin(t)
	other, _ := signing.Generate()
	o.replaced[routes.SigningKey] = signing.PublicKeyPEM(other.Public())
	rep := o.verify(nil, "")
	alpha := skill(rep, "alpha")
	if rep.OK || alpha == nil || alpha.State != StateFailed {
		t.Fatalf("the key blob swapped: ok %v, alpha %+v", rep.OK, alpha)
	}
	got := strings.Join(alpha.Problems, "\n")
	if strings.Contains(got, "does not verify") || !strings.Contains(got, "no key was available") ||
		!strings.Contains(got, routes.SigningKey+" is not in "+routes.DIDDocument) {
		t.Errorf("the key blob swapped, alpha says:\n%s\nwant that no key was available to check its bundle, and why", got)
	}
	// With the key pinned, the same origin's bundles are checked.
	if rep := o.verify(o.key.Public(), ""); skill(rep, "alpha") == nil || skill(rep, "alpha").State != StateOK {
		t.Errorf("the key blob swapped, the key pinned: %s", problems(rep))
	}
}

// TestVerifySaysWhyTheCatalogCannotBeRead: a catalog whose signature is
// not what failed (a number it cannot read, signed or not) is not reported
// as a signature that does not verify.
func TestVerifySaysWhyTheCatalogCannotBeRead(t *testing.T) {
	for _, tc := range []struct {
		name, revision string
		sign           bool
		want           string
	}{
		{"a revision beyond a double, unsigned", "1e400", false, "the number 1e400 is not a finite double"},
		{"a fractional revision, signed", "1.5", true, "cannot unmarshal number 1.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOrigin(t)
			rep := o.verify(o.key.Public(), "")
			if !rep.OK {
				t.Fatal(problems(rep))
			}
			b, _, err := store.ReadAll(context.Background(), o.st, o.catalog().Signing.Catalogs[0].Rendition.Key, 0)
			if err != nil {
				t.Fatal(err)
			}
			doc := regexp.MustCompile(`"revision": [0-9]+`).ReplaceAll(b, []byte(`"revision": `+tc.revision))
			if tc.sign {
				payload, _, err := jcs.Without(doc, "signature")
				if err != nil {
					t.Fatal(err)
				}
				sig, err := jws.SignDetached(context.Background(), o.key, jws.Header{}, payload)
				if err != nil {
					t.Fatal(err)
				}
				doc = regexp.MustCompile(`"signature": "[^"]*"`).ReplaceAll(doc, []byte(`"signature": "`+sig+`"`))
			}
			o.replaced[routes.AICatalog] = doc
			rep = o.verify(o.key.Public(), "")
			got := problems(rep)
			if rep.OK || !strings.Contains(got, "is not a signed AI Catalog that can be read") || !strings.Contains(got, tc.want) ||
				strings.Contains(got, "does not verify") {
				t.Errorf("the report says:\n%s\nwant that %s cannot be read (%s), not that its signature does not verify", got, routes.AICatalog, tc.want)
			}
		})
	}
}

// TestVerifyFollowsRedirectsWithinTheOriginOnly: a redirect to another
// origin is refused before anything is sent there, so the credential of
// --key-header (Authorization or any other header) never leaves the
// origin; a redirect within the origin is followed, the header with it.
func TestVerifyFollowsRedirectsWithinTheOriginOnly(t *testing.T) {
	var seen []http.Header
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Clone())
		http.NotFound(w, r)
	}))
	defer elsewhere.Close()

	o := newOrigin(t)
	alpha := strings.TrimPrefix(discovery.ArtifactURL(o.catalog().Skills["alpha"], o.url.String()), o.url.String()) // fetched with the header
	o.redirects[alpha] = o.url.String() + alpha + "?moved=1"
	o.redirects[routes.DIDDocument] = o.url.String() + routes.DIDDocument + "?moved=1"
	header := []string{"Authorization: Bearer " + apiKey, "X-Api-Key: " + apiKey}
	if rep := o.verify(o.key.Public(), "", header...); !rep.OK {
		t.Fatalf("redirects within the origin: %s", problems(rep))
	}

	o.redirects[alpha] = elsewhere.URL + alpha
	o.redirects[routes.DIDDocument] = elsewhere.URL + routes.DIDDocument
	rep := o.verify(o.key.Public(), "", header...)
	got := problems(rep)
	if rep.OK || !strings.Contains(got, "alpha: artifact:") || !strings.Contains(got, "key: ") || !strings.Contains(got, "refused a redirect to") {
		t.Errorf("redirects to another origin: the report says\n%s", got)
	}
	if len(seen) > 0 {
		t.Errorf("the other origin was sent %d requests (headers %v)", len(seen), seen)
	}
}

func TestSameOrigin(t *testing.T) {
	origin, _ := url.Parse("https://skills.example.com")
	check := sameOrigin(origin)
	for to, ok := range map[string]bool{
		"https://skills.example.com/x":          true,
		"https://SKILLS.example.com:443/x":      true,
		"http://skills.example.com/x":           false,
		"http://skills.example.com:443/x":       false,
		"https://skills.example.com:8443/x":     false,
		"https://evil.example.com/x":            false,
		"https://a.skills.example.com/x":        false,
		"https://skills.example.com.evil.net/x": false,
	} {
		u, _ := url.Parse(to)
		if err := check(&http.Request{URL: u}, nil); (err == nil) != ok {
			t.Errorf("a redirect to %s: %v, want followed %v", to, err, ok)
		}
	}
	u, _ := url.Parse("https://skills.example.com/x")
	if err := check(&http.Request{URL: u}, make([]*http.Request, maxRedirects)); err == nil {
		t.Errorf("the %dth redirect is followed", maxRedirects+1)
	}
}

// TestVerifyAfterAKeyChange: once the indexer with the new key has run,
// every feed verifies with the new key pinned alone; pinning both keys
// accepts either; pinning only keys the origin never used fails.
func TestVerifyAfterAKeyChange(t *testing.T) {
	o := newOrigin(t)
	old := o.key
	o.key, _ = signing.Generate()
	o.index(o.key)
	if rep := o.verify(o.key.Public(), ""); !rep.OK {
		t.Errorf("the new key pinned: %s", problems(rep))
	}
	if rep := o.verifyWith([]*ecdsa.PublicKey{old.Public(), o.key.Public()}, ""); !rep.OK || rep.Catalog.KeyID != signing.KeyID(o.key.Public()) {
		t.Errorf("both keys pinned: %+v %s", rep.Catalog, problems(rep))
	}
	if rep := o.verify(old.Public(), ""); rep.OK || !strings.Contains(problems(rep), "does not verify with the pinned key") {
		t.Errorf("the old key pinned alone: %s", problems(rep))
	}
	x, _ := signing.Generate()
	y, _ := signing.Generate()
	if rep := o.verifyWith([]*ecdsa.PublicKey{x.Public(), y.Public()}, ""); rep.OK || !strings.Contains(problems(rep), "does not publish the pinned keys") ||
		!strings.Contains(problems(rep), "does not verify with the pinned keys") {
		t.Errorf("two keys the origin never used pinned: %s", problems(rep))
	}
}

// TestAHiddenChangeLeavesTheAICatalogAsItIs: a new version of a skill only
// a key shows changes nothing an anonymous caller reads of the AI Catalog
// (not its revision, not its signature: the same bytes), and what the key
// shows still verifies; a public change signs a new one.
func TestAHiddenChangeLeavesTheAICatalogAsItIs(t *testing.T) {
	o := newOrigin(t)
	get := func() []byte {
		t.Helper()
		resp, err := http.Get(o.url.String() + routes.AICatalog)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", routes.AICatalog, resp.StatusCode, err)
		}
		return b
	}
	before, revision, was := get(), o.catalog().Revision, o.verify(o.key.Public(), "").Catalog.Revision
	o.put("skills/secret.md", []byte(skilltest.SkillMD("secret", "2", "Hidden, again.")))
	o.index(o.key)
	if c := o.catalog(); c.Revision == revision || c.Skills["secret"].LatestVersion().Label != "2" {
		t.Fatalf("the hidden change was not published: revision %d (was %d)", c.Revision, revision)
	}
	if after := get(); !bytes.Equal(after, before) {
		t.Errorf("a hidden change changed the public AI Catalog:\n%s\nwas\n%s", after, before)
	}
	for _, listing := range []string{"", "hidden"} {
		if rep := o.verify(o.key.Public(), listing, "Authorization: Bearer "+apiKey); !rep.OK || skill(rep, "secret") == nil || skill(rep, "secret").Version != "2" {
			t.Errorf("with a key, listing %q: %s", listing, problems(rep))
		}
	}
	if rep := o.verify(o.key.Public(), ""); !rep.OK {
		t.Errorf("without a key: %s", problems(rep))
	}

	o.put("skills/alpha.md", []byte(skilltest.SkillMD("alpha", "2.0", "Alpha two.")))
	o.index(o.key)
	rep := o.verify(o.key.Public(), "")
	if bytes.Equal(get(), before) || !rep.OK || rep.Catalog.Revision != o.catalog().Signing.PublicRevision() || rep.Catalog.Revision != was+1 {
		t.Errorf("a public change: the AI Catalog is of revision %d, want the public revision %d, one after %d\n%s",
			rep.Catalog.Revision, o.catalog().Signing.PublicRevision(), was, problems(rep))
	}
}

// TestVerifyChecksTheRevocationList: the AI Catalog signs the revocation
// list an anonymous caller reads, so a revocation dropped from the catalog
// in storage fails verify, naming revocations.json; an index that still
// lists a revoked version (an older one, served in place of the current)
// fails that entry as revoked.
func TestVerifyChecksTheRevocationList(t *testing.T) {
	o := newOrigin(t)
	get := func(path string) []byte {
		t.Helper()
		resp, err := http.Get(o.url.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return b
	}
	two := []byte(skilltest.SkillMD("alpha", "2.0", "Alpha two."))
	o.put("skills/alpha.md", two)
	o.index(o.key)
	listing2 := get(routes.RFCIndex)
	o.put("agent-skills.yaml", []byte(files["agent-skills.yaml"]+"revoke:\n  - name: alpha\n    version: \"2.0\"\n    digest: "+
		digest.Of(two).String()+"\n    reason: a compromised build\n"))
	o.index(o.key)
	rep := o.verify(o.key.Public(), "")
	if !rep.OK || rep.Catalog.Revoked != 1 || skill(rep, "alpha").Version != "1.0" {
		t.Fatalf("after the revocation: %+v %+v\n%s", rep.Catalog, skill(rep, "alpha"), problems(rep))
	}

	t.Run("a revoked version still listed", func(t *testing.T) {
		o.replaced[routes.RFCIndex] = listing2
		defer delete(o.replaced, routes.RFCIndex)
		rep := o.verify(o.key.Public(), "")
		if got := problems(rep); rep.OK || skill(rep, "alpha").State != StateFailed ||
			!strings.Contains(got, "alpha: revoked: the top-level index lists alpha 2.0") || !strings.Contains(got, "a compromised build") {
			t.Errorf("an index listing the revoked version: %+v\n%s", skill(rep, "alpha"), got)
		}
	})

	t.Run("a revocation dropped in storage", func(t *testing.T) {
		c := o.catalog()
		if len(c.Gone) != 1 {
			t.Fatalf("gone %+v", c.Gone)
		}
		c.Gone = nil
		o.writeCatalog(c)
		if b := get(routes.Revocations); strings.Contains(string(b), "alpha") {
			t.Fatalf("the tampered catalog still serves the revocation: %s", b)
		}
		rep := o.verify(o.key.Public(), "")
		if got := problems(rep); rep.OK || rep.Catalog.OK ||
			!strings.Contains(got, "revocations: "+routes.Revocations+" is not the document the AI Catalog signed") {
			t.Errorf("a dropped revocation: the report says\n%s", got)
		}
	})
}

// TestVerifyRefusesARollback: an older catalog restored in storage serves
// an older AI Catalog, validly signed, with the feeds it signed, and
// verifies as it did then; MinRevision, the revision a check reported
// before, refuses it.
func TestVerifyRefusesARollback(t *testing.T) {
	o := newOrigin(t)
	old, _, err := store.ReadAll(context.Background(), o.st, catalog.Key, 0)
	if err != nil {
		t.Fatal(err)
	}
	was := o.verify(o.key.Public(), "")
	o.put("skills/alpha.md", []byte(skilltest.SkillMD("alpha", "2.0", "Alpha two.")))
	o.index(o.key)
	now := o.verify(o.key.Public(), "")
	if !was.OK || !now.OK || now.Catalog.Revision <= was.Catalog.Revision {
		t.Fatalf("revisions %d then %d\n%s\n%s", was.Catalog.Revision, now.Catalog.Revision, problems(was), problems(now))
	}
	pin := now.Catalog.Revision
	check := func(min int64) *Report {
		t.Helper()
		rep, err := Verify(context.Background(), Options{Origin: o.url, Keys: []*ecdsa.PublicKey{o.key.Public()}, MinRevision: min})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := check(pin); !rep.OK || rep.Catalog.Revision != pin {
		t.Errorf("the current revision pinned: %+v\n%s", rep.Catalog, problems(rep))
	}

	o.put(catalog.Key, old) // the rollback
	if rep := check(0); !rep.OK || rep.Catalog.Revision != was.Catalog.Revision || skill(rep, "alpha").Version != "1.0" {
		t.Fatalf("the rolled-back origin without a minimum: %+v %+v\n%s", rep.Catalog, skill(rep, "alpha"), problems(rep))
	}
	rep := check(pin)
	if got := problems(rep); rep.OK || rep.Catalog.OK || rep.Catalog.Revision != was.Catalog.Revision ||
		!strings.Contains(got, fmt.Sprintf("is signed at revision %d, before the minimum revision %d", was.Catalog.Revision, pin)) {
		t.Errorf("the rolled-back origin with the minimum %d: %+v\n%s", pin, rep.Catalog, got)
	}
}
