package indexer

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// filePuts bounds the file blobs one version writes at once.
const filePuts = 8

// putFiles writes each validated file's content to its own content-addressed
// blob (catalog.BlobKey of its digest), create-only like the artifacts, so
// the request path can re-hash one file without reading an archive. A blob
// that exists already holds these very bytes and is not written again;
// files sharing a digest are written once.
func (ix *Indexer) putFiles(ctx context.Context, files []archive.File) error {
	var g errgroup.Group
	g.SetLimit(filePuts)
	seen := map[string]bool{}
	for _, f := range files {
		key := catalog.BlobKey(f.Digest)
		if seen[key] {
			continue
		}
		seen[key] = true
		g.Go(func() error { return ix.putContent(ctx, key, f) })
	}
	return g.Wait()
}

func (ix *Indexer) putContent(ctx context.Context, key string, f archive.File) error {
	if _, err := ix.store.Head(ctx, key); err == nil {
		return nil
	}
	_, err := ix.store.Put(ctx, key, f.Data, store.PutOptions{IfNoneMatch: "*", ContentType: f.MediaType})
	if err != nil && !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("write blob %s of %s: %w", f.Digest, f.Path, err)
	}
	return nil
}

// catalogFiles is what the catalog records of validated files: everything
// but the content.
func catalogFiles(files []archive.File) []catalog.File {
	if len(files) == 0 {
		return nil
	}
	out := make([]catalog.File, len(files))
	for i, f := range files {
		out[i] = catalog.File{Path: f.Path, Digest: f.Digest, Size: f.Size, MediaType: f.MediaType}
	}
	return out
}

// mcpExternal is why an external entry is not served over MCP.
const mcpExternal = "an external entry: its bytes are not re-hosted here, so no file of it can be verified on read"

// excludeExternal marks v, an external entry's version, as not served over
// MCP and returns the status warnings that say so.
func excludeExternal(v *catalog.Version, warnings []string) []string {
	v.MCPExcluded = mcpExternal
	return append(warnings, artifact.MCPWarning(mcpExternal))
}
