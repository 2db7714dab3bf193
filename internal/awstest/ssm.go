package awstest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

// SecureString writes (or overwrites) an SSM SecureString, as an operator
// creates the API-key parameter, and deletes it when the test ends.
func SecureString(t testing.TB, cfg aws.Config, name, value string) {
	t.Helper()
	client := ssm.NewFromConfig(cfg)
	if _, err := client.PutParameter(context.Background(), &ssm.PutParameterInput{
		Name: aws.String(name), Value: aws.String(value), Type: ssmtypes.ParameterTypeSecureString, Overwrite: aws.Bool(true),
	}); err != nil {
		t.Fatalf("put the SecureString %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := client.DeleteParameter(context.Background(), &ssm.DeleteParameterInput{Name: aws.String(name)}); err != nil {
			t.Logf("cleanup: delete %s: %v", name, err)
		}
	})
}
