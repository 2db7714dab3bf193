package scan

// A line's bigrams: which pairs of adjacent bytes a short line holds, as
// bits of a 1024-bit set, so that most needles a window is looked for in
// are known to be absent without a search (a needle is in a window only
// if every pair of it is in the line). A set may say a pair is there when
// it is not (pairs share bits), never the other way.

// bigrams is a set of pairs.
type bigrams [16]uint64

// pairBit is the bit of the pair a, b.
func pairBit(a, b byte) uint32 { return (uint32(a)<<8 | uint32(b)) * 0x9E3779B1 >> 22 }

// of sets b to the pairs of t.
func (b *bigrams) of(t []byte) {
	*b = bigrams{}
	for i := 1; i < len(t); i++ {
		k := pairBit(t[i-1], t[i])
		b[k>>6] |= 1 << (k & 63)
	}
}

// mayHold reports whether a text whose pairs are b may hold a needle whose
// pairs' bits are bits.
func (b *bigrams) mayHold(bits []uint32) bool {
	for _, k := range bits {
		if b[k>>6]&(1<<(k&63)) == 0 {
			return false
		}
	}
	return true
}

// pairBits are the bits of the pairs of n, each once.
func pairBits(n []byte) []uint32 {
	var out []uint32
	var seen bigrams
	for i := 1; i < len(n); i++ {
		k := pairBit(n[i-1], n[i])
		if seen[k>>6]&(1<<(k&63)) == 0 {
			seen[k>>6] |= 1 << (k & 63)
			out = append(out, k)
		}
	}
	return out
}
