package indexer

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"

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

// Signatures are made in the catalog write that publishes what they sign,
// once: a version's bundle when it is first published (its statement
// names the revision of that write), and the AI Catalog of each origin for
// every revision. They are made inside the update function, after apply
// decided that the write happens, so a write that loses a race signs again
// against the catalog that won (its revision is another) and a write that
// does not happen signs nothing.

// ErrUnsigned refuses a write of a signed catalog by an indexer without a
// signing key: it would publish versions nobody could verify and leave the
// signed AI Catalog behind the feeds.
var ErrUnsigned = errors.New("indexer: this catalog is signed, and this indexer has no signing key")

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

// KeyContentType is the media type of a stored public key.
const KeyContentType = "application/x-pem-file"

// signingStale reports whether c must be written although nothing else
// changed: its signatures are not this indexer's (another key, or none) or
// not of its origins.
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
		if c.Signing.Catalog(discovery.Origin(o)) == nil {
			return true
		}
	}
	return false
}

// sign signs what the write of c (at revision c.Revision+1) publishes: the
// versions of published that have no bundle yet (with establish, the latest
// version of every live entry too: a re-index signs what was published
// before the indexer had a key), and the AI Catalog of each origin.
func (ix *Indexer) sign(ctx context.Context, c *catalog.Catalog, published []Change, establish bool) error {
	if ix.key == nil {
		if k := c.Signing.CurrentKey(); k != nil {
			return fmt.Errorf("%w (key %s): give it the key (the deployment's indexer has it; skilldrop --signing-key FILE) "+
				"or run the stack's ReindexCommand instead", ErrUnsigned, k.ID)
		}
		return nil
	}
	if err := ix.recordKey(ctx, c); err != nil {
		return err
	}
	revision := c.Revision + 1
	if err := ix.signVersions(ctx, c, unsigned(c, published, establish), revision); err != nil {
		return err
	}
	return ix.signCatalogs(ctx, c, revision)
}

// recordKey makes the indexer's key the catalog's current one, storing its
// PEM as a blob. Keys that signed before stay recorded: their bundles
// still verify with them.
func (ix *Indexer) recordKey(ctx context.Context, c *catalog.Catalog) error {
	if k := c.Signing.CurrentKey(); k != nil && k.ID == ix.key.id {
		return nil
	}
	d := digest.Of(ix.key.pem)
	if err := ix.putBlob(ctx, d, ix.key.pem, KeyContentType); err != nil {
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

// toSign is one version to sign: the entry's version at index i of its history.
type toSign struct {
	e *catalog.Entry
	i int
}

// unsigned are the hosted versions of published without a bundle, and
// with establish the latest version of every live entry without one.
func unsigned(c *catalog.Catalog, published []Change, establish bool) []toSign {
	var out []toSign
	seen := map[*catalog.Entry]bool{}
	add := func(e *catalog.Entry) {
		if e == nil || seen[e] || e.ExternalURL != "" || e.LoadHistory() != nil {
			return
		}
		seen[e] = true
		i := slices.IndexFunc(e.Versions, func(v catalog.Version) bool { return v.Label == e.Latest })
		if i >= 0 && e.Versions[i].Bundle == nil {
			out = append(out, toSign{e: e, i: i})
		}
	}
	for _, ch := range published {
		if ch.Kind == catalog.KindSubagent {
			add(c.Subagents[ch.Name])
		} else {
			add(c.Skills[ch.ID()])
		}
	}
	if establish {
		for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
			for _, e := range m {
				if e.LiveAsRead() {
					if v := e.LatestVersion(); v != nil && v.Bundle == nil {
						add(e)
					}
				}
			}
		}
	}
	return out
}

// signVersions signs each version (ix.workers at a time), stores its
// bundle and records it in the version.
func (ix *Indexer) signVersions(ctx context.Context, c *catalog.Catalog, todo []toSign, revision int64) error {
	if len(todo) == 0 {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(ix.workers)
	var mu sync.Mutex
	for _, t := range todo {
		v := t.e.Versions[t.i] // a copy: the entry is changed under mu
		g.Go(func() error {
			b, err := provenance.Sign(gctx, ix.key.signer, v.Digest, publicationOf(t.e, &v, revision))
			if err != nil {
				return err
			}
			d := digest.Of(b)
			if err := ix.putBlob(gctx, d, b, provenance.BundleMediaType); err != nil {
				return fmt.Errorf("write the bundle of %s %s: %w", t.e.ID(), v.Label, err)
			}
			mu.Lock()
			t.e.Versions[t.i].Bundle = &catalog.Bundle{BlobRef: catalog.BlobRef{Digest: d, Size: int64(len(b))}, Key: ix.key.id}
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, t := range todo {
		t.e.SetVersions(t.e.Versions) // the head is the latest version again
	}
	ix.log.DebugContext(ctx, "signed", "versions", len(todo), "revision", revision)
	return nil
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
	return provenance.Publication{
		Name: e.Name, Version: v.Label, Kind: string(e.Kind), Listing: e.Listing, Type: typ,
		SourceKey: source, CatalogRevision: revision, PublishedAt: v.PublishedAt,
	}
}

// signCatalogs signs the AI Catalog of each origin for revision and pins it.
func (ix *Indexer) signCatalogs(ctx context.Context, c *catalog.Catalog, revision int64) error {
	origins := ix.originsFor(c)
	var out []catalog.SignedCatalog
	var v *catalog.View
	for _, o := range origins {
		if v == nil {
			v = catalog.Compile(c, "")
		}
		feeds := publicFeeds(c, v, o)
		doc := aicatalog.Build(aicatalog.Params{Origin: o, Revision: revision, UpdatedAt: ix.now(), KeyPath: routes.SigningKey, Feeds: feeds}, ix.key.signer.Public())
		b, err := aicatalog.Sign(ctx, ix.key.signer, o, doc)
		if err != nil {
			return err
		}
		r, err := ix.storeRendition(ctx, nil, b, digest.Of(b), "")
		if err != nil {
			return fmt.Errorf("write the AI Catalog of %s: %w", discovery.Origin(o), err)
		}
		out = append(out, catalog.SignedCatalog{Origin: discovery.Origin(o), Revision: revision, Rendition: r})
	}
	c.Signing.Catalogs = out
	return nil
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
