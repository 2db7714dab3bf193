package apikey

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/audience"
)

// Challenge is the WWW-Authenticate value every 401 answer carries.
const Challenge = `Bearer realm="skilldrop"`

// MaxHeaderBytes caps the Authorization value that is looked at. A key is
// a few dozen characters; anything longer is refused before it is hashed.
const MaxHeaderBytes = 1024

// Status classifies a request's credential.
type Status int

// The statuses.
const (
	// Anonymous: no Authorization header. The caller sees public entries only.
	Anonymous Status = iota
	// Valid: a Bearer token whose SHA-256 is configured.
	Valid
	// Invalid: an Authorization header that is not a configured Bearer key.
	// The server answers 401 with Challenge on every route, so that a wrong
	// key never learns whether a path exists.
	Invalid
)

func (s Status) String() string {
	switch s {
	case Anonymous:
		return "anonymous"
	case Valid:
		return "valid"
	case Invalid:
		return "invalid"
	}
	return "unknown"
}

// Reasons an Authorization header is Invalid. They are stable, meant for
// logs and metrics, and never shown to the caller (the 401 says nothing).
const (
	ReasonMultipleHeaders = "multiple_authorization_headers"
	ReasonTooLong         = "authorization_too_long"
	ReasonEmpty           = "empty_credentials"  // "" or a bare "Bearer"
	ReasonNotBearer       = "unsupported_scheme" // Basic, Token, a bare key…
	ReasonMalformed       = "malformed_token"    // whitespace or non-ASCII inside the token
	ReasonUnknownKey      = "unknown_key"        // well-formed, but its hash is not configured
	ReasonExpired         = "expired_key"        // configured, but past its expiry
	ReasonNotPathKey      = "not_a_path_key"     // presented in a path, but not configured for path use
	// ReasonPathKeyCharacters: presented in a path, but holding a character
	// a path segment cannot carry as it is (anything but the URL-unreserved
	// A-Z a-z 0-9 - . _ ~: a base64 key's '/', '+' or '='), so it cannot be
	// a path key; generate path keys with `openssl rand -hex 32`.
	ReasonPathKeyCharacters = "path_key_characters"
)

// UnknownKeyID is Result.KeyID for a well-formed token that is no
// configured key: logs say a key was refused without naming anything of it
// (not even a fingerprint: it may be another service's secret).
const UnknownKeyID = "unknown"

// Result is the outcome of checking a request's credential.
type Result struct {
	Status Status
	// KeyID names the presented key in logs whenever a well-formed token
	// was presented, valid or not: the configured key's id when it is one,
	// else UnknownKeyID (never anything derived from the token, which may be
	// a secret sent by mistake); "" otherwise.
	KeyID string
	// Reason says why the credential is Invalid; "" otherwise.
	Reason string
	// Caller is who the request is: audience.Anonymous unless Valid.
	Caller audience.Caller
	// Audiences are the configured key's (audience.Caller.AudienceNames)
	// whenever the key is known, valid or refused (expired, not a path
	// key), for logs and audit events; nil for a key that is not
	// configured.
	Audiences []string
}

// token extracts the Bearer token from a request's Authorization values.
// ok is false when there is none to check: the Result then says why.
//
// Accepted: exactly one header, "Bearer" in any case, one or more spaces or
// tabs, then a token of visible ASCII characters (RFC 9110 VCHAR: a superset
// of RFC 6750's b64token, so any key an operator generates works),
// optionally followed by whitespace. Everything else is Invalid, including
// an empty header: a client that sends a credential must send a good one.
func token(values []string) (tok string, r Result, ok bool) {
	switch {
	case len(values) == 0:
		return "", Result{Status: Anonymous}, false
	case len(values) > 1:
		return "", invalid(ReasonMultipleHeaders), false
	case len(values[0]) > MaxHeaderBytes:
		return "", invalid(ReasonTooLong), false
	}
	v := strings.Trim(values[0], " \t")
	if v == "" {
		return "", invalid(ReasonEmpty), false
	}
	scheme, rest, _ := strings.Cut(strings.ReplaceAll(v, "\t", " "), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", invalid(ReasonNotBearer), false
	}
	tok = strings.TrimLeft(rest, " ")
	if tok == "" {
		return "", invalid(ReasonEmpty), false
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c < 0x21 || c > 0x7e {
			return "", invalid(ReasonMalformed), false
		}
	}
	return tok, Result{}, true
}

func invalid(reason string) Result { return Result{Status: Invalid, Reason: reason} }

// Check classifies a request's Authorization header values (all of them, as
// http.Header.Values returns them) against set at now.
func Check(values []string, set Set, now time.Time) Result {
	tok, r, ok := token(values)
	if !ok {
		return r
	}
	return check(tok, set, now, false)
}

// check looks tok up in set; inPath requires a key configured for path use.
func check(tok string, set Set, now time.Time, inPath bool) Result {
	k, ok := set.Lookup(tok)
	switch {
	case !ok:
		return Result{Status: Invalid, KeyID: UnknownKeyID, Reason: ReasonUnknownKey}
	case k.Expired(now):
		return Result{Status: Invalid, KeyID: k.ID, Reason: ReasonExpired, Audiences: k.Caller().AudienceNames()}
	case inPath && !k.Path:
		return Result{Status: Invalid, KeyID: k.ID, Reason: ReasonNotPathKey, Audiences: k.Caller().AudienceNames()}
	}
	return Result{Status: Valid, KeyID: k.ID, Caller: k.Caller(), Audiences: k.Caller().AudienceNames()}
}

// Verifier checks requests against the keys of a Source.
type Verifier struct {
	src Source
	now func() time.Time
}

// NewVerifier returns a Verifier over src, judging expiry by now (nil:
// time.Now); a nil src configures no keys, so every presented key is
// Invalid and anonymous requests still work.
func NewVerifier(src Source, now func() time.Time) *Verifier {
	if now == nil {
		now = time.Now
	}
	return &Verifier{src: src, now: now}
}

// keys returns the store's keys, or an error wrapping ErrUnavailable.
func (v *Verifier) keys(ctx context.Context) (Set, error) {
	if v.src == nil {
		return Set{}, nil
	}
	set, err := v.src.Hashes(ctx)
	if err != nil && !errors.Is(err, ErrUnavailable) {
		err = fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return set, err
}

// VerifyPath classifies a key presented in a capability URL's path: Valid
// only for a configured, unexpired key marked for path use. A token that
// could not be a key is Invalid without consulting the store: empty or
// longer than MaxHeaderBytes (ReasonMalformed), or holding anything but
// the URL-unreserved letters, digits, '-', '.', '_' and '~', or only dots
// (a path's dot segment) (ReasonPathKeyCharacters).
func (v *Verifier) VerifyPath(ctx context.Context, tok string) (Result, error) {
	if tok == "" || len(tok) > MaxHeaderBytes {
		return invalid(ReasonMalformed), nil
	}
	if !PathSafe(tok) {
		return invalid(ReasonPathKeyCharacters), nil
	}
	set, err := v.keys(ctx)
	if err != nil {
		return Result{}, err
	}
	return check(tok, set, v.now(), true), nil
}

// PathSafe reports whether s can be one segment of a URL path as it is,
// the same for every client and proxy: not empty, only URL-unreserved
// characters (RFC 3986: A-Z a-z 0-9 - . _ ~), and not only dots ("." and
// ".." are dot segments, which clients resolve away). A path key must be;
// so must a key id, which logs write in the key's place.
func PathSafe(s string) bool {
	if s == "" || strings.Trim(s, ".") == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '.' && c != '_' && c != '~' {
			return false
		}
	}
	return true
}

// Bound returns the caller of the configured, unexpired key with the id
// and hash (Set.Bound), read from the store as it is now: for a caller
// that was bound to the key earlier (a session) and must still hold it.
// ok is false when the store holds no such key.
func (v *Verifier) Bound(ctx context.Context, id, hash string) (c audience.Caller, ok bool, err error) {
	set, err := v.keys(ctx)
	if err != nil {
		return audience.Anonymous, false, err
	}
	k, found := set.Bound(id, hash)
	if !found || k.Expired(v.now()) {
		return audience.Anonymous, false, nil
	}
	return k.Caller(), true, nil
}

// Verify classifies the request with headers h. The Source is consulted
// only when a well-formed Bearer token is presented, so anonymous and
// malformed requests never wait for (or fail with) the key store. An error
// wraps ErrUnavailable: the hashes could not be read and the request must
// be answered 503, neither served as anonymous nor refused as a wrong key.
func (v *Verifier) Verify(ctx context.Context, h http.Header) (Result, error) {
	tok, r, ok := token(h.Values("Authorization"))
	if !ok {
		return r, nil
	}
	set, err := v.keys(ctx)
	if err != nil {
		return Result{}, err
	}
	return check(tok, set, v.now(), false), nil
}

// Named is Set.Named over the Source's current set. An error wraps
// ErrUnavailable, as Verify's do.
func (v *Verifier) Named(ctx context.Context, id string) ([]string, error) {
	set, err := v.keys(ctx)
	if err != nil {
		return nil, err
	}
	return set.Named(id), nil
}
