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
