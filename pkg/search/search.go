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
//
// Query.Match defines the ranking for one item; an Index, built once per
// catalog revision, answers a query over all of them at the cost of what
// matches rather than of the whole catalog.
package search

import (
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
// until fn returns false. It allocates nothing: NewIndex scans every name
// and description of a catalog with it.
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
// kept as they are, so no inflection may fold a longer word onto one of
// them unless it is that word's own: a final "e" stays, and is put back
// after -ed and -ing, where the stem is short and ends consonant, vowel,
// consonant ("note"/"notes"/"noted"/"noting" → "note", apart from "not";
// "plane" apart from "plan"), and a doubled letter is undoubled only in a
// stem longer than three letters ("added" → "add", not "ad").
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
		w = restore(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) >= 5:
		w = restore(w[:len(w)-2])
	}
	if len(w) > 4 && strings.HasSuffix(w, "e") && !shortCVC(w[:len(w)-1]) {
		w = w[:len(w)-1]
	}
	return w
}

// restore mends a stem that -ed or -ing was cut from: "stopp" (from
// "stopped") → "stop", "not" (from "noted") → "note". -ll, -ss and -zz are
// kept ("called", "passed"), and so is the doubled letter of a three-letter
// stem ("added" → "add").
func restore(w string) string {
	n := len(w)
	if n > 3 && w[n-1] == w[n-2] && !isVowel(w, n-1) {
		switch w[n-1] {
		case 'l', 's', 'z':
			return w
		}
		return w[:n-1]
	}
	if shortCVC(w) {
		return w + "e"
	}
	return w
}

// shortCVC reports whether w has one vowel-consonant sequence and ends
// consonant, vowel, consonant (other than w, x or y): "not", "plan",
// "stat", but not "open", "fix" or "play". Such a stem has lost a final
// "e" ("note", "plane", "state").
func shortCVC(w string) bool {
	n := len(w)
	if n < 3 || isVowel(w, n-3) || !isVowel(w, n-2) || isVowel(w, n-1) {
		return false
	}
	switch w[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	sequences := 0
	for i := 1; i < n; i++ {
		if isVowel(w, i-1) && !isVowel(w, i) {
			sequences++
		}
	}
	return sequences == 1
}

// isVowel reports whether w[i] is a vowel: a, e, i, o, u, or a y after a
// consonant ("type", "gym").
func isVowel(w string, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	case 'y':
		return i > 0 && !isVowel(w, i-1)
	}
	return false
}
