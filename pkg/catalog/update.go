package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/skilldrop/skilldrop/pkg/store"
)

// MaxStatusBytes bounds what LoadStatus reads; the status document keeps
// at most MaxRejections rejections and the warnings of the keys that have any.
const MaxStatusBytes = 64 << 20

// ErrNoChange, returned by an update function, ends Update without a write.
var ErrNoChange = errors.New("catalog: no change")

// ErrSchema reports a document written by a newer skilldrop.
var ErrSchema = errors.New("catalog: unsupported schema version")

// Load reads the catalog and its ETag. A missing catalog is store.ErrNotFound:
// readers must not mistake "not built yet" or "unreadable" for "empty".
func Load(ctx context.Context, s store.Store) (*Catalog, store.Info, error) {
	b, info, err := store.ReadAll(ctx, s, Key, MaxBytes)
	if err != nil {
		return nil, info, fmt.Errorf("read %s: %w", Key, err)
	}
	c, err := Decode(b)
	if err != nil {
		return nil, info, err
	}
	return c, info, nil
}

// LoadStatus reads the status document; a missing one is store.ErrNotFound.
func LoadStatus(ctx context.Context, s store.Store) (*Status, store.Info, error) {
	b, info, err := store.ReadAll(ctx, s, StatusKey, MaxStatusBytes)
	if err != nil {
		return nil, info, fmt.Errorf("read %s: %w", StatusKey, err)
	}
	st := NewStatus()
	if err := json.Unmarshal(b, st); err != nil {
		return nil, info, fmt.Errorf("decode %s: %w", StatusKey, err)
	}
	if st.Schema > SchemaVersion {
		return nil, info, fmt.Errorf("%w: %s has schema %d, this build reads up to %d", ErrSchema, StatusKey, st.Schema, SchemaVersion)
	}
	return st, info, nil
}

// UpdateOptions tune Update.
type UpdateOptions struct {
	// Limit is the largest catalog Update writes (MaxBytes when <= 0); a
	// larger one is refused with a *FullError and not written.
	Limit int64
	// Read, when set, is the catalog as the caller just read it (as of
	// ReadInfo; a zero ReadInfo: none existed). The first attempt applies
	// fn to it instead of reading the catalog again, and its conditional
	// write tells whether that was still current. Update owns it afterwards.
	Read     *Catalog
	ReadInfo store.Info
}

// Update applies fn to the current catalog and writes the result with a
// conditional put: created with IfNoneMatch "*", replaced with IfMatch on
// the ETag it read. When another writer won the race (412/409, or the
// catalog vanished), it re-reads and re-applies fn, so concurrent updates
// are never lost. fn may return ErrNoChange to skip the write. The returned
// catalog is the one written (or current, on ErrNoChange), with the Info
// of the object it was written as (or read as).
func Update(ctx context.Context, s store.Store, fn func(*Catalog) error) (*Catalog, error) {
	c, _, err := UpdateWith(ctx, s, fn, UpdateOptions{})
	return c, err
}

// UpdateWith is Update with options, also returning the object's Info.
func UpdateWith(ctx context.Context, s store.Store, fn func(*Catalog) error, o UpdateOptions) (*Catalog, store.Info, error) {
	var out *Catalog
	var written store.Info
	first := o.Read
	err := retry(ctx, func() error {
		c, info := first, o.ReadInfo
		first = nil
		if c == nil {
			var err error
			c, info, err = Load(ctx, s)
			switch {
			case errors.Is(err, store.ErrNotFound):
				c, info = New(), store.Info{}
			case err != nil:
				return err
			}
		}
		if err := fn(c); err != nil {
			if errors.Is(err, ErrNoChange) {
				out, written = c, info
				return nil
			}
			return err
		}
		c.Schema = SchemaVersion
		c.Revision++
		c.UpdatedAt = time.Now().UTC()
		b, err := Encode(c, o.Limit)
		if err != nil {
			return err
		}
		w, err := putBytes(ctx, s, Key, b, info.ETag)
		if err != nil {
			return err
		}
		c.stored = &stored{size: int64(len(b))}
		out, written = c, w
		return nil
	})
	return out, written, err
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
		b, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("encode %s: %w", StatusKey, err)
		}
		_, err = putBytes(ctx, s, StatusKey, append(b, '\n'), info.ETag)
		return err
	})
}

// errRetry marks a lost race.
var errRetry = errors.New("catalog: lost a concurrent update")

// putBytes writes b at key: created when etag is "", else replacing the
// object with that ETag. A lost race is errRetry.
func putBytes(ctx context.Context, s store.Store, key string, b []byte, etag string) (store.Info, error) {
	opts := store.PutOptions{ContentType: "application/json"}
	if etag == "" {
		opts.IfNoneMatch = "*"
	} else {
		opts.IfMatch = etag
	}
	info, err := s.Put(ctx, key, b, opts)
	switch {
	case errors.Is(err, store.ErrPreconditionFailed), etag != "" && errors.Is(err, store.ErrNotFound):
		return info, fmt.Errorf("%w: %w", errRetry, err)
	case err != nil:
		return info, fmt.Errorf("write %s: %w", key, err)
	}
	return info, nil
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
