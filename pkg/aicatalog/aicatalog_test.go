package aicatalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/jws"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

func params() Params {
	origin, _ := url.Parse("https://skills.example.com")
	return Params{
		Origin: origin, Revision: 12, UpdatedAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), KeyPath: "/.well-known/skilldrop/signing-key.pem",
		Feeds: []Feed{
			{Path: "/.well-known/agent-skills/index.json", Digest: digest.Of([]byte("root")), Skills: 3},
			{Path: "/.well-known/agent-skills/partner-a/index.json", Listing: "partner-a", Digest: digest.Of([]byte("a")), Skills: 1},
		},
	}
}

func TestSignAndVerify(t *testing.T) {
	key, _ := signing.Generate()
	p := params()
	b, err := Sign(context.Background(), key, p.Origin, Build(p, key.Public()))
	if err != nil {
		t.Fatal(err)
	}
	c, k, err := Verify(b, key.Public())
	if err != nil {
		t.Fatal(err)
	}
	if !k.Equal(key.Public()) || c.Revision() != 12 || len(c.Entries) != 2 || c.Host.Identifier != "did:web:skills.example.com" {
		t.Fatalf("Verify = %+v", c)
	}
	e := c.Entries[1]
	if e.Type != FeedType || e.URL != "https://skills.example.com/.well-known/agent-skills/partner-a/index.json" ||
		e.Extensions[Extension].Digest != digest.Of([]byte("a")) {
		t.Errorf("entry %+v", e)
	}

	// Whitespace and member order are not what is signed.
	var v any
	_ = json.Unmarshal(b, &v)
	compact, _ := json.Marshal(v)
	if _, _, err := Verify(compact, key.Public()); err != nil {
		t.Errorf("the compact re-encoding does not verify: %v", err)
	}

	other, _ := signing.Generate()
	if _, _, err := Verify(b, other.Public()); !errors.Is(err, jws.ErrSignature) {
		t.Errorf("another key: %v", err)
	}
	for name, edit := range map[string]func(string) string{
		"a feed's url": func(s string) string { return strings.Replace(s, "partner-a/index.json", "partner-b/index.json", 1) },
		"a feed's digest": func(s string) string {
			return strings.Replace(s, digest.Of([]byte("a")).String(), digest.Of([]byte("b")).String(), 1)
		},
		"the revision":     func(s string) string { return strings.Replace(s, `"revision": 12`, `"revision": 13`, 1) },
		"an added member":  func(s string) string { return strings.Replace(s, `"specVersion"`, `"x": 1, "specVersion"`, 1) },
		"an entry dropped": dropEntry,
	} {
		if _, _, err := Verify([]byte(edit(string(b))), key.Public()); !errors.Is(err, jws.ErrSignature) {
			t.Errorf("%s changed: %v", name, err)
		}
	}
	unsigned, _ := json.Marshal(Build(p, key.Public()))
	if _, _, err := Verify(unsigned, key.Public()); !errors.Is(err, ErrUnsigned) {
		t.Errorf("an unsigned catalog: %v", err)
	}
	if _, _, err := Verify(bytes.Repeat([]byte(" "), MaxBytes+1), key.Public()); !errors.Is(err, ErrFormat) {
		t.Errorf("a huge document: %v", err)
	}
}

func dropEntry(s string) string {
	var c Catalog
	_ = json.Unmarshal([]byte(s), &c)
	c.Entries = c.Entries[:1]
	b, _ := json.Marshal(c)
	return string(b)
}

// TestVerifyRefusesTextWithoutACanonicalForm: a served catalog whose text
// a decoder would read as the signed one (a member repeated, at the top or
// deeper, or a lone surrogate read as U+FFFD) is refused, not verified.
func TestVerifyRefusesTextWithoutACanonicalForm(t *testing.T) {
	key, _ := signing.Generate()
	p := params()
	p.Origin.Host = "skills.example.com"
	c := Build(p, key.Public())
	c.Host.DisplayName = "skills \ufffd"
	b, err := Sign(context.Background(), key, p.Origin, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Verify(b, key.Public()); err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for name, served := range map[string]string{
		"a top-level member twice":  strings.Replace(s, `"specVersion": "1.0"`, `"specVersion": "1.0", "specVersion": "1.0"`, 1),
		"the signature twice":       strings.Replace(s, `"specVersion"`, `"signature": "forged", "specVersion"`, 1),
		"an entries member twice":   strings.Replace(s, `"entries": [`, `"entries": [], "entries": [`, 1),
		"a nested member twice":     strings.Replace(s, "\"displayName\": \"skills \ufffd\"", "\"displayName\": \"x\", \"displayName\": \"skills \ufffd\"", 1),
		"a lone high surrogate":     strings.Replace(s, "skills \ufffd", `skills \ud800`, 1),
		"a lone low surrogate":      strings.Replace(s, "skills \ufffd", `skills \udfff`, 1),
		"a surrogate encoded UTF-8": strings.Replace(s, "skills \ufffd", "skills \xed\xa0\x80", 1),
	} {
		if served == s {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if _, _, err := Verify([]byte(served), key.Public()); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: Verify = %v, want ErrFormat", name, err)
		}
	}
}
