package catalog

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// An entry Decode reads keeps its head (its latest version, which is most
// of the entry's line) undecoded until something asks for it: a publish
// into a catalog of 50,000 entries looks at the heads of the few it
// changes and copies the others' lines, and an entry's head is decoded at
// most once, whoever asks (the request path shares entries across
// requests).

// lazyHead is a head as stored, decoded on first use.
type lazyHead struct {
	raw  json.RawMessage
	once sync.Once
	v    *Version
	// pristine is a copy of v as decoded, to tell a head changed in place.
	pristine *Version
	err      error
	done     atomic.Bool
}

func (l *lazyHead) get() (*Version, error) {
	l.once.Do(func() {
		var s storedVersion
		if err := decodeJSON(l.raw, &s); err != nil {
			l.err = err
			return
		}
		v, err := s.expand()
		if err != nil {
			l.err = err
			return
		}
		p := cloneVersion(v)
		l.v, l.pristine = &v, &p
		l.done.Store(true)
	})
	return l.v, l.err
}

// decoded reports whether the head was asked for and decoded.
func (l *lazyHead) decoded() bool { return l.done.Load() }

// labelIs reports whether the stored head's label is label, reading only
// its first member (Version's first field) when it can.
func (l *lazyHead) labelIs(label string) bool {
	want := append(append([]byte(`{"label":`), quoted(label)...), ',')
	if bytes.HasPrefix(l.raw, want) {
		return true
	}
	v, err := l.get()
	return err == nil && v.Label == label
}

func quoted(s string) []byte {
	b, _ := json.Marshal(s) // a string: cannot fail
	return b
}

// head is the entry's latest version as held: Head when set (an entry
// built or changed in memory), else the one read, decoded now if need be.
func (e *Entry) head() *Version {
	if e.Head != nil || e.lazy == nil {
		return e.Head
	}
	v, _ := e.lazy.get()
	return v
}

// headErr is why the head read cannot be decoded, if it cannot.
func (e *Entry) headErr() error {
	if e.Head != nil || e.lazy == nil {
		return nil
	}
	_, err := e.lazy.get()
	return err
}
