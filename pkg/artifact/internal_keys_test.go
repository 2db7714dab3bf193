package artifact_test

import (
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
)

// TestTheIndexersKeysAreInternal: the keys the catalog package writes lie
// under the prefixes the contract reserves for the indexer, so they are
// never read as drops.
func TestTheIndexersKeysAreInternal(t *testing.T) {
	for _, key := range []string{catalog.Key, catalog.StatusKey, catalog.BlobKey(digest.Of([]byte("x"))), indexer.RenderedPrefix + digest.Of([]byte("x")).Hex()} {
		if k, err := artifact.ParseKey(key); err != nil || k.Kind != artifact.KindInternal {
			t.Errorf("ParseKey(%s) = %+v, %v; want an internal key", key, k, err)
		}
	}
	if catalog.ConfigSource != artifact.ConfigKey {
		t.Errorf("catalog.ConfigSource %q is not the config's key", catalog.ConfigSource)
	}
}
