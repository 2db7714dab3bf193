package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
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
// document whose bytes c already pins keeps its pin, and one the write
// changes is spliced from the pinned one; without, every one is rendered
// and written again.
func (ix *Indexer) renderDocuments(ctx context.Context, c *catalog.Catalog, trustPins bool) (bool, error) {
	var docs []catalog.Document
	origins := ix.originsFor(c)
	if len(origins) > 0 {
		pinned := c.Documents
		if !trustPins {
			pinned = nil
		}
		// The documents are those of the catalog as read, for these
		// origins: what did not change is what it was.
		settled := trustPins && slices.Equal(c.DocumentOrigins, originNames(origins))
		var err error
		if docs, err = ix.documentsOf(ctx, origins, pinned, c, settled); err != nil {
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

// documentsOf renders and stores the large documents of c. With settled
// (c's documents are those of the catalog as read, for these origins), a
// document none of whose entries changed is kept as the catalog pins it
// (pinned), or left unstored when it was; one
// whose entries changed, not too many, is spliced from the pinned bytes
// (feeddoc.Splice), so a publish costs what it changed plus copying the
// rest; any other is built whole from the view.
func (ix *Indexer) documentsOf(ctx context.Context, origins []*url.URL, pinned []catalog.Document, c *catalog.Catalog, settled bool) ([]catalog.Document, error) {
	var v *catalog.View
	view := func() *catalog.View {
		if v == nil {
			v = catalog.Compile(c, "")
		}
		return v
	}
	changed := changedEntries(c)
	var docs []catalog.Document
	for _, sd := range ix.storedDocs(c, origins) {
		if sd.bounded && int64(sd.atMost)*maxItemBytes < ix.minStored {
			continue
		}
		prev := catalog.FindClass(pinned, sd.origin, sd.path, sd.class)
		if prev != nil && !slices.EqualFunc(prev.Groups, sd.groups, audience.Set.Equal) {
			prev = nil // what decides its classes changed: built whole
		}
		var changes map[string][]byte
		if sd.item != nil {
			changes = map[string][]byte{}
			for _, e := range changed {
				if sd.domain(e) {
					changes[e.Name] = sd.item(e)
				}
			}
			if settled && len(changes) == 0 {
				if prev != nil {
					docs = append(docs, *prev) // nothing in it changed
				}
				continue // or it is still too small to store
			}
		}
		prefix, suffix, ok := feeddoc.Frame(feeddoc.Render(sd.empty, feeddoc.StoredLevel).Body)
		if !ok {
			return nil, fmt.Errorf("render %s: the document has no one place for its items", sd.path)
		}
		var st *feeddoc.Stored
		if prev != nil && changes != nil && len(changes) <= spliceAtMost(len(c.Skills)+len(c.Subagents)) {
			var err error
			if st, err = ix.splice(ctx, prev, prefix, suffix, changes); err != nil {
				// Never trusted, never fatal: the document is built whole.
				ix.log.WarnContext(ctx, "a stored document cannot be spliced; rendering it whole", "path", sd.path, "error", err.Error())
				st = nil
			} else {
				ix.log.DebugContext(ctx, "stored document spliced", "path", sd.path, "class", sd.class.String(), "items", len(changes))
			}
		}
		if st == nil {
			var err error
			if st, err = feeddoc.Build(prefix, suffix, sd.items(view())); err != nil {
				return nil, fmt.Errorf("render %s: %w", sd.path, err)
			}
		}
		if int64(len(st.Body)) < ix.minStored {
			continue
		}
		d, err := ix.storeDocument(ctx, pinned, sd, st)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// spliceAtMost is how many of a catalog's n entries may change for its
// documents to be spliced rather than built whole.
func spliceAtMost(n int) int { return max(64, n/8) }

// changedEntries are c's entries that a write of c encodes anew.
func changedEntries(c *catalog.Catalog) []*catalog.Entry {
	var out []*catalog.Entry
	for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
		for _, e := range m {
			if e.Changed() {
				out = append(out, e)
			}
		}
	}
	return out
}

// storeDocument stores a document's renditions (those the catalog pins
// already are kept) and returns its record.
func (ix *Indexer) storeDocument(ctx context.Context, pinned []catalog.Document, sd storedDoc, st *feeddoc.Stored) (catalog.Document, error) {
	layout, err := json.Marshal(st.Layout)
	if err != nil {
		return catalog.Document{}, fmt.Errorf("encode the layout of %s: %w", sd.path, err)
	}
	d := catalog.Document{Origin: sd.origin, Path: sd.path, Authenticated: sd.class.Authenticated, Audiences: sd.class.Audiences, Groups: sd.groups}
	for _, r := range []struct {
		to       **catalog.Rendition
		b        []byte
		encoding string
	}{{nil, st.Body, ""}, {&d.Gzip, st.Gz, "gzip"}, {&d.Layout, layout, ""}} {
		rend, err := ix.storeRendition(ctx, pinned, r.b, digest.Of(r.b), r.encoding)
		if err != nil {
			return catalog.Document{}, err
		}
		if r.to == nil {
			d.Identity = rend
		} else {
			*r.to = &rend
		}
	}
	return d, nil
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
		for _, r := range doc.Renditions() {
			if r.Key == key && r.Digest.Equal(d) && r.Size == int64(len(b)) {
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
	for _, r := range pinnedRenditions(c) {
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
	return false, nil
}

// pinnedRenditions are the rendered objects c pins: its documents' and its
// signed AI Catalogs.
func pinnedRenditions(c *catalog.Catalog) []*catalog.Rendition {
	var out []*catalog.Rendition
	for i := range c.Documents {
		out = append(out, c.Documents[i].Renditions()...)
	}
	if c.Signing != nil {
		for i := range c.Signing.Catalogs {
			out = append(out, &c.Signing.Catalogs[i].Rendition)
		}
	}
	return out
}

// collectRendered deletes rendered objects c does not pin, written more
// than collectAge ago; it returns how many.
func (ix *Indexer) collectRendered(ctx context.Context, c *catalog.Catalog) (int, error) {
	pinned := map[string]bool{}
	for _, r := range pinnedRenditions(c) {
		pinned[r.Key] = true
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
