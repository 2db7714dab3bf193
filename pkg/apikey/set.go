// Package apikey verifies the API keys callers present, as
// `Authorization: Bearer <api-key>` or in a capability URL's path
// (/k/<key>/…, for clients that send no credentials). skilldrop never
// stores a key, only its SHA-256 as bare lowercase hex, in a key store:
// the JSON document Parse reads (named keys with audiences, an expiry and
// path use), or the comma-separated hashes of earlier versions, which mean
// keys of every audience. It is an SSM SecureString in Lambda (see
// ssmparam), a file for `skilldrop serve`, and SKILLDROP_API_KEY_SHA256.
// A key resolves to an audience.Caller; logs name a key by its id, never
// by the key.
package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/jcs"
)

// Environment variables the functions and serve read (the SAM template
// sets the parameter's).
const (
	EnvHashes    = "SKILLDROP_API_KEY_SHA256"    // comma-separated hashes
	EnvParameter = "SKILLDROP_API_KEY_PARAMETER" // SSM parameter holding the key store
	EnvFile      = "SKILLDROP_KEYS_FILE"         // a file holding the key store (serve)
	EnvRefresh   = "SKILLDROP_KEYS_REFRESH"      // how often the key store is read again (a Go duration, at most 60s)
)

// ErrSyntax is wrapped by every error Parse and ParseSet return.
var ErrSyntax = errors.New("invalid API key store")

// ErrEmpty is wrapped by Parse's error for a key store that holds nothing
// at all, not even {"keys":[]}.
var ErrEmpty = errors.New(`the key store is empty (blank or whitespace only); write {"keys":[]} to configure no keys`)

// MaxStoreBytes bounds a key store document.
const MaxStoreBytes = 1 << 20

const hashHexLen = sha256.Size * 2

// Key is one key of a store, as configured: never the key itself.
type Key struct {
	// ID names the key in logs and audit events: the store's id, or for a
	// bare hash the first 8 hex digits of it (KeyID).
	ID string
	// All is set for a key of every audience (a bare hash, or ["*"]);
	// Audiences are the others'.
	All       bool
	Audiences audience.Set
	// Expires, when set, is when the key stops being valid.
	Expires time.Time
	// Path allows the key in a capability URL's path (/k/<key>/…), where
	// it is a secret in a URL; header use is always allowed.
	Path bool

	hash [sha256.Size]byte
}

// Caller is the caller the key makes.
func (k Key) Caller() audience.Caller {
	return audience.Caller{KeyID: k.ID, Authenticated: true, All: k.All, Audiences: k.Audiences}
}

// Expired reports whether the key is expired at now.
func (k Key) Expired(now time.Time) bool { return !k.Expires.IsZero() && !now.Before(k.Expires) }

// Set is the keys of a store. The zero Set is empty: it accepts no key.
// A Set is also a Source that never fails.
type Set struct {
	keys []Key
}

// Hash returns the value to configure for key: the lowercase hex SHA-256.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// KeyID is the short name logs use for a configured key that has no id of
// its own (a bare hash): the first 8 hex digits of its SHA-256, so also of
// its configured hash, which lets an operator tell which configured key a
// log line is about. A key that is not configured is never named by it
// (UnknownKeyID).
func KeyID(key string) string {
	return Hash(key)[:8]
}

// Parse reads a key store: a JSON document (its first non-blank byte is
// "{"), else the comma-separated hashes ParseSet reads. The document is
//
//	{"keys": [{"id": "partner-a-ci", "sha256": "<64 lowercase hex>",
//	           "audiences": ["partner-a"], "expires": "2027-01-01T00:00:00Z", "path": true}]}
//
// where id (1 to 64 letters, digits, '.', '_' or '-') and sha256 are
// required and unique, audiences are audience names or ["*"] for every
// audience (none: the entries visible to any valid key), expires is RFC
// 3339 (none: no expiry) and path allows the key in a capability URL.
// Unknown fields, member names in another case and a member name that
// appears twice (at any level) are errors. An error never repeats a hash, which may be
// a key pasted by mistake.
//
// A store with nothing in it (empty, or only whitespace and commas) is an
// error wrapping ErrEmpty, not the empty set: it is what a truncated file,
// an editor's half-written save or a parameter pasted wrong reads as, and
// taking it for "no keys" would refuse every key holder for a whole refresh
// without a word. A store that means no keys says so: {"keys":[]}.
func Parse(raw string) (Set, error) {
	if strings.Trim(raw, " \t\r\n,") == "" {
		return Set{}, fmt.Errorf("%w: %w", ErrSyntax, ErrEmpty)
	}
	if !strings.HasPrefix(strings.TrimLeft(raw, " \t\r\n"), "{") {
		return ParseSet(raw)
	}
	if len(raw) > MaxStoreBytes {
		return Set{}, fmt.Errorf("%w: the document is %d bytes, at most %d", ErrSyntax, len(raw), MaxStoreBytes)
	}
	var doc struct {
		Keys []struct {
			ID        *string  `json:"id"`
			SHA256    *string  `json:"sha256"`
			Audiences []string `json:"audiences"`
			Expires   *string  `json:"expires"`
			Path      bool     `json:"path"`
		} `json:"keys"`
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return Set{}, fmt.Errorf("%w: %s", ErrSyntax, jsonMessage(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Set{}, fmt.Errorf("%w: more than one JSON value", ErrSyntax)
	}
	if err := exactMembers(raw); err != nil {
		return Set{}, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	var s Set
	ids := map[string]int{}
	hashes := map[[sha256.Size]byte]int{}
	for i, k := range doc.Keys {
		at := fmt.Sprintf("keys[%d]", i)
		if k.ID == nil || !validID(*k.ID) {
			return Set{}, fmt.Errorf("%w: %s.id: required, 1 to 64 letters, digits, '.', '_' or '-'", ErrSyntax, at)
		}
		if !PathSafe(*k.ID) {
			return Set{}, fmt.Errorf("%w: %s.id: %s: %q is only dots, a path's dot segment (logs name a path key in its place: /k/[id]/…)", ErrSyntax, at, ReasonPathKeyCharacters, *k.ID)
		}
		at = fmt.Sprintf("keys[%d] (%s)", i, *k.ID)
		if j, dup := ids[*k.ID]; dup {
			return Set{}, fmt.Errorf("%w: %s: the id of keys[%d] too", ErrSyntax, at, j)
		}
		ids[*k.ID] = i
		if k.SHA256 == nil {
			return Set{}, fmt.Errorf("%w: %s.sha256: required: the lowercase hex SHA-256 of the key", ErrSyntax, at)
		}
		sum, err := parseHash(*k.SHA256)
		if err != nil {
			return Set{}, fmt.Errorf("%w: %s.sha256: %w", ErrSyntax, at, err)
		}
		if j, dup := hashes[sum]; dup {
			return Set{}, fmt.Errorf("%w: %s.sha256: the hash of keys[%d] too", ErrSyntax, at, j)
		}
		hashes[sum] = i
		key := Key{ID: *k.ID, Path: k.Path, hash: sum}
		for _, a := range k.Audiences {
			if a == audience.Wildcard {
				if len(k.Audiences) != 1 {
					return Set{}, fmt.Errorf("%w: %s.audiences: %q stands for every audience and comes alone", ErrSyntax, at, a)
				}
				key.All = true
				continue
			}
			if err := audience.ValidName(a); err != nil {
				return Set{}, fmt.Errorf("%w: %s.audiences: %w", ErrSyntax, at, err)
			}
		}
		if !key.All {
			key.Audiences = audience.NewSet(k.Audiences...)
		}
		if k.Expires != nil {
			if key.Expires, err = time.Parse(time.RFC3339, *k.Expires); err != nil {
				return Set{}, fmt.Errorf("%w: %s.expires: %q is not an RFC 3339 time such as 2027-01-01T00:00:00Z", ErrSyntax, at, clip(*k.Expires))
			}
		}
		s.keys = append(s.keys, key)
	}
	return s, nil
}

// storeMembers and keyMembers are the member names of a key store and of
// one of its keys, exactly as they are spelled.
var (
	storeMembers = []string{"keys"}
	keyMembers   = []string{"id", "sha256", "audiences", "expires", "path"}
)

// exactMembers refuses what encoding/json reads too kindly in a document
// it has decoded: a member name that appears twice at any level (it keeps
// the last, so {"audiences":["a"],"audiences":["b"]} would grant b, and
// one "expires" could hide another), found by jcs, which owns that fact,
// and a member name in another case ("AUDIENCES", "Keys"), which it
// matches to a field. Either makes the store unreadable, never a key with
// more than one reading.
func exactMembers(raw string) error {
	if _, err := jcs.Canonicalize([]byte(raw)); err != nil {
		return fmt.Errorf("not one reading of JSON (%s)", clip(strings.TrimPrefix(err.Error(), jcs.ErrInput.Error()+": ")))
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return errors.New("not a JSON object")
	}
	if err := knownMembers(doc, storeMembers, ""); err != nil {
		return err
	}
	var keys []map[string]json.RawMessage
	if k, ok := doc["keys"]; ok && string(k) != "null" {
		if err := json.Unmarshal(k, &keys); err != nil {
			return errors.New("keys: want an array of objects")
		}
	}
	for i, k := range keys {
		if err := knownMembers(k, keyMembers, fmt.Sprintf("keys[%d]: ", i)); err != nil {
			return err
		}
	}
	return nil
}

func knownMembers(obj map[string]json.RawMessage, names []string, at string) error {
	for name := range obj {
		if !slices.Contains(names, name) {
			return fmt.Errorf("%sunknown field %q (member names are exactly, in this case: %s)", at, clip(name), strings.Join(names, ", "))
		}
	}
	return nil
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// jsonMessage is a decoding error without the bytes it met: a syntax error
// says where, an unknown field names the field.
func jsonMessage(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON (at byte %d)", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s: want a %s", te.Field, te.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + clip(strings.TrimPrefix(err.Error(), "json: unknown field ")) +
			` (a key has id, sha256, audiences, expires and path)`
	}
	return "not valid JSON"
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// ParseSet parses a comma-separated list of hashes, each 64 lowercase hex
// digits: keys of every audience, named by KeyID. Whitespace around items
// is ignored and so are empty items, so "" is the empty set. An error names
// the item and character position at fault and never repeats the item: an
// operator who pasted a key instead of its hash must not find the key in a
// log.
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
			s.keys = append(s.keys, Key{ID: item[:8], All: true, hash: sum})
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

// Len returns the number of distinct keys.
func (s Set) Len() int { return len(s.keys) }

// Union returns the keys of s and o. A hash in both is the named key's
// (a store's entry, with its audiences and expiry) over a bare hash's, and
// s's over o's when both are named alike.
func (s Set) Union(o Set) Set {
	out := Set{keys: append([]Key(nil), s.keys...)}
	for _, k := range o.keys {
		i := out.index(k.hash)
		switch {
		case i < 0:
			out.keys = append(out.keys, k)
		case out.keys[i].bare() && !k.bare():
			out.keys[i] = k
		}
	}
	return out
}

// bare reports whether k came from a comma-separated list of hashes.
func (k Key) bare() bool {
	return k.All && k.ID == hex.EncodeToString(k.hash[:])[:8] && k.Expires.IsZero() && !k.Path
}

func (s Set) index(h [sha256.Size]byte) int {
	for i, k := range s.keys {
		if k.hash == h {
			return i
		}
	}
	return -1
}

// Lookup returns the configured key that key hashes to. It compares
// against every hash in constant time and does not stop at a match, so its
// timing depends on the size of the set only, never on which hash matched
// or how much of one did.
func (s Set) Lookup(key string) (Key, bool) {
	sum := sha256.Sum256([]byte(key))
	found := -1
	for i := range s.keys {
		eq := subtle.ConstantTimeCompare(sum[:], s.keys[i].hash[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return Key{}, false
	}
	return s.keys[found], true
}

// Contains reports whether key hashes to one of the set's keys (Lookup).
func (s Set) Contains(key string) bool {
	_, ok := s.Lookup(key)
	return ok
}

// Bound returns the key with the id whose configured hash is hash
// (lowercase hex), for a caller bound to both earlier (a session that must
// be checked against the store again). The id alone is not enough: two
// keys may share one (a bare hash's id is 32 bits of its hash, which a
// named key's id may spell too), and a key re-created under its id with
// another secret is another key.
func (s Set) Bound(id, hash string) (Key, bool) {
	sum, err := parseHash(hash)
	if err != nil {
		return Key{}, false
	}
	for _, k := range s.keys {
		if k.ID == id && k.hash == sum {
			return k, true
		}
	}
	return Key{}, false
}

// Named returns the configured hashes (lowercase hex) of the keys whose
// ID is id: usually one (a bare hash's id is 32 bits of its hash, which two
// may share). A browser session names its key by id and checks itself
// against these on every use, so removing a key's hash ends its sessions
// too.
func (s Set) Named(id string) []string {
	var out []string
	for _, k := range s.keys {
		if k.ID == id {
			out = append(out, hex.EncodeToString(k.hash[:]))
		}
	}
	return out
}
