//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/cosigntest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/verifier"
)

// rieTransport is an http.RoundTripper that hands each request to the api
// binary under aws-lambda-rie as API Gateway would (gatewayEvent), so any
// HTTP client (skilldrop verify's) reaches the function through the real
// Lambda runtime API.
type rieTransport struct {
	fn *function
	n  atomic.Int64
}

func (rt *rieTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	header := map[string]string{}
	for k := range r.Header {
		header[k] = r.Header.Get(k)
	}
	ev := gatewayEvent(call{method: r.Method, target: r.URL.RequestURI(), header: header}, fmt.Sprintf("prov-%04d", rt.n.Add(1)), time.Now())
	raw, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	payload, err := rt.fn.invoke(r.Context(), raw)
	if err != nil {
		return nil, err
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		return nil, fmt.Errorf("not an API Gateway response: %w", err)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return nil, err
		}
	}
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: resp.StatusCode, Status: http.StatusText(resp.StatusCode), Header: h,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// TestProvenanceThroughTheRuntimeAPI signs with a KMS key of the emulator:
// the indexer binary under aws-lambda-rie, given the key as template.yaml
// gives it (SKILLDROP_SIGNING_KEY) and reaching KMS through a counting
// proxy, re-indexes the example bucket; the api binary under
// aws-lambda-rie serves what it signed. cosign verifies every bundle with
// the public key (the emulator's KMS GetPublicKey, which the api publishes),
// skilldrop verify's checker verifies the whole origin through the api
// binary, and a tampered artifact or bundle in the bucket fails both, with
// a 503 from the api. The indexer asks KMS for one signature per published
// version and one for the AI Catalog of the write that attaches the bundles.
func TestProvenanceThroughTheRuntimeAPI(t *testing.T) {
	cosign := cosigntest.Need(t)
	cfg := awstest.Config(t)
	s3c := awstest.S3(cfg)
	kmsc := kms.NewFromConfig(cfg)
	keyID := awstest.SigningKey(t, kmsc)
	pubOut, err := kmsc.GetPublicKey(context.Background(), &kms.GetPublicKeyInput{KeyId: aws.String(keyID)})
	if err != nil {
		t.Fatal(err)
	}
	kmsKey, err := signing.ParsePublicKeyDER(pubOut.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	bucket := awstest.Bucket(t, cfg)
	upload(t, s3c, bucket, exampleFiles(t))

	calls := awstest.CountKMS(t, os.Getenv("AWS_ENDPOINT_URL"))
	env := indexerEnv(bucket, metricNamespace(t))
	env["SKILLDROP_SIGNING_KEY"] = keyID
	env["SKILLDROP_ORIGINS"] = gatewayOrigin // as the template passes the API's domain
	env["AWS_ENDPOINT_URL"] = calls.URL
	ix := start(t, "indexer", bootstrap(t, runtime.GOARCH, "indexer"), templateEnv(t, indexerID, env))
	res := decodeResult(t, ix.mustInvoke(t, []byte(indexer.ReindexPayload)))
	ix.stop()
	bundles := 0
	for _, e := range loadCatalog(t, store.NewS3(cfg, bucket)).Skills {
		if v := e.LatestVersion(); v != nil && v.Bundle != nil {
			bundles++
		}
	}
	for _, e := range loadCatalog(t, store.NewS3(cfg, bucket)).Subagents {
		if v := e.LatestVersion(); v != nil && v.Bundle != nil {
			bundles++
		}
	}
	signs, gets := calls.Count("Sign"), calls.Count("GetPublicKey")
	t.Logf("KMS calls for a re-index publishing %d versions (%d hosted, signed), then attaching their bundles with the AI Catalog: Sign %d, GetPublicKey %d (at start-up)",
		len(res.Published), bundles, signs, gets)
	if bundles == 0 || signs != bundles+1 || gets != 1 {
		t.Errorf("KMS: %d Sign and %d GetPublicKey calls for %d signed versions and 1 revision, want %d and 1", signs, gets, bundles, bundles+1)
	}

	fn := start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
		"SKILLDROP_BUCKET":            bucket,
		"SKILLDROP_METRIC_NAMESPACE":  metricNamespace(t),
		"SKILLDROP_API_KEY_PARAMETER": newAPIKeys(t, cfg).parameter,
	}))
	client := &http.Client{Transport: &rieTransport{fn: fn}}
	get := func(u string) (int, []byte) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	code, pem := get(gatewayOrigin + routes.SigningKey)
	if pub, err := signing.ParsePublicKeyPEM(pem); code != 200 || err != nil || !pub.Equal(kmsKey) {
		t.Fatalf("the api publishes %d %s, not the KMS key's public half (%v)", code, pem, err)
	}

	// cosign, every bundle of the top-level index and the listing.
	type entry struct{ URL string }
	verified := 0
	for _, feed := range []string{routes.RFCIndex, routes.ListingIndex("partner-a")} {
		_, b := get(gatewayOrigin + feed)
		var idx struct{ Skills []entry }
		if err := json.Unmarshal(b, &idx); err != nil || len(idx.Skills) == 0 {
			t.Fatalf("%s: %v %s", feed, err, b)
		}
		for _, e := range idx.Skills {
			_, art := get(e.URL)
			_, bundle := get(e.URL + routes.BundleSuffix)
			if out, ok := cosign.VerifyBlobAttestation(t, pem, bundle, art); !ok {
				t.Errorf("cosign refuses %s:\n%s", e.URL, out)
			}
			verified++
		}
	}
	t.Logf("cosign verified %d bundles served by the api binary", verified)

	origin, _ := url.Parse(gatewayOrigin)
	check := func() *verifier.Report {
		t.Helper()
		rep, err := verifier.Verify(context.Background(), verifier.Options{Origin: origin, Keys: []*ecdsa.PublicKey{kmsKey}, Client: client})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := check(); !rep.OK || rep.Catalog.KeyID != signing.KeyID(kmsKey) {
		t.Fatalf("the origin does not verify with the KMS key: %+v", rep)
	}

	// Tampered in the bucket: the artifact, then the bundle.
	_, art := get(gatewayOrigin + "/skills/pdf-tools.zip")
	_, bundle := get(gatewayOrigin + "/skills/pdf-tools.zip" + routes.BundleSuffix)
	for _, tc := range []struct {
		what, path string
		was, evil  []byte
	}{
		{"artifact", "/skills/pdf-tools.zip", art, append(bytes.Clone(art), 0)},
		// Another signature (a bundle re-encoded as the same JSON would
		// still verify: it is the same bundle).
		{"bundle", "/skills/pdf-tools.zip" + routes.BundleSuffix, bundle, bytes.Replace(bundle, []byte(`"sig":"M`), []byte(`"sig":"N`), 1)},
	} {
		key := catalog.BlobKey(digest.Of(tc.was))
		evil := tc.evil
		put(t, s3c, bucket, key, evil)
		if code, _ := get(gatewayOrigin + tc.path); code != http.StatusServiceUnavailable {
			t.Errorf("a tampered %s answers %d, want 503", tc.what, code)
		}
		rep := check()
		if rep.OK || !strings.Contains(fmt.Sprint(rep.Skills), "pdf-tools") || !strings.Contains(fmt.Sprint(rep.Skills), tc.what+":") {
			t.Errorf("a tampered %s: the check says %+v", tc.what, rep.Skills)
		}
		a, b := art, bundle
		if tc.what == "artifact" {
			a = evil
		} else {
			b = evil
		}
		if out, ok := cosign.VerifyBlobAttestation(t, pem, b, a); ok {
			t.Errorf("cosign verifies a tampered %s:\n%s", tc.what, out)
		}
		put(t, s3c, bucket, key, tc.was)
	}
	if rep := check(); !rep.OK {
		t.Errorf("restored, the origin does not verify: %+v", rep)
	}
}

func put(t *testing.T, c *s3.Client, bucket, key string, b []byte) {
	t.Helper()
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(b)}); err != nil {
		t.Fatal(err)
	}
}
