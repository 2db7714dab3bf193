// Package ssmparam reads the API key hash list from an SSM parameter, a
// SecureString the operator creates (CloudFormation cannot), for the
// Lambda function. It is an adapter: the caching and fail-closed policy are
// apikey.Cached's, so the request path never imports the AWS SDK.
package ssmparam

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/skilldrop/skilldrop/pkg/apikey"
)

// API is the part of *ssm.Client the source uses.
type API interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// ErrNotFound is wrapped by the error for a parameter that does not exist.
var ErrNotFound = errors.New("SSM parameter not found")

// Fetch returns a FetchFunc that reads parameter name with decryption (a
// SecureString's value is otherwise its ciphertext). A missing parameter is
// an error wrapping ErrNotFound that names it.
func Fetch(client API, name string) apikey.FetchFunc {
	return func(ctx context.Context) (string, error) {
		out, err := client.GetParameter(ctx, &ssm.GetParameterInput{
			Name:           aws.String(name),
			WithDecryption: aws.Bool(true),
		})
		var nf *types.ParameterNotFound
		switch {
		case errors.As(err, &nf):
			return "", fmt.Errorf("%w: %q (create it as a SecureString holding the key store)", ErrNotFound, name)
		case err != nil:
			return "", fmt.Errorf("get SSM parameter %q: %w", name, err)
		case out.Parameter == nil || out.Parameter.Value == nil:
			return "", fmt.Errorf("get SSM parameter %q: the answer holds no value", name)
		}
		return *out.Parameter.Value, nil
	}
}

// New returns the cached Source of parameter name (see apikey.Cached for
// the TTL and why a failed refresh fails closed).
func New(client API, name string, opts apikey.CacheOptions) (*apikey.Cached, error) {
	if name == "" {
		return nil, errors.New("ssmparam: empty parameter name")
	}
	return apikey.NewCached(fmt.Sprintf("SSM parameter %q", name), Fetch(client, name), opts), nil
}
