package feeddoc

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

type testItem struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Range       struct {
		Min, Max string
	} `json:"range"`
}

func itemOf(name string, rev int) Item {
	it := testItem{Name: name, Description: fmt.Sprintf("rev %d of %s: \"quoted\", {braced}, [listed], <b>&amp;</b> \\ back", rev, name)}
	it.Range.Min, it.Range.Max = "1", fmt.Sprint(rev)
	return Item{Name: name, JSON: EncodeItem(it)}
}

// builtOf builds a document of n items named m-000000, m-000001, ….
func builtOf(t *testing.T, n int) *Stored {
	t.Helper()
	items := make([]Item, n)
	for i := range items {
		items[i] = itemOf(fmt.Sprintf("m-%06d", i), 0)
	}
	s, err := Build(testPrefix, testSuffix, items)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type testDoc struct {
	Schema string     `json:"$schema"`
	Items  []testItem `json:"items"`
	Links  any        `json:"links"`
}

var testPrefix, testSuffix = func() ([]byte, []byte) {
	p, s, ok := Frame(Render(testDoc{Schema: "s", Items: []testItem{}, Links: map[string]string{"self": "/all.json"}}, RequestLevel).Body)
	if !ok {
		panic("frame")
	}
	return p, s
}()

// render is the document Render writes for these items.
func render(t *testing.T, items map[string]Item) []byte {
	t.Helper()
	doc := testDoc{Schema: "s", Items: []testItem{}, Links: map[string]string{"self": "/all.json"}}
	for _, n := range slices.Sorted(mapKeysItems(items)) {
		var ti testItem
		if err := jsonUnmarshal(items[n].JSON, &ti); err != nil {
			t.Fatal(err)
		}
		doc.Items = append(doc.Items, ti)
	}
	return Render(doc, RequestLevel).Body
}

func mapKeysItems(m map[string]Item) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sortedItems(m map[string]Item) []Item {
	var out []Item
	for _, n := range slices.Sorted(mapKeysItems(m)) {
		out = append(out, m[n])
	}
	return out
}

// check: the stored document is Render's, its gzip encoding reads back as
// it with compress/gzip (one member), and its layout is Build's.
func check(t *testing.T, s *Stored, items map[string]Item) {
	t.Helper()
	if want := render(t, items); !bytes.Equal(s.Body, want) {
		t.Fatalf("body differs from Render's (%d bytes, want %d)", len(s.Body), len(want))
	}
	br := bytes.NewReader(s.Gz)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, s.Body) || br.Len() != 0 {
		t.Fatalf("gzip reads back %d bytes (%v, %d left), want the body's %d", len(got), err, br.Len(), len(s.Body))
	}
	built, err := Build(testPrefix, testSuffix, sortedItems(items))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built.Gz, s.Gz) || !reflect.DeepEqual(built.Layout, s.Layout) {
		t.Fatalf("spliced gzip or layout differ from Build's: %d/%d bytes, %d/%d chunks", len(s.Gz), len(built.Gz), len(s.Layout.Chunks), len(built.Layout.Chunks))
	}
}

// TestSpliceIsBuild: random changes (replacements, additions before, among
// and after the items, removals, of chunk boundaries too) spliced into a
// document give, every time, the bytes Render and Build give of the items.
func TestSpliceIsBuild(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			items := map[string]Item{}
			n := []int{0, 1, 5, 700, 3000}[seed%5]
			for i := range n {
				name := fmt.Sprintf("m-%06d", i*10)
				items[name] = itemOf(name, 0)
			}
			s, err := Build(testPrefix, testSuffix, sortedItems(items))
			if err != nil {
				t.Fatal(err)
			}
			check(t, s, items)
			for round := 1; round <= 25; round++ {
				changes := map[string][]byte{}
				for range 1 + r.IntN(6) {
					var name string
					switch r.IntN(4) {
					case 0: // before everything
						name = fmt.Sprintf("a-%d", r.IntN(100))
					case 1: // after everything
						name = fmt.Sprintf("z-%d", r.IntN(100))
					default: // among them: an existing name or a new one beside it
						name = fmt.Sprintf("m-%06d", r.IntN(max(n, 1))*10+r.IntN(2))
					}
					if _, ok := items[name]; ok && r.IntN(3) == 0 {
						changes[name] = nil
						delete(items, name)
						continue
					}
					it := itemOf(name, round)
					changes[name] = it.JSON
					items[name] = it
				}
				if round%7 == 0 { // remove a whole run, boundaries included
					for _, name := range slices.Sorted(mapKeysItems(items))[:min(len(items), 600)] {
						changes[name] = nil
						delete(items, name)
					}
				}
				next, err := Splice(s, testPrefix, testSuffix, changes)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				check(t, next, items)
				s = next
			}
		})
	}
}

// TestSpliceCopiesWhatDidNotChange: one changed item among thousands
// re-encodes its own chunk and copies every other chunk's bytes.
func TestSpliceCopiesWhatDidNotChange(t *testing.T) {
	s := builtOf(t, 20000)
	if len(s.Layout.Chunks) < 10 {
		t.Fatalf("%d chunks for 20,000 items", len(s.Layout.Chunks))
	}
	next, err := Splice(s, testPrefix, testSuffix, map[string][]byte{"m-010000": itemOf("m-010000", 1).JSON})
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for i, c := range next.Layout.Chunks {
		if c != s.Layout.Chunks[i] {
			differ++
		}
	}
	if differ > 1 || len(next.Layout.Chunks) != len(s.Layout.Chunks) {
		t.Fatalf("%d chunks of %d differ after one change", differ, len(s.Layout.Chunks))
	}
}

// TestSpliceRefusesALayoutThatDoesNotFit: a layout that does not describe
// the bytes (tampered, or of another document) is refused, not trusted.
func TestSpliceRefusesALayoutThatDoesNotFit(t *testing.T) {
	s := builtOf(t, 3000)
	for name, mutate := range map[string]func(l *Layout){
		"a chunk longer":   func(l *Layout) { l.Chunks[0].Raw++ },
		"a first renamed":  func(l *Layout) { l.Chunks[1].First = "m-999999" },
		"gzip units short": func(l *Layout) { l.TailGz-- },
		"a chunk dropped":  func(l *Layout) { l.Chunks = l.Chunks[1:] },
	} {
		t.Run(name, func(t *testing.T) {
			bad := *s
			bad.Layout.Chunks = slices.Clone(s.Layout.Chunks)
			mutate(&bad.Layout)
			if _, err := Splice(&bad, testPrefix, testSuffix, map[string][]byte{"m-000001": nil}); err == nil {
				t.Fatal("spliced along a layout that does not describe the document")
			}
		})
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
