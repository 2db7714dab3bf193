//go:build integration

package ssmparam_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/apikey/ssmparam"
)

// TestSecureStringIsReadDecryptedAndRotationShowsAfterTheTTL runs the
// Lambda's key path against the emulator's SSM with an injected clock.
func TestSecureStringIsReadDecryptedAndRotationShowsAfterTheTTL(t *testing.T) {
	cfg := awstest.Config(t)
	client := ssm.NewFromConfig(cfg)
	name := "/" + awstest.Name(t, "skilldrop-test") + "/api-keys"
	const keyA, keyB, keyC = "sk-integration-alpha", "sk-integration-bravo", "sk-integration-charlie"
	awstest.SecureString(t, cfg, name, apikey.Hash(keyA)+", "+apikey.Hash(keyB))

	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	src, err := ssmparam.New(client, name, apikey.CacheOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	v := apikey.NewVerifier(src, nil)
	ctx := context.Background()
	status := func(key string) apikey.Status {
		t.Helper()
		h := map[string][]string{"Authorization": {"Bearer " + key}}
		r, err := v.Verify(ctx, h)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		return r.Status
	}
	if status(keyA) != apikey.Valid || status(keyB) != apikey.Valid || status(keyC) != apikey.Invalid {
		t.Fatal("the SecureString's hashes were not read decrypted: want keyA and keyB valid, keyC invalid")
	}

	// Rotate: revoke keyA, add keyC.
	awstest.SecureString(t, cfg, name, apikey.Hash(keyB)+","+apikey.Hash(keyC))
	now = now.Add(apikey.DefaultTTL - time.Second)
	if status(keyA) != apikey.Valid || status(keyC) != apikey.Invalid {
		t.Error("before the TTL the cached set must still answer")
	}
	now = now.Add(time.Second)
	if status(keyA) != apikey.Invalid || status(keyB) != apikey.Valid || status(keyC) != apikey.Valid {
		t.Error("after the TTL the rotated set must answer: keyA revoked, keyC added")
	}
}

func TestMissingParameterIsAClearError(t *testing.T) {
	client := ssm.NewFromConfig(awstest.Config(t))
	name := "/" + awstest.Name(t, "skilldrop-test") + "/absent"
	src, err := ssmparam.New(client, name, apikey.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Hashes(context.Background())
	if !errors.Is(err, apikey.ErrUnavailable) || !errors.Is(err, ssmparam.ErrNotFound) || !strings.Contains(err.Error(), name) {
		t.Fatalf("err = %v, want ErrUnavailable and ErrNotFound naming %s", err, name)
	}
}

// countingSSM counts the GetParameter calls that reach the emulator.
type countingSSM struct {
	api   ssmparam.API
	calls atomic.Int32
}

func (c *countingSSM) GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	c.calls.Add(1)
	return c.api.GetParameter(ctx, in, optFns...)
}

// TestOutageBacksOffAgainstTheEmulator: while the parameter cannot be read
// (here: it does not exist yet), 200 concurrent requests with random keys
// all fail closed at one GetParameter call; once it exists and the backoff
// has passed, one more call reads it and the key works.
func TestOutageBacksOffAgainstTheEmulator(t *testing.T) {
	cfg := awstest.Config(t)
	api := &countingSSM{api: ssm.NewFromConfig(cfg)}
	name := "/" + awstest.Name(t, "skilldrop-test") + "/api-keys"
	var mu sync.Mutex
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	src, err := ssmparam.New(api, name, apikey.CacheOptions{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	v := apikey.NewVerifier(src, nil)
	verify := func(key string) error {
		_, err := v.Verify(context.Background(), http.Header{"Authorization": {"Bearer " + key}})
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range errs {
		wg.Go(func() { errs[i] = verify(fmt.Sprintf("sk-random-%d", i)) })
	}
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, apikey.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable (a 503)", err)
		}
	}
	if n := api.calls.Load(); n != 1 {
		t.Fatalf("%d GetParameter calls for 200 requests during the outage, want 1", n)
	}

	const key = "sk-integration-after-outage"
	awstest.SecureString(t, cfg, name, apikey.Hash(key))
	if err := verify(key); !errors.Is(err, apikey.ErrUnavailable) || api.calls.Load() != 1 {
		t.Fatalf("within the backoff: err = %v after %d calls, want the failure again without a call", err, api.calls.Load())
	}
	mu.Lock()
	now = now.Add(apikey.DefaultMinBackoff)
	mu.Unlock()
	r, err := v.Verify(context.Background(), http.Header{"Authorization": {"Bearer " + key}})
	if err != nil || r.Status != apikey.Valid || api.calls.Load() != 2 {
		t.Fatalf("after the backoff: %+v, %v after %d calls; want the key valid at one more call", r, err, api.calls.Load())
	}
}
