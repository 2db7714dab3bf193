package store

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// errBadOptions is wrapped when PutOptions ask for something no
// implementation supports; every implementation refuses the same way.
var errBadOptions = errors.New("store: invalid put options")

func checkPutOptions(opts PutOptions) error {
	if opts.IfMatch != "" && opts.IfNoneMatch != "" {
		return fmt.Errorf("%w: IfMatch and IfNoneMatch are exclusive", errBadOptions)
	}
	if opts.IfNoneMatch != "" && opts.IfNoneMatch != "*" {
		return fmt.Errorf(`%w: IfNoneMatch supports only "*", not %q`, errBadOptions, opts.IfNoneMatch)
	}
	return nil
}

// sameETag compares ETags the way S3 does: quotes are optional.
func sameETag(a, b string) bool {
	return strings.Trim(a, `"`) == strings.Trim(b, `"`)
}

// contentETag is S3's single-part ETag for b: the quoted hex MD5. It is a
// change detector, not a security property; digests are SHA-256.
func contentETag(b []byte) string {
	sum := md5.Sum(b) //nolint:gosec // S3-compatible ETag, not a security check
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// checkGet applies GetOptions' conditions to the object found at key, for
// the stores that evaluate them themselves (S3 does so server-side). The
// order is S3's: If-Match before If-None-Match.
func checkGet(key string, info Info, opts GetOptions) error {
	switch {
	case opts.VersionID != "" && opts.VersionID != info.VersionID:
		return fmt.Errorf("get %s version %s: %w", key, opts.VersionID, ErrNoSuchVersion)
	case opts.IfMatch != "" && !sameETag(info.ETag, opts.IfMatch):
		return fmt.Errorf("get %s if-match %s: %w: the ETag is now %s", key, opts.IfMatch, ErrPreconditionFailed, info.ETag)
	case opts.IfNoneMatch != "" && sameETag(info.ETag, opts.IfNoneMatch):
		return fmt.Errorf("get %s: %w", key, ErrNotModified)
	case opts.Length > 0 && (opts.Offset < 0 || opts.Offset >= info.Size):
		return fmt.Errorf("get %s bytes %d+%d of %d: %w", key, opts.Offset, opts.Length, info.Size, ErrInvalidRange)
	}
	return nil
}

// byteRange is the slice [lo, hi) of an object of size bytes that opts
// ask for: all of it, or the range clipped at the end.
func byteRange(size int64, opts GetOptions) (lo, hi int64) {
	if opts.Length <= 0 {
		return 0, size
	}
	return opts.Offset, min(size, opts.Offset+opts.Length)
}
