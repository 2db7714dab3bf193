//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/leakmatrix"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/apikey/ssmparam"
	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/lambdahttp"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestLeakMatrixThroughTheRuntimeAPI runs the leak matrix against the api
// binary under aws-lambda-rie, over a bucket the indexer binary indexed in
// the emulator, with the key store in an SSM SecureString (read again
// every second) from which a key is revoked mid-run: every answer must be
// what a fresh in-process handler gives the caller's twin key, and what
// the caller may see.
func TestLeakMatrixThroughTheRuntimeAPI(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	upload(t, awstest.S3(cfg), bucket, leakmatrix.Files())
	namespace := metricNamespace(t)
	ix := startIndexer(t, bucket, namespace)
	if r := decodeResult(t, ix.mustInvoke(t, []byte(indexer.ReindexPayload))); len(r.Published) == 0 {
		t.Fatalf("the reindex published nothing: %s", dumpJSON(r))
	}
	ix.stop()
	parameter := "/" + awstest.Name(t, "skilldrop-leak") + "/api-keys"
	awstest.SecureString(t, cfg, parameter, leakmatrix.Store(true))

	fn := start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
		"SKILLDROP_BUCKET":            bucket,
		"SKILLDROP_METRIC_NAMESPACE":  namespace,
		"SKILLDROP_API_KEY_PARAMETER": parameter,
		apikey.EnvHashes:              leakmatrix.LegacyHashes(),
		apikey.EnvRefresh:             "1s",
	}))
	n := 0
	do := func(r leakmatrix.Request) leakmatrix.Response {
		n++
		return invokeAs(t, func(ev events.APIGatewayV2HTTPRequest) []byte {
			raw, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			return fn.mustInvoke(t, raw)
		}, r, n)
	}
	revoked := leakmatrix.Request{Method: http.MethodGet, Target: "/skills/alpha-deploy.md",
		Header: map[string]string{"Authorization": "Bearer " + leakmatrix.Revoked}}
	if r := do(revoked); r.Status != http.StatusOK {
		t.Fatalf("before revocation the key reads its skill: status %d", r.Status)
	}
	awstest.SecureString(t, cfg, parameter, leakmatrix.Store(false))
	deadline := time.Now().Add(30 * time.Second) // a hang guard, not the figure under test
	for do(revoked).Status != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the revoked key is still accepted")
		}
		time.Sleep(200 * time.Millisecond)
	}

	filtered := func(c leakmatrix.Caller) leakmatrix.Do {
		return leakmatrix.Filtered(t, store.NewS3(cfg, bucket), c, matrixKeys(t, cfg, parameter), gatewayOrigin, buildinfo.Version())
	}
	fresh := func(leakmatrix.Caller) leakmatrix.Do {
		ref := freshAPI(t, cfg, bucket, parameter)
		m := 0
		return func(r leakmatrix.Request) leakmatrix.Response {
			m++
			return invokeAs(t, func(ev events.APIGatewayV2HTTPRequest) []byte {
				raw, err := json.Marshal(ev)
				if err != nil {
					t.Fatal(err)
				}
				out, err := ref.Invoke(context.Background(), raw)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}, r, m)
		}
	}
	leakmatrix.Run(t, func(leakmatrix.Caller) leakmatrix.Do { return do }, fresh, filtered)

	log := fn.out.String()
	for _, c := range leakmatrix.Callers() {
		if c.Key != "" && strings.Contains(log, c.Key) {
			t.Errorf("the api's log holds the key of %s", c.Name)
		}
	}
	for _, want := range []string{`"key_id":"key-ac","audiences":["partner-a","partner-c"]`, `"path":"/k/[key-a]/.well-known/agent-skills/index.json"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the api's log has no %s", want)
		}
	}
}

// matrixKeys is the api's key store, as the binary is given it: the SSM
// parameter and the bare hashes.
func matrixKeys(t *testing.T, cfg aws.Config, parameter string) apikey.Source {
	t.Helper()
	param, err := ssmparam.New(ssm.NewFromConfig(cfg), parameter, apikey.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := apikey.ParseSet(leakmatrix.LegacyHashes())
	if err != nil {
		t.Fatal(err)
	}
	return apikey.Union(param, legacy)
}

// freshAPI is the api's handler, in process and new: nothing answered yet.
func freshAPI(t *testing.T, cfg aws.Config, bucket, parameter string) *lambdahttp.Adapter {
	t.Helper()
	srv, err := server.New(server.Config{
		Store: store.NewS3(cfg, bucket), Keys: matrixKeys(t, cfg, parameter),
		Logger: obs.NewLogger(io.Discard, slog.LevelError), Version: buildinfo.Version(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return lambdahttp.New(srv)
}

// invokeAs sends r as API Gateway's event through invoke and decodes the
// function's response.
func invokeAs(t *testing.T, invoke func(events.APIGatewayV2HTTPRequest) []byte, r leakmatrix.Request, n int) leakmatrix.Response {
	t.Helper()
	ev := gatewayEvent(call{method: r.Method, target: r.Target, header: r.Header, body: r.Body}, fmt.Sprintf("leak-%05d", n), time.Now())
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(invoke(ev), &resp); err != nil {
		t.Fatalf("%s: %v", r.Method, err)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	return leakmatrix.Response{Status: resp.StatusCode, Header: h, Body: body}
}
