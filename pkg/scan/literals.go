package scan

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// A matcher's regular expression runs only where a window holds one of
// the strings every match of it holds past its keyword (its needs): most
// keywords are common words ("node", "you", "from"), and what makes a
// match of them is rarer ("curl" after "node <(", "now" after "you are").
// The needs are read from the expression itself, so they can never
// disagree with it.

// maxNeeds bounds a matcher's needs: past it, checking them costs more
// than the expression.
const maxNeeds = 24

// needsOf is a set of strings one of which every match of re holds after
// the part that its keyword matched (the first thing it consumes), as the
// text matched spells them (lowered: lower-cased ASCII); nil when no such
// set is known.
func needsOf(re *syntax.Regexp, lowered bool, kw string) []string {
	switch re.Op {
	case syntax.OpCapture:
		return needsOf(re.Sub[0], lowered, kw)
	case syntax.OpAlternate:
		return unionOf(re.Sub, func(sub *syntax.Regexp) []string { return needsOf(sub, lowered, kw) })
	case syntax.OpConcat:
		// The first part that consumes text is where the keyword is:
		// what it needs past the keyword, or what the parts after it hold.
		for i, sub := range re.Sub {
			if !emptyOnly(sub) {
				return better(needsOf(sub, lowered, kw), bestOf(re.Sub[i+1:], lowered, kw))
			}
		}
	}
	return nil
}

// better is the more telling of two sets (nil for none): the one whose
// shortest string is longest, then the one of fewest strings.
func better(a, b []string) []string {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case shortest(b) > shortest(a) || shortest(b) == shortest(a) && len(b) < len(a):
		return b
	}
	return a
}

// heldBy is a set of strings one of which every match of re holds, or nil.
func heldBy(re *syntax.Regexp, lowered bool, kw string) []string {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold && (!lowered || !isASCII(s)) {
			return nil // the text is not folded as the expression is
		}
		if fold {
			s = strings.ToLower(s)
		}
		return []string{s}
	case syntax.OpCharClass:
		// A class of a few ASCII characters ([:,]): each is one.
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi >= utf8.RuneSelf || hi-lo >= 4 || len(out)+int(hi-lo)+1 > 4 {
				return nil
			}
			for c := lo; c <= hi; c++ {
				if lowered && 'A' <= c && c <= 'Z' {
					continue // never in lower-cased text
				}
				out = append(out, string(c))
			}
		}
		return out
	case syntax.OpCapture, syntax.OpPlus:
		return heldBy(re.Sub[0], lowered, kw)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return heldBy(re.Sub[0], lowered, kw)
		}
	case syntax.OpAlternate:
		return unionOf(re.Sub, func(sub *syntax.Regexp) []string { return heldBy(sub, lowered, kw) })
	case syntax.OpConcat:
		return bestOf(re.Sub, lowered, kw)
	}
	return nil
}

// bestOf is the most telling of the sets the parts of a concatenation
// hold (every match holds each part's).
// A set with a string the keyword holds tells nothing (the window starts
// with the keyword), and is not taken.
func bestOf(parts []*syntax.Regexp, lowered bool, kw string) []string {
	var best []string
	for _, p := range parts {
		if h := heldBy(p, lowered, kw); !slices.ContainsFunc(h, func(s string) bool {
			return strings.Contains(kw, strings.ToLower(s))
		}) {
			best = better(best, h)
		}
	}
	return best
}

// unionOf is the union of what f gives each of subs, or nil when any gives
// nil or there are more than maxNeeds.
func unionOf(subs []*syntax.Regexp, f func(*syntax.Regexp) []string) []string {
	var out []string
	for _, sub := range subs {
		h := f(sub)
		if h == nil {
			return nil
		}
		for _, s := range h {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if len(out) > maxNeeds {
			return nil
		}
	}
	return out
}

func shortest(set []string) int {
	n := len(set[0])
	for _, s := range set[1:] {
		n = min(n, len(s))
	}
	return n
}

// emptyOnly reports whether re matches only the empty string: an anchor
// or a word boundary.
func emptyOnly(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
