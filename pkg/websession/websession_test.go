package websession_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/websession"
)

const key = "sk-web-session-test-key-0123456789"

var (
	secret = []byte("0123456789abcdef0123456789abcdef")
	t0     = time.Date(2026, 9, 9, 9, 0, 0, 0, time.UTC)
)

func signer(t *testing.T, s []byte) *websession.Signer {
	t.Helper()
	sg, err := websession.NewSigner(s)
	if err != nil {
		t.Fatal(err)
	}
	return sg
}

// store returns the hashes a key store holding keys has for an id.
func store(keys ...string) func(string) ([]string, error) {
	return func(id string) ([]string, error) {
		var out []string
		for _, k := range keys {
			if apikey.KeyID(k) == id {
				out = append(out, apikey.Hash(k))
			}
		}
		return out, nil
	}
}

func TestIssuedSessionOpensUntilItExpires(t *testing.T) {
	s := signer(t, secret)
	v, exp := s.Issue(apikey.KeyID(key), apikey.Hash(key), t0, time.Hour)
	if !exp.Equal(t0.Add(time.Hour)) {
		t.Fatalf("expires %v", exp)
	}
	if strings.Contains(v, key) || strings.Contains(v, apikey.Hash(key)) {
		t.Fatalf("the value %q carries the key or its hash", v)
	}
	sess, err := s.Open(v, t0.Add(59*time.Minute), store(key))
	if err != nil || sess.KeyID != apikey.KeyID(key) || !sess.Expires.Equal(exp) {
		t.Fatalf("Open = %+v, %v", sess, err)
	}
	if _, err := s.Open(v, t0.Add(time.Hour), store(key)); !errors.Is(err, websession.ErrExpired) {
		t.Errorf("at expiry: %v; want ErrExpired", err)
	}
	if _, err := s.Open(v, t0.Add(-time.Hour), store(key)); !errors.Is(err, websession.ErrExpired) {
		t.Errorf("issued in the future: %v; want ErrExpired", err)
	}
}

func TestSessionsLastAtMostMaxAge(t *testing.T) {
	s := signer(t, secret)
	for _, ttl := range []time.Duration{0, -time.Second, 13 * time.Hour, 1000 * time.Hour} {
		if _, exp := s.Issue("id", "h", t0, ttl); exp.Sub(t0) != websession.MaxAge {
			t.Errorf("ttl %v: lasts %v; want MaxAge", ttl, exp.Sub(t0))
		}
	}
}

func TestRevokingTheKeyEndsItsSessions(t *testing.T) {
	s := signer(t, secret)
	v, _ := s.Issue(apikey.KeyID(key), apikey.Hash(key), t0, time.Hour)
	if _, err := s.Open(v, t0, store("another-key")); !errors.Is(err, websession.ErrRevoked) {
		t.Errorf("key gone: %v; want ErrRevoked", err)
	}
	// Another key with the same id (a 32-bit collision) does not keep it alive.
	collide := func(string) ([]string, error) { return []string{apikey.Hash("another-key")}, nil }
	if _, err := s.Open(v, t0, collide); !errors.Is(err, websession.ErrForged) {
		t.Errorf("same id, other hash: %v; want ErrForged", err)
	}
	// Beside it, the session is bound to its own key's hash, which Open
	// names, so the caller is looked up by both and not by the id alone.
	both := func(string) ([]string, error) { return []string{apikey.Hash("another-key"), apikey.Hash(key)}, nil }
	if sess, err := s.Open(v, t0, both); err != nil || sess.KeyHash != apikey.Hash(key) {
		t.Errorf("same id, both hashes: %+v, %v; want the session bound to its own key's hash", sess, err)
	}
	down := errors.New("key store down")
	if _, err := s.Open(v, t0, func(string) ([]string, error) { return nil, down }); !errors.Is(err, down) {
		t.Errorf("store down: %v; want its error", err)
	}
}

func TestForgedAndMalformedValuesAreRefused(t *testing.T) {
	s := signer(t, secret)
	v, _ := s.Issue(apikey.KeyID(key), apikey.Hash(key), t0, time.Hour)
	f := strings.Split(v, ".")
	other, _ := signer(t, []byte(strings.Repeat("x", 32))).Issue(apikey.KeyID(key), apikey.Hash(key), t0, time.Hour)
	longer := strings.Join([]string{f[0], f[1], f[2], "9999999999", f[4]}, ".")
	for name, bad := range map[string]string{
		"other secret":       other,
		"expiry pushed back": strings.Join([]string{f[0], f[1], f[2], strconv.FormatInt(t0.Add(2*time.Hour).Unix(), 10), f[4]}, "."),
		"beyond MaxAge":      longer,
		"leading zero":       strings.Join([]string{f[0], f[1], "0" + f[2], f[3], f[4]}, "."),
		"mac flipped":        strings.Join([]string{f[0], f[1], f[2], f[3], flip(f[4])}, "."),
		"no mac":             strings.Join(f[:4], "."),
		"version":            "v2." + strings.Join(f[1:], "."),
		"empty":              "",
		"huge":               strings.Repeat("a", 4096),
		"id not base64":      strings.Join([]string{f[0], "!!", f[2], f[3], f[4]}, "."),
	} {
		if _, err := s.Open(bad, t0, store(key)); err == nil {
			t.Errorf("%s: %q opened", name, bad)
		}
	}
	if _, err := websession.NewSigner([]byte("short")); err == nil {
		t.Error("a short secret was taken")
	}
}

func flip(s string) string {
	b := []byte(s)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

func TestCookieAttributes(t *testing.T) {
	exp := t0.Add(websession.MaxAge)
	for _, secure := range []bool{true, false} {
		jar := websession.Jar{Secure: secure, Port: "8080"}
		w := httptest.NewRecorder()
		http.SetCookie(w, jar.Cookie("v", exp, t0))
		line := w.Header().Get("Set-Cookie")
		for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"} {
			if !strings.Contains(line, want) {
				t.Errorf("secure=%v: %q lacks %s", secure, line, want)
			}
		}
		if strings.Contains(line, "Secure") != secure || strings.HasPrefix(line, "__Host-") != secure ||
			strings.HasPrefix(line, "skilldrop-session-8080=") == secure {
			t.Errorf("secure=%v: %q", secure, line)
		}
		if strings.Contains(line, "Domain") {
			t.Errorf("%q names a domain", line)
		}
		w = httptest.NewRecorder()
		http.SetCookie(w, jar.Clear())
		if line := w.Header().Get("Set-Cookie"); !strings.Contains(line, "Max-Age=0") {
			t.Errorf("clear: %q", line)
		}
	}
}

func TestValueTakesExactlyOneCookie(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/catalog/", nil)
	secure, loopback := websession.Jar{Secure: true, Port: "443"}, websession.Jar{Port: "8080"}
	if secure.Value(r) != "" {
		t.Error("no cookie: want none")
	}
	r.AddCookie(&http.Cookie{Name: websession.SecureCookieName, Value: "a"})
	if got := secure.Value(r); got != "a" {
		t.Errorf("one cookie: %q", got)
	}
	if got := loopback.Value(r); got != "" {
		t.Errorf("the loopback name read the secure cookie: %q", got)
	}
	// Loopback servers on two ports keep two cookies.
	r.AddCookie(&http.Cookie{Name: "skilldrop-session-8080", Value: "p8080"})
	r.AddCookie(&http.Cookie{Name: "skilldrop-session-8081", Value: "p8081"})
	if a, b := loopback.Value(r), (websession.Jar{Port: "8081"}).Value(r); a != "p8080" || b != "p8081" {
		t.Errorf("ports 8080 and 8081 read %q and %q", a, b)
	}
	r.AddCookie(&http.Cookie{Name: websession.SecureCookieName, Value: "b"})
	if got := secure.Value(r); got != "" {
		t.Errorf("two cookies: %q; want none", got)
	}
}
