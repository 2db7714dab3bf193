package signing

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalSignsWhatVerifies(t *testing.T) {
	s, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("DSSEv1 28 application/vnd.in-toto+json 2 {}")
	sig, err := s.Sign(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if !Verify(s.Public(), msg, sig) {
		t.Fatal("a Local signature does not verify")
	}
	if Verify(s.Public(), append(msg, 'x'), sig) {
		t.Fatal("a signature verifies over another message")
	}
	other, _ := Generate()
	if Verify(other.Public(), msg, sig) {
		t.Fatal("a signature verifies with another key")
	}
}

func TestPrivateKeyPEM(t *testing.T) {
	s, _ := Generate()
	dir := t.TempDir()
	path := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(path, s.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPrivateKeyPEM(path)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Public().Equal(s.Public()) {
		t.Fatal("the key read back is another key")
	}

	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	pk8 := func(k any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	sec1, _ := x509.MarshalECPrivateKey(s.key)
	for _, tc := range []struct {
		name, pem, want string
	}{
		{"not PEM", "hello", "no PEM block"},
		{"SEC 1", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})), "pkcs8 -topk8"},
		{"P-384", string(pk8(p384)), "P-256"},
		{"RSA", string(pk8(rsaKey)), "ECDSA P-256"},
		{"garbage", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}})), "unusable key"},
	} {
		_, err := ParsePrivateKeyPEM([]byte(tc.pem))
		if !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrKey saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := LoadPrivateKeyPEM(filepath.Join(dir, "missing.pem")); err == nil {
		t.Error("a missing key file loads")
	}
}

func TestPublicForms(t *testing.T) {
	s, _ := Generate()
	p := PublicKeyPEM(s.Public())
	if !bytes.HasPrefix(p, []byte("-----BEGIN PUBLIC KEY-----\n")) {
		t.Fatalf("PublicKeyPEM = %q", p)
	}
	back, err := ParsePublicKeyPEM(p)
	if err != nil || !back.Equal(s.Public()) {
		t.Fatalf("ParsePublicKeyPEM = %v, %v", back, err)
	}
	block, _ := pem.Decode(p)
	sum := sha256.Sum256(block.Bytes)
	if got := KeyID(s.Public()); got != hex.EncodeToString(sum[:]) || len(got) != 64 {
		t.Errorf("KeyID = %q, want the hex SHA-256 of the DER SubjectPublicKeyInfo", got)
	}
	if _, err := ParsePublicKeyPEM(s.PrivateKeyPEM()); !errors.Is(err, ErrKey) {
		t.Errorf("a private key block parses as a public key: %v", err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&p384.PublicKey)
	if _, err := ParsePublicKeyDER(der); !errors.Is(err, ErrKey) {
		t.Errorf("a P-384 public key parses: %v", err)
	}
}

func TestDERAndRS(t *testing.T) {
	s, _ := Generate()
	msg := []byte("payload")
	for i := 0; i < 200; i++ { // short R or S (a leading zero byte) come up within a few hundred
		der, err := s.Sign(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := DERToRS(der)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 64 {
			t.Fatalf("R||S is %d bytes", len(rs))
		}
		sum := sha256.Sum256(msg)
		back, err := RSToDER(rs)
		if err != nil || !bytes.Equal(back, der) {
			t.Fatalf("RSToDER(DERToRS(der)) = %x, %v; want %x", back, err, der)
		}
		if !ecdsa.VerifyASN1(s.Public(), sum[:], back) {
			t.Fatal("the converted signature does not verify")
		}
	}
	for _, bad := range [][]byte{nil, {0x30, 0x00}, []byte("not der"), append(mustDER(t, s), 0)} {
		if _, err := DERToRS(bad); err == nil {
			t.Errorf("DERToRS(%x) accepted", bad)
		}
	}
	if _, err := RSToDER(make([]byte, 63)); err == nil {
		t.Error("RSToDER accepts 63 bytes")
	}
}

func mustDER(t *testing.T, s *Local) []byte {
	der, err := s.Sign(context.Background(), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	return der
}
