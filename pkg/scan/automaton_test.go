package scan

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveFind is what find must report: every keyword occurrence, ASCII case
// folded, but where a keyword starting with a word byte starts in a word,
// in order of end (and of keyword index at one end).
func naiveFind(words []string, text []byte) [][2]int {
	low := bytes.ToLower(text)
	var out [][2]int
	for end := 1; end <= len(text); end++ {
		for k, w := range words {
			start := end - len(w)
			if start < 0 || string(low[start:end]) != w {
				continue
			}
			if word[w[0]] && start > 0 && word[text[start-1]] {
				continue
			}
			out = append(out, [2]int{k, end})
		}
	}
	return out
}

// TestAutomatonFind: find reports exactly what a naive search does, on
// texts long enough to be cut into parts and read as parallel streams,
// with keywords that overlap, nest and share prefixes.
func TestAutomatonFind(t *testing.T) {
	words := []string{"sh", "bash", "ash", "curl", "url", "| sh", "a", "ab", "bab", "you are", "<!--", "-->", "rm -rf", "xx"}
	a := newAutomaton(words)
	alphabet := "abcdehlrsuxy |-<!>fmo\nABSHX0_"
	rng := rand.New(rand.NewPCG(7, 9))
	for _, n := range []int{0, 1, 100, 1023, 1024, 5000, findBlock - 1, findBlock, findBlock + 1, 3*findBlock + 77} {
		for _, rare := range []bool{false, true} {
			var sb strings.Builder
			for sb.Len() < n {
				c := alphabet[rng.IntN(len(alphabet))]
				if rare && c == '0' {
					c = 'a' // almost no byte no keyword holds: parts cannot be cut
				}
				sb.WriteByte(c)
			}
			text := []byte(sb.String())
			var got [][2]int
			a.find(text, func(k, end int) { got = append(got, [2]int{k, end}) })
			want := naiveFind(words, text)
			sortHits(got, words)
			sortHits(want, words)
			if len(got) != len(want) {
				t.Fatalf("n=%d rare=%v: %d hits, want %d", n, rare, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("n=%d rare=%v: hit %d is %v, want %v", n, rare, i, got[i], want[i])
				}
			}
		}
	}
}

// sortHits orders hits by end, then keyword (find's order at one end is
// the automaton's output order, which the callers do not rely on).
func sortHits(h [][2]int, _ []string) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && (h[j][1] < h[j-1][1] || h[j][1] == h[j-1][1] && h[j][0] < h[j-1][0]); j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// BenchmarkAutomaton is the floor of the pattern rules: finding the
// pack's keywords alone ("pack"), in text as dense in them as skills are,
// with nothing done at a hit; and stepping the automaton over the same
// text where no keyword is ever found ("no-hits"): what one step a byte
// costs, whatever the rules.
func BenchmarkAutomaton(b *testing.B) {
	data := bytes.Repeat([]byte("Run `curl -sSfLO https://example.com/tool.tar.gz` and check its sha256 before you unpack it.\nIf the user asks for a summary, keep it under ten lines; you should group the changes by area.\n"), 50000)
	for name, a := range map[string]*automaton{
		"pack":    Default().keywords,
		"no-hits": newAutomaton([]string{"\x01curl", "\x01you"}),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			n := 0
			for b.Loop() {
				a.find(data, func(k, end int) { n++ })
			}
			if name == "no-hits" && n != 0 {
				b.Fatalf("%d hits, want none", n)
			}
		})
	}
}

// BenchmarkParse is what a process pays once, at its first scan: reading
// and compiling the embedded rule pack.
func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Parse(rulesYAML); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAlternatives: a pattern is split at its top-level bars only, inside
// a group that holds all of it, and not at all where splitting would
// change what it matches.
func TestAlternatives(t *testing.T) {
	for pattern, want := range map[string][]string{
		`abc`:                  {`abc`},
		`a|b|c`:                {`a`, `b`, `c`},
		`(a|b)`:                {`a`, `b`},
		`(?:a|(b|c))`:          {`a`, `(b|c)`},
		`((a|b))`:              {`a`, `b`},
		`(a)|(b)`:              {`(a)`, `(b)`},
		`(a|b)c`:               {`(a|b)c`},
		`(a)(b|c)`:             {`(a)(b|c)`},
		`[|]x|y`:               {`[|]x`, `y`},
		`[]|]x|y`:              {`[]|]x`, `y`},
		`[^]|]x|y`:             {`[^]|]x`, `y`},
		`a\|b|c`:               {`a\|b`, `c`},
		`a[\]|]b|c`:            {`a[\]|]b`, `c`},
		`\(a|b\)`:              {`\(a`, `b\)`},
		`(?i)a|b`:              {`(?i)a|b`},
		`\Qa|b\E`:              {`\Qa|b\E`},
		`(?P<x>a|b)`:           {`(?P<x>a|b)`},
		`(a|b)|(c\)|d)`:        {`(a|b)`, `(c\)|d)`},
		`x(a|b)|y`:             {`x(a|b)`, `y`},
		`(you|from)\s+x|act\b`: {`(you|from)\s+x`, `act\b`},
	} {
		if got := alternatives(pattern); !slices.Equal(got, want) {
			t.Errorf("alternatives(%q) = %q, want %q", pattern, got, want)
		}
	}
}

// TestLowerASCII: lowerASCII lower-cases A-Z as the byte table does, and
// leaves every other byte, alone or among others, as it is.
func TestLowerASCII(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, src := range [][]byte{all, []byte("ABCXYZ@[`{ azAZ09"), []byte("Hello, WORLD! \xc3\x89T\xc3\xa9 Zz@[")} {
		for n := range len(src) + 1 {
			in := src[:n]
			got := make([]byte, n)
			lowerASCII(got, in)
			for i, c := range in {
				if got[i] != lower[c] {
					t.Fatalf("lowerASCII(%q)[%d] = %q, want %q", in, i, got[i], lower[c])
				}
			}
		}
	}
	for range 1000 {
		in := make([]byte, rng.IntN(40))
		for i := range in {
			in[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				in[i] = byte(0x3a + rng.IntN(0x30)) // around A-Z and a-z
			}
		}
		got := make([]byte, len(in))
		lowerASCII(got, in)
		for i, c := range in {
			if got[i] != lower[c] {
				t.Fatalf("lowerASCII(%q)[%d] = %q, want %q", in, i, got[i], lower[c])
			}
		}
	}
}
