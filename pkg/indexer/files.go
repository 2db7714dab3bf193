package indexer

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// filePuts bounds the file blobs one version writes at once.
const filePuts = 8

// putFiles writes each validated file's content to its own content-addressed
// blob (catalog.BlobKey of its digest), create-only like the artifacts, so
// the request path can re-hash one file without reading an archive. Files
// sharing a digest, with each other or with the artifact written already
// (a skill-md's one file), are written once.
func (ix *Indexer) putFiles(ctx context.Context, written digest.Digest, files []archive.File) error {
	var g errgroup.Group
	g.SetLimit(filePuts)
	seen := map[digest.Digest]bool{written: true}
	for _, f := range files {
		if seen[f.Digest] {
			continue
		}
		seen[f.Digest] = true
		g.Go(func() error {
			if err := ix.putBlob(ctx, f.Digest, f.Data, f.MediaType); err != nil {
				return fmt.Errorf("write blob %s of %s: %w", f.Digest, f.Path, err)
			}
			return nil
		})
	}
	return g.Wait()
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
