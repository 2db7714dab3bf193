package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is a Store held in memory, for tests of the packages built on
// Store. It passes the same contract suite as S3 and Dir; it accepts any
// non-empty key, as S3 does. It is safe for concurrent use.
type Memory struct {
	mu      sync.RWMutex
	objects map[string]memObject
	// versions, when not nil, keeps every version written of each key, as
	// a versioned S3 bucket does (NewVersionedMemory); a Delete removes
	// only the current object.
	versions map[string][]memObject
	written  int
}

type memObject struct {
	data []byte
	info Info
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory store.
func NewMemory() *Memory { return &Memory{objects: map[string]memObject{}} }

// NewVersionedMemory returns an empty Memory store that versions its
// objects: each Put reports a version id that Get can read afterwards,
// whatever was written or deleted at the key since.
func NewVersionedMemory() *Memory {
	return &Memory{objects: map[string]memObject{}, versions: map[string][]memObject{}}
}

// Get implements Store.
func (m *Memory) Get(ctx context.Context, key string, opts GetOptions) (*Object, error) {
	info, data, err := m.lookup(ctx, "get", key)
	if opts.VersionID != "" {
		info, data, err = m.lookupVersion(ctx, key, opts.VersionID)
	}
	if err != nil {
		return nil, err
	}
	if err := checkGet(key, info, opts); err != nil {
		return nil, err
	}
	// Stored bytes are never modified (Put stores a copy), so readers can share them.
	lo, hi := byteRange(info.Size, opts)
	return &Object{Info: info, Body: io.NopCloser(bytes.NewReader(data[lo:hi]))}, nil
}

// Head implements Store.
func (m *Memory) Head(ctx context.Context, key string) (Info, error) {
	info, _, err := m.lookup(ctx, "head", key)
	return info, err
}

func (m *Memory) lookup(ctx context.Context, op, key string) (Info, []byte, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, nil, err
	}
	if key == "" {
		return Info{}, nil, fmt.Errorf("%s: %w: empty key", op, ErrInvalidKey)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.objects[key]
	if !ok {
		return Info{}, nil, fmt.Errorf("%s %s: %w", op, key, ErrNotFound)
	}
	return o.info, o.data, nil
}

// lookupVersion finds one version of key, current or not.
func (m *Memory) lookupVersion(ctx context.Context, key, version string) (Info, []byte, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, o := range m.versions[key] {
		if o.info.VersionID == version {
			return o.info, o.data, nil
		}
	}
	return Info{}, nil, fmt.Errorf("get %s version %s: %w", key, version, ErrNoSuchVersion)
}

// Put implements Store.
func (m *Memory) Put(ctx context.Context, key string, body []byte, opts PutOptions) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	if key == "" {
		return Info{}, fmt.Errorf("put: %w: empty key", ErrInvalidKey)
	}
	if err := checkPutOptions(opts); err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	data := slices.Clone(body)
	info := Info{Key: key, ETag: contentETag(data), Size: int64(len(data)), LastModified: time.Now().UTC()}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, exists := m.objects[key]
	switch {
	case opts.IfMatch != "" && !exists:
		return Info{}, fmt.Errorf("put %s if-match %s: %w", key, opts.IfMatch, ErrNotFound)
	case opts.IfMatch != "" && !sameETag(cur.info.ETag, opts.IfMatch):
		return Info{}, fmt.Errorf("put %s if-match %s: %w", key, opts.IfMatch, ErrPreconditionFailed)
	case opts.IfNoneMatch != "" && exists:
		return Info{}, fmt.Errorf("put %s if-none-match *: %w", key, ErrPreconditionFailed)
	}
	if m.versions != nil {
		m.written++
		info.VersionID = fmt.Sprintf("v%d", m.written)
		m.versions[key] = append(m.versions[key], memObject{data: data, info: info})
	}
	m.objects[key] = memObject{data: data, info: info}
	return info, nil
}

// List implements Store.
func (m *Memory) List(ctx context.Context, prefix string) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	var infos []Info
	for k, o := range m.objects {
		if strings.HasPrefix(k, prefix) {
			infos = append(infos, o.info)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(infos, func(a, b Info) int { return strings.Compare(a.Key, b.Key) })
	return infos, nil
}

// Delete implements Store.
func (m *Memory) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("delete: %w: empty key", ErrInvalidKey)
	}
	m.mu.Lock()
	delete(m.objects, key)
	m.mu.Unlock()
	return nil
}
