package awstest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// SigningKey creates an asymmetric ECC_NIST_P256 SIGN_VERIFY key, as
// template.yaml does, and schedules its deletion when the test ends; it
// returns the key's id.
func SigningKey(t testing.TB, client *kms.Client) string {
	t.Helper()
	ctx := context.Background()
	out, err := client.CreateKey(ctx, &kms.CreateKeyInput{
		KeySpec:     types.KeySpecEccNistP256,
		KeyUsage:    types.KeyUsageTypeSignVerify,
		Description: aws.String("skilldrop test " + t.Name()),
	})
	if err != nil {
		t.Fatalf("create a KMS signing key: %v", err)
	}
	id := aws.ToString(out.KeyMetadata.KeyId)
	t.Cleanup(func() {
		_, _ = client.ScheduleKeyDeletion(context.Background(), &kms.ScheduleKeyDeletionInput{KeyId: aws.String(id), PendingWindowInDays: aws.Int32(7)})
	})
	return id
}
