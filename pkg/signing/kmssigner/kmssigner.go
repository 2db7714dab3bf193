// Package kmssigner is the AWS KMS adapter of signing.Signer: an asymmetric
// ECC_NIST_P256 SIGN_VERIFY key whose private half never leaves KMS. The
// public key is read once (GetPublicKey), when the signer is built; each
// Sign is one KMS Sign call.
package kmssigner

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/skilldrop/skilldrop/pkg/signing"
)

// Client is the part of the KMS API the signer calls (*kms.Client).
type Client interface {
	Sign(ctx context.Context, in *kms.SignInput, opts ...func(*kms.Options)) (*kms.SignOutput, error)
	GetPublicKey(ctx context.Context, in *kms.GetPublicKeyInput, opts ...func(*kms.Options)) (*kms.GetPublicKeyOutput, error)
}

var _ Client = (*kms.Client)(nil)

// MaxRawMessage is the longest message KMS signs as it is (MessageType
// RAW); a longer one is hashed here and sent as its digest.
const MaxRawMessage = 4096

// Signer signs with a KMS key.
type Signer struct {
	client Client
	keyID  string
	pub    *ecdsa.PublicKey
}

var _ signing.Signer = (*Signer)(nil)

// New reads the key's public half and checks that it is a P-256 signing
// key, so a misconfigured key fails when the function starts rather than at
// its first publication.
func New(ctx context.Context, client Client, keyID string) (*Signer, error) {
	if keyID == "" {
		return nil, errors.New("kmssigner: a key id or ARN is required")
	}
	out, err := client.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(keyID)})
	if err != nil {
		return nil, fmt.Errorf("kms: read the public key of %s: %w", keyID, err)
	}
	// The key's curve is read from the public key itself: moto answers
	// the deprecated CustomerMasterKeySpec without KeySpec.
	pub, err := signing.ParsePublicKeyDER(out.PublicKey)
	if err != nil || out.KeyUsage != types.KeyUsageTypeSignVerify ||
		!slices.Contains(out.SigningAlgorithms, types.SigningAlgorithmSpecEcdsaSha256) {
		return nil, fmt.Errorf("kms: key %s (%s %s) is not an %s %s key that signs %s: %w", keyID,
			cmp.Or(out.KeySpec, types.KeySpec(out.CustomerMasterKeySpec)), out.KeyUsage, //nolint:staticcheck // moto answers only the deprecated field
			types.KeySpecEccNistP256, types.KeyUsageTypeSignVerify, types.SigningAlgorithmSpecEcdsaSha256, signing.ErrKey)
	}
	return &Signer{client: client, keyID: keyID, pub: pub}, nil
}

// Sign asks KMS for an ECDSA_SHA_256 signature over SHA-256(message). KMS
// hashes a RAW message itself; one longer than MaxRawMessage is sent as
// its digest (MessageType DIGEST). Either way KMS returns DER, which is
// checked against the public key before it is returned.
func (s *Signer) Sign(ctx context.Context, message []byte) ([]byte, error) {
	in := &kms.SignInput{
		KeyId:            aws.String(s.keyID),
		Message:          message,
		MessageType:      types.MessageTypeRaw,
		SigningAlgorithm: types.SigningAlgorithmSpecEcdsaSha256,
	}
	if len(message) > MaxRawMessage {
		sum := sha256.Sum256(message)
		in.Message, in.MessageType = sum[:], types.MessageTypeDigest
	}
	out, err := s.client.Sign(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("kms: sign with %s: %w", s.keyID, err)
	}
	// A signature that does not verify would publish a bundle nobody can
	// check: refuse it here, where the cause is known.
	if !signing.Verify(s.pub, message, out.Signature) {
		return nil, fmt.Errorf("kms: the signature %s returned does not verify with its public key (%s, %d-byte message)",
			s.keyID, in.MessageType, len(message))
	}
	return out.Signature, nil
}

// Public is the key's public half.
func (s *Signer) Public() *ecdsa.PublicKey { return s.pub }
