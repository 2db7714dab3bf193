// Package signing is the operator's signing key as the rest of skilldrop
// sees it: a Signer that turns a message into an ECDSA P-256 signature over
// its SHA-256 digest, ASN.1 DER-encoded (what AWS KMS returns, what DSSE
// and cosign expect), with the public key beside it. The key itself stays
// where it lives: in KMS (package kmssigner) or in a local PKCS#8 PEM file
// (Local), for `skilldrop serve` and the tests.
//
// It also owns the key's public forms: the PEM of its SubjectPublicKeyInfo,
// which cosign's --key reads, and KeyID, the fingerprint every signature
// names its key by, and the conversion between DER signatures and the
// fixed-size R||S form JOSE (ES256) wants.
package signing

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
)

// Signer signs messages with one ECDSA P-256 key. Sign returns the
// signature over SHA-256(message) as ASN.1 DER; it may be slow (a network
// call) and is made only where a publication is made, never on the request
// path.
type Signer interface {
	Sign(ctx context.Context, message []byte) ([]byte, error)
	// Public is the key's public half.
	Public() *ecdsa.PublicKey
}

// PublicKeyMediaType is the media type of a public key's PEM, as it is
// stored and served.
const PublicKeyMediaType = "application/x-pem-file"

// ErrKey is wrapped by every error about a key that is not a P-256 key in
// the expected encoding.
var ErrKey = errors.New("signing: unusable key")

// Local is a Signer over a private key held in memory.
type Local struct {
	key *ecdsa.PrivateKey
}

var _ Signer = (*Local)(nil)

// NewLocal returns a Signer for a P-256 private key.
func NewLocal(key *ecdsa.PrivateKey) (*Local, error) {
	if key == nil || key.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: want an ECDSA P-256 private key", ErrKey)
	}
	return &Local{key: key}, nil
}

// Generate returns a Local signer over a fresh P-256 key (for tests).
func Generate() (*Local, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("signing: generate key: %w", err)
	}
	return &Local{key: k}, nil
}

// ParsePrivateKeyPEM reads a PKCS#8 "PRIVATE KEY" PEM block holding a P-256
// key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256
// writes one).
func ParsePrivateKeyPEM(b []byte) (*Local, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrKey)
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%w: a %q PEM block, want a PKCS#8 \"PRIVATE KEY\" (convert with openssl pkcs8 -topk8 -nocrypt)", ErrKey, block.Type)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: a %T, want an ECDSA P-256 key", ErrKey, k)
	}
	return NewLocal(ec)
}

// LoadPrivateKeyPEM reads ParsePrivateKeyPEM's form from a file.
func LoadPrivateKeyPEM(path string) (*Local, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	s, err := ParsePrivateKeyPEM(b)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return s, nil
}

// PrivateKeyPEM is the key as a PKCS#8 PEM block (for tests that write a
// key file).
func (l *Local) PrivateKeyPEM() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(l.key)
	if err != nil { // a P-256 key always marshals
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// Sign signs SHA-256(message).
func (l *Local) Sign(_ context.Context, message []byte) ([]byte, error) {
	sum := sha256.Sum256(message)
	return ecdsa.SignASN1(rand.Reader, l.key, sum[:])
}

// Public is the key's public half.
func (l *Local) Public() *ecdsa.PublicKey { return &l.key.PublicKey }

// ParsePublicKeyDER reads a DER SubjectPublicKeyInfo holding a P-256 key
// (what KMS GetPublicKey returns).
func ParsePublicKeyDER(der []byte) (*ecdsa.PublicKey, error) {
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	ec, ok := k.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: a %T, want an ECDSA P-256 public key", ErrKey, k)
	}
	return ec, nil
}

// ParsePublicKeyPEM reads a "PUBLIC KEY" PEM block (PublicKeyPEM's form).
func ParsePublicKeyPEM(b []byte) (*ecdsa.PublicKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%w: want a \"PUBLIC KEY\" PEM block", ErrKey)
	}
	return ParsePublicKeyDER(block.Bytes)
}

// PublicKeyDER is the key's DER SubjectPublicKeyInfo.
func PublicKeyDER(pub *ecdsa.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil { // a P-256 key always marshals
		panic(err)
	}
	return der
}

// PublicKeyPEM is the key as a "PUBLIC KEY" PEM block: what cosign's --key
// and `skilldrop verify --key` read.
func PublicKeyPEM(pub *ecdsa.PublicKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: PublicKeyDER(pub)})
}

// KeyID is the key's fingerprint: the lowercase hex SHA-256 of its DER
// SubjectPublicKeyInfo (`openssl pkey -pubin -outform DER | sha256sum`).
func KeyID(pub *ecdsa.PublicKey) string {
	sum := sha256.Sum256(PublicKeyDER(pub))
	return hex.EncodeToString(sum[:])
}

// Verify checks a DER signature over SHA-256(message).
func Verify(pub *ecdsa.PublicKey, message, sig []byte) bool {
	sum := sha256.Sum256(message)
	return ecdsa.VerifyASN1(pub, sum[:], sig)
}

// p256Size is the byte length of R and S in JOSE's form for P-256.
const p256Size = 32

// ecdsaSig is the ASN.1 form of an ECDSA signature.
type ecdsaSig struct {
	R, S *big.Int
}

// DERToRS converts a DER ECDSA P-256 signature into JOSE's form: R and S,
// each left-padded to 32 bytes (RFC 7518 section 3.4).
func DERToRS(der []byte) ([]byte, error) {
	var sig ecdsaSig
	rest, err := asn1.Unmarshal(der, &sig)
	if err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("signing: not a DER ECDSA signature")
	}
	if sig.R == nil || sig.S == nil || sig.R.Sign() <= 0 || sig.S.Sign() <= 0 ||
		sig.R.BitLen() > 8*p256Size || sig.S.BitLen() > 8*p256Size {
		return nil, fmt.Errorf("signing: an ECDSA signature out of P-256's range")
	}
	out := make([]byte, 2*p256Size)
	sig.R.FillBytes(out[:p256Size])
	sig.S.FillBytes(out[p256Size:])
	return out, nil
}

// RSToDER converts JOSE's R||S form of a P-256 signature back to DER.
func RSToDER(rs []byte) ([]byte, error) {
	if len(rs) != 2*p256Size {
		return nil, fmt.Errorf("signing: an ES256 signature is %d bytes, want %d", len(rs), 2*p256Size)
	}
	return asn1.Marshal(ecdsaSig{R: new(big.Int).SetBytes(rs[:p256Size]), S: new(big.Int).SetBytes(rs[p256Size:])})
}
