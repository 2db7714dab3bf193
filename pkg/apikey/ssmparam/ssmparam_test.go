package ssmparam_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/apikey/ssmparam"
)

// fakeSSM answers GetParameter with out or err and records the input.
type fakeSSM struct {
	out *ssm.GetParameterOutput
	err error
	in  *ssm.GetParameterInput
}

func (f *fakeSSM) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	f.in = in
	return f.out, f.err
}

func TestFetch(t *testing.T) {
	h := apikey.Hash("k")
	cases := []struct {
		name    string
		fake    *fakeSSM
		want    string
		wantErr string
		isNF    bool
	}{
		{"value of the parameter", &fakeSSM{out: &ssm.GetParameterOutput{Parameter: &types.Parameter{Value: aws.String(h)}}}, h, "", false},
		{"missing parameter names it", &fakeSSM{err: &types.ParameterNotFound{Message: aws.String("nope")}}, "", `"/skilldrop/api-keys"`, true},
		{"other errors are wrapped with the name", &fakeSSM{err: errors.New("throttled")}, "", `get SSM parameter "/skilldrop/api-keys": throttled`, false},
		{"an answer without a value", &fakeSSM{out: &ssm.GetParameterOutput{}}, "", "holds no value", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ssmparam.Fetch(c.fake, "/skilldrop/api-keys")(context.Background())
			if aws.ToString(c.fake.in.Name) != "/skilldrop/api-keys" || !aws.ToBool(c.fake.in.WithDecryption) {
				t.Errorf("GetParameter input name=%q decryption=%v, want the name with decryption",
					aws.ToString(c.fake.in.Name), aws.ToBool(c.fake.in.WithDecryption))
			}
			if c.wantErr == "" {
				if err != nil || got != c.want {
					t.Fatalf("Fetch = %q, %v; want %q", got, err, c.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || errors.Is(err, ssmparam.ErrNotFound) != c.isNF {
				t.Fatalf("err = %v, want one containing %q (ErrNotFound: %v)", err, c.wantErr, c.isNF)
			}
		})
	}
}

func TestNewRefusesAnEmptyName(t *testing.T) {
	if _, err := ssmparam.New(&fakeSSM{}, "", apikey.CacheOptions{}); err == nil {
		t.Fatal("New accepted an empty parameter name")
	}
}

// TestABlankParameterFailsClosed: a parameter whose value is only
// whitespace (SSM refuses an empty one) reads as an unavailable store (503
// for keys), never as "no keys" nor as every key.
func TestABlankParameterFailsClosed(t *testing.T) {
	fake := &fakeSSM{out: &ssm.GetParameterOutput{Parameter: &types.Parameter{Value: aws.String(" \n")}}}
	src, err := ssmparam.New(fake, "/skilldrop/api-keys", apikey.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := src.Hashes(context.Background())
	if !errors.Is(err, apikey.ErrUnavailable) || !errors.Is(err, apikey.ErrEmpty) || set.Len() != 0 {
		t.Fatalf("Hashes = %d keys, %v; want ErrUnavailable wrapping ErrEmpty", set.Len(), err)
	}
}

// TestAParameterWithMoreThanOneReadingFailsClosed: a parameter whose key
// store repeats a member name or spells one in another case reads as an
// unavailable store (503), never as the last duplicate's grant.
func TestAParameterWithMoreThanOneReadingFailsClosed(t *testing.T) {
	h := apikey.Hash("sk-partner-key")
	for _, doc := range []string{
		`{"keys":[{"id":"x","sha256":"` + h + `","audiences":["alpha"],"audiences":["beta"]}]}`,
		`{"keys":[{"id":"x","sha256":"` + h + `","AUDIENCES":["beta"]}]}`,
		`{"keys":[{"id":"x","sha256":"` + h + `","Expires":"2020-01-01T00:00:00Z","expires":"2099-01-01T00:00:00Z"}]}`,
		`{"Keys":[{"ID":"x","sha256":"` + h + `"}]}`,
	} {
		fake := &fakeSSM{out: &ssm.GetParameterOutput{Parameter: &types.Parameter{Value: aws.String(doc)}}}
		src, err := ssmparam.New(fake, "/skilldrop/api-keys", apikey.CacheOptions{})
		if err != nil {
			t.Fatal(err)
		}
		set, err := src.Hashes(context.Background())
		if !errors.Is(err, apikey.ErrUnavailable) || !errors.Is(err, apikey.ErrSyntax) || set.Len() != 0 {
			t.Errorf("%s: Hashes = %d keys, %v; want ErrUnavailable wrapping ErrSyntax", doc, set.Len(), err)
		}
	}
}
