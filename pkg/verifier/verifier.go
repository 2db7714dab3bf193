// Package verifier checks what an origin serves back to the operator's
// signing key, as any client can, offline of everything but the origin:
// the AI Catalog's signature (with a pinned key, or the key the origin
// publishes in its did:web document), each signed feed's document against
// the digest the AI Catalog records for it, and for every entry of every
// feed checked the artifact's bytes against the index's digest and its
// Sigstore bundle (beside it) against the key, the artifact and the
// index's name, version and type; and the revocation list against the
// digest the AI Catalog records for it, failing every entry a feed still
// lists that it names. It reports per skill what failed.
package verifier

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/aicatalog"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/didweb"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/jws"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// Limits of what is read, and how long one request may take.
const (
	defaultTimeout   = 30 * time.Second
	MaxIndexBytes    = 256 << 20
	MaxArtifactBytes = 64 << 20
)

// Options say what to check.
type Options struct {
	// Origin is scheme://host of the service.
	Origin *url.URL
	// Keys, when set, are the pinned keys: the only ones trusted, any one
	// of them (the key before a rotation and the one after, say). Without
	// them the keys the origin publishes are trusted (and the report says so).
	Keys []*ecdsa.PublicKey
	// MinRevision, when set, refuses a signed AI Catalog of an earlier
	// revision: one an attacker who can write storage could serve again
	// (with the feeds it signed) to hide what came after. A client pins the
	// revision a check reports (Report.Catalog.Revision) for the next.
	MinRevision int64
	// Listing, when set, checks that listing's feed only.
	Listing string
	// Header is sent with every request to the origin (a credential, to
	// check what it may see beyond the public feeds).
	Header http.Header
	// Client makes the requests (nil: a client with a 30 s timeout). Its
	// redirect policy is replaced: only redirects within Origin are
	// followed, so Header never reaches another origin.
	Client *http.Client
}

// The states of a skill in the report.
const (
	StateOK       = "ok"
	StateFailed   = "failed"
	StateExternal = "external" // its bytes are hosted elsewhere: nothing here vouches for them
)

// Report is what Verify found.
type Report struct {
	Origin string `json:"origin"`
	OK     bool   `json:"ok"`
	// Catalog is the AI Catalog's check.
	Catalog CatalogCheck `json:"catalog"`
	Skills  []SkillCheck `json:"skills"`
}

// CatalogCheck is the AI Catalog's part of a Report.
type CatalogCheck struct {
	OK       bool   `json:"ok"`
	Revision int64  `json:"revision,omitempty"`
	KeyID    string `json:"keyId,omitempty"`
	// KeySource is "pinned" (Options.Keys) or "published" (the origin's).
	KeySource string   `json:"keySource"`
	Feeds     []string `json:"feeds,omitempty"`
	// Revoked is how many versions the revocation list names.
	Revoked  int      `json:"revoked"`
	Problems []string `json:"problems,omitempty"`
}

// SkillCheck is one index entry's check.
type SkillCheck struct {
	Feed     string        `json:"feed"`
	Listing  string        `json:"listing,omitempty"`
	Name     string        `json:"name"`
	Version  string        `json:"version"`
	Digest   digest.Digest `json:"digest,omitzero"`
	State    string        `json:"state"`
	Revision int64         `json:"revision,omitempty"` // the catalog revision that published it, as its bundle says
	Problems []string      `json:"problems,omitempty"`
}

type checker struct {
	o       Options
	origin  string
	keys    []*ecdsa.PublicKey
	noKeys  error                  // why keys is empty: the published keys could not be read
	revoked []discovery.Revocation // what the revocation list names
}

// Verify checks an origin. The error is for what stopped it from checking
// at all (a bad option, a context ended); everything it found is in the
// Report, whose OK is false on any failure. A check that failed while the
// origin published a new revision (its documents then differ from the AI
// Catalog read first) is made once more.
func Verify(ctx context.Context, o Options) (*Report, error) {
	if o.Origin == nil || o.Origin.Host == "" || (o.Origin.Scheme != "https" && o.Origin.Scheme != "http") {
		return nil, errors.New("verifier: an origin http(s)://host is required")
	}
	client := http.Client{Timeout: defaultTimeout}
	if o.Client != nil {
		client = *o.Client
	}
	client.CheckRedirect = sameOrigin(o.Origin)
	o.Client = &client
	c := &checker{o: o, origin: discovery.Origin(o.Origin)}
	rep, err := c.verify(ctx)
	if err != nil || rep.OK || rep.Catalog.Revision == 0 {
		return rep, err
	}
	var again CatalogCheck
	if doc := c.checkCatalog(ctx, &again); doc == nil || doc.Revision() == rep.Catalog.Revision {
		return rep, ctx.Err()
	}
	return c.verify(ctx)
}

func (c *checker) verify(ctx context.Context) (*Report, error) {
	rep := &Report{Origin: c.origin}
	doc := c.checkCatalog(ctx, &rep.Catalog)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.checkRevocations(ctx, doc, &rep.Catalog)
	for _, f := range c.feeds(doc, &rep.Catalog) {
		rep.Skills = append(rep.Skills, c.checkFeed(ctx, f, doc, &rep.Catalog)...)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	rep.Catalog.OK = len(rep.Catalog.Problems) == 0
	rep.OK = rep.Catalog.OK
	for _, s := range rep.Skills {
		if s.State == StateFailed {
			rep.OK = false
		}
	}
	return rep, nil
}

// checkCatalog fetches the keys and the AI Catalog and checks its
// signature; it returns the catalog when it verified.
func (c *checker) checkCatalog(ctx context.Context, cc *CatalogCheck) *aicatalog.Catalog {
	problem := func(format string, args ...any) { cc.Problems = append(cc.Problems, fmt.Sprintf(format, args...)) }
	published, err := c.publishedKeys(ctx)
	c.keys, c.noKeys = nil, nil
	switch {
	case len(c.o.Keys) > 0:
		cc.KeySource, c.keys = "pinned", c.o.Keys
		if err != nil {
			problem("key: %v", err)
		} else if !slices.ContainsFunc(c.o.Keys, func(k *ecdsa.PublicKey) bool { return containsKey(published, k) }) {
			problem("key: the origin does not publish the pinned %s %s (it publishes %s)", plural(len(c.o.Keys), "key", "keys"), keyIDs(c.o.Keys), keyIDs(published))
		}
	case err != nil:
		cc.KeySource, c.noKeys = "published", err
		problem("key: %v", err)
		return nil
	default:
		cc.KeySource, c.keys = "published", published
	}
	body, status, err := c.get(ctx, c.origin+routes.AICatalog, aicatalog.MaxBytes, false)
	switch {
	case err == nil && status == http.StatusNotFound:
		problem("ai-catalog: %s: not found (404): %s has no signed AI Catalog. It is signed for each origin the indexer "+
			"was given (skilldrop status lists them: 'AI Catalog signed for …'): verify that origin instead "+
			"(for make run, http://127.0.0.1:8080 or http://RUN_ADDR, not localhost)", routes.AICatalog, c.origin)
		return nil
	case err != nil || status != http.StatusOK:
		problem("ai-catalog: %s", fetchProblem(routes.AICatalog, status, err))
		return nil
	}
	doc, k, err := aicatalog.Verify(body, c.keys...)
	switch {
	case errors.Is(err, jws.ErrSignature):
		problem("ai-catalog: %s: the signature does not verify with the %s %s: %v", routes.AICatalog, cc.KeySource, plural(len(c.keys), "key", "keys"), err)
		return nil
	case err != nil:
		// Not a signature that failed: text with no canonical form, a
		// malformed JWS, or a document this format cannot read.
		problem("ai-catalog: %s is not a signed AI Catalog that can be read: %v", routes.AICatalog, err)
		return nil
	}
	cc.Revision, cc.KeyID = doc.Revision(), signing.KeyID(k)
	if doc.Revision() < c.o.MinRevision {
		problem("ai-catalog: %s is signed at revision %d, before the minimum revision %d: an older catalog served again "+
			"(a rollback), or an origin restored from a backup", routes.AICatalog, doc.Revision(), c.o.MinRevision)
	}
	return doc
}

// publishedKeys are the keys of the origin's did:web document, the
// current one first, and the PEM it publishes, which must be one of them.
func (c *checker) publishedKeys(ctx context.Context) ([]*ecdsa.PublicKey, error) {
	body, status, err := c.get(ctx, c.origin+routes.DIDDocument, didweb.MaxDocumentBytes, false)
	if err != nil || status != http.StatusOK {
		return nil, errors.New(fetchProblem(routes.DIDDocument, status, err))
	}
	byURL, err := didweb.Parse(body, c.o.Origin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", routes.DIDDocument, err)
	}
	pemBody, status, err := c.get(ctx, c.origin+routes.SigningKey, 16<<10, false)
	if err != nil || status != http.StatusOK {
		return nil, errors.New(fetchProblem(routes.SigningKey, status, err))
	}
	current, err := signing.ParsePublicKeyPEM(pemBody)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", routes.SigningKey, err)
	}
	keys := []*ecdsa.PublicKey{current}
	found := false
	for _, k := range byURL {
		if k.Equal(current) {
			found = true
			continue
		}
		keys = append(keys, k)
	}
	if !found {
		return nil, fmt.Errorf("%s is not in %s", routes.SigningKey, routes.DIDDocument)
	}
	return keys, nil
}

// checkRevocations fetches the revocation list an anonymous caller reads
// and checks it against the digest the AI Catalog signed (a revocation
// dropped in storage changes it), and with Header the one the caller
// sees too (it may name hidden versions besides); it keeps what they name
// for checkSkill.
func (c *checker) checkRevocations(ctx context.Context, doc *aicatalog.Catalog, cc *CatalogCheck) {
	c.revoked = nil
	problem := func(format string, args ...any) { cc.Problems = append(cc.Problems, fmt.Sprintf(format, args...)) }
	read := func(auth bool) ([]byte, *discovery.Revocations) {
		body, status, err := c.get(ctx, c.origin+routes.Revocations, MaxIndexBytes, auth)
		if err != nil || status != http.StatusOK {
			problem("revocations: %s", fetchProblem(routes.Revocations, status, err))
			return nil, nil
		}
		var list discovery.Revocations
		if err := json.Unmarshal(body, &list); err != nil {
			problem("revocations: %s is not a revocation list: %v", routes.Revocations, err)
			return body, nil
		}
		return body, &list
	}
	body, list := read(false)
	if doc != nil {
		switch signed := doc.SignedRevocations(); {
		case signed == nil:
			problem("revocations: the AI Catalog of revision %d does not sign %s: a revocation dropped from it would not show", doc.Revision(), routes.Revocations)
		case signed.URL != c.origin+routes.Revocations:
			problem("revocations: the AI Catalog signs the revocation list at %q, not %s", signed.URL, c.origin+routes.Revocations)
		case body != nil && !signed.Digest.Verify(body):
			problem("revocations: %s is not the document the AI Catalog signed at revision %d (it holds %s, the catalog says %s, %d %s): "+
				"a revocation may have been dropped", routes.Revocations, doc.Revision(), digest.Of(body), signed.Digest, signed.Versions, plural(signed.Versions, "version", "versions"))
		}
	}
	if list != nil {
		c.revoked = list.Revocations
	}
	if len(c.o.Header) > 0 {
		if _, mine := read(true); mine != nil {
			c.revoked = mine.Revocations // the anonymous caller's and the hidden ones the key shows
		}
	}
	cc.Revoked = len(c.revoked)
}

// revocation is the revocation c.revoked holds of an entry of feed f: the
// same bytes, or the same skill and version in that feed.
func (c *checker) revocation(f feed, s discovery.Skill) *discovery.Revocation {
	for i, r := range c.revoked {
		if r.Kind != catalog.KindSkill {
			continue
		}
		if r.Digest.String() == s.Digest || (r.Name == s.Name && r.Version == s.Version && (r.Listing == "" || r.Listing == f.listing)) {
			return &c.revoked[i]
		}
	}
	return nil
}

// feed is one RFC feed to check.
type feed struct {
	path, listing string
	signed        *aicatalog.Feed // what the AI Catalog records of it, if anything
}

// feeds are the feeds to check: the AI Catalog's (or only Listing's).
func (c *checker) feeds(doc *aicatalog.Catalog, cc *CatalogCheck) []feed {
	var out []feed
	if doc != nil {
		for _, e := range doc.Entries {
			f, ok := e.Extensions[aicatalog.Extension]
			if !ok || e.URL != c.origin+f.Path {
				cc.Problems = append(cc.Problems, fmt.Sprintf("ai-catalog: entry %q is not a feed of this origin", e.URL))
				continue
			}
			cc.Feeds = append(cc.Feeds, f.Path)
			if c.o.Listing == "" || f.Listing == c.o.Listing {
				out = append(out, feed{path: f.Path, listing: f.Listing, signed: &f})
			}
		}
	}
	switch {
	case c.o.Listing != "" && len(out) == 0:
		// Not in the AI Catalog (it signs only what is public): checked
		// as the caller sees it, each skill by its bundle.
		out = append(out, feed{path: routes.ListingIndex(c.o.Listing), listing: c.o.Listing})
	case doc == nil && c.o.Listing == "":
		out = append(out, feed{path: routes.RFCIndex})
	}
	return out
}

// checkFeed checks one feed's document and every entry of it.
func (c *checker) checkFeed(ctx context.Context, f feed, doc *aicatalog.Catalog, cc *CatalogCheck) []SkillCheck {
	body, status, err := c.get(ctx, c.origin+f.path, MaxIndexBytes, true)
	if err != nil || status != http.StatusOK {
		cc.Problems = append(cc.Problems, "index: "+fetchProblem(f.path, status, err))
		return nil
	}
	var anon []byte // the document an anonymous caller reads, when signed
	if f.signed != nil {
		// The signed digest is of the document an anonymous caller reads.
		anon = body
		if len(c.o.Header) > 0 {
			if anon, status, err = c.get(ctx, c.origin+f.path, MaxIndexBytes, false); err != nil || status != http.StatusOK {
				cc.Problems = append(cc.Problems, "index: "+fetchProblem(f.path, status, err))
				anon = nil
			}
		}
		if anon != nil && !f.signed.Digest.Verify(anon) {
			cc.Problems = append(cc.Problems, fmt.Sprintf("index: %s is not the document the AI Catalog signed at revision %d (it holds %s, the catalog says %s)",
				f.path, doc.Revision(), digest.Of(anon), f.signed.Digest))
		}
	}
	var idx discovery.Index
	if err := json.Unmarshal(body, &idx); err != nil {
		cc.Problems = append(cc.Problems, fmt.Sprintf("index: %s is not an RFC index: %v", f.path, err))
		return nil
	}
	public := map[string]bool{} // the entries the AI Catalog's revision covers
	var listed discovery.Index
	if anon != nil && json.Unmarshal(anon, &listed) == nil {
		for _, s := range listed.Skills {
			public[s.Name] = true
		}
	}
	out := make([]SkillCheck, 0, len(idx.Skills))
	for _, s := range idx.Skills {
		var signedAt int64
		if doc != nil && public[s.Name] {
			signedAt = doc.Revision()
		}
		out = append(out, c.checkSkill(ctx, f, s, signedAt))
	}
	return out
}

// checkSkill checks one entry: its bytes and its bundle. signedAt, when
// not 0, is the revision of the AI Catalog that lists the entry: its bundle
// cannot name a later one. (An entry only a key shows is not listed: the
// AI Catalog keeps its revision while only such entries change.)
func (c *checker) checkSkill(ctx context.Context, f feed, s discovery.Skill, signedAt int64) SkillCheck {
	sc := SkillCheck{Feed: f.path, Listing: f.listing, Name: s.Name, Version: s.Version, State: StateOK}
	problem := func(format string, args ...any) {
		sc.State = StateFailed
		sc.Problems = append(sc.Problems, fmt.Sprintf(format, args...))
	}
	d, err := digest.Parse(s.Digest)
	if err != nil {
		problem("index: the digest %q: %v", s.Digest, err)
		return sc
	}
	sc.Digest = d
	if r := c.revocation(f, s); r != nil {
		problem("revoked: %s lists %s %s (%s), which %s names (%s: %s)", orTop(f.listing), s.Name, s.Version, d, routes.Revocations, r.Code, r.Reason)
	}
	if !strings.HasPrefix(s.URL, c.origin+"/") {
		if sc.State != StateFailed {
			sc.State = StateExternal
		}
		sc.Problems = append(sc.Problems, "hosted at "+s.URL+": its bytes are not this origin's, and no bundle vouches for them")
		return sc
	}
	art, status, err := c.get(ctx, s.URL, MaxArtifactBytes, true)
	switch {
	case err != nil || status != http.StatusOK:
		problem("artifact: %s", fetchProblem(s.URL, status, err))
	case !d.Verify(art):
		problem("artifact: %s holds %s, the index says %s", s.URL, digest.Of(art), d)
	}
	b, status, err := c.get(ctx, s.URL+routes.BundleSuffix, provenance.MaxBundleBytes, true)
	if err != nil || status != http.StatusOK {
		problem("bundle: %s", fetchProblem(s.URL+routes.BundleSuffix, status, err))
		return sc
	}
	if len(c.keys) == 0 {
		// Not a signature that failed: there was nothing to check it with.
		problem("bundle: %s: not checked: no key was available to check its signature (none pinned, and the origin's "+
			"published key could not be read: %v)", s.URL+routes.BundleSuffix, c.noKeys)
		return sc
	}
	v, err := provenance.Verify(b, c.keys...)
	if err != nil {
		problem("bundle: %s: %v", s.URL+routes.BundleSuffix, err)
		return sc
	}
	sc.Revision = v.Publication.CatalogRevision
	p := v.Publication
	if !v.Subject.Equal(d) {
		problem("bundle: signed for %s, the index says %s", v.Subject, d)
	}
	if p.Name != s.Name || p.Version != s.Version || p.Type != s.Type || p.Kind != "skill" {
		problem("bundle: signed as %s %s %s %s, the index says skill %s %s %s", p.Kind, p.Name, p.Version, p.Type, s.Name, s.Version, s.Type)
	}
	if p.Listing != "" && p.Listing != f.listing {
		problem("bundle: signed for listing %s, served in %s", p.Listing, orTop(f.listing))
	}
	if signedAt != 0 && p.CatalogRevision > signedAt {
		problem("bundle: signed at revision %d, after the AI Catalog's %d", p.CatalogRevision, signedAt)
	}
	return sc
}

func orTop(listing string) string {
	if listing == "" {
		return "the top-level index"
	}
	return "listing " + listing
}

// get fetches u with the options' header when auth, reading at most limit
// bytes.
func (c *checker) get(ctx context.Context, u string, limit int64, auth bool) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	if auth {
		for k, vs := range c.o.Header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	resp, err := c.o.Client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, resp.StatusCode, err
	}
	if int64(len(b)) > limit {
		return nil, resp.StatusCode, fmt.Errorf("more than %d bytes", limit)
	}
	return b, resp.StatusCode, nil
}

// maxRedirects is how many redirects one fetch follows, as net/http's default.
const maxRedirects = 10

// sameOrigin is the redirect policy: a redirect is followed only to the
// origin itself (the same scheme, host and port; never https to http, never
// another host), so the credential of --key-header, which net/http would
// copy onto a redirect to another host when it is not Authorization or a
// cookie, is only ever sent to the origin it was given for.
func sameOrigin(origin *url.URL) func(*http.Request, []*http.Request) error {
	want := originOf(origin)
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if got := originOf(req.URL); got != want {
			return fmt.Errorf("refused a redirect to %s: not %s (only redirects within the origin are followed)", got, want)
		}
		return nil
	}
}

// originOf is u's scheme://host:port, lowercase, the port spelled out.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// fetchProblem says why a fetch gave nothing to check.
func fetchProblem(what string, status int, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf("%s: %v", what, err)
	case status == http.StatusServiceUnavailable:
		return fmt.Sprintf("%s: the server refused to serve it (503: what it stores does not match what it pinned, or it is unavailable)", what)
	case status == http.StatusNotFound:
		return fmt.Sprintf("%s: not found (404)", what)
	case status == http.StatusUnauthorized:
		return fmt.Sprintf("%s: the credential sent was refused (401)", what)
	}
	return fmt.Sprintf("%s: HTTP %d", what, status)
}

func containsKey(keys []*ecdsa.PublicKey, k *ecdsa.PublicKey) bool {
	for _, x := range keys {
		if x.Equal(k) {
			return true
		}
	}
	return false
}

func keyIDs(keys []*ecdsa.PublicKey) string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = signing.KeyID(k)
	}
	return strings.Join(ids, ", ")
}

// plural is one or many, by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
