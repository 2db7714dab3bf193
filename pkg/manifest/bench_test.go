package manifest

import (
	"encoding/json"
	"testing"
)

// BenchmarkIndexAndPage renders and marshals what a client's first two
// requests cost on a catalog of 1000 public skills (plus 200 hidden ones).
func BenchmarkIndexAndPage(b *testing.B) {
	f := manySkills(namesN(1000)).feed(false)
	index := get(b, f, "/skills/v1/index.json").Document.(Index)
	page := index.Pages[len(index.Pages)/2].Href
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range []string{"/skills/v1/index.json", page} {
			res, err := f.Resolve(b.Context(), p, nil)
			if err != nil || res.Outcome != Document {
				b.Fatal(p, res.Outcome, err)
			}
			if _, err := json.Marshal(res.Document); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSearch is /api/v1/skills?q=… over the same catalog.
func BenchmarkSearch(b *testing.B) {
	f := manySkills(namesN(1000)).feed(false)
	b.ReportAllocs()
	for b.Loop() {
		res := get(b, f, "/api/v1/skills?q=review+terraform&take=50")
		if _, err := json.Marshal(res.Document); err != nil {
			b.Fatal(err)
		}
	}
}
