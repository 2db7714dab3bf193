//go:build integration

package kmssigner

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// TestEmulatorKMS signs through the SDK against the emulator's KMS (moto
// 5.2.1 in CI), over the real wire protocol, with a key created as the
// template creates it.
func TestEmulatorKMS(t *testing.T) {
	ctx := context.Background()
	client := kms.NewFromConfig(awstest.Config(t))
	keyID := awstest.SigningKey(t, client)
	s, err := New(ctx, client, keyID)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte(`DSSEv1 28 application/vnd.in-toto+json 13 {"hello":"!"}`)
	sig, err := s.Sign(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	// What moto returns for RAW: a DER signature over SHA-256(message), as
	// KMS does, so it verifies with the key's public half.
	if !signing.Verify(s.Public(), msg, sig) {
		t.Fatal("the emulator's signature does not verify")
	}
	if _, err := signing.DERToRS(sig); err != nil {
		t.Fatalf("the emulator's signature is not DER: %v", err)
	}

	// Longer messages go as their digest. moto 5.2.1 ignores MessageType
	// and hashes the digest once more, so its signature does not verify:
	// the signer must then refuse it rather than hand it out. Real KMS
	// signs the digest as given, and the signature verifies.
	long := make([]byte, MaxRawMessage+1)
	_, _ = rand.Read(long)
	sig, err = s.Sign(ctx, long)
	switch {
	case err == nil && !signing.Verify(s.Public(), long, sig):
		t.Fatal("a signature that does not verify was returned")
	case err != nil && !strings.Contains(err.Error(), "does not verify"):
		t.Fatalf("a long message: %v", err)
	case err != nil:
		t.Logf("the emulator's DIGEST signature was refused, as it should be for moto: %v", err)
	}

	// A key of another kind is refused when the signer is built.
	enc, err := client.CreateKey(ctx, &kms.CreateKeyInput{KeySpec: types.KeySpecSymmetricDefault, KeyUsage: types.KeyUsageTypeEncryptDecrypt})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, client, aws.ToString(enc.KeyMetadata.KeyId)); err == nil {
		t.Error("a symmetric encryption key is accepted as a signing key")
	}
	if _, err := New(ctx, client, "alias/skilldrop-no-such-key"); err == nil {
		t.Error("a missing key is accepted")
	}
}
