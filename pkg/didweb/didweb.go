// Package didweb is the operator's signing key as a did:web DID document
// (W3C DID Core; the did:web method): the origin's DID, did:web:<host>
// (a port written %3A), resolves to <origin>/.well-known/did.json, whose
// verification methods are the keys as JSON Web Keys (JsonWebKey2020).
// The AI Catalog's JWS names its key by one of them ("kid").
package didweb

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/signing"
)

// Contexts are the JSON-LD contexts of the document.
var Contexts = []string{"https://www.w3.org/ns/did/v1", "https://w3id.org/security/suites/jws-2020/v1"}

// MaxDocumentBytes bounds a document Parse reads.
const MaxDocumentBytes = 256 << 10

// ID is the DID of an origin (scheme://host[:port]).
func ID(origin *url.URL) string {
	return "did:web:" + strings.ReplaceAll(strings.ToLower(origin.Host), ":", "%3A")
}

// KeyURL is the DID URL of one key of an origin: its verification method.
func KeyURL(origin *url.URL, pub *ecdsa.PublicKey) string {
	return ID(origin) + "#" + signing.KeyID(pub)
}

// Document is a DID document.
type Document struct {
	Context            []string             `json:"@context"`
	ID                 string               `json:"id"`
	VerificationMethod []VerificationMethod `json:"verificationMethod"`
	AssertionMethod    []string             `json:"assertionMethod"`
}

// VerificationMethod is one key.
type VerificationMethod struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	Controller   string `json:"controller"`
	PublicKeyJWK JWK    `json:"publicKeyJwk"`
}

// JWK is a P-256 public key as a JSON Web Key (RFC 7517, 7518 section 6.2).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	Kid string `json:"kid,omitempty"`
	Alg string `json:"alg,omitempty"`
	Use string `json:"use,omitempty"`
}

// KeyJWK is pub as a JWK, named by its KeyID.
func KeyJWK(pub *ecdsa.PublicKey) JWK {
	b, err := pub.Bytes() // 0x04 || X || Y
	if err != nil {       // a P-256 key always encodes
		panic(err)
	}
	return JWK{Kty: "EC", Crv: "P-256", X: b64(b[1:33]), Y: b64(b[33:]), Kid: signing.KeyID(pub), Alg: "ES256", Use: "sig"}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Public is the key a JWK describes.
func (j JWK) Public() (*ecdsa.PublicKey, error) {
	if j.Kty != "EC" || j.Crv != "P-256" {
		return nil, fmt.Errorf("%w: a %s %s JWK, want EC P-256", signing.ErrKey, j.Kty, j.Crv)
	}
	x, errX := base64.RawURLEncoding.DecodeString(j.X)
	y, errY := base64.RawURLEncoding.DecodeString(j.Y)
	if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
		return nil, fmt.Errorf("%w: the JWK's x and y are not 32-byte base64url", signing.ErrKey)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil { // not a point of the curve
		return nil, fmt.Errorf("%w: %w", signing.ErrKey, err)
	}
	return pub, nil
}

// New is the document of an origin whose keys are keys, the current one
// first.
func New(origin *url.URL, keys []*ecdsa.PublicKey) Document {
	id := ID(origin)
	d := Document{Context: Contexts, ID: id, VerificationMethod: []VerificationMethod{}, AssertionMethod: []string{}}
	for _, k := range keys {
		kid := KeyURL(origin, k)
		d.VerificationMethod = append(d.VerificationMethod, VerificationMethod{ID: kid, Type: "JsonWebKey2020", Controller: id, PublicKeyJWK: KeyJWK(k)})
		d.AssertionMethod = append(d.AssertionMethod, kid)
	}
	return d
}

// ErrDocument is wrapped by Parse's errors.
var ErrDocument = errors.New("didweb: not a DID document of this origin")

// Parse reads the document served for origin and returns its keys by DID URL.
func Parse(b []byte, origin *url.URL) (map[string]*ecdsa.PublicKey, error) {
	if len(b) > MaxDocumentBytes {
		return nil, fmt.Errorf("%w: %d bytes", ErrDocument, len(b))
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDocument, err)
	}
	if d.ID != ID(origin) {
		return nil, fmt.Errorf("%w: its id is %q, want %q", ErrDocument, d.ID, ID(origin))
	}
	keys := map[string]*ecdsa.PublicKey{}
	for _, vm := range d.VerificationMethod {
		if !strings.HasPrefix(vm.ID, d.ID+"#") {
			return nil, fmt.Errorf("%w: verification method %q is not the DID's", ErrDocument, vm.ID)
		}
		k, err := vm.PublicKeyJWK.Public()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrDocument, vm.ID, err)
		}
		keys[vm.ID] = k
	}
	return keys, nil
}
