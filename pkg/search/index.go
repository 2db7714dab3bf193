package search

import (
	"slices"
	"strings"
	"sync"
)

// Item is what an Index knows of one searchable item.
type Item struct {
	Name, Description string
	// Group says who may find the item: 0 is everyone; any other group is
	// found only by a caller whose Visible admits it, and for anyone else
	// the item does not exist.
	Group int32
}

// Visible says which groups of items a caller may find: group g when
// Visible[g] is true. Group 0 is everyone's, whatever it says; nil admits
// group 0 alone.
type Visible []bool

func (v Visible) admits(g int32) bool { return g == 0 || int(g) < len(v) && v[g] }

// all reports whether v admits every group of x.
func (v Visible) all(groups int32) bool {
	for g := int32(1); g <= groups; g++ {
		if !v.admits(g) {
			return false
		}
	}
	return true
}

// none reports whether v admits no group of x but 0.
func (v Visible) none(groups int32) bool {
	for g := int32(1); g <= groups; g++ {
		if v.admits(g) {
			return false
		}
	}
	return true
}

// key is v over groups 1 to groups, one byte a group: equal keys admit the
// same items of an index.
func (v Visible) key(groups int32) string {
	b := make([]byte, groups)
	for g := int32(1); g <= groups; g++ {
		if v.admits(g) {
			b[g-1] = 1
		}
	}
	return string(b)
}

// maxVisibleLists bounds the zero Query's answers an Index keeps, one per
// set of groups a caller may see; a caller past the bound is answered by
// reading the ids through.
const maxVisibleLists = 64

// Index answers queries over a fixed list of items at a cost that grows
// with what matches, not with the length of the list: the lower-cased
// names in sorted order for the name tiers (an exact name is the shortest
// name with the query as a prefix), and posting lists from each stemmed
// word of a name or description to the items holding it. The ranking is
// the one Query.Match defines, ties broken by name. Build one per catalog
// revision with NewIndex; it is immutable and safe for concurrent use.
type Index struct {
	// Items are numbered in name order (stable), so a smaller id wins a
	// tie; pos maps an id back to its position in the caller's list.
	pos   []int32
	lower []string // lower-cased names, by id
	// byLower holds the ids in lower-cased name order, for prefix ranges.
	byLower []int32
	// group is each id's Item.Group; groups the largest.
	group  []int32
	groups int32
	// open lists the ids of group 0 and all every id, in id order: the
	// zero Query's answers for a caller of group 0 alone and of every group.
	open, all []int32
	postings  map[string]*postings // by stem
	scratch   sync.Pool            // *scratch sized for this index

	// byVisible holds the zero Query's answers for a caller who may see
	// some groups but not all, by Visible.key, built on first use.
	mu        sync.Mutex
	byVisible map[string][]int32
}

// postings are the items holding one stem, ascending by id: all of them,
// each as id<<1 with the low bit set when a name word holds the stem, and
// those whose name holds it.
type postings struct {
	all   []uint32
	named []int32
}

// NewIndex indexes items; Search answers with positions in items.
func NewIndex(items []Item) *Index {
	n := len(items)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return strings.Compare(items[a].Name, items[b].Name) })
	x := &Index{
		pos:       order,
		lower:     make([]string, n),
		byLower:   make([]int32, n),
		group:     make([]int32, n),
		postings:  map[string]*postings{},
		byVisible: map[string][]int32{},
	}
	for id, pos := range order {
		it := items[pos]
		id := int32(id)
		x.lower[id] = strings.ToLower(it.Name)
		x.byLower[id] = id
		x.group[id] = it.Group
		x.groups = max(x.groups, it.Group)
		if it.Group == 0 {
			x.open = append(x.open, id)
		}
		x.all = append(x.all, id)
		// Name words first: an item's one posting per stem then knows,
		// when its description repeats the word, that a name held it.
		eachWord(x.lower[id], func(w string) bool { x.add(id, Stem(w), true); return true })
		eachWord(strings.ToLower(it.Description), func(w string) bool { x.add(id, Stem(w), false); return true })
	}
	slices.SortStableFunc(x.byLower, func(a, b int32) int { return strings.Compare(x.lower[a], x.lower[b]) })
	x.scratch.New = func() any { return &scratch{tier: make([]uint8, n)} }
	return x
}

// add records that item id holds stem, in its name or not. Items are added
// in id order, so a repeat of the stem by the same item is the last posting.
func (x *Index) add(id int32, stem string, inName bool) {
	p := x.postings[stem]
	if p == nil {
		p = &postings{}
		x.postings[stem] = p
	}
	if n := len(p.all); n == 0 || p.all[n-1]>>1 != uint32(id) {
		p.all = append(p.all, uint32(id)<<1)
	}
	if last := &p.all[len(p.all)-1]; inName && *last&1 == 0 {
		*last |= 1
		p.named = append(p.named, id)
	}
}
