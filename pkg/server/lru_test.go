package server

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestBoundedLRU: values are kept within both bounds, the least recently
// used dropped first, one larger than the byte bound kept alone until the
// next, and a dropped key computed again.
func TestBoundedLRU(t *testing.T) {
	computed := map[string]int{}
	c := newBoundedLRU[string](3, 100, func(v int) int64 { return int64(v) })
	get := func(key string, size int) int {
		return c.get(key, func() int { computed[key]++; return size })
	}
	get("a", 40)
	get("b", 40)
	get("a", 40) // a is now the most recent
	get("c", 40) // 120 bytes: b, the least recent, goes
	if keys, bytes := c.len(); keys != 2 || bytes != 80 {
		t.Errorf("kept %d keys, %d bytes; want 2, 80", keys, bytes)
	}
	get("a", 40)
	get("b", 40)
	if computed["a"] != 1 || computed["b"] != 2 || computed["c"] != 1 {
		t.Errorf("computations: %v", computed)
	}
	get("huge", 101)
	get("huge", 101)
	if keys, bytes := c.len(); computed["huge"] != 1 || keys != 1 || bytes != 101 {
		t.Errorf("a value past the byte bound: computed %d times, kept %d keys, %d bytes; want 1, 1, 101", computed["huge"], keys, bytes)
	}
	get("a", 40)
	if keys, bytes := c.len(); keys != 1 || bytes != 40 {
		t.Errorf("after the value past the bound, kept %d keys, %d bytes; want 1, 40", keys, bytes)
	}
	for _, k := range []string{"w", "x", "y", "z"} {
		get(k, 1)
	}
	if keys, _ := c.len(); keys != 3 {
		t.Errorf("kept %d keys, bound 3", keys)
	}
}

// TestBoundedLRUSharesAMiss: concurrent misses of one key wait for one
// computation and all get its value.
func TestBoundedLRUSharesAMiss(t *testing.T) {
	c := newBoundedLRU[string](4, 1<<20, func(int) int64 { return 1 })
	var calls atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = c.get("k", func() int { calls.Add(1); <-release; return 42 })
		}()
	}
	for calls.Load() == 0 {
		runtime.Gosched() // until the first computation has started
	}
	close(release)
	wg.Wait()
	for i, v := range got {
		if v != 42 {
			t.Errorf("caller %d got %d", i, v)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d computations for one key", n)
	}
}
