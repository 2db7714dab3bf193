package indexer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/skilldrop/skilldrop/pkg/aicatalog"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// A version's statement names the catalog revision that published it,
// which is known only once that write succeeded: a write that loses its
// race is applied again to the catalog that won, at another revision. So a
// round publishes first and signs after: its write records the versions
// without bundles, then the indexer signs each of them once (their revision
// is now final), stores the bundles and attaches them in a second, small
// update, which a lost race re-applies without signing again. The AI
// Catalog is signed in whichever write ends the round (at most one per
// revision: none when what it lists is what the one before listed).
// Between the two writes the new versions are served without a bundle.

// ErrUnsigned refuses a write of a signed catalog by an indexer without a
// signing key: it would publish versions nobody could verify and leave the
// signed AI Catalog behind the feeds.
var ErrUnsigned = errors.New("indexer: this catalog is signed, and this indexer has no signing key")

// CanWrite is ErrUnsigned (naming the catalog's key) when c is signed and
// the indexer has no signing key, so could not write it: a command that
// indexes what it changes asks first, before it uploads or deletes
// anything, rather than change the source and then fail to index it.
func (ix *Indexer) CanWrite(c *catalog.Catalog) error {
	if ix.key != nil || c == nil {
		return nil
	}
	if k := c.Signing.CurrentKey(); k != nil {
		return fmt.Errorf("%w (key %s): give it the key (the deployment's indexer has it; skilldrop --signing-key FILE) "+
			"or run the stack's ReindexCommand instead", ErrUnsigned, k.ID)
	}
	return nil
}

// KeyID is the id of the indexer's signing key, "" without one.
func (ix *Indexer) KeyID() string {
	if ix.key == nil {
		return ""
	}
	return ix.key.id
}

// signingKey is an indexer's signer with its public forms, computed once.
type signingKey struct {
	signer signing.Signer
	id     string
	pem    []byte
}

func newSigningKey(s signing.Signer) *signingKey {
	if s == nil {
		return nil
	}
	return &signingKey{signer: s, id: signing.KeyID(s.Public()), pem: signing.PublicKeyPEM(s.Public())}
}

// signingStale reports whether c must be written although nothing else
// changed: its signatures are not this indexer's (another key, or none),
// not of its origins, or not of its revision (a round that stopped between
// its two writes).
func (ix *Indexer) signingStale(c *catalog.Catalog) bool {
	if ix.key == nil {
		return false
	}
	if k := c.Signing.CurrentKey(); k == nil || k.ID != ix.key.id {
		return true
	}
	origins := ix.originsFor(c)
	if len(c.Signing.Catalogs) != len(origins) {
		return true
	}
	for _, o := range origins {
		if sc := c.Signing.Catalog(discovery.Origin(o)); sc == nil || sc.CurrentAt() != c.Revision {
			return true
		}
	}
	return false
}

// signInWrite is the signing part of a round's catalog write (inside its
// update function, c being the catalog it writes at c.Revision+1): it
// refuses to write a signed catalog without a key, records the key, and
// signs the revision's AI Catalog unless versions wait for a bundle, in
// which case the attaching write (signPublished) signs it.
func (ix *Indexer) signInWrite(ctx context.Context, c *catalog.Catalog, d *decisions, establish bool) error {
	if ix.key == nil {
		return ix.CanWrite(c)
	}
	if err := ix.recordKey(ctx, c); err != nil {
		return err
	}
	if len(ix.unsigned(c, d, establish)) > 0 {
		return nil
	}
	return ix.signCatalogs(ctx, c, c.Revision+1, 0)
}

// signCatalogsInWrite signs the AI Catalog of a write that publishes no
// version (a rescan's: what it takes out of service changes the feeds and
// the revocation list), when the indexer has a key; without one the write
// is refused as signInWrite refuses it.
func (ix *Indexer) signCatalogsInWrite(ctx context.Context, c *catalog.Catalog) error {
	if ix.key == nil {
		return ix.signInWrite(ctx, c, &decisions{}, false)
	}
	if err := ix.recordKey(ctx, c); err != nil {
		return err
	}
	return ix.signCatalogs(ctx, c, c.Revision+1, 0)
}

// signPublished signs the versions the round published (at c.Revision)
// or found unchanged that have no bundle, each once, and the latest
// versions an earlier key signed (at most maxResign), and attaches the
// bundles in one more catalog update, with that revision's AI Catalog; it
// returns the catalog as written and how many versions it signed again.
func (ix *Indexer) signPublished(ctx context.Context, c *catalog.Catalog, d *decisions, establish bool) (*catalog.Catalog, int, error) {
	if ix.key == nil {
		return c, 0, nil
	}
	todo := ix.unsigned(c, d, establish)
	if len(todo) == 0 {
		return c, 0, nil
	}
	// Each statement names the public revision of the AI Catalog that will
	// list it, the next one, which the attaching write signs if no other
	// write did before.
	named := c.Signing.PublicRevision() + 1
	bundles, err := ix.signVersions(ctx, todo, named)
	if err != nil {
		return c, 0, err
	}
	out, _, err := catalog.UpdateWith(ctx, ix.store, func(c *catalog.Catalog) error {
		attached, public := 0, false
		for _, b := range bundles {
			if e := b.attach(c); e != nil {
				attached++
				// Only an RFC feed's entries are listed by the AI Catalog.
				public = public || (e.Kind == catalog.KindSkill && e.VisibleTo(audience.Anonymous))
			}
		}
		if attached == 0 && !ix.signingStale(c) {
			return catalog.ErrNoChange
		}
		if err := ix.recordKey(ctx, c); err != nil {
			return err
		}
		atLeast := int64(0)
		if public {
			atLeast = named
		}
		return ix.signCatalogs(ctx, c, c.Revision+1, atLeast)
	}, catalog.UpdateOptions{Limit: ix.maxCatalog})
	if err != nil {
		return c, 0, fmt.Errorf("attach the bundles of revision %d: %w", c.Revision, err)
	}
	resigned := 0
	for _, t := range todo {
		if t.resign {
			resigned++
		}
	}
	ix.log.DebugContext(ctx, "signed", "versions", len(bundles), "resigned", resigned, "published_in", c.Revision, "revision", out.Revision)
	return out, resigned, nil
}

// recordKey makes the indexer's key the catalog's current one, storing its
// PEM as a blob. Keys that signed before stay recorded: their bundles
// still verify with them.
func (ix *Indexer) recordKey(ctx context.Context, c *catalog.Catalog) error {
	if k := c.Signing.CurrentKey(); k != nil && k.ID == ix.key.id {
		return nil
	}
	d := digest.Of(ix.key.pem)
	if err := ix.putBlob(ctx, d, ix.key.pem, signing.PublicKeyMediaType); err != nil {
		return fmt.Errorf("write the signing key: %w", err)
	}
	if c.Signing == nil {
		c.Signing = &catalog.Signing{}
	}
	k := catalog.SigningKey{ID: ix.key.id, PEM: catalog.BlobRef{Digest: d, Size: int64(len(ix.key.pem))}, Since: ix.now().UTC()}
	if old := c.Signing.Key(ix.key.id); old != nil {
		k.Since = old.Since
	}
	c.Signing.Keys = append(slices.DeleteFunc(c.Signing.Keys, func(x catalog.SigningKey) bool { return x.ID == k.ID }), k)
	return nil
}

// maxResign bounds the versions one signing pass signs again because an
// earlier key signed them: after a key change a large catalog is re-signed
// over successive rounds (each sweeps for what is left), as Rescan is.
var maxResign = 500 // a variable for the tests

// toSign is one version to sign.
type toSign struct {
	kind    catalog.Kind
	id      string
	entry   *catalog.Entry
	version catalog.Version
	// resign: the version has a bundle, by a key that is no longer the
	// current one.
	resign bool
}

// unsigned are the latest versions without a bundle of the hosted entries
// a round published or found unchanged (an upload indexed before the
// indexer had a key, read again by a reconcile or a re-index fed through
// the queue), and with establish of every live entry; and the latest
// versions of live entries whose bundle another key made (the key changed:
// a client that pins the new key must verify what the feeds list), at most
// maxResign of them. Earlier versions keep their bundles: the keys that
// signed them stay published.
func (ix *Indexer) unsigned(c *catalog.Catalog, d *decisions, establish bool) []toSign {
	var out []toSign
	seen, queued := map[*catalog.Entry]bool{}, map[*catalog.Entry]bool{}
	add := func(e *catalog.Entry) {
		if e == nil || seen[e] || e.ExternalURL != "" || e.Withdrawn {
			return
		}
		seen[e] = true
		if v := e.LatestVersion(); v != nil && v.Bundle == nil {
			out = append(out, toSign{kind: e.Kind, id: e.ID(), entry: e, version: *v})
			queued[e] = true
		}
	}
	for _, ch := range d.published {
		if ch.Kind == catalog.KindSubagent {
			add(c.Subagents[ch.Name])
		} else {
			add(c.Skills[ch.ID()])
		}
	}
	if len(d.unchanged) > 0 && !establish {
		keys := map[string]bool{}
		for _, k := range d.unchanged {
			keys[k] = true
		}
		for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
			for _, e := range m {
				if keys[e.Source] && e.LiveAsRead() {
					add(e)
				}
			}
		}
	}
	if establish {
		for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
			for _, e := range m {
				if e.LiveAsRead() {
					add(e)
				}
			}
		}
	}
	return append(out, ix.resignable(c, queued)...)
}

// resignable are the latest versions of the live hosted entries not
// queued whose bundle another key made, at most maxResign of them (the
// first by kind and id). Their statements name the revision that signs
// them again.
func (ix *Indexer) resignable(c *catalog.Catalog, queued map[*catalog.Entry]bool) []toSign {
	var out []toSign
	for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
		for _, e := range m {
			if queued[e] || e.ExternalURL != "" || e.Withdrawn || !e.LiveAsRead() {
				continue
			}
			if v := e.LatestVersion(); v != nil && v.Bundle != nil && v.Bundle.Key != ix.key.id {
				out = append(out, toSign{kind: e.Kind, id: e.ID(), entry: e, version: *v, resign: true})
			}
		}
	}
	if len(out) > maxResign {
		slices.SortFunc(out, func(a, b toSign) int { return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.id, b.id)) })
		out = out[:maxResign]
	}
	return out
}

// signed is a version's bundle, stored, to attach.
type signed struct {
	toSign
	bundle catalog.Bundle
}

// attach records the bundle in c's entry, when it still has the version
// (the same bytes) without one, or with one by another key; it returns the
// entry when it did, else nil.
func (s signed) attach(c *catalog.Catalog) *catalog.Entry {
	m := c.Skills
	if s.kind == catalog.KindSubagent {
		m = c.Subagents
	}
	e := m[s.id]
	if e == nil || e.LoadHistory() != nil {
		return nil
	}
	for i := range e.Versions {
		v := &e.Versions[i]
		if v.Label == s.version.Label && v.Digest.Equal(s.version.Digest) && (v.Bundle == nil || v.Bundle.Key != s.bundle.Key) {
			b := s.bundle
			v.Bundle = &b
			e.SetVersions(e.Versions)
			return e
		}
	}
	return nil
}

// signVersions signs each version as published at the public revision
// revision (ix.workers at a time) and stores its bundle.
func (ix *Indexer) signVersions(ctx context.Context, todo []toSign, revision int64) ([]signed, error) {
	out := make([]signed, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(ix.workers)
	for i, t := range todo {
		g.Go(func() error {
			b, err := provenance.Sign(gctx, ix.key.signer, t.version.Digest, publicationOf(t.entry, &t.version, revision))
			if err != nil {
				return err
			}
			d := digest.Of(b)
			if err := ix.putBlob(gctx, d, b, provenance.BundleMediaType); err != nil {
				return fmt.Errorf("write the bundle of %s %s: %w", t.id, t.version.Label, err)
			}
			out[i] = signed{toSign: t, bundle: catalog.Bundle{BlobRef: catalog.BlobRef{Digest: d, Size: int64(len(b))}, Key: ix.key.id}}
			return nil
		})
	}
	return out, g.Wait()
}

// publicationOf is what a version's statement records.
func publicationOf(e *catalog.Entry, v *catalog.Version, revision int64) provenance.Publication {
	typ := string(v.Type)
	if e.Kind == catalog.KindSubagent {
		typ = string(artifact.TypeAgentMD)
	}
	source := v.SourceKey
	if source == "" {
		source = e.Source
	}
	p := provenance.Publication{
		Name: e.Name, Version: v.Label, Kind: string(e.Kind), Listing: e.Listing, Type: typ,
		SourceKey: source, CatalogRevision: revision, PublishedAt: v.PublishedAt,
	}
	if v.Scan != nil {
		p.Scan = &provenance.Scan{Verdict: string(v.Scan.Verdict), Engine: v.Scan.Engine}
	}
	return p
}

// signCatalogs signs the AI Catalog of each origin for revision and pins
// it, unless what it would list is what the one pinned lists (a change
// only a key shows): that one is kept, its bytes and revision as they are,
// if it names at least the public revision atLeast (a bundle attached to a
// public entry names that one, and an AI Catalog listing the entry must
// not be older than its bundle). The AI Catalogs signed name the next
// public revision: the public revision counts only the changes an
// anonymous caller can see, so it tells nothing of the hidden writes
// between them.
func (ix *Indexer) signCatalogs(ctx context.Context, c *catalog.Catalog, revision, atLeast int64) error {
	origins := ix.originsFor(c)
	next := c.Signing.PublicRevision() + 1
	var out []catalog.SignedCatalog
	var v *catalog.View
	var revoked aicatalog.Revocations
	signed := false
	for _, o := range origins {
		if v == nil {
			v = catalog.Compile(c, "")
			revoked = publicRevocations(v)
		}
		feeds := publicFeeds(c, v, o)
		content, err := ix.contentOf(o, feeds, revoked)
		if err != nil {
			return err
		}
		if prev := c.Signing.Catalog(discovery.Origin(o)); prev != nil && prev.Content.Equal(content) && prev.Named() >= atLeast {
			kept := *prev
			kept.Current = revision
			out = append(out, kept)
			continue
		}
		doc := aicatalog.Build(aicatalog.Params{Origin: o, Revision: next, UpdatedAt: ix.now(), KeyPath: routes.SigningKey, Feeds: feeds,
			RevocationsPath: routes.Revocations, Revocations: revoked}, ix.key.signer.Public())
		b, err := aicatalog.Sign(ctx, ix.key.signer, o, doc)
		if err != nil {
			return err
		}
		r, err := ix.storeRendition(ctx, nil, b, digest.Of(b), "")
		if err != nil {
			return fmt.Errorf("write the AI Catalog of %s: %w", discovery.Origin(o), err)
		}
		out = append(out, catalog.SignedCatalog{Origin: discovery.Origin(o), Revision: revision, PublicRevision: next, Content: content, Rendition: r})
		signed = true
	}
	if signed {
		c.Signing.Public = next
	} else {
		c.Signing.Public = c.Signing.PublicRevision() // kept as it is when an origin's AI Catalog is dropped
	}
	c.Signing.Catalogs = out
	return nil
}

// contentOf is the digest of what an AI Catalog of origin is built from
// besides its revision and time: the key, the feeds and the revocation list.
func (ix *Indexer) contentOf(origin *url.URL, feeds []aicatalog.Feed, revoked aicatalog.Revocations) (digest.Digest, error) {
	b, err := json.Marshal(struct {
		Origin, Key, KeyPath string
		Feeds                []aicatalog.Feed
		Revocations          aicatalog.Revocations
	}{discovery.Origin(origin), ix.key.id, routes.SigningKey, feeds, revoked})
	if err != nil {
		return digest.Digest{}, fmt.Errorf("the AI Catalog's content: %w", err)
	}
	return digest.Of(b), nil
}

// publicRevocations is the revocation list an anonymous caller is served
// in v (the request path renders the same document from the same view):
// its digest and how many versions it lists. It names no origin.
func publicRevocations(v *catalog.View) aicatalog.Revocations {
	list := discovery.RevocationList(v, audience.Anonymous)
	return aicatalog.Revocations{Digest: feeddoc.Render(list, feeddoc.StoredLevel).Digest, Versions: len(list.Revocations)}
}

// publicFeeds are the RFC feeds an anonymous caller of origin can read in
// v, with the digest of the document it is served: the top-level index
// always (an empty one is a document too), each listing only when it
// shows something (else it is 404, as a missing one). Only what is public
// is signed, so the AI Catalog is one document for every caller and names
// nothing a caller without a key could not find.
func publicFeeds(c *catalog.Catalog, v *catalog.View, origin *url.URL) []aicatalog.Feed {
	o := discovery.Origin(origin)
	feed := func(path, listing string, idx discovery.Index) aicatalog.Feed {
		f := aicatalog.Feed{Path: path, Listing: listing, Skills: len(idx.Skills)}
		if d := c.Document(o, path, audience.Anonymous); d != nil {
			f.Digest = d.Identity.Digest // the stored document is the one served
		} else {
			f.Digest = feeddoc.Render(idx, feeddoc.StoredLevel).Digest
		}
		return f
	}
	out := []aicatalog.Feed{feed(routes.RFCIndex, "", discovery.TopLevel(v, audience.Anonymous, origin))}
	names := make([]string, 0, len(c.Listings))
	for name := range c.Listings {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if idx, ok := discovery.Listing(v, name, audience.Anonymous, origin); ok {
			out = append(out, feed(routes.ListingIndex(name), name, idx))
		}
	}
	return out
}
