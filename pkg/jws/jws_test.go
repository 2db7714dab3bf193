package jws

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/signing"
)

func TestSignAndVerifyDetached(t *testing.T) {
	key, _ := signing.Generate()
	payload := []byte(`{"entries":[],"specVersion":"1.0"}`)
	jws, err := SignDetached(context.Background(), key, Header{Kid: "did:web:example.com#k1"}, payload)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(jws, ".")
	if len(parts) != 3 || parts[1] != "" {
		t.Fatalf("not detached: %q", jws)
	}
	if sig, _ := base64.RawURLEncoding.DecodeString(parts[2]); len(sig) != 64 {
		t.Fatalf("the signature is %d bytes, want R||S of 64", len(sig))
	}
	h, k, err := VerifyDetached(jws, payload, key.Public())
	if err != nil || h.Kid != "did:web:example.com#k1" || h.Alg != "ES256" || !k.Equal(key.Public()) {
		t.Fatalf("VerifyDetached = %+v, %v", h, err)
	}
	other, _ := signing.Generate()
	if _, _, err := VerifyDetached(jws, payload, other.Public()); !errors.Is(err, ErrSignature) {
		t.Errorf("another key: %v", err)
	}
	if _, _, err := VerifyDetached(jws, append(payload, ' '), key.Public()); !errors.Is(err, ErrSignature) {
		t.Errorf("another payload: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	key, _ := signing.Generate()
	payload := []byte("p")
	good, _ := SignDetached(context.Background(), key, Header{}, payload)
	parts := strings.Split(good, ".")
	enc := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct {
		name, jws string
		want      error
	}{
		{"alg none", enc([]byte(`{"alg":"none"}`)) + ".." + parts[2], ErrFormat},
		{"alg HS256", enc([]byte(`{"alg":"HS256"}`)) + ".." + parts[2], ErrFormat},
		{"crit", enc([]byte(`{"alg":"ES256","crit":["b64"]}`)) + ".." + parts[2], ErrFormat},
		{"attached", parts[0] + "." + enc(payload) + "." + parts[2], ErrFormat},
		{"two parts", parts[0] + "." + parts[2], ErrFormat},
		{"a DER signature", parts[0] + ".." + enc(make([]byte, 70)), ErrFormat},
		{"another header, same signature", enc([]byte(`{"alg":"ES256","kid":"x"}`)) + ".." + parts[2], ErrSignature},
	} {
		if _, _, err := VerifyDetached(tc.jws, payload, key.Public()); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}
