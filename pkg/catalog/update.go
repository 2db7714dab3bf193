package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/skilldrop/skilldrop/pkg/store"
)

// MaxDocumentBytes bounds what Load reads; a catalog of thousands of skills
// with their histories is a few megabytes.
const MaxDocumentBytes = 64 << 20

// ErrNoChange, returned by an update function, ends Update without a write.
var ErrNoChange = errors.New("catalog: no change")

// ErrSchema reports a document written by a newer skilldrop.
var ErrSchema = errors.New("catalog: unsupported schema version")

// Load reads the catalog and its ETag. A missing catalog is store.ErrNotFound:
// readers must not mistake "not built yet" or "unreadable" for "empty".
func Load(ctx context.Context, s store.Store) (*Catalog, store.Info, error) {
	c := New()
	info, err := loadJSON(ctx, s, Key, c)
	if err != nil {
		return nil, info, err
	}
	if c.Skills == nil {
		c.Skills = map[string]*Entry{}
	}
	if c.Subagents == nil {
		c.Subagents = map[string]*Entry{}
	}
	if c.Listings == nil {
		c.Listings = map[string]*Listing{}
	}
	return c, info, nil
}

// LoadStatus reads the status document; a missing one is store.ErrNotFound.
func LoadStatus(ctx context.Context, s store.Store) (*Status, store.Info, error) {
	st := NewStatus()
	info, err := loadJSON(ctx, s, StatusKey, st)
	if err != nil {
		return nil, info, err
	}
	return st, info, nil
}

// Decode parses a catalog document (as Load does, from bytes already read).
func Decode(b []byte) (*Catalog, error) {
	c := New()
	if err := decode(b, c, Key); err != nil {
		return nil, err
	}
	return c, nil
}

func loadJSON(ctx context.Context, s store.Store, key string, v any) (store.Info, error) {
	b, info, err := store.ReadAll(ctx, s, key, MaxDocumentBytes)
	if err != nil {
		return info, fmt.Errorf("read %s: %w", key, err)
	}
	return info, decode(b, v, key)
}

func decode(b []byte, v any, key string) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	var schema int
	switch d := v.(type) {
	case *Catalog:
		schema = d.Schema
	case *Status:
		schema = d.Schema
	}
	if schema > SchemaVersion {
		return fmt.Errorf("%w: %s has schema %d, this build reads up to %d", ErrSchema, key, schema, SchemaVersion)
	}
	return nil
}

// Update applies fn to the current catalog and writes the result with a
// conditional put: created with IfNoneMatch "*", replaced with IfMatch on
// the ETag it read. When another writer won the race (412/409, or the
// catalog vanished), it re-reads and re-applies fn, so concurrent updates
// are never lost. fn may return ErrNoChange to skip the write. The returned
// catalog is the one written (or current, on ErrNoChange).
func Update(ctx context.Context, s store.Store, fn func(*Catalog) error) (*Catalog, error) {
	var out *Catalog
	err := retry(ctx, func() error {
		c, info, err := Load(ctx, s)
		switch {
		case errors.Is(err, store.ErrNotFound):
			c, info = New(), store.Info{}
		case err != nil:
			return err
		}
		if err := fn(c); err != nil {
			if errors.Is(err, ErrNoChange) {
				out = c
				return nil
			}
			return err
		}
		c.Schema = SchemaVersion
		c.Revision++
		c.UpdatedAt = time.Now().UTC()
		if err := put(ctx, s, Key, c, info.ETag); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// UpdateStatus is Update for the status document.
func UpdateStatus(ctx context.Context, s store.Store, fn func(*Status) error) error {
	return retry(ctx, func() error {
		st, info, err := LoadStatus(ctx, s)
		switch {
		case errors.Is(err, store.ErrNotFound):
			st, info = NewStatus(), store.Info{}
		case err != nil:
			return err
		}
		if err := fn(st); err != nil {
			if errors.Is(err, ErrNoChange) {
				return nil
			}
			return err
		}
		st.Schema = SchemaVersion
		st.UpdatedAt = time.Now().UTC()
		return put(ctx, s, StatusKey, st, info.ETag)
	})
}

// errRetry marks a lost race.
var errRetry = errors.New("catalog: lost a concurrent update")

func put(ctx context.Context, s store.Store, key string, v any, etag string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	opts := store.PutOptions{ContentType: "application/json"}
	if etag == "" {
		opts.IfNoneMatch = "*"
	} else {
		opts.IfMatch = etag
	}
	_, err := s.Put(ctx, key, buf.Bytes(), opts)
	switch {
	case errors.Is(err, store.ErrPreconditionFailed), etag != "" && errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %w", errRetry, err)
	case err != nil:
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// MaxAttempts bounds how often Update re-reads after losing a race.
const MaxAttempts = 64

// retry runs attempt until it stops losing races, with jittered exponential
// backoff capped at one second, up to MaxAttempts or the context's end.
func retry(ctx context.Context, attempt func() error) error {
	backoff := 5 * time.Millisecond
	for i := 1; ; i++ {
		err := attempt()
		if !errors.Is(err, errRetry) {
			return err
		}
		if i == MaxAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", i, err)
		}
		sleep := backoff/2 + rand.N(backoff)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after %d attempts: %w)", ctx.Err(), i, err)
		case <-time.After(sleep):
		}
		backoff = min(2*backoff, time.Second)
	}
}
