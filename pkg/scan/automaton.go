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
	a := &automaton{lens: make([]int, len(words)), classes: 1}
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

// find calls hit(k, end) for every occurrence of keyword k ending at
// offset end (exclusive) of text.
func (a *automaton) find(text []byte, hit func(k, end int)) {
	var s uint32
	next, class := a.next, &a.class
	for i, b := range text {
		v := next[s+uint32(class[b])]
		s = v >> 1
		if v&1 != 0 {
			for _, k := range a.out[s/uint32(a.classes)] {
				hit(k, i+1)
			}
		}
	}
}
