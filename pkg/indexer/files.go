package indexer

import (
	"context"
	"errors"
	"fmt"
	"sync"

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
// files sharing a digest are written once. Every file is tried; the error
// joins the failures.
func (ix *Indexer) putFiles(ctx context.Context, files []archive.File) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, filePuts)
		seen = map[string]bool{}
	)
	for _, f := range files {
		key := catalog.BlobKey(f.Digest)
		if seen[key] {
			continue
		}
		seen[key] = true
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := ix.putContent(ctx, key, f); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
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
