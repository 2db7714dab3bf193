package manifest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

func TestParseRange(t *testing.T) {
	tests := []struct {
		token string
		want  Range
		ok    bool
	}{
		{"all", Range{}, true},
		{"~m", Range{To: "m"}, true},
		{"m~t", Range{From: "m", To: "t"}, true},
		{"t~", Range{From: "t"}, true},
		{"skill-01~skill-02", Range{From: "skill-01", To: "skill-02"}, true},
		{"a-~b", Range{From: "a-", To: "b"}, true},
		{"0~9", Range{From: "0", To: "9"}, true},
		{strings.Repeat("z", 64) + "~", Range{From: strings.Repeat("z", 64)}, true},
		{"~", Range{}, false},                           // "all" is the only token for everything
		{"", Range{}, false},                            //
		{"m", Range{}, false},                           // no '~'
		{"m~m", Range{}, false},                         // empty
		{"t~m", Range{}, false},                         // reversed
		{"a~b~c", Range{}, false},                       // two '~'
		{"A~", Range{}, false},                          // upper case
		{"a.b~", Range{}, false},                        // not a name character
		{"~a b", Range{}, false},                        //
		{"All", Range{}, false},                         //
		{strings.Repeat("z", 65) + "~", Range{}, false}, // longer than any name
	}
	for _, tc := range tests {
		got, ok := ParseRange(tc.token)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRange(%q) = %+v, %v; want %+v, %v", tc.token, got, ok, tc.want, tc.ok)
		}
		if ok && got.String() != tc.token {
			t.Errorf("ParseRange(%q).String() = %q, want the token back", tc.token, got.String())
		}
	}
}

// namesN returns n distinct, realistic, unsorted skill names.
func namesN(n int) []string {
	verbs := []string{"audit", "build", "check", "deploy", "explain", "format", "generate", "lint", "migrate", "review", "scan", "triage", "write"}
	nouns := []string{"api", "changelog", "ci", "docs", "go", "helm", "incident", "k8s", "pr", "python", "release", "sql", "terraform", "tests", "ui", "x"}
	var out []string
	for i := 0; len(out) < n; i++ {
		name := verbs[i%len(verbs)] + "-" + nouns[(i/len(verbs))%len(nouns)]
		if round := i / (len(verbs) * len(nouns)); round > 0 {
			name += fmt.Sprintf("-%d", round)
		}
		out = append(out, name)
	}
	return out
}

func TestPartition(t *testing.T) {
	for _, n := range []int{0, 1, 99, 100, 101, 199, 250, 1000} {
		for _, size := range []int{0, 1, 7, 100} {
			names := namesN(n)
			sort.Strings(names)
			ranges := partition(names, size)
			eff := size
			if eff <= 0 {
				eff = DefaultPageSize
			}
			wantPages := max(1, (n+eff-1)/eff)
			if len(ranges) != wantPages {
				t.Errorf("n=%d size=%d: %d pages, want %d", n, size, len(ranges), wantPages)
			}
			if ranges[0].From != "" || ranges[len(ranges)-1].To != "" {
				t.Errorf("n=%d size=%d: ranges %v do not cover the ends of the name space", n, size, ranges)
			}
			for i := 1; i < len(ranges); i++ {
				if ranges[i-1].To != ranges[i].From {
					t.Errorf("n=%d size=%d: gap or overlap between %v and %v", n, size, ranges[i-1], ranges[i])
				}
			}
			for _, r := range ranges {
				if back, ok := ParseRange(r.String()); !ok || back != r {
					t.Errorf("n=%d size=%d: range %+v has a token %q that does not parse back", n, size, r, r.String())
				}
				got := 0
				for _, name := range names {
					if r.Contains(name) {
						got++
					}
				}
				if len(ranges) > 1 && (got < n/wantPages || got > eff) {
					t.Errorf("n=%d size=%d: range %v holds %d names, want about %d", n, size, r, got, n/wantPages)
				}
			}
		}
	}
}

func TestSeparator(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"apple", "banana", "b"},
		{"skill-0099", "skill-0100", "skill-01"},
		{"ab", "abc", "abc"},
		{"a-b", "a0", "a0"},
		{"deploy", "deploy-via-pr", "deploy-"},
	}
	for _, tc := range tests {
		got := separator(tc.a, tc.b)
		if got != tc.want || tc.a >= got || got > tc.b {
			t.Errorf("separator(%q, %q) = %q, want %q with a < it <= b", tc.a, tc.b, got, tc.want)
		}
	}
}

// manySkills builds a catalog of public skills named names, plus hidden
// "-internal" twins of every fifth one.
func manySkills(names []string) *fixture {
	fx := &fixture{cat: catalog.New(), blobs: map[string][]byte{}}
	for i, n := range names {
		publish(fx, n, catalog.Public)
		if i%5 == 0 {
			publish(fx, n+"-internal", catalog.Authenticated)
		}
	}
	return fx
}

func publish(fx *fixture, name string, vis catalog.Visibility) {
	fx.add(catalog.KindSkill, name, vis, ver{label: "1.0.0", body: skillMD(name, "1.0.0", ""), format: artifact.FormatMarkdown, hour: 1})
}

func pageNames(t *testing.T, f *Feed, href string) []string {
	t.Helper()
	res := get(t, f, href)
	if res.Outcome != Document {
		t.Fatalf("%s: outcome %v", href, res.Outcome)
	}
	var out []string
	for _, it := range res.Document.(Page).Items {
		out = append(out, it.Name)
	}
	return out
}

func TestPaginationDuringSync(t *testing.T) {
	names := namesN(250)
	fx := manySkills(names)
	f := fx.feed(false)
	index := get(t, f, "/skills/v1/index.json").Document.(Index)
	if len(index.Pages) != 3 {
		t.Fatalf("250 skills in %d pages, want 3 of about 100", len(index.Pages))
	}
	if s := mustJSON(t, index); strings.Contains(s, "internal") {
		t.Errorf("anonymous index hints at hidden names: %s", s)
	}
	ranges := make([]Range, len(index.Pages))
	for i, p := range index.Pages {
		r, ok := ParseRange(p.Range)
		if !ok || p.Href != "/skills/v1/pages/"+p.Range+".json" {
			t.Fatalf("page link %+v", p)
		}
		ranges[i] = r
	}

	// The client fetches page 1 ...
	seen := map[string]int{}
	for _, n := range pageNames(t, f, index.Pages[0].Href) {
		seen[n]++
	}

	// ... then, before it fetches pages 2 and 3: a skill is published into
	// page 2's range, sixty into page 1's (enough to move every boundary a
	// fresh index would draw), and one skill of page 3 is withdrawn.
	page2 := pageNames(t, f, index.Pages[1].Href)
	newcomer := page2[len(page2)/2] + "-next"
	if !ranges[1].Contains(newcomer) {
		t.Fatalf("test setup: %s is not in page 2's range %v", newcomer, ranges[1])
	}
	publish(fx, newcomer, catalog.Public)
	for i := range 60 {
		publish(fx, fmt.Sprintf("aa-early-%02d", i), catalog.Public)
	}
	page3 := pageNames(t, f, index.Pages[2].Href)
	withdrawn := page3[0]
	fx.cat.Skills[withdrawn].Withdrawn = true
	f = fx.feed(false)

	fresh := get(t, f, "/skills/v1/index.json").Document.(Index)
	if slices.Equal(fresh.Pages, index.Pages) {
		t.Errorf("test setup: the publishes did not move the boundaries of a fresh index")
	}

	var got2 []string
	for i, p := range index.Pages[1:] {
		items := pageNames(t, f, p.Href)
		if i == 0 {
			got2 = items
		}
		for _, n := range items {
			seen[n]++
			if !ranges[i+1].Contains(n) {
				t.Errorf("%s served in page %d, outside its range %v", n, i+2, ranges[i+1])
			}
		}
	}
	for _, n := range names {
		want := 1
		if n == withdrawn {
			want = 0
		}
		if seen[n] != want {
			t.Errorf("%s seen %d times, want %d", n, seen[n], want)
		}
	}
	if !slices.Contains(got2, newcomer) || seen[newcomer] != 1 {
		t.Errorf("%s (published mid-sync into page 2's range) seen %d times, in page 2: %v", newcomer, seen[newcomer], slices.Contains(got2, newcomer))
	}
	for n, c := range seen {
		if strings.HasPrefix(n, "aa-early-") || strings.HasSuffix(n, "-internal") {
			t.Errorf("%s seen %d times by a client that had fetched page 1 before it was published, or cannot see it", n, c)
		}
	}

	// A client starting now sees everything exactly once.
	all := map[string]int{}
	for _, p := range fresh.Pages {
		for _, n := range pageNames(t, f, p.Href) {
			all[n]++
		}
	}
	if want := 250 - 1 + 1 + 60; len(all) != want {
		t.Errorf("fresh sync saw %d names, want %d", len(all), want)
	}
	for n, c := range all {
		if c != 1 {
			t.Errorf("fresh sync saw %s %d times", n, c)
		}
	}
}

func TestSinglePageGrowsIntoRanges(t *testing.T) {
	fx := manySkills(namesN(100))
	f := fx.feed(false)
	index := get(t, f, "/skills/v1/index.json").Document.(Index)
	if len(index.Pages) != 1 || index.Pages[0] != (PageLink{Range: "all", Href: "/skills/v1/pages/all.json"}) {
		t.Fatalf("100 skills: pages %+v, want the single all page", index.Pages)
	}
	publish(fx, "zz-late", catalog.Public)
	f = fx.feed(false)
	if n := len(get(t, f, "/skills/v1/index.json").Document.(Index).Pages); n != 2 {
		t.Errorf("101 skills: %d pages, want 2", n)
	}
	// The client that read the old index still gets everything from all.json.
	if got := pageNames(t, f, index.Pages[0].Href); len(got) != 101 || !slices.Contains(got, "zz-late") {
		t.Errorf("all.json after growth holds %d names", len(got))
	}
}

func TestAuthenticatedPagesIncludeHiddenNames(t *testing.T) {
	names := namesN(250)
	fx := manySkills(names)
	f := fx.feed(true)
	index := get(t, f, "/skills/v1/index.json").Document.(Index)
	total := 0
	for _, p := range index.Pages {
		total += len(pageNames(t, f, p.Href))
	}
	if want := 250 + 50; total != want {
		t.Errorf("authenticated sync saw %d names, want %d", total, want)
	}
	if len(index.Pages) != 3 {
		t.Errorf("300 names in %d pages, want 3", len(index.Pages))
	}
}
