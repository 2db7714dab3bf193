package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// headProbe is how much ReadHead reads first: a head with its documents
// fits in it unless the catalog has hundreds of listings.
const headProbe = 64 << 10

// ErrChanged is wrapped when a read of one catalog revision finds the
// object replaced by another: read the head again.
var ErrChanged = errors.New("catalog: changed while it was read")

// Head is the part of one catalog revision the request path reads first:
// enough to answer from pre-rendered documents without reading entries.
type Head struct {
	Revision  int64
	UpdatedAt time.Time
	Listings  map[string]*Listing
	Documents []Document
	// DocumentOrigins are the origins Documents were rendered for.
	DocumentOrigins []string
	// Signing pins the keys and the signed AI Catalogs (nil: unsigned).
	Signing *Signing
	// Skills and Subagents count the entries, live or withdrawn.
	Skills, Subagents int
	// ETag and Size describe the object.
	ETag string
	Size int64

	head    head
	headLen int64
	legacy  *Catalog // a schema-1 catalog, read whole
}

// ReadHead reads the head of the catalog. With ifNoneMatch set to the
// ETag of a head already held, an unchanged catalog is store.ErrNotModified;
// a missing one is store.ErrNotFound.
func ReadHead(ctx context.Context, s store.Store, ifNoneMatch string) (*Head, error) {
	b, info, err := readRange(ctx, s, 0, headProbe, store.GetOptions{IfNoneMatch: ifNoneMatch})
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(b, []byte(`{"schema":`)) {
		return readLegacyHead(ctx, s, info)
	}
	line, _, found := bytes.Cut(b, []byte{'\n'})
	if !found && info.Size > int64(len(b)) {
		b, _, err = readRange(ctx, s, 0, MaxHeadBytes, store.GetOptions{IfMatch: info.ETag})
		if err != nil {
			return nil, err
		}
		line, _, found = bytes.Cut(b, []byte{'\n'})
	}
	if !found {
		return nil, fmt.Errorf("read %s: no head line within %d bytes", Key, len(b))
	}
	h, err := decodeHead(line)
	if err != nil {
		return nil, err
	}
	if h.Schema < SchemaVersion {
		return readLegacyHead(ctx, s, info)
	}
	headLen := int64(len(line)) + 1
	if headLen+h.Sections.total() != info.Size {
		return nil, fmt.Errorf("read %s: the head describes %d bytes, the object has %d", Key, headLen+h.Sections.total(), info.Size)
	}
	return &Head{
		Revision: h.Revision, UpdatedAt: h.UpdatedAt, Listings: nonNil(h.Listings), Documents: h.Documents, Signing: h.Signing,
		DocumentOrigins: h.DocumentOrigins, Skills: h.Skills, Subagents: h.Subagents, ETag: info.ETag, Size: info.Size,
		head: *h, headLen: headLen,
	}, nil
}

func readLegacyHead(ctx context.Context, s store.Store, info store.Info) (*Head, error) {
	b, _, err := readRange(ctx, s, 0, MaxBytes, store.GetOptions{IfMatch: info.ETag})
	if err != nil {
		return nil, err
	}
	c, err := decodeLegacy(b)
	if err != nil {
		return nil, err
	}
	return &Head{
		Revision: c.Revision, UpdatedAt: c.UpdatedAt, Listings: c.Listings,
		Skills: len(c.Skills), Subagents: len(c.Subagents), ETag: info.ETag, Size: info.Size, legacy: c,
	}, nil
}

func nonNil(m map[string]*Listing) map[string]*Listing {
	if m == nil {
		return map[string]*Listing{}
	}
	return m
}

// View reads the entries of the revision h describes and compiles them.
// The view reads an entry's older versions (View.History) from the same
// revision, one line at a time; when the catalog has been replaced since,
// such a read fails with ErrChanged.
func (h *Head) View(ctx context.Context, s store.Store) (*View, error) {
	if h.legacy != nil {
		return Compile(h.legacy, h.ETag), nil
	}
	secs := h.head.Sections
	b, _, err := readRange(ctx, s, h.headLen, secs.Entries+secs.Lengths, store.GetOptions{IfMatch: h.ETag})
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != secs.Entries+secs.Lengths {
		return nil, fmt.Errorf("read %s: %d bytes of entries, want %d", Key, len(b), secs.Entries+secs.Lengths)
	}
	entries, err := decodeEntries(b[:secs.Entries], h.Skills+h.Subagents, false)
	if err != nil {
		return nil, err
	}
	lengths, err := parseLengths(b[secs.Entries:])
	if err != nil {
		return nil, err
	}
	if len(lengths) != len(entries) {
		return nil, fmt.Errorf("read %s: %d history lines for %d entries", Key, len(lengths), len(entries))
	}
	type span struct{ off, n int64 }
	spans := make(map[*Entry]span, len(entries))
	off := h.headLen + secs.Entries + secs.Lengths
	for i, e := range entries {
		spans[e] = span{off, lengths[i] - 1}
		off += lengths[i]
	}
	skills, agents := entries[:h.Skills], entries[h.Skills:]
	history := func(ctx context.Context, e *Entry) ([]Version, error) {
		sp, ok := spans[e]
		if !ok {
			return nil, fmt.Errorf("catalog: %s is not an entry of revision %d", e.ID(), h.Revision)
		}
		if sp.n <= 2 { // "[]": the latest is the only version
			return decodeHistory(nil, e.head())
		}
		line, _, err := readRange(ctx, s, sp.off, sp.n, store.GetOptions{IfMatch: h.ETag})
		if err != nil {
			return nil, err
		}
		vs, err := decodeHistory(line, e.head())
		if err != nil {
			return nil, fmt.Errorf("decode history of %s: %w", e.ID(), err)
		}
		return vs, nil
	}
	return compile(skills, agents, h.Listings, h.Documents, h.head.Gone, h.Revision, h.ETag, history), nil
}

// readRange reads length bytes from offset (all of a shorter object) with
// opts' conditions. A replaced object (If-Match failed) is ErrChanged.
func readRange(ctx context.Context, s store.Store, offset, length int64, opts store.GetOptions) ([]byte, store.Info, error) {
	opts.Offset, opts.Length = offset, length
	obj, err := s.Get(ctx, Key, opts)
	switch {
	case errors.Is(err, store.ErrPreconditionFailed):
		return nil, store.Info{}, fmt.Errorf("read %s: %w: %w", Key, ErrChanged, err)
	case err != nil:
		return nil, store.Info{}, fmt.Errorf("read %s: %w", Key, err)
	}
	defer func() { _ = obj.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(obj.Body, length))
	if err != nil {
		return nil, obj.Info, fmt.Errorf("read %s: %w", Key, err)
	}
	return b, obj.Info, nil
}

// Document returns the pre-rendered document of this revision for origin
// and path in the caller's class, or nil.
func (h *Head) Document(origin, path string, c audience.Caller) *Document {
	return findDocument(h.Documents, origin, path, c)
}
