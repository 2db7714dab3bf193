// Package apikey verifies the API keys callers present as
// `Authorization: Bearer <api-key>`. skilldrop never stores a key, only its
// SHA-256 as bare lowercase hex, configured as a comma-separated list in
// SKILLDROP_API_KEY_SHA256 or in an SSM SecureString (see ssmparam). Logs
// name a key by its KeyID, never by the key.
package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Environment variables the functions read (the SAM template sets them).
const (
	EnvHashes    = "SKILLDROP_API_KEY_SHA256"    // comma-separated hashes
	EnvParameter = "SKILLDROP_API_KEY_PARAMETER" // SSM parameter holding the same list
)

// ErrSyntax is wrapped by every error ParseSet returns.
var ErrSyntax = errors.New("invalid API key hash list")

const hashHexLen = sha256.Size * 2

// Set is a set of API key hashes. The zero Set is empty: it accepts no key.
// A Set is also a Source that never fails.
type Set struct {
	hashes [][sha256.Size]byte
}

// Hash returns the value to configure for key: the lowercase hex SHA-256.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// KeyID is the short name logs use for key: the first 8 hex digits of its
// SHA-256 (so also of its configured hash, which lets an operator tell which
// configured key a log line is about). It does not reveal the key.
func KeyID(key string) string {
	return Hash(key)[:8]
}

// ParseSet parses a comma-separated list of hashes, each 64 lowercase hex
// digits. Whitespace around items is ignored and so are empty items, so ""
// is the empty set. An error names the item and character position at
// fault and never repeats the item: an operator who pasted a key instead of
// its hash must not find the key in a log.
func ParseSet(list string) (Set, error) {
	var s Set
	seen := map[[sha256.Size]byte]bool{}
	for i, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		sum, err := parseHash(item)
		if err != nil {
			return Set{}, fmt.Errorf("%w: item %d: %w", ErrSyntax, i+1, err)
		}
		if !seen[sum] {
			seen[sum] = true
			s.hashes = append(s.hashes, sum)
		}
	}
	return s, nil
}

// errItem is the reason an item is not a hash; it never quotes the item.
type errItem string

func (e errItem) Error() string { return string(e) }

func parseHash(item string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	if len(item) != hashHexLen {
		return sum, errItem(fmt.Sprintf("%d characters, want the %d lowercase hex digits of the key's SHA-256 (not the key itself)", len(item), hashHexLen))
	}
	for j := 0; j < len(item); j++ {
		c := item[j]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			return sum, errItem(fmt.Sprintf("upper-case hex digit at position %d; hashes are lowercase", j+1))
		default:
			return sum, errItem(fmt.Sprintf("character at position %d is not a hex digit", j+1))
		}
		sum[j/2] |= v << (4 * (1 - j%2))
	}
	return sum, nil
}

// Len returns the number of distinct hashes.
func (s Set) Len() int { return len(s.hashes) }

// Union returns the hashes of s and o.
func (s Set) Union(o Set) Set {
	out := Set{hashes: append([][sha256.Size]byte(nil), s.hashes...)}
	for _, h := range o.hashes {
		if !out.has(h) {
			out.hashes = append(out.hashes, h)
		}
	}
	return out
}

func (s Set) has(h [sha256.Size]byte) bool {
	for _, x := range s.hashes {
		if x == h {
			return true
		}
	}
	return false
}

// Contains reports whether key hashes to one of the set's hashes. It
// compares against every hash in constant time and does not stop at a
// match, so its timing depends on the size of the set only, never on which
// hash matched or how much of one did.
func (s Set) Contains(key string) bool {
	sum := sha256.Sum256([]byte(key))
	found := 0
	for i := range s.hashes {
		found |= subtle.ConstantTimeCompare(sum[:], s.hashes[i][:])
	}
	return found == 1
}

// Named returns the configured hashes (lowercase hex) of the keys whose
// KeyID is id: usually one, more only when two keys share an id's 32
// bits. A browser session names its key by id and checks itself against
// these on every use, so removing a key's hash ends its sessions too.
func (s Set) Named(id string) []string {
	var out []string
	for _, h := range s.hashes {
		if x := hex.EncodeToString(h[:]); x[:len(KeyID(""))] == id {
			out = append(out, x)
		}
	}
	return out
}
