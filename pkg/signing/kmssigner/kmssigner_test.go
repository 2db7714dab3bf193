package kmssigner

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/skilldrop/skilldrop/pkg/signing"
)

// fakeKMS signs as KMS documents it: a RAW message is hashed with SHA-256,
// a DIGEST message is the hash. It records what it was asked.
type fakeKMS struct {
	priv    *ecdsa.PrivateKey
	spec    types.KeySpec
	usage   types.KeyUsageType
	corrupt bool
	calls   []types.MessageType
}

func newFake(t *testing.T) *fakeKMS {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeKMS{priv: priv, spec: types.KeySpecEccNistP256, usage: types.KeyUsageTypeSignVerify}
}

func (f *fakeKMS) GetPublicKey(_ context.Context, in *kms.GetPublicKeyInput, _ ...func(*kms.Options)) (*kms.GetPublicKeyOutput, error) {
	out := &kms.GetPublicKeyOutput{KeyId: in.KeyId, KeySpec: f.spec, KeyUsage: f.usage, PublicKey: signing.PublicKeyDER(&f.priv.PublicKey),
		SigningAlgorithms: []types.SigningAlgorithmSpec{types.SigningAlgorithmSpecEcdsaSha256}}
	if f.spec == types.KeySpecRsa2048 {
		k, _ := rsa.GenerateKey(rand.Reader, 1024)
		out.PublicKey, _ = x509.MarshalPKIXPublicKey(&k.PublicKey)
		out.SigningAlgorithms = []types.SigningAlgorithmSpec{types.SigningAlgorithmSpecRsassaPssSha256}
	}
	return out, nil
}

func (f *fakeKMS) Sign(ctx context.Context, in *kms.SignInput, _ ...func(*kms.Options)) (*kms.SignOutput, error) {
	f.calls = append(f.calls, in.MessageType)
	if in.SigningAlgorithm != types.SigningAlgorithmSpecEcdsaSha256 {
		return nil, errors.New("unexpected algorithm " + string(in.SigningAlgorithm))
	}
	var sum []byte
	switch in.MessageType {
	case types.MessageTypeRaw:
		if len(in.Message) > MaxRawMessage {
			return nil, errors.New("ValidationException: a RAW message is at most 4096 bytes")
		}
		s := sha256.Sum256(in.Message)
		sum = s[:]
	case types.MessageTypeDigest:
		if len(in.Message) != sha256.Size {
			return nil, errors.New("ValidationException: a digest of the wrong length")
		}
		sum = in.Message
	default:
		return nil, errors.New("no MessageType")
	}
	sig, err := ecdsa.SignASN1(rand.Reader, f.priv, sum)
	if f.corrupt {
		sig[len(sig)-1] ^= 1
	}
	return &kms.SignOutput{Signature: sig}, err
}

func TestSignRawAndDigest(t *testing.T) {
	f := newFake(t)
	s, err := New(context.Background(), f, "alias/skilldrop")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Public().Equal(&f.priv.PublicKey) {
		t.Fatal("the signer's public key is not the key's")
	}
	for _, n := range []int{1, MaxRawMessage, MaxRawMessage + 1, 1 << 20} {
		msg := make([]byte, n)
		_, _ = rand.Read(msg)
		sig, err := s.Sign(context.Background(), msg)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !signing.Verify(s.Public(), msg, sig) {
			t.Fatalf("%d bytes: the signature does not verify", n)
		}
		want := types.MessageTypeRaw
		if n > MaxRawMessage {
			want = types.MessageTypeDigest
		}
		if got := f.calls[len(f.calls)-1]; got != want {
			t.Errorf("%d bytes: sent as %s, want %s", n, got, want)
		}
	}
}

func TestRefusals(t *testing.T) {
	f := newFake(t)
	f.spec = types.KeySpecRsa2048
	if _, err := New(context.Background(), f, "k"); !errors.Is(err, signing.ErrKey) || !strings.Contains(err.Error(), "ECC_NIST_P256") {
		t.Errorf("an RSA key: %v", err)
	}
	f = newFake(t)
	f.usage = types.KeyUsageTypeEncryptDecrypt
	if _, err := New(context.Background(), f, "k"); !errors.Is(err, signing.ErrKey) {
		t.Errorf("an encryption key: %v", err)
	}
	if _, err := New(context.Background(), newFake(t), ""); err == nil {
		t.Error("no key id accepted")
	}
	f = newFake(t)
	s, err := New(context.Background(), f, "k")
	if err != nil {
		t.Fatal(err)
	}
	f.corrupt = true
	if _, err := s.Sign(context.Background(), []byte("m")); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("a signature that does not verify was returned: %v", err)
	}
}
