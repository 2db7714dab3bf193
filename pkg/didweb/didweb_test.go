package didweb

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"net/url"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/signing"
)

func TestID(t *testing.T) {
	for _, tc := range []struct{ origin, want string }{
		{"https://skills.example.com", "did:web:skills.example.com"},
		{"http://127.0.0.1:8080", "did:web:127.0.0.1%3A8080"},
		{"https://Example.COM", "did:web:example.com"},
	} {
		u, _ := url.Parse(tc.origin)
		if got := ID(u); got != tc.want {
			t.Errorf("ID(%s) = %s, want %s", tc.origin, got, tc.want)
		}
	}
}

func TestDocumentRoundTrip(t *testing.T) {
	a, _ := signing.Generate()
	b, _ := signing.Generate()
	origin, _ := url.Parse("https://skills.example.com")
	doc := New(origin, []*ecdsa.PublicKey{a.Public(), b.Public()})
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := Parse(raw, origin)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || !keys[KeyURL(origin, a.Public())].Equal(a.Public()) || !keys[KeyURL(origin, b.Public())].Equal(b.Public()) {
		t.Fatalf("Parse = %v", keys)
	}
	if doc.AssertionMethod[0] != KeyURL(origin, a.Public()) {
		t.Errorf("the first assertion method is %s, want the current key", doc.AssertionMethod[0])
	}
	other, _ := url.Parse("https://other.example.com")
	if _, err := Parse(raw, other); !errors.Is(err, ErrDocument) {
		t.Errorf("another origin's document: %v", err)
	}
	bad := New(origin, []*ecdsa.PublicKey{a.Public()})
	bad.VerificationMethod[0].PublicKeyJWK.Y = bad.VerificationMethod[0].PublicKeyJWK.X // not on the curve
	raw, _ = json.Marshal(bad)
	if _, err := Parse(raw, origin); !errors.Is(err, ErrDocument) {
		t.Errorf("a point off the curve: %v", err)
	}
}
