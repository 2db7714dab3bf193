package search

import (
	"math/bits"
	"slices"
	"sort"
	"strings"
)

// Name tiers of the ids in a query's prefix range (scratch.tier).
const (
	namePrefix = 1
	exactName  = 2
)

// scratch is one search's working memory, pooled per Index. A search
// leaves it as it found it: tier zeroed, buckets empty.
type scratch struct {
	tier    []uint8 // by id: the name tier of an id in the prefix range, 0 elsewhere
	prefix  []int32 // the prefix range's ids, ascending
	heads   []int
	buckets []bucket
}

// bucket gathers the visible ids of one rank key, in ascending order: how
// many there are, and the first of them, as many as the page can use.
type bucket struct {
	count int
	ids   []int32
}

// ranking sorts matches into buckets by rank key, best first: the tier,
// then more query terms matched, then more of them in a name. Ids arrive
// in ascending (name) order within each key, so a bucket's first skip+take
// ids are the ones a page can use, and the page is the buckets read in key
// order.
type ranking struct {
	x       *Index
	buckets []bucket
	nt      int // query terms + 1
	need    int // skip + take
	visible Visible
	filled  int // visible ids added
}

func (x *Index) ranking(s *scratch, terms int, visible Visible, need int) *ranking {
	nt := terms + 1
	if cap(s.buckets) < 3*nt*nt {
		s.buckets = make([]bucket, 3*nt*nt)
	}
	return &ranking{x: x, buckets: s.buckets[:3*nt*nt], nt: nt, need: need, visible: visible}
}

// add ranks id, whose name tier is tier and which holds found of the query
// terms, inName of them in its name; an id of a group the caller may not
// see is not there.
func (r *ranking) add(id int32, tier uint8, found, inName int) {
	if !r.visible.admits(r.x.group[id]) {
		return
	}
	b := &r.buckets[(exactName-int(tier))*r.nt*r.nt+(r.nt-1-found)*r.nt+(r.nt-1-inName)]
	if b.count++; len(b.ids) < r.need {
		b.ids = append(b.ids, id)
	}
	r.filled++
}

// full reports whether the ids added fill the page.
func (r *ranking) full() bool { return r.filled >= r.need }

// reset empties the buckets.
func (r *ranking) reset() {
	for i := range r.buckets {
		r.buckets[i] = bucket{ids: r.buckets[i].ids[:0]}
	}
	r.filled = 0
}

// page returns the positions ranked skip to skip+take.
func (r *ranking) page(skip int) []int {
	out := []int{}
	at := 0
	for i := range r.buckets {
		b := &r.buckets[i]
		for j := max(skip-at, 0); j < len(b.ids) && at+j < r.need; j++ {
			out = append(out, int(r.x.pos[b.ids[j]]))
		}
		at += b.count
	}
	return out
}

// Search returns the positions of the items that match q and that the
// caller may see (visible), best first as Query.Match ranks them, ties by
// name; skipping skip of them and returning at most take. The zero Query
// matches every visible item, in name order. Items of groups visible does
// not admit are left out, and not counted in skip.
//
// Its cost grows with the names q is a prefix of and the posting lists of
// q's words, never with the rest of the index. A one-word query stops once
// the page is full; when the items holding every word of a longer query
// fill the page, only its shortest posting list is read through.
func (x *Index) Search(q Query, visible Visible, skip, take int) []int {
	skip, take = max(skip, 0), max(take, 0)
	if q.IsZero() {
		ids, ok := x.visibleIDs(visible)
		if !ok {
			ids = x.admitted(visible, skip+take)
		}
		ids = ids[min(skip, len(ids)):]
		return x.positions(ids[:min(take, len(ids))])
	}
	if take == 0 {
		return []int{}
	}
	s := x.scratch.Get().(*scratch)
	defer x.scratch.Put(s)
	r := x.ranking(s, len(q.terms), visible, skip+take)
	defer r.reset()

	lo := sort.Search(len(x.byLower), func(i int) bool { return x.lower[x.byLower[i]] >= q.joined })
	hi := lo
	for hi < len(x.byLower) && strings.HasPrefix(x.lower[x.byLower[hi]], q.joined) {
		hi++
	}
	s.prefix = append(s.prefix[:0], x.byLower[lo:hi]...)
	slices.Sort(s.prefix)
	for _, id := range s.prefix {
		s.tier[id] = namePrefix
		if x.lower[id] == q.joined {
			s.tier[id] = exactName
		}
	}
	defer func() {
		for _, id := range s.prefix {
			s.tier[id] = 0
		}
	}()

	terms := make([]*postings, len(q.terms))
	lists := make([][]uint32, len(q.terms))
	for i, t := range q.terms {
		if terms[i] = x.postings[t]; terms[i] == nil {
			terms[i] = &postings{}
		}
		lists[i] = terms[i].all
	}
	if !x.best(s, r, terms[0], lists) {
		r.reset()
		x.every(s, r, lists)
	}
	return r.page(skip)
}

// addPrefix ranks the prefix range's ids, which rank before every other
// match, finding each one's terms by binary search.
func (x *Index) addPrefix(s *scratch, r *ranking, lists [][]uint32) {
	for _, id := range s.prefix {
		found, inName := 0, 0
		for _, l := range lists {
			want := uint32(id) << 1
			if k := sort.Search(len(l), func(i int) bool { return l[i]|1 >= want|1 }); k < len(l) && l[k]>>1 == uint32(id) {
				found++
				inName += int(l[k] & 1)
			}
		}
		r.add(id, s.tier[id], found, inName)
	}
}

// best ranks the prefix range and the other items holding every term
// (lists are the terms' postings, first the first term's), which rank
// before any holding fewer; it reports whether they are every match the
// page can use. With one term they are every match, and are added in rank order
// (names holding it, then descriptions), so it stops when the page is full.
func (x *Index) best(s *scratch, r *ranking, first *postings, lists [][]uint32) bool {
	x.addPrefix(s, r, lists)
	if r.full() {
		return true
	}
	if len(lists) == 1 {
		for _, id := range first.named {
			if s.tier[id] == 0 {
				if r.add(id, 0, 1, 1); r.full() {
					return true
				}
			}
		}
		for _, p := range lists[0] {
			if id := int32(p >> 1); p&1 == 0 && s.tier[id] == 0 {
				if r.add(id, 0, 1, 0); r.full() {
					return true
				}
			}
		}
		return true
	}
	x.intersect(s, lists, func(id int32, inName int) {
		if s.tier[id] == 0 {
			r.add(id, 0, len(lists), inName)
		}
	})
	return r.full()
}

// intersect calls fn, in ascending id order, for each id every list holds,
// with how many of them hold it in a name. It walks the shortest list and
// gallops through the others, so it costs about the shortest list's length
// times the logarithm of the ratio to the others'.
func (x *Index) intersect(s *scratch, lists [][]uint32, fn func(id int32, inName int)) {
	lists = slices.Clone(lists)
	slices.SortFunc(lists, func(a, b []uint32) int { return len(a) - len(b) })
	heads := s.heads[:0]
	for range lists {
		heads = append(heads, 0)
	}
	s.heads = heads
next:
	for _, p := range lists[0] {
		id, inName := p>>1, int(p&1)
		for j := 1; j < len(lists); j++ {
			l := lists[j]
			k := gallop(l, heads[j], id)
			if heads[j] = k; k == len(l) {
				return
			}
			if l[k]>>1 != id {
				continue next
			}
			inName += int(l[k] & 1)
		}
		fn(int32(id), inName)
	}
}

// gallop returns the first index from from on whose posting's id is at
// least id (len(l) if none), probing 1, 2, 4… ahead before a binary search.
func gallop(l []uint32, from int, id uint32) int {
	if from >= len(l) || l[from]>>1 >= id {
		return from
	}
	lo, step := from, 1 // l[lo] is below id
	for lo+step < len(l) && l[lo+step]>>1 < id {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(l)) // l[hi] is at least id, or hi is the end
	return lo + 1 + sort.Search(hi-lo-1, func(i int) bool { return l[lo+1+i]>>1 >= id })
}

// every ranks every match: the prefix range, then each other item holding
// any term, merging the posting lists.
func (x *Index) every(s *scratch, r *ranking, lists [][]uint32) {
	x.addPrefix(s, r, lists)
	x.merge(s, lists, func(id int32, found, inName uint32) {
		if s.tier[id] == 0 {
			r.add(id, 0, bits.OnesCount32(found), bits.OnesCount32(inName))
		}
	})
}

// merge walks lists together and calls fn once per id any of them holds,
// in ascending id order, with bit i of found set when lists[i] holds it,
// and of inName when it holds it in a name.
func (x *Index) merge(s *scratch, lists [][]uint32, fn func(id int32, found, inName uint32)) {
	if len(lists) == 2 {
		a, b := lists[0], lists[1]
		for len(a) > 0 && len(b) > 0 {
			switch ia, ib := a[0]>>1, b[0]>>1; {
			case ia < ib:
				fn(int32(ia), 1, a[0]&1)
				a = a[1:]
			case ib < ia:
				fn(int32(ib), 2, (b[0]&1)<<1)
				b = b[1:]
			default:
				fn(int32(ia), 3, a[0]&1|(b[0]&1)<<1)
				a, b = a[1:], b[1:]
			}
		}
		for _, p := range a {
			fn(int32(p>>1), 1, p&1)
		}
		for _, p := range b {
			fn(int32(p>>1), 2, (p&1)<<1)
		}
		return
	}
	heads := s.heads[:0]
	for range lists {
		heads = append(heads, 0)
	}
	s.heads = heads
	for {
		low := uint32(1 << 31)
		for i, l := range lists {
			if h := heads[i]; h < len(l) && l[h]>>1 < low {
				low = l[h] >> 1
			}
		}
		if low == 1<<31 {
			return
		}
		var found, inName uint32
		for i, l := range lists {
			if h := heads[i]; h < len(l) && l[h]>>1 == low {
				found |= 1 << i
				inName |= (l[h] & 1) << i
				heads[i]++
			}
		}
		fn(int32(low), found, inName)
	}
}

// visibleIDs is every id visible admits, in id order, as the zero Query
// finds them: kept lists for a caller who may see every group or none but
// 0, and one kept per Visible.key for any other, read through on first
// use. ok is false, and nothing read, when the index keeps
// maxVisibleLists such lists already and none is visible's.
func (x *Index) visibleIDs(visible Visible) (ids []int32, ok bool) {
	switch {
	case visible.all(x.groups):
		return x.all, true
	case visible.none(x.groups):
		return x.open, true
	}
	key := visible.key(x.groups)
	x.mu.Lock()
	defer x.mu.Unlock()
	if ids, ok := x.byVisible[key]; ok {
		return ids, true
	}
	if len(x.byVisible) >= maxVisibleLists {
		return nil, false
	}
	ids = x.admitted(visible, len(x.all))
	x.byVisible[key] = ids
	return ids, true
}

// admitted lists, in id order, the first n ids visible admits.
func (x *Index) admitted(visible Visible, n int) []int32 {
	out := make([]int32, 0, min(n, len(x.all)))
	for _, id := range x.all {
		if len(out) == n {
			break
		}
		if visible.admits(x.group[id]) {
			out = append(out, id)
		}
	}
	return out
}

// positions maps ids to the caller's positions.
func (x *Index) positions(ids []int32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(x.pos[id])
	}
	return out
}

// Count is how many items the zero Query finds for a caller who may see
// visible.
func (x *Index) Count(visible Visible) int {
	ids, ok := x.visibleIDs(visible)
	if !ok {
		ids = x.admitted(visible, len(x.all))
	}
	return len(ids)
}
