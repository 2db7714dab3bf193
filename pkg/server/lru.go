package server

import (
	"container/list"
	"sync"
)

// boundedLRU keeps values computed for keys, at most maxKeys of them and
// maxBytes of their sizes, dropping the least recently used past either
// bound; the value computed last is kept whatever its size, so one
// document larger than the bound is not computed on every request. A miss
// computes the value again, and concurrent misses of one key share one
// computation.
type boundedLRU[K comparable, V any] struct {
	maxKeys  int
	maxBytes int64
	size     func(V) int64

	mu     sync.Mutex
	used   int64
	order  *list.List // of *lruEntry[K, V], the most recently used first
	byKey  map[K]*list.Element
	flight map[K]*lruFlight[V]
}

type lruEntry[K comparable, V any] struct {
	key  K
	v    V
	size int64
}

type lruFlight[V any] struct {
	done chan struct{}
	v    V
}

func newBoundedLRU[K comparable, V any](maxKeys int, maxBytes int64, size func(V) int64) *boundedLRU[K, V] {
	return &boundedLRU[K, V]{maxKeys: maxKeys, maxBytes: maxBytes, size: size,
		order: list.New(), byKey: map[K]*list.Element{}, flight: map[K]*lruFlight[V]{}}
}

// get returns key's value, computing it with compute when it is not kept.
func (c *boundedLRU[K, V]) get(key K, compute func() V) V {
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*lruEntry[K, V]).v
	}
	if f, ok := c.flight[key]; ok {
		c.mu.Unlock()
		<-f.done
		return f.v
	}
	f := &lruFlight[V]{done: make(chan struct{})}
	c.flight[key] = f
	c.mu.Unlock()

	kept := false
	defer func() {
		c.mu.Lock()
		delete(c.flight, key)
		if kept {
			c.keep(key, f.v)
		}
		c.mu.Unlock()
		close(f.done) // a panic in compute releases the waiters with the zero value, and is not kept
	}()
	f.v = compute()
	kept = true
	return f.v
}

// keep adds key's value and drops the least recently used past the bounds.
func (c *boundedLRU[K, V]) keep(key K, v V) {
	n := c.size(v)
	c.byKey[key] = c.order.PushFront(&lruEntry[K, V]{key, v, n})
	c.used += n
	for c.order.Len() > 1 && (c.order.Len() > c.maxKeys || c.used > c.maxBytes) {
		e := c.order.Remove(c.order.Back()).(*lruEntry[K, V])
		delete(c.byKey, e.key)
		c.used -= e.size
	}
}

// len is how many keys are kept, and bytes their sizes.
func (c *boundedLRU[K, V]) len() (keys int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.used
}
