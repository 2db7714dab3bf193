package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWritesAreKeptWhole: every line written from many goroutines
// is in the buffer, none split by another.
func TestConcurrentWritesAreKeptWhole(t *testing.T) {
	const writers, lines = 8, 200
	line := strings.Repeat("x", 63) + "\n"
	var b Buffer
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range lines {
				if _, err := b.Write([]byte(line)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for i, l := range got {
		if l+"\n" != line {
			t.Fatalf("line %d is %q, want %q", i, l, line)
		}
	}
}
