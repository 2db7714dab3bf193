// Package websession is the web catalog's sign-in: a browser that presented
// an API key once gets a signed session cookie that names the key by its id
// (never the key), expires within MaxAge, and is checked on every use
// against the key store as it is then, so revoking the key ends the session.
//
// A session is not a second credential: it is honoured by the web catalog's
// pages only (the server's concern), it cannot be minted without the
// server's secret, and it is bound to the key's hash, so another key that
// happens to share the id (the first 32 bits of a hash) does not keep it
// alive.
package websession

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxAge is the longest a session lasts, whatever the cookie says.
const MaxAge = 12 * time.Hour

// MinSecretBytes is the shortest secret a Signer takes.
const MinSecretBytes = 32

// Cookie names: the __Host- prefix (Secure, Path=/, no Domain: no other
// host can set or shadow it) wherever the cookie is Secure; a browser
// refuses that prefix on a plain-HTTP loopback origin, which gets
// LoopbackCookieName and its port ("skilldrop-session-8080"): browsers
// scope cookies by host, not port, so two local servers on 127.0.0.1
// would otherwise overwrite (and so sign out) each other's session.
const (
	SecureCookieName   = "__Host-skilldrop-session"
	LoopbackCookieName = "skilldrop-session"
)

// maxValueLen bounds what is parsed of a cookie.
const maxValueLen = 512

// version is the first field of every value, and part of what is signed.
const version = "v1"

// Errors Open returns. Each means "not signed in"; they differ for logs.
var (
	ErrMalformed = errors.New("session cookie is malformed")
	ErrForged    = errors.New("session cookie signature does not verify")
	ErrExpired   = errors.New("session has expired")
	ErrRevoked   = errors.New("session's key is no longer configured")
)

// Session is a verified session.
type Session struct {
	// KeyID names the key the browser signed in with (apikey.KeyID), and
	// KeyHash is that key's configured hash, the one the value verified
	// against: the key is the one with both (another may share the id).
	KeyID, KeyHash string
	// Issued and Expires bound it; Expires is at most MaxAge after Issued.
	Issued, Expires time.Time
}

// Signer issues and opens session values with one secret. Every instance
// of a deployment must share the secret: a cookie issued by one is opened
// by another.
type Signer struct {
	secret []byte
}

// NewSigner returns a Signer over secret, which must hold at least
// MinSecretBytes bytes of randomness.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretBytes {
		return nil, errors.New("websession: the secret must be at least 32 bytes")
	}
	return &Signer{secret: append([]byte(nil), secret...)}, nil
}

// Issue returns the cookie value of a session of the key named keyID whose
// configured hash is keyHash, starting now and lasting ttl (at most
// MaxAge), and when it expires.
func (s *Signer) Issue(keyID, keyHash string, now time.Time, ttl time.Duration) (value string, expires time.Time) {
	if ttl <= 0 || ttl > MaxAge {
		ttl = MaxAge
	}
	issued := now.Truncate(time.Second)
	expires = issued.Add(ttl)
	id := base64.RawURLEncoding.EncodeToString([]byte(keyID))
	is, ex := strconv.FormatInt(issued.Unix(), 10), strconv.FormatInt(expires.Unix(), 10)
	mac := s.mac(id, is, ex, keyHash)
	return strings.Join([]string{version, id, is, ex, base64.RawURLEncoding.EncodeToString(mac)}, "."), expires
}

// Open verifies a cookie value at now. hashes returns the hashes the key
// store holds now for a key id (apikey.Verifier.Named); a value whose
// signature matches none of them is refused, so a revoked key's sessions
// end as soon as the store drops it. An error from hashes is returned as
// it is: the store could not be read, which is not "signed out".
func (s *Signer) Open(value string, now time.Time, hashes func(keyID string) ([]string, error)) (Session, error) {
	if len(value) > maxValueLen {
		return Session{}, ErrMalformed
	}
	f := strings.Split(value, ".")
	if len(f) != 5 || f[0] != version {
		return Session{}, ErrMalformed
	}
	rawID, err := base64.RawURLEncoding.DecodeString(f[1])
	if err != nil || len(rawID) == 0 {
		return Session{}, ErrMalformed
	}
	issued, err1 := strconv.ParseInt(f[2], 10, 64)
	expires, err2 := strconv.ParseInt(f[3], 10, 64)
	mac, err3 := base64.RawURLEncoding.DecodeString(f[4])
	if err1 != nil || err2 != nil || err3 != nil || len(mac) != sha256.Size || expires <= issued ||
		expires-issued > int64(MaxAge/time.Second) {
		return Session{}, ErrMalformed
	}
	// Canonical spellings only: the signed strings must be the ones parsed.
	if strconv.FormatInt(issued, 10) != f[2] || strconv.FormatInt(expires, 10) != f[3] ||
		base64.RawURLEncoding.EncodeToString(rawID) != f[1] {
		return Session{}, ErrMalformed
	}
	keyID := string(rawID)
	candidates, err := hashes(keyID)
	if err != nil {
		return Session{}, err
	}
	hash := ""
	for _, h := range candidates {
		if hmac.Equal(mac, s.mac(f[1], f[2], f[3], h)) && hash == "" {
			hash = h
		}
	}
	switch {
	case len(candidates) == 0:
		return Session{}, ErrRevoked
	case hash == "":
		return Session{}, ErrForged
	}
	sess := Session{KeyID: keyID, KeyHash: hash, Issued: time.Unix(issued, 0).UTC(), Expires: time.Unix(expires, 0).UTC()}
	if !now.Before(sess.Expires) || now.Before(sess.Issued.Add(-time.Minute)) {
		return Session{}, ErrExpired
	}
	return sess, nil
}

// mac signs the value's fields and the key's hash, each with its length so
// no two field lists sign alike.
func (s *Signer) mac(fields ...string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("skilldrop web session " + version))
	for _, f := range fields {
		m.Write([]byte{0})
		m.Write([]byte(strconv.Itoa(len(f))))
		m.Write([]byte{0})
		m.Write([]byte(f))
	}
	return m.Sum(nil)
}

// Jar is where one origin keeps its session cookie: Secure on every origin
// but plain-HTTP loopback, where Port (the origin's, never "") names the
// cookie.
type Jar struct {
	Secure bool
	Port   string
}

// Name is the session cookie's name in the jar.
func (j Jar) Name() string {
	if j.Secure {
		return SecureCookieName
	}
	return LoopbackCookieName + "-" + j.Port
}

// Cookie is the Set-Cookie of a session value that expires at expires:
// HttpOnly (no script reads it), SameSite=Strict (no other site's page
// sends it), Secure unless the origin is plain-HTTP loopback, Path=/ as
// the __Host- prefix requires.
func (j Jar) Cookie(value string, expires time.Time, now time.Time) *http.Cookie {
	return &http.Cookie{
		Name: j.Name(), Value: value, Path: "/",
		MaxAge: max(int((expires.Sub(now)+time.Second-1)/time.Second), 1), Expires: expires.UTC(), // whole seconds, rounded up
		HttpOnly: true, Secure: j.Secure, SameSite: http.SameSiteStrictMode,
	}
}

// Clear is the Set-Cookie that deletes the session cookie.
func (j Jar) Clear() *http.Cookie {
	return &http.Cookie{
		Name: j.Name(), Value: "", Path: "/", MaxAge: -1, Expires: time.Unix(0, 0).UTC(),
		HttpOnly: true, Secure: j.Secure, SameSite: http.SameSiteStrictMode,
	}
}

// Value returns the session cookie's value in r, or "" when there is none
// (or more than one, which no browser of ours sends: a cookie planted
// beside ours is refused rather than guessed between).
func (j Jar) Value(r *http.Request) string {
	var found []string
	for _, c := range r.CookiesNamed(j.Name()) {
		found = append(found, c.Value)
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}
