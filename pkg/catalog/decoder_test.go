package catalog_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	segjson "github.com/segmentio/encoding/json"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// TestFastDecoderAgrees: the decoder the codec uses for entries, histories
// and sources reads every line of a generated catalog to the same values
// as encoding/json, and refuses what encoding/json refuses.
func TestFastDecoderAgrees(t *testing.T) {
	c := catalogtest.Generate(catalogtest.Default(2000)).Catalog(t)
	for id, e := range c.Skills {
		c.Sources[e.Source] = catalog.Source{ETag: `"` + id + `"`, Held: len(id)%2 == 0}
	}
	raw, err := catalog.Encode(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte{'\n'}), []byte{'\n'})
	n := len(c.Skills) + len(c.Subagents)
	entries, sources := lines[1:1+n], lines[len(lines)-2]
	for i, line := range entries {
		var std, fast catalog.Entry
		if err := json.Unmarshal(line, &std); err != nil {
			t.Fatal(err)
		}
		if err := segjson.Unmarshal(line, &fast); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !reflect.DeepEqual(std, fast) {
			t.Fatalf("entry %d decodes differently:\n std %+v\nfast %+v", i, std, fast)
		}
	}
	var std, fast map[string]catalog.Source
	if err := json.Unmarshal(sources, &std); err != nil {
		t.Fatal(err)
	}
	if err := segjson.Unmarshal(sources, &fast); err != nil || !reflect.DeepEqual(std, fast) || len(std) == 0 {
		t.Fatalf("sources decode differently (%d entries): %v", len(std), err)
	}
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
