package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
)

// generated is a catalog-like corpus: generated names and descriptions,
// every tenth item in group 1 and every seventh other in group 2, in
// generation order (not name order).
func generated(n int) []Item {
	b := catalogtest.Generate(catalogtest.Default(n))
	items := make([]Item, 0, len(b.Skills))
	for i, it := range b.Skills {
		g := int32(0)
		switch {
		case it.Authenticated:
			g = 1
		case i%7 == 0:
			g = 2
		}
		items = append(items, Item{Name: it.Name, Description: it.Description, Group: g})
	}
	return items
}

// callers are the kinds of caller the tests search as: group 0 alone,
// each other group, both.
var callers = []Visible{nil, {false, true}, {false, false, true}, {true, true, true}}

// queriesFor draws queries from the corpus the way people type them: words
// of descriptions and names (some inflected, some upper-cased), name
// prefixes of every length, whole names spelled with spaces, words that
// match nothing, punctuation, and the empty query.
func queriesFor(items []Item, n int) []string {
	rng := rand.New(rand.NewPCG(7, 11))
	word := func() string {
		it := items[rng.IntN(len(items))]
		w := Words(it.Description + " " + it.Name)
		return w[rng.IntN(len(w))]
	}
	inflect := []string{"", "", "s", "es", "ing", "ed", "e"}
	qs := []string{"", " -- ", "zzzzqx", "a", "the", "re", "not", "notes"}
	for len(qs) < n {
		it := items[rng.IntN(len(items))]
		switch rng.IntN(6) {
		case 0:
			qs = append(qs, it.Name[:1+rng.IntN(len(it.Name))])
		case 1:
			qs = append(qs, strings.ReplaceAll(it.Name, "-", " "))
		case 2:
			qs = append(qs, strings.ToUpper(word()))
		default:
			var ws []string
			for range 1 + rng.IntN(3) {
				ws = append(ws, word()+inflect[rng.IntN(len(inflect))])
			}
			qs = append(qs, strings.Join(ws, " "))
		}
	}
	return qs
}

// TestIndexAnswersAsTheLinearRanking is the differential test: over a
// generated catalog and 600 queries, for both kinds of caller and
// several pages, the index returns exactly what ranking every item with
// Query.Match returns.
func TestIndexAnswersAsTheLinearRanking(t *testing.T) {
	items := generated(2000)
	x := NewIndex(items)
	pages := [][2]int{{0, 50}, {0, 1 << 20}, {3, 7}, {49, 200}, {100000, 50}, {5, 0}}
	for _, q := range queriesFor(items, 600) {
		pq := Parse(q)
		for _, auth := range callers {
			want := rankLinear(items, pq, auth)
			for _, p := range pages {
				w := want[min(p[0], len(want)):]
				w = w[:min(p[1], len(w))]
				got := x.Search(pq, auth, p[0], p[1])
				if !slices.Equal(got, w) {
					t.Fatalf("Search(%q, auth %v, skip %d, take %d) = %v, want %v", q, auth, p[0], p[1], head(got), head(w))
				}
			}
		}
	}
}

func head(s []int) string {
	if len(s) > 10 {
		return fmt.Sprint(s[:10]) + "…" + strconv.Itoa(len(s))
	}
	return fmt.Sprint(s)
}

// FuzzIndexAnswersAsTheLinearRanking is the same comparison for any query
// text and page over a small corpus.
func FuzzIndexAnswersAsTheLinearRanking(f *testing.F) {
	items := append(toItems(corpus), generated(200)...)
	items[3].Group = 1
	x := NewIndex(items)
	for _, q := range []string{"review", "deploy via pr", "PULL requests", "ré", "a-b c", "notes not", strings.Repeat("w ", 40)} {
		f.Add(q, uint8(0), uint8(255))
	}
	f.Add("the a", uint8(3), uint8(10))
	f.Fuzz(func(t *testing.T, q string, skip, take uint8) {
		pq := Parse(q)
		for _, auth := range callers {
			want := rankLinear(items, pq, auth)
			want = want[min(int(skip), len(want)):]
			want = want[:min(int(take), len(want))]
			if got := x.Search(pq, auth, int(skip), int(take)); !slices.Equal(got, want) {
				t.Fatalf("Search(%q, auth %v, skip %d, take %d) = %v, want %v", q, auth, skip, take, head(got), head(want))
			}
		}
	})
}

func TestIndexHidesItemsOfGroupsTheCallerMayNotSee(t *testing.T) {
	items := []Item{
		{Name: "alpha-review", Description: "Review things."},
		{Name: "beta-review", Description: "Review secrets.", Group: 1},
		{Name: "gamma-review", Description: "Review more."},
		{Name: "delta-review", Description: "Review partner secrets.", Group: 2},
	}
	x := NewIndex(items)
	for _, v := range []Visible{nil, {false, true}, {false, false, true}} {
		for _, q := range []string{"", "review", "beta", "beta-review", "secrets", "delta"} {
			for skip := range 3 {
				for _, p := range x.Search(Parse(q), v, skip, 10) {
					if !v.admits(items[p].Group) {
						t.Errorf("Search(%q, %v, skip %d) returned %s", q, v, skip, items[p].Name)
					}
				}
			}
		}
	}
	// Skip counts only what the caller sees: the second visible item is gamma.
	if got := x.Search(Parse("review"), nil, 1, 1); !slices.Equal(got, []int{2}) {
		t.Errorf("anonymous skip 1 = %v, want [2]", got)
	}
	if got := x.Search(Parse(""), nil, 1, 1); !slices.Equal(got, []int{2}) {
		t.Errorf("anonymous empty query skip 1 = %v, want [2]", got)
	}
	if got := x.Search(Parse(""), Visible{false, false, true}, 1, 1); !slices.Equal(got, []int{3}) {
		t.Errorf("group 2 empty query skip 1 = %v, want [3] (alpha, delta, gamma)", got)
	}
	if got := x.Search(Parse("secrets"), Visible{false, true}, 0, 10); !slices.Equal(got, []int{1}) {
		t.Errorf("group 1 = %v, want [1]", got)
	}
	if got := x.Search(Parse("secrets"), Visible{true, true, true}, 0, 10); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("every group = %v, want [1 3]", got)
	}
	if a, b, c, all := x.Count(nil), x.Count(Visible{false, true}), x.Count(Visible{false, false, true}), x.Count(Visible{true, true, true}); a != 2 || b != 3 || c != 3 || all != 4 {
		t.Errorf("Count = %d anonymous, %d group 1, %d group 2, %d every group; want 2, 3, 3, 4", a, b, c, all)
	}
}

func TestIndexIsSafeForConcurrentSearches(t *testing.T) {
	items := generated(500)
	x := NewIndex(items)
	qs := queriesFor(items, 40)
	want := make([][]int, len(qs))
	for i, q := range qs {
		want[i] = rankLinear(items, Parse(q), nil)
	}
	done := make(chan error, 8)
	for g := range 8 {
		go func() {
			for r := range 50 {
				i := (g*7 + r) % len(qs)
				if got := x.Search(Parse(qs[i]), nil, 0, len(items)); !slices.Equal(got, want[i]) {
					done <- fmt.Errorf("query %q: %v, want %v", qs[i], head(got), head(want[i]))
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// benchQueries are what the search benchmarks ask, by kind: common
// description words, a name's first two words (a prefix), an exact name,
// rare words. The names come from the first thousand generated items,
// which every size shares.
func benchQueries(items []Item) map[string]Query {
	name := items[500].Name
	parts := strings.Split(name, "-")
	return map[string]Query{
		"words":  Parse("review terraform"),
		"prefix": Parse(parts[0] + "-" + parts[1]),
		"exact":  Parse(name),
		"rare":   Parse("kubernetes rollback"),
	}
}

var benchSizes = []int{1000, 10000, 50000}

// BenchmarkSearch is one anonymous search for a page of 50, by the index
// and by the linear ranking it replaced, over 1,000 to 50,000 items.
// Compare sizes and methods within one run.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		items := generated(n)
		x := NewIndex(items)
		for _, kind := range []string{"words", "prefix", "exact", "rare"} {
			q := benchQueries(items)[kind]
			b.Run(fmt.Sprintf("index/%s/%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					x.Search(q, nil, 0, 50)
				}
			})
			b.Run(fmt.Sprintf("linear/%s/%d", kind, n), func(b *testing.B) {
				for b.Loop() {
					_ = rankLinear(items, q, nil)
				}
			})
		}
	}
}

// BenchmarkNewIndex is the one-time cost of indexing a catalog revision.
func BenchmarkNewIndex(b *testing.B) {
	for _, n := range benchSizes {
		items := generated(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NewIndex(items)
			}
		})
	}
}

// TestEmptyQueryKeepsOneListPerSetOfGroups: the zero Query's answers and
// counts, kept per set of groups a caller may see, are each set's own
// whatever the order callers come in, past the number of sets an index
// keeps too, and a set that admits no group but 0 (however long its
// Visible) is answered as anonymous.
func TestEmptyQueryKeepsOneListPerSetOfGroups(t *testing.T) {
	const groups = 3 * maxVisibleLists
	items := make([]Item, 0, 4*groups)
	for i := range cap(items) {
		items = append(items, Item{Name: fmt.Sprintf("item-%04d", (i*7919)%cap(items)), Group: int32(i % (groups + 1))})
	}
	x := NewIndex(items)
	rng := rand.New(rand.NewPCG(3, 5))
	sets := []Visible{nil, make(Visible, groups+1), {true}, {false, true}}
	for range 2 * maxVisibleLists {
		v := make(Visible, 1+rng.IntN(groups+1))
		for g := range v {
			v[g] = rng.IntN(3) == 0
		}
		sets = append(sets, v)
	}
	want := func(v Visible) []int {
		var out []int
		for i, it := range items {
			if v.admits(it.Group) {
				out = append(out, i)
			}
		}
		slices.SortFunc(out, func(a, b int) int { return strings.Compare(items[a].Name, items[b].Name) })
		return out
	}
	// Twice over, the second time in reverse: the kept lists answer then.
	for round := range 2 {
		for i := range sets {
			v := sets[i]
			if round == 1 {
				v = sets[len(sets)-1-i]
			}
			all := want(v)
			if n := x.Count(v); n != len(all) {
				t.Fatalf("round %d, set %v: Count %d, want %d", round, v, n, len(all))
			}
			for _, skip := range []int{0, 3, len(all) - 2, len(all) + 1} {
				skip = max(skip, 0)
				got := x.Search(Parse(""), v, skip, 5)
				w := all[min(skip, len(all)):]
				if w = w[:min(5, len(w))]; !slices.Equal(got, w) {
					t.Fatalf("round %d, set %v, skip %d: %v, want %v", round, v, skip, got, w)
				}
			}
		}
	}
	if n := len(x.byVisible); n != maxVisibleLists {
		t.Errorf("%d lists kept, want the bound %d", n, maxVisibleLists)
	}
	if n, open := x.Count(make(Visible, groups+1)), x.Count(nil); n != open {
		t.Errorf("a set of no group counts %d, anonymous %d", n, open)
	}
}
