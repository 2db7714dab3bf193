package awstest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
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

// KMSCalls is a reverse proxy in front of the emulator that counts the KMS
// operations passing through it (by their X-Amz-Target), whatever else
// passes too: give its URL as the endpoint of the clients to count.
type KMSCalls struct {
	URL string
	mu  sync.Mutex
	ops map[string]int
}

// CountKMS starts a counting proxy to endpoint; it stops when the test ends.
func CountKMS(t testing.TB, endpoint string) *KMSCalls {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	k := &KMSCalls{ops: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "TrentService."); ok {
			k.mu.Lock()
			k.ops[op]++
			k.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	k.URL = srv.URL
	return k
}

// Count is how many calls of the operation ("Sign", "GetPublicKey") passed.
func (k *KMSCalls) Count(op string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ops[op]
}
