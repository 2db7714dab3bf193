package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

type item struct{ name, desc string }

func fields(it item) (string, string) { return it.name, it.desc }

func names(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.name
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
		{"a prefix of a word is not a word match", "chan",
			[]string{"changelog-writer"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(Rank(corpus, Parse(tc.q), fields))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Rank(%q) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestRankTiesByName(t *testing.T) {
	in := []item{{"zeta-lint", "lint"}, {"alpha-lint", "lint"}, {"mid-lint", "lint"}}
	got := names(Rank(in, Parse("lint"), fields))
	if want := []string{"alpha-lint", "mid-lint", "zeta-lint"}; !slices.Equal(got, want) {
		t.Errorf("ties = %v, want %v", got, want)
	}
	if in[0].name != "zeta-lint" {
		t.Error("Rank modified its input")
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

func BenchmarkRank1000(b *testing.B) {
	items := make([]item, 1000)
	for i := range items {
		items[i] = item{fmt.Sprintf("skill-%04d-tool", i), fmt.Sprintf("Skill number %d reviews, deploys and tests things for team %d.", i, i%17)}
	}
	q := Parse("deploying review")
	b.ReportAllocs()
	for b.Loop() {
		if len(Rank(items, q, fields)) != 1000 {
			b.Fatal("unexpected result count")
		}
	}
}
