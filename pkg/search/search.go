// Package search ranks skills and sub-agents against a free-text query, for
// /api/v1/skills and /api/v1/subagents.
//
// Ranking, best first:
//
//  1. the query is the name (case-insensitive; "code review" also names
//     code-review);
//  2. the name starts with the query;
//  3. the query's words match words of the name (split on '-') or of the
//     description: more matched query words rank higher, then more of them
//     matched in the name.
//
// Ties are broken by name. Words are compared after a small stemmer folds
// common English inflections (plural -s/-es/-ies, -ing, -ed, a final -e), so
// "reviews", "reviewing" and "reviewed" all match "review". An item that
// matches none of these is not a result. An empty query returns every item
// in name order.
package search

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
	"unicode"
)

// MaxQueryLen bounds the query text in bytes; callers reject longer ones.
const MaxQueryLen = 256

// MaxTerms is how many distinct query words count; later ones are ignored.
const MaxTerms = 32

// Query is a parsed search query. The zero Query matches everything.
type Query struct {
	joined string   // lower-cased, words joined with '-': the name it would be
	terms  []string // distinct stemmed words
}

// Parse parses free text into a Query. Text without letters or digits
// yields the zero Query.
func Parse(q string) Query {
	words := Words(q)
	if len(words) == 0 {
		return Query{}
	}
	query := Query{joined: strings.Join(words, "-")}
	for _, w := range words {
		if s := Stem(w); !slices.Contains(query.terms, s) && len(query.terms) < MaxTerms {
			query.terms = append(query.terms, s)
		}
	}
	return query
}

// IsZero reports whether the query matches everything.
func (q Query) IsZero() bool { return q.joined == "" }

// Tier is how well an item matched; lower is better.
type Tier int

// The tiers, best first.
const (
	TierExactName Tier = iota
	TierNamePrefix
	TierWords
)

// Match describes how an item matched a query.
type Match struct {
	Tier Tier
	// Terms is how many distinct query words matched a name or description
	// word; NameTerms how many of those matched a name word.
	Terms, NameTerms int
}

// better reports whether m ranks before o.
func (m Match) better(o Match) int {
	if c := cmp.Compare(m.Tier, o.Tier); c != 0 {
		return c
	}
	if c := cmp.Compare(o.Terms, m.Terms); c != 0 {
		return c
	}
	return cmp.Compare(o.NameTerms, m.NameTerms)
}

// Match reports how an item with this name and description matches q, and
// whether it matches at all. The zero Query matches everything in TierWords.
func (q Query) Match(name, description string) (Match, bool) {
	if q.IsZero() {
		return Match{Tier: TierWords}, true
	}
	name = strings.ToLower(name)
	var m Match
	switch {
	case name == q.joined:
		m.Tier = TierExactName
	case strings.HasPrefix(name, q.joined):
		m.Tier = TierNamePrefix
	default:
		m.Tier = TierWords
	}
	all := uint64(1)<<len(q.terms) - 1
	var inName, found uint64 // bit i: q.terms[i] matched
	mark := func(w string) bool {
		s := Stem(w)
		for i, t := range q.terms {
			if s == t {
				found |= 1 << i
			}
		}
		return found != all
	}
	eachWord(name, mark)
	inName = found
	if found != all {
		eachWord(strings.ToLower(description), mark)
	}
	m.Terms, m.NameTerms = bits.OnesCount64(found), bits.OnesCount64(inName)
	return m, m.Tier < TierWords || m.Terms > 0
}

// eachWord calls fn with each maximal run of letters and digits in text
// until fn returns false. It allocates nothing: the request path scans
// every description on every search.
func eachWord(text string, fn func(string) bool) {
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if !fn(text[start:i]) {
				return
			}
			start = -1
		}
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// Rank returns the items that match q, best first, ties by name. fields
// gives an item's name and description. With the zero Query it returns
// every item in name order. items is not modified.
func Rank[T any](items []T, q Query, fields func(T) (name, description string)) []T {
	type ranked struct {
		item T
		name string
		m    Match
	}
	out := make([]ranked, 0, len(items))
	for _, it := range items {
		name, desc := fields(it)
		if m, ok := q.Match(name, desc); ok {
			out = append(out, ranked{it, name, m})
		}
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		if c := a.m.better(b.m); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	res := make([]T, len(out))
	for i, r := range out {
		res[i] = r.item
	}
	return res
}

// Words splits text into lower-case words: maximal runs of letters and digits.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Stem folds common English inflections of a lower-case word so that the
// forms of one word compare equal: "policies" → "policy", "fixes" → "fix",
// "reviews"/"reviewing"/"reviewed" → "review", "stopped" → "stop",
// "create"/"created"/"creating" → "creat". It is deliberately small: the
// same function runs on both sides of a comparison, so consistency matters
// more than producing dictionary words. Words of three letters or fewer are
// kept as they are.
func Stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) >= 6:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) >= 5:
		w = undouble(w[:len(w)-2])
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns "stopp" (from "stopped") into "stop"; -ll, -ss and -zz
// are kept ("called", "passed").
func undouble(w string) string {
	n := len(w)
	if n < 2 || w[n-1] != w[n-2] {
		return w
	}
	switch w[n-1] {
	case 'l', 's', 'z', 'a', 'e', 'i', 'o', 'u':
		return w
	}
	return w[:n-1]
}
