package catalog

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

// TestDescriptionStoredOnce: a version's description is written only when
// it is not its frontmatter's, and every case reads back as it was.
func TestDescriptionStoredOnce(t *testing.T) {
	long := string(bytes.Repeat([]byte("careful words "), 70))
	for _, tc := range []struct {
		name, description, frontmatter string
		written                        bool
	}{
		{name: "the frontmatter's", description: long, frontmatter: `{"name":"x","description":` + quote(long) + `}`},
		{name: "another", description: "from agent-skills.yaml", frontmatter: `{"name":"x","description":"short"}`, written: true},
		{name: "empty, the frontmatter's is not", description: "", frontmatter: `{"name":"x","description":"short"}`, written: true},
		{name: "empty, and so is the frontmatter's", description: "", frontmatter: `{"name":"x","description":""}`},
		{name: "no description in the frontmatter", description: "d", frontmatter: `{"name":"x"}`, written: true},
		{name: "not a string in the frontmatter", description: "7", frontmatter: `{"name":"x","description":7}`, written: true},
		{name: "no frontmatter (external)", description: "d", written: true},
		{name: "no frontmatter, empty", description: "", written: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Version{Label: "1", Digest: digest.Of([]byte(tc.name)), Type: "skill-md", Format: "md", Size: 1,
				PublishedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Description: tc.description}
			if tc.frontmatter != "" {
				v.Frontmatter = json.RawMessage(tc.frontmatter)
			}
			e := NewEntry(KindSkill, "", "x")
			e.Latest = "1"
			older := v
			older.Label = "0"
			e.SetVersions([]Version{older, v})
			c := New()
			c.Skills["x"] = e
			raw, err := Encode(c, 0)
			if err != nil {
				t.Fatal(err)
			}
			line := bytes.Split(raw, []byte{'\n'})[1]
			var probe struct {
				Head map[string]json.RawMessage `json:"head"`
			}
			if err := json.Unmarshal(line, &probe); err != nil {
				t.Fatal(err)
			}
			if _, written := probe.Head["description"]; written != tc.written {
				t.Errorf("description written: %v, want %v (%s)", written, tc.written, line)
			}
			got, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			g := got.Skills["x"]
			if err := g.LoadHistory(); err != nil {
				t.Fatal(err)
			}
			if len(g.Versions) != 2 || g.Versions[0].Description != tc.description || g.LatestVersion().Description != tc.description {
				t.Errorf("read back %+v", g.Versions)
			}
		})
	}
}

// TestAMissingDescriptionIsAnError: a stored version with neither a
// description nor one in its frontmatter is a broken catalog, not "": the
// head is never read as a version (the entry has no latest version, so it
// is served nowhere), and writing the entry changed is an error.
func TestAMissingDescriptionIsAnError(t *testing.T) {
	for _, line := range []string{
		`{"name":"x","kind":"skill","latest":"1","head":{"label":"1","frontmatter":{"name":"x"}}}`,
		`{"name":"x","kind":"skill","latest":"1","head":{"label":"2","frontmatter":{"name":"x"}}}`, // decoded at once
	} {
		var e Entry
		if err := unmarshalEntry([]byte(line), &e); err != nil {
			continue // found broken as it was read
		}
		if v := e.LatestVersion(); v != nil || e.headErr() == nil || e.Live() {
			t.Fatalf("%s: read as %+v", line, v)
		}
		e.Count++
		if _, err := marshalEntry(&e); err == nil {
			t.Fatalf("%s: written without its head", line)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
