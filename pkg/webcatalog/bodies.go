package webcatalog

import (
	"container/list"
	"html/template"
	"sync"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

// DefaultBodiesBytes is what NewBodies keeps when given no bound.
const DefaultBodiesBytes = 16 << 20

// Bodies keeps rendered documents by the digest of their bytes, least
// recently used first out, within a bound in bytes. Only bytes just
// verified against their digest are ever rendered into it, and equal
// SHA-256 digests are the same bytes, so an entry is the rendering of
// exactly the document a version pins, whatever revision asks. A nil
// *Bodies keeps nothing. It is safe for concurrent use.
type Bodies struct {
	mu    sync.Mutex
	max   int
	bytes int
	order *list.List // of *bodyEntry, most recent first
	byKey map[digest.Digest]*list.Element
}

type rendered struct {
	html template.HTML
	cut  bool
}

type bodyEntry struct {
	d digest.Digest
	r rendered
}

// NewBodies returns an empty cache of at most maxBytes of HTML
// (DefaultBodiesBytes when maxBytes <= 0).
func NewBodies(maxBytes int) *Bodies {
	if maxBytes <= 0 {
		maxBytes = DefaultBodiesBytes
	}
	return &Bodies{max: maxBytes, order: list.New(), byKey: map[digest.Digest]*list.Element{}}
}

func (b *Bodies) get(d digest.Digest) (rendered, bool) {
	if b == nil {
		return rendered{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	el, ok := b.byKey[d]
	if !ok {
		return rendered{}, false
	}
	b.order.MoveToFront(el)
	return el.Value.(*bodyEntry).r, true
}

func (b *Bodies) put(d digest.Digest, r rendered) {
	if b == nil || len(r.html) > b.max/4 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.byKey[d]; ok {
		return
	}
	b.byKey[d] = b.order.PushFront(&bodyEntry{d: d, r: r})
	b.bytes += len(r.html)
	for b.bytes > b.max {
		last := b.order.Back()
		e := last.Value.(*bodyEntry)
		b.order.Remove(last)
		delete(b.byKey, e.d)
		b.bytes -= len(e.r.html)
	}
}
