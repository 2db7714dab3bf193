package indexer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// splice is the document prev pins with changes put in: its renditions are
// read (the versions pinned), each checked against its pinned digest and
// size, as nothing in the bucket but the catalog is trusted, and spliced.
func (ix *Indexer) splice(ctx context.Context, prev *catalog.Document, prefix, suffix []byte, changes map[string][]byte) (*feeddoc.Stored, error) {
	if prev.Gzip == nil || prev.Layout == nil {
		return nil, fmt.Errorf("%s has no layout", prev.Path)
	}
	var parts [3][]byte
	for i, r := range []*catalog.Rendition{&prev.Identity, prev.Gzip, prev.Layout} {
		b, err := ix.readRendition(ctx, r)
		if err != nil {
			return nil, err
		}
		parts[i] = b
	}
	st := &feeddoc.Stored{Body: parts[0], Gz: parts[1]}
	if err := json.Unmarshal(parts[2], &st.Layout); err != nil {
		return nil, fmt.Errorf("decode the layout %s: %w", prev.Layout.Key, err)
	}
	return feeddoc.Splice(st, prefix, suffix, changes)
}

// readRendition reads the version of a rendition the catalog pins and
// checks its bytes against the pinned digest and size.
func (ix *Indexer) readRendition(ctx context.Context, r *catalog.Rendition) ([]byte, error) {
	obj, err := ix.store.Get(ctx, r.Key, store.GetOptions{VersionID: r.VersionID})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.Key, err)
	}
	defer func() { _ = obj.Body.Close() }()
	if obj.Size != r.Size {
		return nil, fmt.Errorf("%s holds %d bytes, the catalog pins %d", r.Key, obj.Size, r.Size)
	}
	b := make([]byte, r.Size)
	if _, err := io.ReadFull(obj.Body, b); err != nil {
		return nil, fmt.Errorf("read %s: %w", r.Key, err)
	}
	if !digest.Of(b).Equal(r.Digest) {
		return nil, fmt.Errorf("%s does not hold the bytes the catalog pins", r.Key)
	}
	return b, nil
}
