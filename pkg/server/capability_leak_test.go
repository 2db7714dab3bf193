package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/lambdahttp"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// pathTokenAlphabet is what a path key may be made of (apikey.VerifyPath).
const pathTokenAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"

// capabilitySuffixes are what follows /k/<token> in the requests of the
// leak property: the feed's documents, hidden and missing ones, paths that
// are never served under a key, and paths refused before routing.
var capabilitySuffixes = []string{
	"", "/", routes.RFCIndex, "/.well-known/agent-skills/partner-a/index.json", "/.well-known/agent-skills/hidden/index.json",
	"/skills/secret-rotation/SKILL.md", "/skills/bundle-zip.zip", "/skills/no-such-skill.md", "/skills/gone.md",
	routes.Manifest, routes.MCP, routes.Catalog, "/.well-known/agent-skills", "/skills//x", "/skills/%2e%2e/x",
	"/skills/a%2fb", "/skills/%00", "/x?q=1",
}

// malformedCapabilityShapes are capability URLs no route answers as one,
// each a way a client or a typo may send a key: doubled and leading
// slashes, another case, dot segments, percent-encoding of the "k", of the
// slash and of the key itself. Each is served with every suffix of
// malformedSuffixes.
var malformedCapabilityShapes = []func(tok string) string{
	func(tok string) string { return "/k//" + tok },
	func(tok string) string { return "//k/" + tok },
	func(tok string) string { return "/K/" + tok },
	func(tok string) string { return "/./k/" + tok },
	func(tok string) string { return "/x/../k/" + tok },
	func(tok string) string { return "/k/./" + tok },
	func(tok string) string { return "/%6b/" + tok },
	func(tok string) string { return "/%256B/" + tok },
	func(tok string) string { return "/k%2f" + tok },
	func(tok string) string { return "/k%252F" + tok },
	func(tok string) string { return "/k/%2F" + tok },
	func(tok string) string { return "/k/" + percentEncode(tok) },
	func(tok string) string { return "/%2e/K//" + percentEncode(tok) },
	func(tok string) string { return "/x/k/" + tok },
}

// malformedSuffixes follow a malformed capability URL's key.
var malformedSuffixes = []string{"", "/", routes.RFCIndex, "/skills/secret-rotation/SKILL.md", routes.MCP}

// percentEncode is every byte of s percent-encoded.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// capabilityTargets are the request targets of the leak property for tok.
func capabilityTargets(tok string) []string {
	var targets []string
	for _, suffix := range capabilitySuffixes {
		targets = append(targets, routes.Capability(tok, suffix))
	}
	for _, shape := range malformedCapabilityShapes {
		for _, suffix := range malformedSuffixes {
			targets = append(targets, shape(tok)+suffix)
		}
	}
	return targets
}

// tokenOutputs serves requests under /k/<tok>/ through the server and
// through the Lambda adapter, with tok configured as a valid path key, an
// expired one, a header-only one, and not at all, with a tampered blob (so
// the integrity path's audit event and metric run too), and returns
// everything written where a token must never be: the log and audit lines,
// the metrics, the error bodies and the Location headers.
func tokenOutputs(t *testing.T, tok string) string {
	t.Helper()
	st := store.NewMemory()
	b := standardBucket(t, st)
	ver := b.cat.Skills["bundle-zip"].LatestVersion()
	if _, err := st.Put(context.Background(), catalog.BlobKey(ver.Digest), []byte("tampered"), store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, entry := range []string{
		`{"id":"cli","sha256":"%s","path":true}`,
		`{"id":"cli","sha256":"%s","path":true,"expires":"2020-01-01T00:00:00Z"}`,
		`{"id":"cli","sha256":"%s"}`,
		"",
	} {
		doc := `{"keys":[]}`
		if entry != "" {
			doc = `{"keys":[` + fmt.Sprintf(entry, apikey.Hash(tok)) + `]}`
		}
		keys, err := apikey.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, st, func(c *Config) { c.Keys, c.SessionSecret = keys, testSecret })
		adapter := lambdahttp.New(h.srv)
		for _, target := range capabilityTargets(tok) {
			for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodOptions, http.MethodDelete} {
				w := httptest.NewRecorder()
				h.srv.ServeHTTP(w, httptest.NewRequest(method, target, nil))
				record(&out, w.Code, w.Header(), w.Body.String())

				path, query, _ := strings.Cut(target, "?")
				ev := events.APIGatewayV2HTTPRequest{RawPath: path, RawQueryString: query, Headers: map[string]string{"host": "skills.example.com"}}
				ev.RequestContext.HTTP.Method = method
				ev.RequestContext.RequestID = "req-1"
				resp, err := adapter.Handle(context.Background(), ev)
				if err != nil {
					out.WriteString(err.Error() + "\n")
				}
				hdr := http.Header{}
				for k, v := range resp.Headers {
					hdr.Set(k, v)
				}
				record(&out, resp.StatusCode, hdr, resp.Body)
			}
		}
		// An event whose path is no request target (no leading slash) is
		// answered 400 by the adapter itself.
		bad := events.APIGatewayV2HTTPRequest{RawPath: strings.TrimPrefix(routes.Capability(tok, routes.RFCIndex), "/")}
		bad.RequestContext.HTTP.Method = http.MethodGet
		if resp, err := adapter.Handle(context.Background(), bad); err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("an event path without its slash: %d, %v; want 400", resp.StatusCode, err)
		} else {
			record(&out, resp.StatusCode, nil, resp.Body)
		}
		// The adapter's own error when the caller gave up before an answer.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ev := events.APIGatewayV2HTTPRequest{RawPath: routes.Capability(tok, routes.RFCIndex)}
		ev.RequestContext.HTTP.Method = http.MethodGet
		if _, err := lambdahttp.New(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).Handle(ctx, ev); err != nil {
			out.WriteString(err.Error() + "\n")
		}
		out.WriteString(h.logs.String())
		for _, s := range h.metrics.Samples() {
			fmt.Fprintf(&out, "%s %s=%s %d\n", s.Name, s.Dimension, s.Value, s.N)
		}
		if !strings.Contains(h.logs.String(), `"path":"/k/[`) {
			t.Fatalf("no redacted capability path in the log: the requests did not reach the server?\n%s", h.logs.String())
		}
	}
	return out.String()
}

// record writes what of an answer must not hold a token: the body of
// anything but a document served (a 200's is the feed under the key, whose
// URLs carry it by design) and every Location header.
func record(out *strings.Builder, code int, h http.Header, body string) {
	if code != http.StatusOK {
		fmt.Fprintf(out, "%d %s\n", code, body)
	}
	if loc := h.Get("Location"); h != nil && loc != "" {
		fmt.Fprintf(out, "Location: %s\n", loc)
	}
}

func randomToken(r *rand.Rand) string {
	b := make([]byte, 16+r.IntN(48))
	for i := range b {
		b[i] = pathTokenAlphabet[r.IntN(len(pathTokenAlphabet))]
	}
	return string(b)
}

// TestCapabilityTokensNeverReachAnOutput is the leak property over random
// tokens: whatever the token, whether it is a path key, an expired or
// header-only key or none, and whatever follows it, its text is in no log
// line, audit event, metric, error body or Location header, through the
// server and through the Lambda adapter alike (the key is named by its id,
// "/k/[cli]/…", or not at all), nor is its percent-encoding; and so for
// malformed capability URLs (malformedCapabilityShapes), whose keys are
// redacted to "[…]".
func TestCapabilityTokensNeverReachAnOutput(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 19))
	tokens := []string{"sk-path-key-0123456789", strings.Repeat("~", 20), "a.b_c-d~e.f_g-h~i.j_k"}
	for range 12 {
		tokens = append(tokens, randomToken(r))
	}
	for _, tok := range tokens {
		out := tokenOutputs(t, tok)
		for _, form := range []string{tok, percentEncode(tok)} {
			if strings.Contains(out, form) {
				t.Errorf("token %q appears in an output as %q:\n%s", tok, form, excerpt(out, form))
			}
		}
	}
}

// FuzzCapabilityTokensNeverReachAnOutput is the same property for tokens
// the fuzzer finds (go test -fuzz FuzzCapabilityTokens ./pkg/server).
func FuzzCapabilityTokensNeverReachAnOutput(f *testing.F) {
	f.Add("sk-path-key-0123456789")
	f.Add("..............")
	f.Fuzz(func(t *testing.T, tok string) {
		// Short tokens are substrings of anything; a key is never that short.
		if len(tok) < 12 || len(tok) > 200 || strings.Trim(tok, pathTokenAlphabet) != "" {
			t.Skip()
		}
		out := tokenOutputs(t, tok)
		for _, form := range []string{tok, percentEncode(tok)} {
			if strings.Contains(out, form) {
				t.Errorf("token %q appears in an output as %q:\n%s", tok, form, excerpt(out, form))
			}
		}
	})
}

// excerpt is the lines of out that hold tok.
func excerpt(out, tok string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, tok) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
