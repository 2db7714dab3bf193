//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/apikey/ssmparam"
	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/lambdahttp"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// The API Gateway the events come from: an HTTP API's $default stage.
const (
	gatewayAPIID  = "e2eab12cd3"
	gatewayDomain = gatewayAPIID + ".execute-api.us-east-1.amazonaws.com"
	gatewayOrigin = "https://" + gatewayDomain
)

// lambdaMaxPayload is the response payload aws-lambda-rie (and Lambda) accepts
// at most from a buffered function: 6 MiB and 100 bytes.
const lambdaMaxPayload = 6<<20 + 100

// call is one HTTP request a client sends to the API.
type call struct {
	method string
	target string // path and query, as the client sent them
	header map[string]string
	body   string
	// cookies are the request's cookies, which payload 2.0 carries in a
	// list of their own, never as a header.
	cookies []string
}

// gatewayEvent is call as API Gateway hands it to the function (HTTP API,
// payload format 2.0, routes `ANY /` and `ANY /{proxy+}`): lowercase header
// names, Host and X-Forwarded-* as API Gateway sets them, query parameters
// both raw and parsed (repeated values joined with commas), and the request
// context it vouches for.
func gatewayEvent(c call, requestID string, at time.Time) events.APIGatewayV2HTTPRequest {
	rawPath, rawQuery, _ := strings.Cut(c.target, "?")
	headers := map[string]string{
		"accept":            "*/*",
		"host":              gatewayDomain,
		"user-agent":        "skilldrop-e2e/1.0",
		"x-amzn-trace-id":   "Root=1-" + strconv.FormatInt(at.Unix(), 16) + "-" + requestID,
		"x-forwarded-for":   "203.0.113.7",
		"x-forwarded-port":  "443",
		"x-forwarded-proto": "https",
	}
	for k, v := range c.header {
		headers[strings.ToLower(k)] = v
	}
	if c.body != "" {
		headers["content-length"] = strconv.Itoa(len(c.body))
	}
	var query map[string]string
	if q, err := url.ParseQuery(rawQuery); err == nil && len(q) > 0 {
		query = map[string]string{}
		for k, vs := range q {
			query[k] = strings.Join(vs, ",")
		}
	}
	route, params := "ANY /", map[string]string(nil)
	if rawPath != "/" {
		route, params = "ANY /{proxy+}", map[string]string{"proxy": strings.TrimPrefix(rawPath, "/")}
	}
	return events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              route,
		RawPath:               rawPath,
		RawQueryString:        rawQuery,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     route,
			AccountID:    "123456789012",
			Stage:        "$default",
			RequestID:    requestID,
			APIID:        gatewayAPIID,
			DomainName:   gatewayDomain,
			DomainPrefix: gatewayAPIID,
			Time:         at.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    at.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    c.method,
				Path:      rawPath,
				Protocol:  "HTTP/1.1",
				SourceIP:  "203.0.113.7",
				UserAgent: headers["user-agent"],
			},
		},
		Cookies:         c.cookies,
		Body:            c.body,
		IsBase64Encoded: false, // JSON is text: API Gateway passes it as is
	}
}

// inProcessAPI is pkg/server behind pkg/lambdahttp, wired as functions/api
// wires it (S3 store, API keys from the SSM SecureString, CloudWatch
// metrics, no public base URL: the origin is API Gateway's domain).
func inProcessAPI(t testing.TB, cfg aws.Config, bucket, namespace, parameter string) *lambdahttp.Adapter {
	t.Helper()
	logs := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("in-process API log:\n%s", logs)
		}
	})
	logger := obs.NewLogger(logs, slog.LevelInfo)
	metrics, err := cwmetrics.New(cwmetrics.NewClient(cfg), cwmetrics.Options{Namespace: namespace, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	param, err := ssmparam.New(ssm.NewFromConfig(cfg), parameter, apikey.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{
		Store:   store.NewS3(cfg, bucket),
		Keys:    apikey.Union(param, apikey.Set{}),
		Metrics: metrics,
		Auditor: obs.NewAuditor(logger),
		Logger:  logger,
		// make e2e links this test with the version it links the bootstraps with.
		Version: buildinfo.Version(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return lambdahttp.New(srv)
}

// apiPair serves each call through the api binary under aws-lambda-rie and
// through the in-process adapter, and insists the answers are equal.
type apiPair struct {
	fn  *function
	ref *lambdahttp.Adapter
	n   int
}

// answer is the binary's response to a call.
type answer struct {
	events.APIGatewayV2HTTPResponse
	body    []byte // decoded from base64 when IsBase64Encoded
	payload int    // bytes of the function's response payload
}

func (a answer) header(name string) string { return a.Headers[http.CanonicalHeaderKey(name)] }

func (p *apiPair) do(t *testing.T, c call) answer {
	t.Helper()
	p.n++
	ev := gatewayEvent(c, fmt.Sprintf("e2e-%03d", p.n), time.Now())
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	payload := p.fn.mustInvoke(t, raw)
	var got events.APIGatewayV2HTTPResponse
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil || got.StatusCode == 0 {
		t.Fatalf("%s %s: the response is no API Gateway v2 response (%v):\n%s", c.method, c.target, err, clip(payload))
	}
	want, err := p.ref.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s %s in-process: %v", c.method, c.target, err)
	}
	if got.StatusCode != want.StatusCode {
		t.Errorf("%s %s: status %d through the runtime API, %d in-process", c.method, c.target, got.StatusCode, want.StatusCode)
	}
	for _, k := range slices.Sorted(maps.Keys(joinKeys(got.Headers, want.Headers))) {
		if got.Headers[k] != want.Headers[k] {
			t.Errorf("%s %s: header %s %q through the runtime API, %q in-process", c.method, c.target, k, got.Headers[k], want.Headers[k])
		}
	}
	if got.IsBase64Encoded != want.IsBase64Encoded || got.Body != want.Body || !slices.Equal(got.Cookies, want.Cookies) {
		t.Errorf("%s %s: body (base64 %v, %d bytes) through the runtime API, (base64 %v, %d bytes) in-process",
			c.method, c.target, got.IsBase64Encoded, len(got.Body), want.IsBase64Encoded, len(want.Body))
	}
	a := answer{APIGatewayV2HTTPResponse: got, body: []byte(got.Body), payload: len(payload)}
	if got.IsBase64Encoded {
		if a.body, err = base64.StdEncoding.DecodeString(got.Body); err != nil {
			t.Fatalf("%s %s: base64 body: %v", c.method, c.target, err)
		}
	}
	return a
}

func joinKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// rfcIndex is the part of an Agent Skills Discovery index the tests read.
type rfcIndex struct {
	Skills []struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		URL    string `json:"url"`
		Digest string `json:"digest"`
	} `json:"skills"`
}

func decodeIndex(t *testing.T, b []byte) (names []string, byName map[string]string, digests map[string]string) {
	t.Helper()
	var idx rfcIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index: %v\n%s", err, clip(b))
	}
	byName, digests = map[string]string{}, map[string]string{}
	for _, s := range idx.Skills {
		names = append(names, s.Name)
		byName[s.Name] = s.URL
		digests[s.Name] = s.Digest
	}
	return names, byName, digests
}

// TestAPIThroughTheRuntimeAPI indexes the example bucket (and an archive
// exactly at the 4 MiB cap) with the indexer binary, then sends the api
// binary under aws-lambda-rie the API Gateway events of a client's
// requests: the RFC index (GET, HEAD, conditional, gzip, authenticated), a
// listing, artifacts public and hidden, the archive at the cap (base64,
// within Lambda's 6 MiB response payload), a 404, a bad key and the MCP
// initialize POST. Every answer must equal the in-process adapter's for the
// same event: status, headers and body bytes.
func TestAPIThroughTheRuntimeAPI(t *testing.T) {
	cfg := awstest.Config(t)
	files := bucketFiles(t)
	bucket := awstest.Bucket(t, cfg)
	upload(t, awstest.S3(cfg), bucket, files)
	keys := newAPIKeys(t, cfg)
	namespace := metricNamespace(t)

	ix := startIndexer(t, bucket, namespace)
	if r := decodeResult(t, ix.mustInvoke(t, []byte(indexer.ReindexPayload))); len(r.Published) == 0 {
		t.Fatalf("the reindex published nothing: %s", dumpJSON(r))
	}
	ix.stop()

	p := &apiPair{
		fn: start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
			"SKILLDROP_BUCKET":            bucket,
			"SKILLDROP_METRIC_NAMESPACE":  namespace,
			"SKILLDROP_API_KEY_PARAMETER": keys.parameter,
		})),
		ref: inProcessAPI(t, cfg, bucket, metricNamespace(t), keys.parameter),
	}
	bearer := map[string]string{"Authorization": "Bearer " + keys.key}
	const indexPath = "/.well-known/agent-skills/index.json"

	index := p.do(t, call{method: http.MethodGet, target: indexPath})
	etag := index.header("ETag")
	t.Run("GET index", func(t *testing.T) {
		if index.StatusCode != http.StatusOK || !strings.HasPrefix(index.header("Content-Type"), "application/json") || etag == "" {
			t.Fatalf("status %d, Content-Type %q, ETag %q", index.StatusCode, index.header("Content-Type"), etag)
		}
		names, urls, digests := decodeIndex(t, index.body)
		for _, want := range []string{"at-the-cap", "deploy-via-pr", "pdf-tools", "release-notes"} {
			if !slices.Contains(names, want) {
				t.Errorf("%s missing from the anonymous index %v", want, names)
			}
		}
		if slices.Contains(names, "internal-rotate-secret") {
			t.Errorf("the authenticated skill is in the anonymous index")
		}
		if got, want := urls["at-the-cap"], gatewayOrigin+"/skills/at-the-cap.zip"; got != want {
			t.Errorf("url %q, want %q (the origin API Gateway received the request on)", got, want)
		}
		if got, want := digests["at-the-cap"], digest.Of(files[atTheCapKey]).String(); got != want {
			t.Errorf("digest %s, want %s", got, want)
		}
	})
	t.Run("HEAD index", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodHead, target: indexPath})
		if a.StatusCode != http.StatusOK || a.Body != "" || a.header("ETag") != etag || a.header("Content-Length") != strconv.Itoa(len(index.body)) {
			t.Errorf("status %d, %d body bytes, ETag %q, Content-Length %q; want 200, none, %q, %d",
				a.StatusCode, len(a.Body), a.header("ETag"), a.header("Content-Length"), etag, len(index.body))
		}
	})
	t.Run("conditional GET index", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodGet, target: indexPath, header: map[string]string{"If-None-Match": etag}})
		if a.StatusCode != http.StatusNotModified || a.Body != "" || a.header("ETag") != etag {
			t.Errorf("status %d, %d body bytes, ETag %q; want 304, none, %q", a.StatusCode, len(a.Body), a.header("ETag"), etag)
		}
	})
	t.Run("gzip index", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodGet, target: indexPath, header: map[string]string{"Accept-Encoding": "gzip, br"}})
		if a.StatusCode != http.StatusOK || a.header("Content-Encoding") != "gzip" || !a.IsBase64Encoded {
			t.Fatalf("status %d, Content-Encoding %q, base64 %v", a.StatusCode, a.header("Content-Encoding"), a.IsBase64Encoded)
		}
		zr, err := gzip.NewReader(bytes.NewReader(a.body))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, index.body) {
			t.Errorf("the gzip body does not inflate to the index (%v)", err)
		}
	})
	t.Run("authenticated index", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodGet, target: indexPath, header: bearer})
		names, _, _ := decodeIndex(t, a.body)
		if a.StatusCode != http.StatusOK || !slices.Contains(names, "internal-rotate-secret") || !strings.Contains(a.header("Cache-Control"), "private") {
			t.Errorf("status %d, Cache-Control %q, skills %v", a.StatusCode, a.header("Cache-Control"), names)
		}
	})
	t.Run("invalid key", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodGet, target: indexPath, header: map[string]string{"Authorization": "Bearer sk-not-a-key"}})
		if a.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(a.header("WWW-Authenticate"), "Bearer") {
			t.Errorf("status %d, WWW-Authenticate %q", a.StatusCode, a.header("WWW-Authenticate"))
		}
	})
	t.Run("listing", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodGet, target: "/.well-known/agent-skills/partner-a/index.json"})
		names, _, _ := decodeIndex(t, a.body)
		if a.StatusCode != http.StatusOK || !slices.Contains(names, "partner-onboarding") || !slices.Contains(names, "deploy-via-pr") {
			t.Errorf("status %d, skills %v", a.StatusCode, names)
		}
	})
	const hidden = "/skills/internal-rotate-secret/SKILL.md"
	t.Run("authenticated skill without a key", func(t *testing.T) {
		if a := p.do(t, call{method: http.MethodGet, target: hidden}); a.StatusCode != http.StatusNotFound {
			t.Errorf("status %d, want 404 (existence never leaks)", a.StatusCode)
		}
	})
	t.Run("authenticated skill with a key", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodGet, target: hidden, header: bearer})
		if a.StatusCode != http.StatusOK || !strings.HasPrefix(a.header("Content-Type"), "text/markdown") || !bytes.Equal(a.body, files[strings.TrimPrefix(hidden, "/")]) {
			t.Errorf("status %d, Content-Type %q, body equal to the upload: %v", a.StatusCode, a.header("Content-Type"), bytes.Equal(a.body, files[strings.TrimPrefix(hidden, "/")]))
		}
	})
	t.Run("archive at the 4 MiB cap", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodGet, target: "/skills/at-the-cap.zip"})
		if a.StatusCode != http.StatusOK || a.header("Content-Type") != "application/zip" || !a.IsBase64Encoded || a.header("Content-Encoding") != "" {
			t.Fatalf("status %d, Content-Type %q, base64 %v, Content-Encoding %q", a.StatusCode, a.header("Content-Type"), a.IsBase64Encoded, a.header("Content-Encoding"))
		}
		_, _, digests := decodeIndex(t, index.body)
		want := digest.MustParse(digests["at-the-cap"])
		if len(a.body) != capBytes || !want.Verify(a.body) {
			t.Errorf("%d bytes hashing to %s; want %d hashing to %s", len(a.body), digest.Of(a.body), capBytes, want)
		}
		if a.payload > lambdaMaxPayload {
			t.Errorf("a %d-byte response payload passed a %d-byte limit", a.payload, lambdaMaxPayload)
		}
		t.Logf("the archive at the cap: %d bytes, a %d-byte response payload (%.1f%% of Lambda's %d)",
			len(a.body), a.payload, 100*float64(a.payload)/lambdaMaxPayload, lambdaMaxPayload)
	})
	t.Run("404", func(t *testing.T) {
		a := p.do(t, call{method: http.MethodGet, target: "/skills/no-such-skill.md"})
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if a.StatusCode != http.StatusNotFound || json.Unmarshal(a.body, &e) != nil || e.Error.Code == "" {
			t.Errorf("status %d, body %s", a.StatusCode, clip(a.body))
		}
	})
	t.Run("MCP initialize", func(t *testing.T) {
		a := p.do(t, call{
			method: http.MethodPost, target: "/mcp",
			header: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
			body:   `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		})
		var rpc struct {
			ID     int `json:"id"`
			Result struct {
				Capabilities struct {
					Experimental struct {
						AgentSkillsURL struct {
							URL string `json:"url"`
						} `json:"agentSkillsUrl"`
					} `json:"experimental"`
				} `json:"capabilities"`
				ServerInfo struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"serverInfo"`
			} `json:"result"`
		}
		if a.StatusCode != http.StatusOK || json.Unmarshal(a.body, &rpc) != nil {
			t.Fatalf("status %d, body %s", a.StatusCode, clip(a.body))
		}
		if got, want := rpc.Result.Capabilities.Experimental.AgentSkillsURL.URL, gatewayOrigin+indexPath; got != want || rpc.ID != 1 || rpc.Result.ServerInfo.Name != "skilldrop" {
			t.Errorf("id %d, server %q, agentSkillsUrl %v; want 1, skilldrop, %s", rpc.ID, rpc.Result.ServerInfo.Name, got, want)
		}
		if v := rpc.Result.ServerInfo.Version; v != buildinfo.Version() || v == "" {
			t.Errorf("serverInfo.version %q, want the build's %q", v, buildinfo.Version())
		}
	})
}
