package indexer

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/aicatalog"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// countingSigner counts its Sign calls: what a KMS key would be asked.
type countingSigner struct {
	signing.Signer
	n atomic.Int64
}

func (c *countingSigner) Sign(ctx context.Context, m []byte) ([]byte, error) {
	c.n.Add(1)
	return c.Signer.Sign(ctx, m)
}

func newSigner(t testing.TB) *countingSigner {
	t.Helper()
	k, err := signing.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return &countingSigner{Signer: k}
}

var testOrigin = &url.URL{Scheme: "https", Host: "skills.example.com"}

func signedBy(s signing.Signer) func(*Config) {
	return func(c *Config) { c.Signer, c.Origins = s, []*url.URL{testOrigin} }
}

// bundleOf reads and verifies the bundle of an entry's version.
func (e *env) bundleOf(en *catalog.Entry, label string, keys ...*ecdsa.PublicKey) *provenance.Verified {
	e.t.Helper()
	v := en.Version(label)
	if v == nil || v.Bundle == nil {
		e.t.Fatalf("%s %s has no bundle", en.ID(), label)
	}
	b, _, err := store.ReadAll(context.Background(), e.st, catalog.BlobKey(v.Bundle.Digest), provenance.MaxBundleBytes)
	if err != nil || !v.Bundle.Digest.Verify(b) || int64(len(b)) != v.Bundle.Size {
		e.t.Fatalf("the bundle blob of %s %s: %v", en.ID(), label, err)
	}
	got, err := provenance.Verify(b, keys...)
	if err != nil {
		e.t.Fatalf("the bundle of %s %s: %v", en.ID(), label, err)
	}
	if !got.Subject.Equal(v.Digest) {
		e.t.Fatalf("the bundle of %s %s is about %s, the version is %s", en.ID(), label, got.Subject, v.Digest)
	}
	return got
}

// aiCatalog reads and verifies the signed AI Catalog the catalog pins for
// testOrigin, which stands for the catalog's revision and names its own.
func (e *env) aiCatalog(c *catalog.Catalog, key *ecdsa.PublicKey) *aicatalog.Catalog {
	e.t.Helper()
	sc := c.Signing.Catalog(discovery.Origin(testOrigin))
	if sc == nil || sc.CurrentAt() != c.Revision || sc.Revision > c.Revision {
		e.t.Fatalf("no AI Catalog current at revision %d for %s: %+v", c.Revision, testOrigin, c.Signing)
	}
	b, _, err := store.ReadAll(context.Background(), e.st, sc.Rendition.Key, aicatalog.MaxBytes)
	if err != nil || !sc.Rendition.Digest.Verify(b) {
		e.t.Fatalf("the AI Catalog's object: %v", err)
	}
	doc, _, err := aicatalog.Verify(b, key)
	if err != nil {
		e.t.Fatalf("the AI Catalog: %v", err)
	}
	if doc.Revision() != sc.Named() || sc.Named() != c.Signing.PublicRevision() {
		e.t.Fatalf("the AI Catalog names revision %d, it was signed naming %d, the public revision is %d", doc.Revision(), sc.Named(), c.Signing.PublicRevision())
	}
	return doc
}

func TestSignsEachPublicationOnce(t *testing.T) {
	key := newSigner(t)
	e := newEnv(t, signedBy(key))
	e.put("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n"+
		"  - name: elsewhere\n    type: skill-md\n    url: https://cdn.example.com/elsewhere.md\n    description: Hosted elsewhere.\n"+
		"    digest: "+digest.Of([]byte("elsewhere")).String()+"\n"+
		"listings:\n  hidden-only:\n    skills:\n      - name: secret\n  partner-a:\n    skills:\n      - name: alpha\n"))
	e.reconcile("agent-skills.yaml")
	calls := key.n.Load()
	if calls != 1 { // the AI Catalog of the config's revision
		t.Fatalf("%d Sign calls for a config alone, want 1", calls)
	}
	// An external entry's bytes are not hosted here: nothing to sign.
	if ext := e.live(catalog.KindSkill, "elsewhere"); ext.LatestVersion().Bundle != nil {
		t.Error("an external entry has a bundle")
	}
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	if got := key.n.Load() - calls; got != 2 {
		t.Fatalf("%d Sign calls for one publication, want 2 (its bundle, the revision's AI Catalog)", got)
	}
	c := e.catalog()
	alpha := c.Skills["alpha"]
	got := e.bundleOf(alpha, "1.0", key.Public())
	// Published in one write, signed and attached in the next: the
	// statement names the public revision of the AI Catalog that lists it.
	want := provenance.Publication{Name: "alpha", Version: "1.0", Kind: "skill", Type: "skill-md", SourceKey: "skills/alpha.md",
		CatalogRevision: e.aiCatalog(c, key.Public()).Revision(), PublishedAt: alpha.Version("1.0").PublishedAt.UTC()}
	// The content scan's verdict, as the catalog recorded it.
	sc := alpha.Version("1.0").Scan
	if sc == nil || got.Publication.Scan == nil || got.Publication.Scan.Verdict != string(sc.Verdict) || got.Publication.Scan.Engine != sc.Engine {
		t.Errorf("the statement's scan is %+v, the version's %+v", got.Publication.Scan, sc)
	}
	got.Publication.Scan = nil
	if got.Publication != want {
		t.Errorf("the statement says %+v, want %+v", got.Publication, want)
	}
	if k := c.Signing.CurrentKey(); k == nil || k.ID != signing.KeyID(key.Public()) || alpha.Version("1.0").Bundle.Key != k.ID {
		t.Errorf("the catalog's key is %+v", c.Signing)
	}
	pem, _, err := store.ReadAll(context.Background(), e.st, catalog.BlobKey(c.Signing.CurrentKey().PEM.Digest), 1<<10)
	if pub, perr := signing.ParsePublicKeyPEM(pem); err != nil || perr != nil || !pub.Equal(key.Public()) {
		t.Errorf("the key's blob: %v %v", err, perr)
	}

	// The same bytes again publish nothing and sign nothing.
	calls = key.n.Load()
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	if got := key.n.Load() - calls; got != 0 {
		t.Errorf("%d Sign calls for an unchanged upload", got)
	}
	// A second version is signed on its own; the first keeps its bundle.
	first := *alpha.Version("1.0").Bundle
	e.drop("skills/alpha.md", skillDoc("alpha", "2.0", "Alpha two."))
	if got := key.n.Load() - calls; got != 2 {
		t.Errorf("%d Sign calls for a second version, want 2", got)
	}
	c = e.catalog()
	if *c.Skills["alpha"].Version("1.0").Bundle != first {
		t.Error("the first version was signed again")
	}
	if v := e.bundleOf(c.Skills["alpha"], "2.0", key.Public()); v.Publication.CatalogRevision != e.aiCatalog(c, key.Public()).Revision() || v.Publication.Version != "2.0" {
		t.Errorf("the second version's statement: %+v", v.Publication)
	}

	// Sub-agents, listing skills and hidden skills are signed alike.
	e.drop("subagents/reviewer.md", agentDoc("reviewer", "1"))
	e.drop("listings/partner-a/skills/faq.md", skillDoc("faq", "1", "FAQ."))
	e.drop("skills/secret.md", skillDoc("secret", "1", "Hidden."))
	c = e.catalog()
	if v := e.bundleOf(c.Subagents["reviewer"], "1", key.Public()); v.Publication.Kind != "subagent" || v.Publication.Type != "agent-md" {
		t.Errorf("the sub-agent's statement: %+v", v.Publication)
	}
	if v := e.bundleOf(c.Skills["partner-a/faq"], "1", key.Public()); v.Publication.Listing != "partner-a" || v.Publication.SourceKey != "listings/partner-a/skills/faq.md" {
		t.Errorf("the listing skill's statement: %+v", v.Publication)
	}
	e.bundleOf(c.Skills["secret"], "1", key.Public())

	// The AI Catalog lists what an anonymous caller can read, with the
	// digests of the documents it is served.
	doc := e.aiCatalog(c, key.Public())
	v := catalog.Compile(c, "")
	wantFeeds := map[string]string{
		routes.RFCIndex:                  feeddoc.Render(discovery.TopLevel(v, audience.Anonymous, testOrigin), feeddoc.RequestLevel).Digest.String(),
		routes.ListingIndex("partner-a"): listingDigest(t, v, "partner-a"),
	}
	if len(doc.Entries) != len(wantFeeds) {
		t.Fatalf("the AI Catalog lists %d feeds, want %d (a listing of hidden skills is not one): %+v", len(doc.Entries), len(wantFeeds), doc.Entries)
	}
	for _, en := range doc.Entries {
		f := en.Extensions[aicatalog.Extension]
		if wantFeeds[f.Path] != f.Digest.String() {
			t.Errorf("feed %s: digest %s, want the served document's %s", f.Path, f.Digest, wantFeeds[f.Path])
		}
	}
	// The hidden skill came last: the AI Catalog was signed at the last
	// change it lists, the listing skill's, and names the public
	// revision, one per public change (the sub-agent is in no RFC feed):
	// the config's, alpha 1.0, 2.0, faq.
	if sc := c.Signing.Catalog(discovery.Origin(testOrigin)); sc.Revision >= c.Revision || doc.Revision() != 4 {
		t.Errorf("the AI Catalog names revision %d, want 4, signed at %d, before the catalog's %d", doc.Revision(), sc.Revision, c.Revision)
	}

	// A hidden skill's withdrawal signs nothing; a public one's the new
	// revision's AI Catalog only.
	calls = key.n.Load()
	e.remove("skills/secret.md")
	if got := key.n.Load() - calls; got != 0 {
		t.Errorf("%d Sign calls for a hidden skill's withdrawal, want 0", got)
	}
	e.remove("skills/alpha.md")
	if got := key.n.Load() - calls; got != 1 {
		t.Errorf("%d Sign calls for a withdrawal, want 1", got)
	}
	if c := e.catalog(); e.aiCatalog(c, key.Public()).Revision() != doc.Revision()+1 || c.Signing.Catalog(discovery.Origin(testOrigin)).Revision != c.Revision {
		t.Errorf("a public withdrawal's AI Catalog is not of its revision %d, naming the next public revision %d", c.Revision, doc.Revision()+1)
	}
	consistent(t, e.st)
}

func listingDigest(t *testing.T, v *catalog.View, name string) string {
	idx, ok := discovery.Listing(v, name, audience.Anonymous, testOrigin)
	if !ok {
		t.Fatalf("listing %s shows nothing", name)
	}
	return feeddoc.Render(idx, feeddoc.RequestLevel).Digest.String()
}

// TestUnsignedIndexerRefusesASignedCatalog: an indexer without the key
// writes nothing into a catalog that is signed.
func TestUnsignedIndexerRefusesASignedCatalog(t *testing.T) {
	key := newSigner(t)
	e := newEnv(t, signedBy(key))
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	before := e.catalog().Revision

	plain := newEnvOn(t, e.st)
	plain.put("skills/beta.md", skillDoc("beta", "1", "Beta."))
	_, err := plain.ix.Reconcile(context.Background(), "skills/beta.md")
	if !errors.Is(err, ErrUnsigned) {
		t.Fatalf("an unsigned indexer on a signed catalog: %v, want ErrUnsigned", err)
	}
	if c := e.catalog(); c.Revision != before || c.Skills["beta"] != nil {
		t.Errorf("the catalog was written: revision %d (was %d)", c.Revision, before)
	}
}

// TestAnotherKeyTakesOver: versions keep the key that signed them; the
// catalog records both, the new one current.
func TestAnotherKeyTakesOver(t *testing.T) {
	a, b := newSigner(t), newSigner(t)
	e := newEnv(t, signedBy(a))
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	e2 := newEnvOn(t, e.st, signedBy(b))
	e2.drop("skills/alpha.md", skillDoc("alpha", "2.0", "Alpha two."))
	c := e.catalog()
	if len(c.Signing.Keys) != 2 || c.Signing.CurrentKey().ID != signing.KeyID(b.Public()) {
		t.Fatalf("keys %+v, want a then b", c.Signing.Keys)
	}
	if v := e.bundleOf(c.Skills["alpha"], "1.0", a.Public()); v.KeyID != signing.KeyID(a.Public()) {
		t.Errorf("1.0 verified with %s", v.KeyID)
	}
	e.bundleOf(c.Skills["alpha"], "2.0", b.Public())
	e.aiCatalog(c, b.Public())
}

// TestReindexSignsWhatWasPublishedUnsigned: a key given to an indexer of
// a catalog built without one signs every live latest version at the next
// re-index, though nothing else changed.
func TestReindexSignsWhatWasPublishedUnsigned(t *testing.T) {
	e := newEnv(t)
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	e.drop("subagents/reviewer.md", agentDoc("reviewer", "1"))
	e.drop("skills/gone.md", skillDoc("gone", "1", "Gone."))
	e.remove("skills/gone.md")
	if c := e.catalog(); c.Signing != nil || c.Skills["alpha"].Version("1.0").Bundle != nil {
		t.Fatal("an indexer without a key signed something")
	}
	key := newSigner(t)
	signed := newEnvOn(t, e.st, signedBy(key))
	signed.reindex()
	c := e.catalog()
	e.bundleOf(c.Skills["alpha"], "1.0", key.Public())
	e.bundleOf(c.Subagents["reviewer"], "1", key.Public())
	if c.Skills["gone"].Version("1").Bundle != nil {
		t.Error("a withdrawn entry was signed")
	}
	e.aiCatalog(c, key.Public())
	if got := key.n.Load(); got != 3 {
		t.Errorf("%d Sign calls, want 3 (two versions, one AI Catalog)", got)
	}
}

// losingStore makes the next conditional writes of the catalog lose their
// race, as when another indexer wrote first.
type losingStore struct {
	store.Store
	lose atomic.Int64
}

func (s *losingStore) Put(ctx context.Context, key string, b []byte, o store.PutOptions) (store.Info, error) {
	if key == catalog.Key && (o.IfMatch != "" || o.IfNoneMatch != "") && s.lose.Add(-1) >= 0 {
		return store.Info{}, store.ErrPreconditionFailed
	}
	return s.Store.Put(ctx, key, b, o)
}

// TestALostRaceSignsNothingAgain: a publishing write that loses its race
// is applied again without signing (it signed nothing); the version is
// signed once, naming the revision that published it.
func TestALostRaceSignsNothingAgain(t *testing.T) {
	key := newSigner(t)
	dir := newEnv(t).st
	ls := &losingStore{Store: dir}
	e := newEnvOn(t, ls, signedBy(key))
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	calls := key.n.Load()
	ls.lose.Store(1)
	e.drop("skills/beta.md", skillDoc("beta", "1", "Beta."))
	if got := key.n.Load() - calls; got != 2 {
		t.Errorf("%d Sign calls for one version whose write lost a race, want 2 (the version once, the AI Catalog once)", got)
	}
	c := e.catalog()
	if v, doc := e.bundleOf(c.Skills["beta"], "1", key.Public()), e.aiCatalog(c, key.Public()); v.Publication.CatalogRevision != doc.Revision() {
		t.Errorf("beta's statement names revision %d, the AI Catalog that lists it %d", v.Publication.CatalogRevision, doc.Revision())
	}
}

// TestAReconcileSignsWhatItReadsUnsigned: a key read again (a reconcile,
// or a re-index fed through the queue) whose version has no bundle is
// signed, though nothing is published.
func TestAReconcileSignsWhatItReadsUnsigned(t *testing.T) {
	e := newEnv(t)
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	e.drop("skills/beta.md", skillDoc("beta", "1", "Beta."))
	key := newSigner(t)
	signed := newEnvOn(t, e.st, signedBy(key))
	if res := signed.reconcile("skills/alpha.md"); len(res.Unchanged) != 1 {
		t.Fatalf("alpha is not unchanged: %s", dump(res))
	}
	c := e.catalog()
	e.bundleOf(c.Skills["alpha"], "1.0", key.Public())
	if c.Skills["beta"].LatestVersion().Bundle != nil {
		t.Error("beta, not read, was signed")
	}
	e.aiCatalog(c, key.Public())
}

// TestAKeyChangeSignsTheLatestVersionsAgain: once another key takes over,
// the latest version of every live hosted entry is signed again with it
// (at most maxResign per pass, the rest by later rounds), so a client that
// pins the new key verifies every feed; earlier versions keep their
// bundles, which the old key, still published, verifies.
func TestAKeyChangeSignsTheLatestVersionsAgain(t *testing.T) {
	defer func(n int) { maxResign = n }(maxResign)
	maxResign = 2
	a, b := newSigner(t), newSigner(t)
	e := newEnv(t, signedBy(a))
	e.put("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n"+
		"  - name: elsewhere\n    type: skill-md\n    url: https://cdn.example.com/elsewhere.md\n    description: Hosted elsewhere.\n"+
		"    digest: "+digest.Of([]byte("elsewhere")).String()+"\n"))
	e.reconcile("agent-skills.yaml")
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	e.drop("skills/alpha.md", skillDoc("alpha", "2.0", "Alpha two."))
	e.drop("skills/secret.md", skillDoc("secret", "1", "Hidden."))
	e.drop("subagents/reviewer.md", agentDoc("reviewer", "1"))
	e.drop("skills/gone.md", skillDoc("gone", "1", "Gone."))
	e.remove("skills/gone.md")
	first := *e.catalog().Skills["alpha"].Version("1.0").Bundle

	e2 := newEnvOn(t, e.st, signedBy(b))
	e2.drop("skills/beta.md", skillDoc("beta", "1", "Beta."))
	if got := b.n.Load(); got != 1+2+1 {
		t.Errorf("%d Sign calls, want 4 (beta, two versions signed again, the AI Catalog)", got)
	}
	stale := func(c *catalog.Catalog) []string {
		var out []string
		for _, en := range []*catalog.Entry{c.Skills["alpha"], c.Skills["secret"], c.Subagents["reviewer"]} {
			if en.LatestVersion().Bundle.Key != signing.KeyID(b.Public()) {
				out = append(out, en.ID())
			}
		}
		return out
	}
	if s := stale(e.catalog()); len(s) != 1 {
		t.Fatalf("after one pass %v are not signed by the new key, want one of three (maxResign 2)", s)
	}
	// The next round (here a reconcile that changes nothing) signs the rest.
	calls := b.n.Load()
	if res := e2.reconcile("skills/beta.md"); res.Resigned != 1 {
		t.Errorf("the reconcile reports %d versions signed again, want 1", res.Resigned)
	}
	if got := b.n.Load() - calls; got != 1 {
		t.Errorf("%d Sign calls for the last version signed again, want 1 (the AI Catalog, the new key's already, lists the same)", got)
	}
	c := e.catalog()
	if s := stale(c); len(s) != 0 {
		t.Fatalf("%v still signed by the old key", s)
	}
	alpha := e.bundleOf(c.Skills["alpha"], "2.0", b.Public())
	if alpha.Publication.Version != "2.0" || alpha.Publication.SourceKey != "skills/alpha.md" {
		t.Errorf("the statement signed again: %+v", alpha.Publication)
	}
	e.bundleOf(c.Skills["secret"], "1", b.Public())
	e.bundleOf(c.Subagents["reviewer"], "1", b.Public())
	if *c.Skills["alpha"].Version("1.0").Bundle != first {
		t.Error("an earlier version was signed again")
	}
	e.bundleOf(c.Skills["alpha"], "1.0", a.Public())
	if c.Skills["gone"].Version("1").Bundle.Key != signing.KeyID(a.Public()) || c.Skills["elsewhere"].LatestVersion().Bundle != nil {
		t.Error("a withdrawn or external entry was signed again")
	}
	e.aiCatalog(c, b.Public())
	// Nothing is left: the next round signs nothing.
	calls = b.n.Load()
	e2.reconcile("skills/beta.md")
	if got := b.n.Load() - calls; got != 0 {
		t.Errorf("%d Sign calls once every latest version is the new key's", got)
	}
	consistent(t, e.st)
}

// TestThePublicRevisionCountsOnlyPublicChanges: the revision the AI
// Catalog names, and a public bundle's catalogRevision, count the changes
// an anonymous caller sees, one each: hidden writes between two public
// changes (a hidden skill published three times) do not show in them.
func TestThePublicRevisionCountsOnlyPublicChanges(t *testing.T) {
	key := newSigner(t)
	e := newEnv(t, signedBy(key))
	e.put("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n"))
	e.reconcile("agent-skills.yaml")
	e.drop("skills/alpha.md", skillDoc("alpha", "1.0", "Alpha."))
	c := e.catalog()
	before := e.aiCatalog(c, key.Public()).Revision()
	if v := e.bundleOf(c.Skills["alpha"], "1.0", key.Public()); v.Publication.CatalogRevision != before {
		t.Errorf("alpha's statement names revision %d, the AI Catalog that lists it %d", v.Publication.CatalogRevision, before)
	}
	writes := c.Revision
	for _, label := range []string{"1", "2", "3"} {
		e.drop("skills/secret.md", skillDoc("secret", label, "Hidden."))
	}
	e.drop("skills/beta.md", skillDoc("beta", "1", "Beta."))
	c = e.catalog()
	if c.Revision-writes < 8 {
		t.Fatalf("%d catalog writes for three hidden publications and a public one", c.Revision-writes)
	}
	after := e.aiCatalog(c, key.Public()).Revision()
	if after != before+1 {
		t.Errorf("the AI Catalog names revision %d after %d, for one public change among %d writes", after, before, c.Revision-writes)
	}
	if v := e.bundleOf(c.Skills["beta"], "1", key.Public()); v.Publication.CatalogRevision != after {
		t.Errorf("beta's statement names revision %d, the AI Catalog that lists it %d", v.Publication.CatalogRevision, after)
	}
}

// TestNoBundleIsLaterThanTheAICatalog: after a key change re-signed over
// several passes (maxResign 1), every public skill's statement names a
// revision no later than the AI Catalog that lists it, as verify checks;
// the pass that signs a feed's entry again signs the AI Catalog again.
func TestNoBundleIsLaterThanTheAICatalog(t *testing.T) {
	defer func(n int) { maxResign = n }(maxResign)
	maxResign = 1
	a, b := newSigner(t), newSigner(t)
	e := newEnv(t, signedBy(a))
	for _, name := range []string{"alpha", "beta", "gamma"} {
		e.drop("skills/"+name+".md", skillDoc(name, "1", "A skill."))
	}
	e2 := newEnvOn(t, e.st, signedBy(b))
	for range 3 {
		e2.reconcile("skills/alpha.md")
	}
	c := e.catalog()
	doc := e2.aiCatalog(c, b.Public())
	for _, name := range []string{"alpha", "beta", "gamma"} {
		if v := e.bundleOf(c.Skills[name], "1", b.Public()); v.Publication.CatalogRevision > doc.Revision() {
			t.Errorf("%s's statement names revision %d, after the AI Catalog's %d", name, v.Publication.CatalogRevision, doc.Revision())
		}
	}
}
