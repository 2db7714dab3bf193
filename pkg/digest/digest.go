// Package digest implements the content digests skilldrop pins every artifact
// with: "sha256:" followed by 64 lowercase hexadecimal digits, the form the
// Agent Skills Discovery RFC uses.
package digest

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// Algorithm is the only algorithm skilldrop accepts.
const Algorithm = "sha256"

const (
	prefix = Algorithm + ":"
	hexLen = sha256.Size * 2
)

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("invalid digest")

// Digest is a SHA-256 content digest. The zero value is not a valid digest;
// IsZero reports it.
type Digest struct {
	sum [sha256.Size]byte
	set bool
}

// Parse parses "sha256:<64 lowercase hex>". Upper-case hex, other lengths and
// other algorithms are refused with an error that says which rule failed.
func Parse(s string) (Digest, error) {
	algo, hx, ok := strings.Cut(s, ":")
	if !ok {
		return Digest{}, fmt.Errorf("%w %q: want %s<64 lowercase hex digits>", ErrSyntax, clip(s), prefix)
	}
	if algo != Algorithm {
		return Digest{}, fmt.Errorf("%w %q: unsupported algorithm %q, only %s is accepted", ErrSyntax, clip(s), clip(algo), Algorithm)
	}
	return ParseHex(hx)
}

// ParseHex parses a bare 64-digit lowercase hex SHA-256 sum, as used in blob keys.
func ParseHex(hx string) (Digest, error) {
	if len(hx) != hexLen {
		return Digest{}, fmt.Errorf("%w: sha256 hex is %d characters, want %d", ErrSyntax, len(hx), hexLen)
	}
	for i := 0; i < len(hx); i++ {
		c := hx[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			return Digest{}, fmt.Errorf("%w: upper-case hex digit %q at %d, digests are lowercase", ErrSyntax, c, i)
		default:
			return Digest{}, fmt.Errorf("%w: %q at %d is not a hex digit", ErrSyntax, c, i)
		}
	}
	var d Digest
	if _, err := hex.Decode(d.sum[:], []byte(hx)); err != nil {
		return Digest{}, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	d.set = true
	return d, nil
}

// MustParse is Parse for constants in tests and examples; it panics on error.
func MustParse(s string) Digest {
	d, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return d
}

// Of returns the digest of b.
func Of(b []byte) Digest {
	return Digest{sum: sha256.Sum256(b), set: true}
}

// FromSum wraps a raw SHA-256 sum.
func FromSum(sum [sha256.Size]byte) Digest { return Digest{sum: sum, set: true} }

// String formats d as "sha256:<hex>"; the zero Digest formats as "".
func (d Digest) String() string {
	if !d.set {
		return ""
	}
	return prefix + d.Hex()
}

// Hex returns the bare lowercase hex sum.
func (d Digest) Hex() string {
	if !d.set {
		return ""
	}
	return hex.EncodeToString(d.sum[:])
}

// Short returns the first 12 hex digits, used in derived version labels.
func (d Digest) Short() string {
	h := d.Hex()
	if len(h) < 12 {
		return h
	}
	return h[:12]
}

// IsZero reports whether d was never set.
func (d Digest) IsZero() bool { return !d.set }

// Equal compares two digests in constant time. Two zero digests are not equal:
// an unset digest never verifies anything.
func (d Digest) Equal(o Digest) bool {
	both := subtle.ConstantTimeByteEq(b2u(d.set), 1) & subtle.ConstantTimeByteEq(b2u(o.set), 1)
	return subtle.ConstantTimeCompare(d.sum[:], o.sum[:])&both == 1
}

// Verify reports whether b hashes to d.
func (d Digest) Verify(b []byte) bool { return d.Equal(Of(b)) }

// MarshalText implements encoding.TextMarshaler.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; the empty string yields the zero Digest.
func (d *Digest) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Digest{}
		return nil
	}
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// Reader hashes everything read through it.
type Reader struct {
	r io.Reader
	h hash.Hash
	n int64
}

// NewReader returns a Reader that hashes what is read from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r, h: sha256.New()} }

func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.h.Write(p[:n])
		r.n += int64(n)
	}
	return n, err
}

// Digest returns the digest of the bytes read so far.
func (r *Reader) Digest() Digest {
	var d Digest
	r.h.Sum(d.sum[:0])
	d.set = true
	return d
}

// N returns how many bytes were read so far.
func (r *Reader) N() int64 { return r.n }

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// clip bounds hostile input echoed into error messages.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
