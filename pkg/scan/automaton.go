package scan

// automaton finds every occurrence of a set of lowercase keywords in one
// pass over a text, ASCII case folded (Aho-Corasick as a full transition
// table over byte classes: the bytes no keyword holds share one class, so
// the table stays small enough for the cache, and each byte costs two
// lookups).
type automaton struct {
	class   [256]uint8 // byte → class; 0 is every byte no keyword holds
	classes int
	// next[s+class] is the state after s, states numbered by the offset
	// of their row (state × classes) shifted left once, the low bit set
	// when a keyword ends there: a step is one addition and one load.
	next []uint32
	out  [][]int // out[state]: the keywords ending there
	lens []int   // lens[k]: the length of keyword k
	// atWord[k]: keyword k starts with a word byte, so it is found only
	// where a word starts.
	atWord []bool
}

var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i + 'a' - 'A')
		}
	}
	return t
}()

func newAutomaton(words []string) *automaton {
	a := &automaton{lens: make([]int, len(words)), atWord: make([]bool, len(words)), classes: 1}
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if c := w[i]; a.class[c] == 0 {
				a.class[c] = uint8(a.classes)
				a.classes++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		a.class[c] = a.class[lower[c]]
	}
	nc := a.classes
	// The trie, with -1 for no edge.
	trie := [][]int32{make([]int32, nc)}
	for i := range trie[0] {
		trie[0][i] = -1
	}
	a.out = [][]int{nil}
	for k, w := range words {
		a.lens[k] = len(w)
		a.atWord[k] = word[w[0]]
		s := int32(0)
		for i := 0; i < len(w); i++ {
			c := a.class[w[i]]
			if trie[s][c] < 0 {
				row := make([]int32, nc)
				for j := range row {
					row[j] = -1
				}
				trie = append(trie, row)
				a.out = append(a.out, nil)
				trie[s][c] = int32(len(trie) - 1)
			}
			s = trie[s][c]
		}
		a.out[s] = append(a.out[s], k)
	}
	// Breadth first: failure links, merged outputs, full transitions.
	n := len(trie)
	next := make([]int32, n*nc)
	fail := make([]int32, n)
	queue := make([]int32, 0, n)
	for c := 1; c < nc; c++ {
		if t := trie[0][c]; t >= 0 {
			next[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		a.out[s] = append(a.out[s], a.out[fail[s]]...)
		for c := 0; c < nc; c++ {
			t := trie[s][c]
			if t < 0 || c == 0 {
				next[int(s)*nc+c] = next[int(fail[s])*nc+c]
				continue
			}
			fail[t] = next[int(fail[s])*nc+c]
			next[int(s)*nc+c] = t
			queue = append(queue, t)
		}
	}
	a.next = make([]uint32, len(next))
	for i, t := range next {
		a.next[i] = uint32(int(t)*nc) << 1
		if len(a.out[t]) > 0 {
			a.next[i] |= 1
		}
	}
	return a
}

// findBlock is how much text find reads as two streams at a time.
const findBlock = 64 << 10

// find calls hit(k, end) for every occurrence of keyword k ending at
// offset end (exclusive) of text, in order of end, but where a keyword
// that starts with a word byte starts inside a word.
//
// A step of the automaton waits for the load of the step before it, so
// find runs two at once, on the two halves of each block of text, to keep
// the processor busy: the second half starts after a byte no keyword holds
// (where the automaton is in its start state whatever came before), and
// its hits wait in a buffer until the first half's are reported.
func (a *automaton) find(text []byte, hit func(k, end int)) {
	var s uint32
	var later []uint64 // the second half's hits: k<<32 | end
	for lo := 0; lo < len(text); {
		hi := min(len(text), lo+findBlock)
		mid := lo + (hi-lo)/2
		for mid < hi && a.class[text[mid]] != 0 {
			mid++
		}
		if hi-lo < 256 || mid+1 >= hi {
			s = a.run(text, lo, hi, s, hit)
			lo = hi
			continue
		}
		mid++
		later = later[:0]
		s = a.run2(text, lo, mid, hi, s, hit, &later)
		for _, h := range later {
			hit(int(h>>32), int(uint32(h)))
		}
		lo = hi
	}
}

// run steps the automaton from state s over text[lo:hi], calling hit.
func (a *automaton) run(text []byte, lo, hi int, s uint32, hit func(k, end int)) uint32 {
	next, class := a.next, &a.class
	for i, b := range text[lo:hi] {
		v := next[s+uint32(class[b])]
		s = v >> 1
		if v&1 != 0 {
			a.hits(text, s, lo+i+1, hit, nil)
		}
	}
	return s
}

// run2 steps the automaton over text[lo:mid] from state s, calling hit,
// and at once over text[mid:hi] (not longer) from the start state,
// appending its hits to later; it returns the state at hi.
func (a *automaton) run2(text []byte, lo, mid, hi int, s uint32, hit func(k, end int), later *[]uint64) uint32 {
	next, class := a.next, &a.class
	tb := text[mid:hi]
	ta := text[lo : lo+len(tb)]
	var sb uint32
	for i, b := range tb {
		va := next[s+uint32(class[ta[i]])]
		vb := next[sb+uint32(class[b])]
		s, sb = va>>1, vb>>1
		if (va|vb)&1 != 0 {
			if va&1 != 0 {
				a.hits(text, s, lo+i+1, hit, nil)
			}
			if vb&1 != 0 {
				a.hits(text, sb, mid+i+1, nil, later)
			}
		}
	}
	a.run(text, lo+len(tb), mid, s, hit)
	return sb
}

// hits reports the keywords ending at end in state s: to hit, or when it
// is nil appended to later.
func (a *automaton) hits(text []byte, s uint32, end int, hit func(k, end int), later *[]uint64) {
	for _, k := range a.out[s/uint32(a.classes)] {
		if start := end - a.lens[k]; a.atWord[k] && start > 0 && word[text[start-1]] {
			continue
		}
		if hit != nil {
			hit(k, end)
		} else {
			*later = append(*later, uint64(k)<<32|uint64(end))
		}
	}
}
