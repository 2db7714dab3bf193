package indexer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// The documents that grow with the catalog (the RFC index, each listing's,
// and the page of every entry) outgrow what one Lambda response can carry
// (6 MB; API Gateway HTTP APIs stream nothing). The indexer renders the
// large ones into the bucket, in the same catalog update that publishes
// what they list, for each origin it serves (their URLs are absolute) and
// each auth class; the catalog's head pins each to the object version
// written, and the request path answers from it or redirects to it. Small
// documents the request path renders itself, as before.

// DefaultMinStoredDocument is the size from which a document is rendered
// into the bucket (Config.MinStoredDocument). Below it (about 3,000 skills
// in the RFC index), a cold request path renders it from the catalog's
// entries in less time than reading the stored one takes, and storing it
// would add a write of every document to every publish.
const DefaultMinStoredDocument = 1 << 20

// RenderedPrefix is where the rendered documents are stored: outside
// catalog/ (they are not the catalog's state) and blobs/ (they are not
// validated uploads), content-addressed and written once.
const RenderedPrefix = artifact.RenderedPrefix + "sha256/"

// ParseOrigin checks an origin the indexer renders documents for: http or
// https, a host, nothing after it.
func ParseOrigin(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("origin %q: %w", raw, err)
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "", u.User != nil, u.RawQuery != "", u.Fragment != "",
		u.Path != "" && u.Path != "/":
		return nil, fmt.Errorf("origin %q: want scheme://host[:port] and nothing else", raw)
	}
	return &url.URL{Scheme: u.Scheme, Host: strings.ToLower(u.Host)}, nil
}

// originsFor returns the origins to render c's documents for: the
// configured ones, else (KeepOrigins) those c records.
func (ix *Indexer) originsFor(c *catalog.Catalog) []*url.URL {
	if len(ix.origins) > 0 || !ix.keepOrigins {
		return ix.origins
	}
	var out []*url.URL
	for _, o := range c.DocumentOrigins {
		if u, err := ParseOrigin(o); err == nil {
			out = append(out, u)
		}
	}
	return out
}

// documentsStale reports whether c's documents need rendering although
// nothing was published: they were rendered for other origins, or never.
func (ix *Indexer) documentsStale(c *catalog.Catalog) bool {
	origins := ix.originsFor(c)
	if len(origins) == 0 {
		return len(c.Documents) > 0 || len(c.DocumentOrigins) > 0
	}
	return !slices.Equal(c.DocumentOrigins, originNames(origins))
}

func originNames(origins []*url.URL) []string {
	if len(origins) == 0 {
		return nil
	}
	out := make([]string, len(origins))
	for i, o := range origins {
		out[i] = discovery.Origin(o)
	}
	return out
}

// renderDocuments renders c's large documents into the bucket and records
// them in c; it reports whether the record changed. With trustPins, a
// document whose bytes c already pins keeps its pin; without, every one is
// written again.
func (ix *Indexer) renderDocuments(ctx context.Context, c *catalog.Catalog, trustPins bool) (bool, error) {
	var docs []catalog.Document
	origins := ix.originsFor(c)
	if len(origins) > 0 {
		v := catalog.Compile(c, "")
		pinned := c.Documents
		if !trustPins {
			pinned = nil
		}
		var err error
		if docs, err = ix.documentsOf(ctx, origins, pinned, c, v); err != nil {
			return false, err
		}
	}
	names := originNames(origins)
	if reflect.DeepEqual(docs, c.Documents) && slices.Equal(names, c.DocumentOrigins) {
		return false, nil
	}
	c.Documents, c.DocumentOrigins = docs, names
	return true, nil
}

// documentsOf renders and stores the large documents of view v.
func (ix *Indexer) documentsOf(ctx context.Context, origins []*url.URL, pinned []catalog.Document, c *catalog.Catalog, v *catalog.View) ([]catalog.Document, error) {
	var docs []catalog.Document
	add := func(origin, path string, auth bool, body any) error {
		fd := feeddoc.Render(body, feeddoc.StoredLevel)
		if int64(len(fd.Body)) < ix.minStored {
			return nil
		}
		id, err := ix.storeRendition(ctx, pinned, fd.Body, fd.Digest, "")
		if err != nil {
			return err
		}
		d := catalog.Document{Origin: origin, Path: path, Authenticated: auth, Identity: id}
		if was := pinnedGzip(pinned, d); was != nil {
			// The same document as pinned: its gzip rendition stands, and
			// compressing it again would be most of what a publish costs.
			d.Gzip = was
			docs = append(docs, d)
			return nil
		}
		gz := fd.Gzipped()
		g, err := ix.storeRendition(ctx, pinned, gz, digest.Of(gz), "gzip")
		if err != nil {
			return err
		}
		d.Gzip = &g
		docs = append(docs, d)
		return nil
	}
	listings := slices.Sorted(maps.Keys(c.Listings))
	for _, auth := range []bool{false, true} {
		for _, base := range origins {
			origin := discovery.Origin(base)
			if err := add(origin, routes.RFCIndex, auth, discovery.TopLevel(v, auth, base)); err != nil {
				return nil, err
			}
			for _, l := range listings {
				if idx, ok := discovery.Listing(v, l, auth, base); ok {
					if err := add(origin, routes.ListingIndex(l), auth, idx); err != nil {
						return nil, err
					}
				}
			}
		}
		// Pages hold origin-root-absolute hrefs only: one rendering serves
		// every origin.
		f := &manifest.Feed{View: v, Authenticated: auth}
		if err := add("", routes.AllPage(routes.SkillFeed), auth, f.Page(catalog.KindSkill, manifest.Range{})); err != nil {
			return nil, err
		}
		if err := add("", routes.AllPage(routes.SubagentFeed), auth, f.Page(catalog.KindSubagent, manifest.Range{})); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// pinnedGzip is the gzip rendition pinned for d's document when the
// identity pinned for it is d's, else nil.
func pinnedGzip(pinned []catalog.Document, d catalog.Document) *catalog.Rendition {
	for _, p := range pinned {
		if p.Origin == d.Origin && p.Path == d.Path && p.Authenticated == d.Authenticated &&
			p.Identity == d.Identity && p.Gzip != nil {
			g := *p.Gzip
			return &g
		}
	}
	return nil
}

// storeRendition stores bytes (with the Content-Encoding a client fetching
// them from the bucket is told) at their content address and returns where
// they are: the version the catalog already pins, when it pins these very
// bytes, else the version this write makes. An object found at the key is
// never trusted (anyone able to write the bucket may have changed it):
// the write makes a version whose bytes are known, and that one is pinned.
func (ix *Indexer) storeRendition(ctx context.Context, pinned []catalog.Document, b []byte, d digest.Digest, encoding string) (catalog.Rendition, error) {
	key := RenderedPrefix + d.Hex()
	for _, doc := range pinned {
		for _, r := range []*catalog.Rendition{&doc.Identity, doc.Gzip} {
			if r != nil && r.Key == key && r.Digest.Equal(d) && r.Size == int64(len(b)) {
				return *r, nil
			}
		}
	}
	info, err := ix.store.Put(ctx, key, b, store.PutOptions{ContentType: "application/json", ContentEncoding: encoding})
	if err != nil {
		return catalog.Rendition{}, fmt.Errorf("write %s: %w", key, err)
	}
	return catalog.Rendition{Key: key, VersionID: info.VersionID, ETag: info.ETag, Digest: d, Size: int64(len(b))}, nil
}

// collectAge is how old an unpinned rendered object must be before a
// reconcile deletes it: an invocation that lost a race may have written it
// a moment ago, and readers of the previous revision may still fetch it.
const collectAge = time.Hour

// staleRenditions reports whether a rendition c pins is no longer its
// key's current object (someone wrote the key: the pinned version would
// then expire with the bucket's noncurrent versions, and a store without
// versions holds other bytes).
func (ix *Indexer) staleRenditions(ctx context.Context, c *catalog.Catalog) (bool, error) {
	for _, d := range c.Documents {
		for _, r := range []*catalog.Rendition{&d.Identity, d.Gzip} {
			if r == nil {
				continue
			}
			info, err := ix.store.Head(ctx, r.Key)
			switch {
			case errors.Is(err, store.ErrNotFound):
				return true, nil
			case err != nil:
				return false, fmt.Errorf("head %s: %w", r.Key, err)
			case info.VersionID != r.VersionID || !sameETag(info.ETag, r.ETag):
				return true, nil
			}
		}
	}
	return false, nil
}

// collectRendered deletes rendered objects c does not pin, written more
// than collectAge ago; it returns how many.
func (ix *Indexer) collectRendered(ctx context.Context, c *catalog.Catalog) (int, error) {
	pinned := map[string]bool{}
	for _, d := range c.Documents {
		pinned[d.Identity.Key] = true
		if d.Gzip != nil {
			pinned[d.Gzip.Key] = true
		}
	}
	infos, err := ix.store.List(ctx, RenderedPrefix)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", RenderedPrefix, err)
	}
	n := 0
	for _, info := range infos {
		if pinned[info.Key] || ix.now().Sub(info.LastModified) < collectAge {
			continue
		}
		if err := ix.store.Delete(ctx, info.Key); err != nil {
			return n, fmt.Errorf("delete %s: %w", info.Key, err)
		}
		n++
	}
	return n, nil
}
