package catalog_test

import (
	"encoding/json"
	"reflect"
	"testing"

	segjson "github.com/segmentio/encoding/json"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// TestFastDecoderAgrees: the decoder the codec uses for entries, histories
// and sources reads a generated catalog to the same values as
// encoding/json, and refuses what encoding/json refuses.
func TestFastDecoderAgrees(t *testing.T) {
	c := catalogtest.Generate(catalogtest.Default(2000)).Catalog(t)
	for id, e := range c.Skills {
		c.Sources[e.Source] = catalog.Source{ETag: `"` + id + `"`, Held: len(id)%2 == 0}
	}
	raw, err := catalog.Encode(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(t *testing.T) *catalog.Catalog {
		t.Helper()
		got, err := catalog.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.LoadHistories(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	fast := decode(t)
	t.Run("encoding/json", func(t *testing.T) {
		catalog.WithStandardDecoder(t)
		std := decode(t)
		if len(std.Skills) != len(c.Skills) || !reflect.DeepEqual(std.Sources, fast.Sources) || len(std.Sources) == 0 {
			t.Fatalf("%d skills, %d sources", len(std.Skills), len(std.Sources))
		}
		for id, e := range std.Skills {
			f := fast.Skills[id]
			if f == nil || !reflect.DeepEqual(e.Versions, f.Versions) || e.EffectiveDescription() != f.EffectiveDescription() ||
				e.Source != f.Source || e.Path != f.Path || e.Visibility != f.Visibility || !reflect.DeepEqual(e.Listings, f.Listings) {
				t.Fatalf("%s decodes differently", id)
			}
		}
	})
	for _, bad := range []string{
		``, `{`, `{"name":"x"`, `{"name":"x"}}`, `{"name":x}`, `{"name":"x",}`, `{"size":1e400}`,
		`{"head":{"digest":"sha256:00"}}`, `{"head":{"publishedAt":"yesterday"}}`, `{"count":"1"}`,
		`{"name":"\ud800"` + "\x00" + `}`, `[1,2]`, `{"head":{"frontmatter":{]}}}`,
	} {
		var s, f catalog.Entry
		stdErr, fastErr := json.Unmarshal([]byte(bad), &s), segjson.Unmarshal([]byte(bad), &f)
		if (stdErr == nil) != (fastErr == nil) {
			t.Errorf("%q: encoding/json says %v, the fast decoder %v", bad, stdErr, fastErr)
		}
	}
}
