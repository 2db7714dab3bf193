// Package jws signs and verifies detached JSON Web Signatures (RFC 7515,
// appendix F) with ES256 (RFC 7518 section 3.4): the compact form with an
// empty payload part, "<protected header>..<signature>", where the payload
// travels on its own. Only ES256 is made or accepted: a header that names
// another algorithm ("none", an HMAC, …) or any critical extension is
// refused, whatever the key.
package jws

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/signing"
)

// Algorithm is the one JWS algorithm used.
const Algorithm = "ES256"

// Header is the protected header.
type Header struct {
	Alg string `json:"alg"`
	// Kid names the key (a DID URL of the did:web document's verification method).
	Kid string `json:"kid,omitempty"`
	// Typ is the media type of the whole JWS, when the signer gives one.
	Typ string `json:"typ,omitempty"`
	// Crit lists extensions a verifier must understand; none are, so a
	// header with Crit is refused.
	Crit []string `json:"crit,omitempty"`
}

var b64 = base64.RawURLEncoding

// SignDetached signs payload with s and returns the detached compact JWS.
// The signer's DER signature is converted to JOSE's R||S form.
func SignDetached(ctx context.Context, s signing.Signer, h Header, payload []byte) (string, error) {
	h.Alg = Algorithm
	hb, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("jws: encode the header: %w", err)
	}
	protected := b64.EncodeToString(hb)
	der, err := s.Sign(ctx, signingInput(protected, payload))
	if err != nil {
		return "", fmt.Errorf("jws: sign: %w", err)
	}
	rs, err := signing.DERToRS(der)
	if err != nil {
		return "", fmt.Errorf("jws: %w", err)
	}
	return protected + ".." + b64.EncodeToString(rs), nil
}

func signingInput(protected string, payload []byte) []byte {
	out := make([]byte, 0, len(protected)+1+b64.EncodedLen(len(payload)))
	out = append(out, protected...)
	out = append(out, '.')
	return b64.AppendEncode(out, payload)
}

// Errors of VerifyDetached.
var (
	ErrFormat    = errors.New("jws: not a detached ES256 JWS")
	ErrSignature = errors.New("jws: the signature does not verify")
)

// MaxLen bounds the JWS VerifyDetached reads (a header and a 64-byte signature).
const MaxLen = 8 << 10

// VerifyDetached checks a detached compact JWS over payload with keys (any
// one may have signed it) and returns its protected header and the key that
// verified it.
func VerifyDetached(jws string, payload []byte, keys ...*ecdsa.PublicKey) (Header, *ecdsa.PublicKey, error) {
	if len(jws) > MaxLen {
		return Header{}, nil, fmt.Errorf("%w: %d bytes", ErrFormat, len(jws))
	}
	parts := strings.Split(jws, ".")
	if len(parts) != 3 || parts[1] != "" {
		return Header{}, nil, fmt.Errorf("%w: want <header>..<signature>", ErrFormat)
	}
	hb, err := b64.DecodeString(parts[0])
	if err != nil {
		return Header{}, nil, fmt.Errorf("%w: the header: %w", ErrFormat, err)
	}
	var h Header
	if err := json.Unmarshal(hb, &h); err != nil {
		return Header{}, nil, fmt.Errorf("%w: the header: %w", ErrFormat, err)
	}
	if h.Alg != Algorithm {
		return h, nil, fmt.Errorf("%w: alg %q, only %s is accepted", ErrFormat, h.Alg, Algorithm)
	}
	if len(h.Crit) > 0 {
		return h, nil, fmt.Errorf("%w: critical extensions %q are not understood", ErrFormat, h.Crit)
	}
	rs, err := b64.DecodeString(parts[2])
	if err != nil {
		return h, nil, fmt.Errorf("%w: the signature: %w", ErrFormat, err)
	}
	der, err := signing.RSToDER(rs)
	if err != nil {
		return h, nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	sum := sha256.Sum256(signingInput(parts[0], payload))
	for _, k := range keys {
		if ecdsa.VerifyASN1(k, sum[:], der) {
			return h, k, nil
		}
	}
	return h, nil, ErrSignature
}
