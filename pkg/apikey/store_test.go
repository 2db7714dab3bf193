package apikey_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/audience"
)

// store is a key store document with one entry per key.
func storeDoc(entries ...string) string {
	return `{"keys":[` + strings.Join(entries, ",") + `]}`
}

func entry(id, key string, extra string) string {
	return fmt.Sprintf(`{"id":%q,"sha256":%q%s}`, id, apikey.Hash(key), extra)
}

func TestParseReadsTheJSONStore(t *testing.T) {
	doc := storeDoc(
		entry("partner-a-ci", keyA, `,"audiences":["partner-b","partner-a","partner-a"],"expires":"2027-01-01T00:00:00Z","path":true`),
		entry("ops", keyB, `,"audiences":["*"]`),
		entry("plain", keyC, ``),
	)
	s, err := apikey.Parse("\n  " + doc)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := s.Lookup(keyA)
	if !ok || a.ID != "partner-a-ci" || a.All || !a.Audiences.Equal(audience.NewSet("partner-a", "partner-b")) || !a.Path ||
		!a.Expires.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("partner-a-ci = %+v, %v", a, ok)
	}
	if b, _ := s.Lookup(keyB); !b.All || b.Path || len(b.Audiences) != 0 {
		t.Errorf("ops = %+v, want every audience, header use only", b)
	}
	if c, _ := s.Lookup(keyC); c.All || len(c.Audiences) != 0 || !c.Expires.IsZero() {
		t.Errorf("plain = %+v, want no audiences (entries for any valid key), no expiry", c)
	}
	if got := a.Caller(); !got.Authenticated || got.KeyID != "partner-a-ci" || !got.Meets(audience.NewSet("partner-b")) {
		t.Errorf("Caller = %+v", got)
	}
	if _, ok := s.Bound("ops", apikey.Hash(keyB)); !ok {
		t.Error("Bound(ops, its hash) found nothing")
	}
	if _, ok := s.Bound("ops", apikey.Hash(keyA)); ok {
		t.Error("Bound(ops, another key's hash) found a key")
	}
}

func TestParseRefusesABadStoreWithoutEchoingAHash(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"no id", `{"keys":[{"sha256":"` + apikey.Hash(keyA) + `"}]}`, "keys[0].id: required"},
		{"bad id", storeDoc(entry("a b", keyA, "")), "keys[0].id"},
		{"duplicate id", storeDoc(entry("x", keyA, ""), entry("x", keyB, "")), "keys[1] (x): the id of keys[0]"},
		{"duplicate hash", storeDoc(entry("x", keyA, ""), entry("y", keyA, "")), "keys[1] (y).sha256: the hash of keys[0]"},
		{"no hash", `{"keys":[{"id":"x"}]}`, "keys[0] (x).sha256: required"},
		{"a pasted key", `{"keys":[{"id":"x","sha256":"` + keyA + `"}]}`, "keys[0] (x).sha256: 29 characters"},
		{"bad audience", storeDoc(entry("x", keyA, `,"audiences":["Partner"]`)), "keys[0] (x).audiences: audience \"Partner\""},
		{"wildcard with others", storeDoc(entry("x", keyA, `,"audiences":["*","a"]`)), "comes alone"},
		{"bad expiry", storeDoc(entry("x", keyA, `,"expires":"tomorrow"`)), "keys[0] (x).expires"},
		{"unknown field", storeDoc(entry("x", keyA, `,"audience":["a"]`)), `unknown field "audience"`},
		{"not JSON", `{"keys":[`, "not valid JSON"},
		{"two documents", storeDoc() + storeDoc(), "more than one JSON value"},
		{"wrong type", `{"keys":[{"id":1}]}`, "want a string"},
		{"a dot-segment id", storeDoc(entry("..", keyA, `,"path":true`)), `keys[0].id: path_key_characters: ".."`},
		{"a dot id", storeDoc(entry(".", keyA, "")), `keys[0].id: path_key_characters`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := apikey.Parse(c.doc)
			if err == nil || !errors.Is(err, apikey.ErrSyntax) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrSyntax containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), keyA) || strings.Contains(err.Error(), apikey.Hash(keyA)) {
				t.Errorf("error %q repeats a key or hash", err)
			}
		})
	}
}

func TestBareHashesAreKeysOfEveryAudience(t *testing.T) {
	s, err := apikey.Parse(apikey.Hash(keyA) + "," + apikey.Hash(keyB))
	if err != nil {
		t.Fatal(err)
	}
	k, ok := s.Lookup(keyB)
	if !ok || !k.All || k.ID != apikey.KeyID(keyB) || k.Path {
		t.Errorf("bare hash = %+v, want every audience, named by KeyID, header use only", k)
	}
}

func TestVerifierJudgesExpiryAndPathUse(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	s, err := apikey.Parse(storeDoc(
		entry("live", keyA, `,"audiences":["a"],"expires":"2026-06-01T00:00:01Z","path":true`),
		entry("expired", keyB, `,"expires":"2026-06-01T00:00:00Z","path":true`),
		entry("header-only", keyC, `,"audiences":["a"]`),
	))
	if err != nil {
		t.Fatal(err)
	}
	v := apikey.NewVerifier(s, func() time.Time { return now })
	ctx := context.Background()
	cases := []struct {
		name          string
		key           string
		path          bool
		status        apikey.Status
		reason, keyID string
	}{
		{"live header", keyA, false, apikey.Valid, "", "live"},
		{"live path", keyA, true, apikey.Valid, "", "live"},
		{"expired at the instant", keyB, false, apikey.Invalid, apikey.ReasonExpired, "expired"},
		{"expired in a path", keyB, true, apikey.Invalid, apikey.ReasonExpired, "expired"},
		{"header-only key in a path", keyC, true, apikey.Invalid, apikey.ReasonNotPathKey, "header-only"},
		{"header-only key in a header", keyC, false, apikey.Valid, "", "header-only"},
		{"unknown in a path", "sk-nope", true, apikey.Invalid, apikey.ReasonUnknownKey, apikey.UnknownKeyID},
		{"a path token with a slash", "a/b", true, apikey.Invalid, apikey.ReasonPathKeyCharacters, ""},
		{"a base64 key in a path", "q8+Zx/1w==", true, apikey.Invalid, apikey.ReasonPathKeyCharacters, ""},
		{"a dot segment in a path", "..", true, apikey.Invalid, apikey.ReasonPathKeyCharacters, ""},
		{"a path token past the header cap", strings.Repeat("k", apikey.MaxHeaderBytes+1), true, apikey.Invalid, apikey.ReasonMalformed, ""},
		{"an empty path token", "", true, apikey.Invalid, apikey.ReasonMalformed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r apikey.Result
			var err error
			if c.path {
				r, err = v.VerifyPath(ctx, c.key)
			} else {
				r, err = v.Verify(ctx, header("Bearer "+c.key))
			}
			if err != nil || r.Status != c.status || r.Reason != c.reason || r.KeyID != c.keyID {
				t.Fatalf("= %+v, %v; want %s %q %q", r, err, c.status, c.reason, c.keyID)
			}
			if (r.Caller.Authenticated) != (c.status == apikey.Valid) || r.Caller.Authenticated && r.Caller.KeyID != c.keyID {
				t.Errorf("caller %+v for status %s", r.Caller, r.Status)
			}
		})
	}
	if c, ok, err := v.Bound(ctx, "live", apikey.Hash(keyA)); err != nil || !ok || !c.Audiences.Equal(audience.NewSet("a")) {
		t.Errorf("Bound(live) = %+v, %v, %v", c, ok, err)
	}
	if _, ok, _ := v.Bound(ctx, "live", apikey.Hash(keyC)); ok {
		t.Error("Bound(live, another key's hash) names a caller")
	}
	if _, ok, _ := v.Bound(ctx, "live", "not a hash"); ok {
		t.Error("Bound(live, a malformed hash) names a caller")
	}
	if _, ok, _ := v.Bound(ctx, "expired", apikey.Hash(keyB)); ok {
		t.Error("Bound(expired) names a caller")
	}
	if _, ok, _ := v.Bound(ctx, "nobody", apikey.Hash(keyA)); ok {
		t.Error("Bound(nobody) names a caller")
	}
}

func TestUnionPrefersTheNamedKey(t *testing.T) {
	bare := mustSet(t, keyA, keyB)
	named, err := apikey.Parse(storeDoc(entry("partner", keyA, `,"audiences":["a"]`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []apikey.Set{bare.Union(named), named.Union(bare)} {
		if k, _ := u.Lookup(keyA); k.ID != "partner" || k.All {
			t.Errorf("keyA in the union = %+v, want the named key", k)
		}
		if k, _ := u.Lookup(keyB); !k.All || u.Len() != 2 {
			t.Errorf("keyB in the union = %+v (of %d), want the bare hash", k, u.Len())
		}
	}
}

func TestFileFetchReadsTheStoreAndRevocationShowsAfterTheRefresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	write := func(doc string) {
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(storeDoc(entry("a", keyA, "")))
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	v := apikey.NewVerifier(apikey.NewCached("key file", apikey.FileFetch(path), apikey.CacheOptions{TTL: 5 * time.Second, Now: clk.Now}), clk.Now)
	ctx := context.Background()
	if r, err := v.Verify(ctx, header("Bearer "+keyA)); err != nil || r.Status != apikey.Valid {
		t.Fatalf("before revocation: %+v, %v", r, err)
	}
	write(storeDoc())
	clk.Add(4 * time.Second)
	if r, _ := v.Verify(ctx, header("Bearer "+keyA)); r.Status != apikey.Valid {
		t.Fatalf("within the refresh: %+v, want the key still valid", r)
	}
	clk.Add(time.Second)
	if r, _ := v.Verify(ctx, header("Bearer "+keyA)); r.Status != apikey.Invalid {
		t.Fatalf("after the refresh: %+v, want the revoked key invalid", r)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	clk.Add(5 * time.Second)
	if _, err := v.Verify(ctx, header("Bearer "+keyA)); !errors.Is(err, apikey.ErrUnavailable) {
		t.Fatalf("a missing key file: %v, want ErrUnavailable (fail closed)", err)
	}
}

func TestParseRefresh(t *testing.T) {
	for in, want := range map[string]time.Duration{"": time.Minute, "1s": time.Second, "60s": time.Minute, "250ms": 0, "61s": 0, "x": 0} {
		got, err := apikey.ParseRefresh(in)
		if (err == nil) != (want != 0) || got != want {
			t.Errorf("ParseRefresh(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// TestABlankStoreIsRefusedNotTakenForNoKeys: a key store read as blank (a
// truncated file, a half-written save, a parameter pasted wrong) is an error
// at parse time, and on a refresh it fails closed (503) like any unreadable
// store, never a silent "no keys" nor a wider view; {"keys":[]} is how a
// store says it has none.
func TestABlankStoreIsRefusedNotTakenForNoKeys(t *testing.T) {
	for _, blank := range []string{"", " ", "\n\t \r\n", " , ,\n"} {
		if s, err := apikey.Parse(blank); !errors.Is(err, apikey.ErrSyntax) || !errors.Is(err, apikey.ErrEmpty) || s.Len() != 0 {
			t.Errorf("Parse(%q) = %d keys, %v; want ErrEmpty", blank, s.Len(), err)
		}
	}
	if s, err := apikey.Parse(storeDoc()); err != nil || s.Len() != 0 {
		t.Errorf(`Parse({"keys":[]}) = %d keys, %v; want no keys, no error`, s.Len(), err)
	}
	if s, err := apikey.ParseSet(""); err != nil || s.Len() != 0 {
		t.Errorf(`ParseSet("") = %d keys, %v; want no keys (an unset SKILLDROP_API_KEY_SHA256)`, s.Len(), err)
	}

	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte(storeDoc(entry("a", keyA, ""))), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	v := apikey.NewVerifier(apikey.NewCached("key file", apikey.FileFetch(path), apikey.CacheOptions{TTL: 5 * time.Second, Now: clk.Now}), clk.Now)
	ctx := context.Background()
	if r, err := v.Verify(ctx, header("Bearer "+keyA)); err != nil || r.Status != apikey.Valid {
		t.Fatalf("before: %+v, %v", r, err)
	}
	if err := os.WriteFile(path, []byte("  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk.Add(5 * time.Second)
	if r, err := v.Verify(ctx, header("Bearer "+keyA)); !errors.Is(err, apikey.ErrUnavailable) || !errors.Is(err, apikey.ErrEmpty) {
		t.Fatalf("a blanked key file: %+v, %v; want ErrUnavailable wrapping ErrEmpty (503, fail closed)", r, err)
	}
}

func TestPathSafe(t *testing.T) {
	for s, want := range map[string]bool{
		"sk-0123456789abcdef": true, "a.b_c-d~e": true, "...a": true,
		"": false, ".": false, "..": false, "...": false, "a/b": false, "a+b": false, "a=": false, "a%2Fb": false, "a b": false, "clé": false,
	} {
		if got := apikey.PathSafe(s); got != want {
			t.Errorf("PathSafe(%q) = %v, want %v", s, got, want)
		}
	}
}

// ambiguousStores are key stores encoding/json would read one way among
// several (it keeps a duplicate member's last value and matches member
// names in any case): each must be refused, never read as the kinder one.
func ambiguousStores() map[string]string {
	h := apikey.Hash(keyA)
	return map[string]string{
		"a duplicate audiences":     `{"keys":[{"id":"x","sha256":"` + h + `","audiences":["alpha"],"audiences":["beta"]}]}`,
		"a duplicate expires":       `{"keys":[{"id":"x","sha256":"` + h + `","expires":"2020-01-01T00:00:00Z","expires":"2099-01-01T00:00:00Z"}]}`,
		"expires in two cases":      `{"keys":[{"id":"x","sha256":"` + h + `","Expires":"2020-01-01T00:00:00Z","expires":"2099-01-01T00:00:00Z"}]}`,
		"a duplicate id":            `{"keys":[{"id":"x","id":"y","sha256":"` + h + `"}]}`,
		"a duplicate path":          `{"keys":[{"id":"x","sha256":"` + h + `","path":false,"path":true}]}`,
		"a duplicate keys":          `{"keys":[],"keys":[{"id":"x","sha256":"` + h + `"}]}`,
		"an upper-case AUDIENCES":   `{"keys":[{"id":"x","sha256":"` + h + `","AUDIENCES":["alpha"]}]}`,
		"a capitalised Keys and ID": `{"Keys":[{"ID":"x","sha256":"` + h + `"}]}`,
		"a capitalised Sha256":      `{"keys":[{"id":"x","Sha256":"` + h + `"}]}`,
	}
}

// TestParseRefusesAStoreWithMoreThanOneReading: duplicate member names at
// any level and member names in another case are syntax errors (the
// store is unreadable, 503), and the error repeats no hash.
func TestParseRefusesAStoreWithMoreThanOneReading(t *testing.T) {
	for name, doc := range ambiguousStores() {
		t.Run(name, func(t *testing.T) {
			s, err := apikey.Parse(doc)
			if !errors.Is(err, apikey.ErrSyntax) || s.Len() != 0 {
				t.Fatalf("Parse = %d keys, %v; want ErrSyntax", s.Len(), err)
			}
			if strings.Contains(err.Error(), keyA) || strings.Contains(err.Error(), apikey.Hash(keyA)) {
				t.Errorf("error %q repeats a key or hash", err)
			}
		})
	}
}

// TestAKeyFileWithMoreThanOneReadingFailsClosed: on a refresh, a key file
// rewritten with a duplicate or other-case member makes every key
// unavailable (503), not a key with the last duplicate's audiences or
// expiry.
func TestAKeyFileWithMoreThanOneReadingFailsClosed(t *testing.T) {
	for name, doc := range ambiguousStores() {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "keys.json")
			if err := os.WriteFile(path, []byte(storeDoc(entry("x", keyA, ""))), 0o600); err != nil {
				t.Fatal(err)
			}
			clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			v := apikey.NewVerifier(apikey.NewCached("key file", apikey.FileFetch(path), apikey.CacheOptions{TTL: 5 * time.Second, Now: clk.Now}), clk.Now)
			ctx := context.Background()
			if r, err := v.Verify(ctx, header("Bearer "+keyA)); err != nil || r.Status != apikey.Valid {
				t.Fatalf("before: %+v, %v", r, err)
			}
			if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			clk.Add(5 * time.Second)
			if r, err := v.Verify(ctx, header("Bearer "+keyA)); !errors.Is(err, apikey.ErrUnavailable) || !errors.Is(err, apikey.ErrSyntax) {
				t.Fatalf("after: %+v, %v; want ErrUnavailable wrapping ErrSyntax (503, fail closed)", r, err)
			}
		})
	}
}
