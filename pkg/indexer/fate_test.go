package indexer

import (
	"testing"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// TestFateOfBytesServedAlready: the bytes the key's entry serves as its
// latest version are published even while the key is held (nothing waits
// for a config); the same bytes of a version out of service, or of a
// withdrawn entry, are not.
func TestFateOfBytesServedAlready(t *testing.T) {
	const key = "skills/a.md"
	d := digest.Of([]byte("a"))
	held := func() *catalog.Catalog {
		c := catalog.New()
		e := &catalog.Entry{Name: "a", Kind: catalog.KindSkill, Source: key, Latest: "1"}
		e.SetVersions([]catalog.Version{{Label: "1", Digest: d}})
		c.Skills["a"] = e
		c.Sources = map[string]catalog.Source{key: {ETag: `"old"`, Held: true}}
		c.Bucket = &catalog.BucketConfig{State: catalog.ConfigInvalid}
		return c
	}
	u := Upload{Key: key, ETag: `"new"`, Digest: d}
	if f := FateOf(held(), nil, u); f.Result != FatePublished || f.Version != "1" {
		t.Errorf("the bytes served already, under a held key: %+v, want published", f)
	}
	if f := FateOf(held(), nil, Upload{Key: key, ETag: `"new"`, Digest: digest.Of([]byte("b"))}); f.Result != FateHeld {
		t.Errorf("new bytes under a held key: %+v, want held", f)
	}
	c := held()
	c.Skills["a"].LatestVersion().Gone = &catalog.Gone{}
	if f := FateOf(c, nil, u); f.Result == FatePublished {
		t.Errorf("the bytes of a version out of service: %+v, want not published", f)
	}
	c = held()
	c.Skills["a"].Withdrawn = true
	if f := FateOf(c, nil, u); f.Result == FatePublished {
		t.Errorf("the bytes of a withdrawn entry: %+v, want not published", f)
	}
}
