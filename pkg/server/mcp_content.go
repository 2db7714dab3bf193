package server

import (
	"container/list"
	"encoding/json"
	"sync"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// maxEncodedContent bounds the encoded file contents kept, in bytes.
const maxEncodedContent = 32 << 20

// encodedContent is a file's content as a resources/read answer carries
// it: the field ("text" or "blob") and its JSON value, encoded as the MCP
// SDK encodes a ReadResourceResult (json.Marshal: HTML escaping for text,
// base64 for a blob).
type encodedContent struct {
	field string
	value []byte
}

// contentCache keeps encodedContent by digest, least recently used first
// out, within maxEncodedContent. Only bytes that were just verified
// against their digest are ever encoded into it, and a read always
// verifies the bytes it read against the same digest before using an
// entry: equal SHA-256 digests are the same bytes, so the entry is the
// encoding of exactly what was read.
type contentCache struct {
	mu    sync.Mutex
	bytes int
	order *list.List // of *contentEntry, most recent first
	byKey map[contentKey]*list.Element
}

// contentKey names an encoding: the same bytes are text under one media
// type and a blob under another.
type contentKey struct {
	d    digest.Digest
	text bool
}

type contentEntry struct {
	key contentKey
	enc encodedContent
}

func newContentCache() *contentCache {
	return &contentCache{order: list.New(), byKey: map[contentKey]*list.Element{}}
}

// encoded returns the encoding of body, verified to hash to d and to be
// of mediaType, from the cache or encoded now and kept.
func (c *contentCache) encoded(d digest.Digest, mediaType string, body []byte) encodedContent {
	key := contentKey{d, artifact.ReadAsText(mediaType, body)}
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		enc := el.Value.(*contentEntry).enc
		c.mu.Unlock()
		return enc
	}
	c.mu.Unlock()
	enc := encodeContent(key.text, body)
	if len(enc.value) > maxEncodedContent/4 {
		return enc
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; !ok {
		c.byKey[key] = c.order.PushFront(&contentEntry{key: key, enc: enc})
		c.bytes += len(enc.value)
		for c.bytes > maxEncodedContent {
			last := c.order.Back()
			e := last.Value.(*contentEntry)
			c.order.Remove(last)
			delete(c.byKey, e.key)
			c.bytes -= len(e.enc.value)
		}
	}
	return enc
}

func encodeContent(text bool, body []byte) encodedContent {
	if text {
		v, _ := json.Marshal(string(body)) // a string: cannot fail
		return encodedContent{field: "text", value: v}
	}
	v, _ := json.Marshal(body) // bytes: base64, cannot fail
	return encodedContent{field: "blob", value: v}
}
