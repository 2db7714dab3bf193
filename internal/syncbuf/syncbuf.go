// Package syncbuf is a bytes.Buffer for tests whose output is written from
// several goroutines (a logger serving concurrent requests, a child
// process's stdout and stderr) while the test reads it.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer whose Write and String are safe to call
// concurrently. The zero value is an empty buffer ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p, whole: concurrent writes never interleave within one call.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
