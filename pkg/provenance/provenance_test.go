package provenance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

func TestPAE(t *testing.T) {
	// The DSSE specification's own example.
	got := string(PAE("http://example.com/HelloWorld", []byte("hello world")))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; got != want {
		t.Errorf("PAE = %q, want %q", got, want)
	}
}

func publication() Publication {
	return Publication{
		Name: "pdf-tools", Version: "1.0", Kind: "skill", Type: "archive", SourceKey: "skills/pdf-tools.zip",
		CatalogRevision: 7, PublishedAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.FixedZone("x", 3600)),
	}
}

func TestSignAndVerify(t *testing.T) {
	key, _ := signing.Generate()
	d := digest.Of([]byte("the artifact"))
	b, err := Sign(context.Background(), key, d, publication())
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil || raw["mediaType"] != BundleMediaType {
		t.Fatalf("bundle %s: %v", b, err)
	}
	v, err := Verify(b, key.Public())
	if err != nil {
		t.Fatal(err)
	}
	want := publication()
	want.PublishedAt = want.PublishedAt.UTC()
	if v.Subject != d || v.Publication != want || v.KeyID != signing.KeyID(key.Public()) {
		t.Errorf("Verify = %+v, want subject %s, %+v", v, d, want)
	}

	other, _ := signing.Generate()
	if _, err := Verify(b, other.Public()); !errors.Is(err, ErrSignature) {
		t.Errorf("another key: %v", err)
	}
	if v, err := Verify(b, other.Public(), key.Public()); err != nil || v.KeyID != signing.KeyID(key.Public()) {
		t.Errorf("two keys, one of them the signer: %v, %v", v, err)
	}

	withScan := publication()
	withScan.Scan = &Scan{Verdict: "clean", Engine: "builtin@3"}
	b2, err := Sign(context.Background(), key, d, withScan)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := Verify(b2, key.Public()); err != nil || v.Publication.Scan == nil || *v.Publication.Scan != *withScan.Scan {
		t.Errorf("the scan verdict is not recorded: %+v, %v", v, err)
	}
	if strings.Contains(string(decodePayload(t, b)), "scan") {
		t.Error("a publication without a scan names one")
	}
}

func decodePayload(t *testing.T, b []byte) []byte {
	var bu bundle
	if err := json.Unmarshal(b, &bu); err != nil {
		t.Fatal(err)
	}
	p, err := base64.StdEncoding.DecodeString(bu.DSSEEnvelope.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTampered(t *testing.T) {
	key, _ := signing.Generate()
	b, err := Sign(context.Background(), key, digest.Of([]byte("x")), publication())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*bundle)) []byte {
		var bu bundle
		if err := json.Unmarshal(b, &bu); err != nil {
			t.Fatal(err)
		}
		f(&bu)
		out, _ := json.Marshal(bu)
		return out
	}
	reencode := func(f func(*statement)) func(*bundle) {
		return func(bu *bundle) {
			p, _ := base64.StdEncoding.DecodeString(bu.DSSEEnvelope.Payload)
			var st statement
			_ = json.Unmarshal(p, &st)
			f(&st)
			p, _ = json.Marshal(st)
			bu.DSSEEnvelope.Payload = base64.StdEncoding.EncodeToString(p)
		}
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"another subject", edit(reencode(func(s *statement) { s.Subject[0].Digest["sha256"] = digest.Of([]byte("y")).Hex() })), ErrSignature},
		{"another version", edit(reencode(func(s *statement) { s.Predicate.Version = "2.0" })), ErrSignature},
		{"another payload type", edit(func(bu *bundle) { bu.DSSEEnvelope.PayloadType = "text/plain" }), ErrFormat},
		{"another media type", edit(func(bu *bundle) { bu.MediaType = "application/vnd.dev.sigstore.bundle.v0.2+json" }), ErrFormat},
		{"a flipped signature", edit(func(bu *bundle) {
			s, _ := base64.StdEncoding.DecodeString(bu.DSSEEnvelope.Signatures[0].Sig)
			s[len(s)-1] ^= 1
			bu.DSSEEnvelope.Signatures[0].Sig = base64.StdEncoding.EncodeToString(s)
		}), ErrSignature},
		{"no signature", edit(func(bu *bundle) { bu.DSSEEnvelope.Signatures = nil }), ErrFormat},
		{"no envelope", edit(func(bu *bundle) { bu.DSSEEnvelope = nil }), ErrFormat},
		{"not JSON", []byte("{"), ErrFormat},
		{"too large", make([]byte, MaxBundleBytes+1), ErrFormat},
	} {
		if _, err := Verify(tc.b, key.Public()); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := Sign(context.Background(), key, digest.Digest{}, publication()); err == nil {
		t.Error("a bundle without a subject digest was signed")
	}
}
