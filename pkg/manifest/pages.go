package manifest

import (
	"github.com/skilldrop/skilldrop/pkg/routes"
	"sort"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// DefaultPageSize is about how many items the index puts in a page.
const DefaultPageSize = 100

// AllToken names the page that covers every name.
const AllToken = routes.AllToken

// Range is a half-open interval of names [From, To) in byte order; an empty
// bound is open, so the zero Range covers every name.
type Range struct{ From, To string }

// ParseRange parses a page token: "all", or "<from>~<to>" where each bound
// is empty or at most 64 characters of a-z, 0-9 and '-', and from < to
// when both are set. "~" alone is refused: "all" is the one token for every
// name, so each range has exactly one href. ok is false for anything else.
func ParseRange(token string) (r Range, ok bool) {
	if token == AllToken {
		return Range{}, true
	}
	from, to, found := strings.Cut(token, "~")
	if !found || (from == "" && to == "") || !boundOK(from) || !boundOK(to) {
		return Range{}, false
	}
	if from != "" && to != "" && from >= to {
		return Range{}, false
	}
	return Range{From: from, To: to}, true
}

func boundOK(b string) bool {
	if len(b) > skillmd.MaxNameLen {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// String returns the range's token; ParseRange(r.String()) == r for every
// range ParseRange returns.
func (r Range) String() string {
	if r == (Range{}) {
		return AllToken
	}
	return r.From + "~" + r.To
}

// Contains reports whether name falls in the range.
func (r Range) Contains(name string) bool {
	return name >= r.From && (r.To == "" || name < r.To)
}

// slice returns the entries of sorted (by name) that fall in r.
func (r Range) slice(sorted []*catalog.Entry) []*catalog.Entry {
	lo := sort.Search(len(sorted), func(i int) bool { return sorted[i].Name >= r.From })
	hi := len(sorted)
	if r.To != "" {
		hi = lo + sort.Search(len(sorted)-lo, func(i int) bool { return sorted[lo+i].Name >= r.To })
	}
	return sorted[lo:hi]
}

// partition cuts names (sorted, distinct) into about ceil(n/size) ranges of
// nearly equal size that together cover the whole name space.
func partition(names []string, size int) []Range {
	if size <= 0 {
		size = DefaultPageSize
	}
	pages := (len(names) + size - 1) / size
	if pages <= 1 {
		return []Range{{}}
	}
	out := make([]Range, 0, pages)
	from := ""
	for i := 1; i < pages; i++ {
		cut := i * len(names) / pages
		to := separator(names[cut-1], names[cut])
		out = append(out, Range{From: from, To: to})
		from = to
	}
	return append(out, Range{From: from})
}

// separator returns the shortest prefix of b that sorts after a (a < b):
// everything up to a sorts before it, b and everything after it do not.
func separator(a, b string) string {
	for k := 1; k < len(b); k++ {
		if b[:k] > a {
			return b[:k]
		}
	}
	return b
}
