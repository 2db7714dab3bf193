package scan

import (
	"math/rand/v2"
	"testing"
)

// TestBigramsNeverHideANeedle: every piece of a text may be in it, by its
// pairs; and pieces of another text mostly may not, or the set would
// filter nothing.
func TestBigramsNeverHideANeedle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	text := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz .-/|$(\"'"[rng.IntN(35)]
		}
		return b
	}
	absent, said := 0, 0
	for range 200 {
		line := text(1 + rng.IntN(255))
		var b bigrams
		b.of(line)
		for i := range line {
			for j := i + 1; j <= min(len(line), i+12); j++ {
				if !b.mayHold(pairBits(line[i:j])) {
					t.Fatalf("%q: its piece %q said absent", line, line[i:j])
				}
			}
		}
		other := text(8)
		if !containsBytes(line, other) {
			absent++
			if b.mayHold(pairBits(other)) {
				said++
			}
		}
	}
	if absent == 0 || said*2 > absent {
		t.Errorf("of %d needles absent from their line, %d may be there: the set filters little", absent, said)
	}
}

func containsBytes(t, n []byte) bool {
	for i := 0; i+len(n) <= len(t); i++ {
		if string(t[i:i+len(n)]) == string(n) {
			return true
		}
	}
	return false
}
