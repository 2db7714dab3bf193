// Package store is the object store skilldrop keeps everything in: the
// operator's drops, the validated blobs and the catalog. It has two
// implementations with the same behaviour, checked by one contract test
// suite: S3 (for Lambda) and a local directory laid out like the bucket (for
// `skilldrop serve` and tests).
package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Errors every implementation returns, testable with errors.Is.
var (
	// ErrNotFound: the key does not exist (S3 404 / NoSuchKey).
	ErrNotFound = errors.New("store: object not found")
	// ErrPreconditionFailed: a conditional write lost (S3 412, or 409 on a
	// concurrent conditional write). For IfMatch it means "re-read and
	// retry"; for IfNoneMatch "*" it means the key already exists.
	ErrPreconditionFailed = errors.New("store: precondition failed")
	// ErrNotModified: a Get with IfNoneMatch found the same ETag (S3 304).
	ErrNotModified = errors.New("store: not modified")
	// ErrTooLarge: ReadAll found more bytes than its limit allowed.
	ErrTooLarge = errors.New("store: object larger than allowed")
	// ErrInvalidKey: the key is not a clean relative slash-separated path.
	ErrInvalidKey = errors.New("store: invalid key")
	// ErrAccessDenied: the object may exist, but reading it is refused (S3
	// 403, a file without read permission).
	ErrAccessDenied = errors.New("store: access denied")
	// ErrInvalidRange: a ranged Get starts outside the object (S3 416).
	ErrInvalidRange = errors.New("store: range not satisfiable")
	// ErrDeleted: the key's current version is a delete marker (a
	// versioned bucket: it existed, and was deleted). It is also
	// ErrNotFound. Only a Head tells it apart (S3 sends the marker's header
	// on a HEAD).
	ErrDeleted = fmt.Errorf("%w: its current version is a delete marker", ErrNotFound)
	// ErrNoSuchVersion: a Get named a version the store cannot serve for
	// the key: one it does not have (S3 404 NoSuchVersion), or any at all
	// in a store that keeps one version per key (S3 400 InvalidArgument,
	// "Invalid version id specified", for a bucket without versioning).
	// The version will not appear later. It is also ErrNotFound.
	ErrNoSuchVersion = fmt.Errorf("%w: no such version", ErrNotFound)
)

// Info describes a stored object.
type Info struct {
	Key          string
	ETag         string // opaque and quoted, as S3 returns it; changes whenever the bytes change
	Size         int64  // of the whole object, also when a Get read only a range of it
	LastModified time.Time
	// VersionID names this version of the object in a versioned S3 bucket
	// (Put and Head report it; List does not). "" where the store keeps one
	// version per key.
	VersionID string
}

// Object is an open object; the caller closes Body.
type Object struct {
	Info
	Body io.ReadCloser
}

// GetOptions make a Get conditional, partial or versioned.
type GetOptions struct {
	// IfNoneMatch, when set, makes Get return ErrNotModified if the object's
	// ETag still equals it: a cheap revalidation of a cached copy.
	IfNoneMatch string
	// IfMatch, when set, makes Get return ErrPreconditionFailed unless the
	// object's ETag equals it: several reads that must see one object (the
	// ranges of one catalog revision) never mix two.
	IfMatch string
	// Offset and Length, when Length > 0, read only the bytes [Offset,
	// Offset+Length) of the object, clipped at its end; Offset must lie
	// within the object. Info.Size stays the whole object's size.
	Offset, Length int64
	// VersionID reads that version of the object (S3 versioning). One
	// the key does not have is ErrNoSuchVersion; stores that keep one
	// version per key know no version ids, and any is ErrNoSuchVersion.
	VersionID string
}

// ResponseHeaders are what a presigned GET's answer carries.
type ResponseHeaders struct {
	ContentType, CacheControl, ContentEncoding string
}

// Presigner is what a store can do beyond Store when clients can fetch its
// objects themselves (S3): a URL that GETs one version of an object, valid
// for a while, without credentials of the client's own.
type Presigner interface {
	PresignGet(ctx context.Context, key, versionID string, expires time.Duration, h ResponseHeaders) (string, error)
}

// PutOptions make a Put conditional. At most one of IfMatch and IfNoneMatch is set.
type PutOptions struct {
	// IfMatch writes only if the object exists with this ETag
	// (ErrPreconditionFailed otherwise; ErrNotFound if it does not exist).
	IfMatch string
	// IfNoneMatch "*" writes only if the key does not exist (ErrPreconditionFailed otherwise).
	IfNoneMatch string
	// ContentType and ContentEncoding are what a client fetching the
	// object from the store itself (a presigned GET) is told it holds;
	// stores that serve no such clients ignore them.
	ContentType, ContentEncoding string
}

// Store is the object store interface the rest of skilldrop depends on.
type Store interface {
	// Get opens an object. A missing key is ErrNotFound.
	Get(ctx context.Context, key string, opts GetOptions) (*Object, error)
	// Head describes an object without reading it. A missing key is ErrNotFound.
	Head(ctx context.Context, key string) (Info, error)
	// Put stores body under key, honouring the conditions, and returns the new Info.
	Put(ctx context.Context, key string, body []byte, opts PutOptions) (Info, error)
	// List returns every object whose key starts with prefix, in key order.
	List(ctx context.Context, prefix string) ([]Info, error)
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// ReadAll reads a whole object, refusing more than limit bytes (limit <= 0:
// no limit) with ErrTooLarge, so a hostile or corrupted object never makes a
// caller buffer more than it planned for.
func ReadAll(ctx context.Context, s Store, key string, limit int64) ([]byte, Info, error) {
	obj, err := s.Get(ctx, key, GetOptions{})
	if err != nil {
		return nil, Info{}, err
	}
	defer func() { _ = obj.Body.Close() }()
	if limit > 0 && obj.Size > limit {
		return nil, obj.Info, fmt.Errorf("%w: %s is %d bytes, limit %d", ErrTooLarge, key, obj.Size, limit)
	}
	r := io.Reader(obj.Body)
	if limit > 0 {
		r = io.LimitReader(obj.Body, limit+1)
	}
	// Sized from the answer, so a large object is read into one buffer
	// rather than one doubled a few dozen times; the read still stops at
	// the limit whatever the object turns out to hold.
	hint := obj.Size
	if limit > 0 {
		hint = min(hint, limit)
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(0, min(hint, 64<<20))+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, obj.Info, fmt.Errorf("read %s: %w", key, err)
	}
	b := buf.Bytes()
	if limit > 0 && int64(len(b)) > limit {
		return nil, obj.Info, fmt.Errorf("%w: %s has more than %d bytes", ErrTooLarge, key, limit)
	}
	return b, obj.Info, nil
}
