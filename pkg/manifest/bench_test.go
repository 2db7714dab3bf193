package manifest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
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

// searchQueries are what BenchmarkSearchScale asks, by kind: common
// description words, rarer ones, a name's first two words (a prefix), an
// exact name, and the exact name's first hit only (a lookup). Each is asked
// of every catalog size; the names come from the first thousand generated
// skills, which every size shares. A page holds 50 results but for the
// lookup; the prefix and exact queries fill it only in larger catalogs,
// where more names and descriptions hold the name's words.
func searchQueries(b *testing.B, bucket *catalogtest.Bucket) map[string]string {
	b.Helper()
	name := bucket.Skills[500].Name
	parts := strings.Split(name, "-")
	return map[string]string{
		"words":  "take=50&q=" + url.QueryEscape("review terraform"),
		"rare":   "take=50&q=" + url.QueryEscape("kubernetes rollback"),
		"prefix": "take=50&q=" + url.QueryEscape(parts[0]+"-"+parts[1]),
		"exact":  "take=50&q=" + url.QueryEscape(name),
		"lookup": "take=1&q=" + url.QueryEscape(name),
	}
}

// BenchmarkSearchScale is /api/v1/skills?q=… (rank, render a page of up
// to 50, marshal) by an anonymous caller over generated catalogs of 1,000,
// 10,000 and 50,000 skills, with the revision's search index built (as the
// server keeps it). Compare sizes within one run.
func BenchmarkSearchScale(b *testing.B) {
	sizes := []int{1000, 10000, 50000}
	feeds, queries := map[int]*Feed{}, map[int]map[string]string{}
	for _, n := range sizes {
		bucket := catalogtest.Generate(catalogtest.Default(n))
		v := bucket.View(b)
		feeds[n] = &Feed{View: v, Base: base, SearchIndex: NewSearchIndex(v)}
		queries[n] = searchQueries(b, bucket)
	}
	// Sizes side by side per kind, so that a change in the machine's load
	// during the run skews a ratio as little as it can.
	for _, kind := range []string{"words", "rare", "prefix", "exact", "lookup"} {
		for _, n := range sizes {
			f, target := feeds[n], "/api/v1/skills?"+queries[n][kind]
			get(b, f, target) // the index is built on the first search of a revision
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				var found int
				for b.Loop() {
					res := get(b, f, target)
					if _, err := json.Marshal(res.Document); err != nil {
						b.Fatal(err)
					}
					found = len(res.Document.([]Summary))
				}
				b.ReportMetric(float64(found), "results")
			})
		}
	}
}
