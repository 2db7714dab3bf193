//go:build integration

package ssmparam_test

import (
	"context"
	"errors"
	"strings"
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
	v := apikey.NewVerifier(src)
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
