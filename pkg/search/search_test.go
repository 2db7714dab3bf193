package search

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type item struct{ name, desc string }

func names(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.name
	}
	return out
}

// rankLinear is the ranking by its definition: Query.Match on every item,
// best first, ties by name. Index.Search must answer exactly this.
func rankLinear(items []Item, q Query, visible Visible) []int {
	type ranked struct {
		pos int
		m   Match
	}
	var out []ranked
	for i, it := range items {
		if !visible.admits(it.Group) {
			continue
		}
		if m, ok := q.Match(it.Name, it.Description); ok {
			out = append(out, ranked{i, m})
		}
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.m.Tier, b.m.Tier), cmp.Compare(b.m.Terms, a.m.Terms),
			cmp.Compare(b.m.NameTerms, a.m.NameTerms), strings.Compare(items[a.pos].Name, items[b.pos].Name))
	})
	res := make([]int, len(out))
	for i, r := range out {
		res[i] = r.pos
	}
	return res
}

func toItems(in []item) []Item {
	out := make([]Item, len(in))
	for i, it := range in {
		out[i] = Item{Name: it.name, Description: it.desc}
	}
	return out
}

// rank searches in with an Index, returning every match.
func rank(in []item, q string) []item {
	pos := NewIndex(toItems(in)).Search(Parse(q), nil, 0, len(in))
	out := make([]item, len(pos))
	for i, p := range pos {
		out[i] = in[p]
	}
	return out
}

var corpus = []item{
	{"pr-review", "Review a pull request and leave comments."},
	{"review", "Generic review checklist."},
	{"review-policy", "Policies that govern code reviews."},
	{"deploy-via-pr", "Deploy a service by opening a pull request."},
	{"deployment-notes", "Write release notes for a deployment."},
	{"changelog-writer", "Writes changelogs; reviewing is someone else's job."},
	{"incident-triage", "Triage production incidents and page the on-call."},
	{"fix-flaky-tests", "Find and fix flaky tests in CI."},
	{"stopwatch", "Time things."},
}

func TestRank(t *testing.T) {
	tests := []struct {
		name string
		q    string
		want []string
	}{
		{"empty query lists everything by name", "",
			[]string{"changelog-writer", "deploy-via-pr", "deployment-notes", "fix-flaky-tests", "incident-triage", "pr-review", "review", "review-policy", "stopwatch"}},
		{"punctuation only is the empty query", " -- ",
			[]string{"changelog-writer", "deploy-via-pr", "deployment-notes", "fix-flaky-tests", "incident-triage", "pr-review", "review", "review-policy", "stopwatch"}},
		{"exact name first, then prefix, then name words, then description words", "review",
			[]string{"review", "review-policy", "pr-review", "changelog-writer"}},
		{"case-insensitive", "REVIEW",
			[]string{"review", "review-policy", "pr-review", "changelog-writer"}},
		{"spaces name a hyphenated name exactly", "deploy via pr",
			[]string{"deploy-via-pr", "pr-review"}},
		{"name prefix that is no whole word", "deplo",
			[]string{"deploy-via-pr", "deployment-notes"}},
		{"more matched words rank higher", "pull request review",
			[]string{"pr-review", "deploy-via-pr", "review", "review-policy", "changelog-writer"}},
		{"name words beat description words at equal counts", "triage",
			[]string{"incident-triage"}},
		{"plural query matches singular words", "incidents",
			[]string{"incident-triage"}},
		{"stemmed description word", "policy",
			[]string{"review-policy"}},
		{"-ing form matches", "fixing",
			[]string{"fix-flaky-tests"}},
		{"no match is no result", "kubernetes", []string{}},
		{"a short word does not find a longer one", "not", []string{}},
		{"an inflection finds its word", "noting", []string{"deployment-notes"}},
		{"a prefix of a word is not a word match", "chan",
			[]string{"changelog-writer"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(rank(corpus, tc.q))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Search(%q) = %v, want %v", tc.q, got, tc.want)
			}
			items := toItems(corpus)
			var linear []string
			for _, p := range rankLinear(items, Parse(tc.q), nil) {
				linear = append(linear, corpus[p].name)
			}
			if !slices.Equal(linear, tc.want) && len(linear)+len(tc.want) > 0 {
				t.Errorf("the linear ranking of %q = %v, want %v", tc.q, linear, tc.want)
			}
		})
	}
}

func TestRankTiesByName(t *testing.T) {
	in := []item{{"zeta-lint", "lint"}, {"alpha-lint", "lint"}, {"mid-lint", "lint"}}
	got := names(rank(in, "lint"))
	if want := []string{"alpha-lint", "mid-lint", "zeta-lint"}; !slices.Equal(got, want) {
		t.Errorf("ties = %v, want %v", got, want)
	}
	if in[0].name != "zeta-lint" {
		t.Error("NewIndex modified its input")
	}
}

func TestStem(t *testing.T) {
	same := [][]string{
		{"review", "reviews", "reviewing", "reviewed"},
		{"deploy", "deploys", "deploying", "deployed"},
		{"create", "creates", "creating", "created"},
		{"fix", "fixes", "fixing", "fixed"},
		{"policy", "policies"},
		{"stop", "stops", "stopping", "stopped"},
		{"run", "runs", "running"},
		{"test", "tests", "testing", "tested"},
		{"patch", "patches", "patching", "patched"},
		{"pass", "passes", "passing", "passed"},
		{"release", "releases", "releasing", "released"},
		{"status", "statuses"},
		{"note", "notes", "noted", "noting"},
		{"hope", "hopes", "hoped", "hoping"},
		{"code", "codes", "coded", "coding"},
		{"add", "adds", "added", "adding"},
		{"stage", "stages", "staged", "staging"},
		{"hop", "hops", "hopped", "hopping"},
		{"type", "types", "typed"},
		{"agree", "agrees", "agreed"},
	}
	for _, group := range same {
		want := Stem(group[0])
		for _, w := range group[1:] {
			if got := Stem(w); got != want {
				t.Errorf("Stem(%q) = %q, want %q like Stem(%q)", w, got, want, group[0])
			}
		}
	}
	different := [][2]string{
		{"pass", "past"}, {"class", "clash"}, {"status", "state"}, {"analysis", "analyst"}, {"bus", "bu"},
		// A short word is not what a longer one folds to (it used to be).
		{"not", "note"}, {"not", "notes"}, {"not", "noted"}, {"not", "noting"}, {"hop", "hope"}, {"hop", "hoped"},
		{"cod", "code"}, {"cod", "coding"}, {"bit", "bite"}, {"ad", "added"}, {"plan", "plane"}, {"stag", "stage"},
	}
	for _, p := range different {
		if Stem(p[0]) == Stem(p[1]) {
			t.Errorf("Stem(%q) == Stem(%q) == %q, want them apart", p[0], p[1], Stem(p[0]))
		}
	}
	for _, short := range []string{"go", "ci", "is", "ing", "bed"} {
		if got := Stem(short); got != short {
			t.Errorf("Stem(%q) = %q, want short words kept", short, got)
		}
	}
}

func TestMatchTiers(t *testing.T) {
	tests := []struct {
		name, itemName, desc, q string
		want                    Match
		ok                      bool
	}{
		{"exact", "pr-review", "", "pr review", Match{TierExactName, 2, 2}, true},
		{"prefix", "pr-review", "", "pr-rev", Match{TierNamePrefix, 1, 1}, true},
		{"name word", "pr-review", "", "review", Match{TierWords, 1, 1}, true},
		{"description word", "pr-review", "Looks at diffs.", "diff", Match{TierWords, 1, 0}, true},
		{"repeated query words count once", "pr-review", "", "review review", Match{TierWords, 1, 1}, true},
		{"miss", "pr-review", "Looks at diffs.", "deploy", Match{TierWords, 0, 0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Parse(tc.q).Match(tc.itemName, tc.desc)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Match = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestQueryKeepsAtMostMaxTerms(t *testing.T) {
	var words []string
	for i := range MaxTerms {
		words = append(words, fmt.Sprintf("w%02d", i))
	}
	q := Parse(strings.Join(append(words, "triage"), " "))
	if _, ok := q.Match("incident-triage", ""); ok {
		t.Errorf("a word after the first %d matched", MaxTerms)
	}
	if m, ok := q.Match("w00-w31", ""); !ok || m.Terms != 2 {
		t.Errorf("Match = %+v, %v; want the kept words to match", m, ok)
	}
}
