//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/websession"
)

// TestWebCatalogThroughTheRuntimeAPI serves the web catalog from the api
// binary under aws-lambda-rie, as API Gateway hands it requests: a browser
// sent from / to /catalog/, the pages with their security headers, and the
// cookie rules: sign-in only from the catalog's own origin, a Secure,
// HttpOnly, SameSite=Strict __Host- cookie signed with the secret read from
// the SSM SecureString, honoured on the pages and never on the feeds.
func TestWebCatalogThroughTheRuntimeAPI(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	upload(t, awstest.S3(cfg), bucket, bucketFiles(t))
	keys := newAPIKeys(t, cfg)
	namespace := metricNamespace(t)
	ix := startIndexer(t, bucket, namespace)
	if r := decodeResult(t, ix.mustInvoke(t, []byte(indexer.ReindexPayload))); len(r.Published) == 0 {
		t.Fatalf("the reindex published nothing: %s", dumpJSON(r))
	}
	ix.stop()
	var b [32]byte
	_, _ = rand.Read(b[:])
	secretParam := "/" + awstest.Name(t, "skilldrop-e2e") + "/session-secret"
	awstest.SecureString(t, cfg, secretParam, hex.EncodeToString(b[:]))

	fn := start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
		"SKILLDROP_BUCKET":                   bucket,
		"SKILLDROP_METRIC_NAMESPACE":         namespace,
		"SKILLDROP_API_KEY_PARAMETER":        keys.parameter,
		"SKILLDROP_SESSION_SECRET_PARAMETER": secretParam,
	}))
	n := 0
	do := func(c call) answer {
		t.Helper()
		n++
		raw, err := json.Marshal(gatewayEvent(c, fmt.Sprintf("catalog-%03d", n), time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		var got events.APIGatewayV2HTTPResponse
		payload := fn.mustInvoke(t, raw)
		if err := json.Unmarshal(payload, &got); err != nil || got.StatusCode == 0 {
			t.Fatalf("%s %s: no API Gateway response (%v): %s", c.method, c.target, err, clip(payload))
		}
		a := answer{APIGatewayV2HTTPResponse: got, body: []byte(got.Body), payload: len(payload)}
		if got.IsBase64Encoded {
			if a.body, err = base64.StdEncoding.DecodeString(got.Body); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	browser := map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}

	t.Run("the root", func(t *testing.T) {
		a := do(call{method: http.MethodGet, target: "/", header: browser})
		if a.StatusCode != http.StatusFound || a.header("Location") != "/catalog/" {
			t.Errorf("a browser at /: %d, Location %q", a.StatusCode, a.header("Location"))
		}
		a = do(call{method: http.MethodGet, target: "/"})
		if a.StatusCode != http.StatusNotFound || a.header("Content-Type") != "application/json" {
			t.Errorf("a JSON client at /: %d %q", a.StatusCode, a.header("Content-Type"))
		}
	})
	t.Run("pages", func(t *testing.T) {
		for target, want := range map[string]string{
			"/catalog/":                             "pdf-tools",
			"/catalog/?q=release&kind=skill":        "release-notes",
			"/catalog/skills/pdf-tools":             "npx skills add " + gatewayOrigin + " --skill pdf-tools",
			"/catalog/subagents/changelog-reviewer": "changelog-reviewer",
			"/catalog/listings/partner-a/":          "partner-faq",
			"/catalog/sign-in":                      `name="key"`,
		} {
			a := do(call{method: http.MethodGet, target: target, header: browser})
			body := string(a.body)
			if a.StatusCode != http.StatusOK || a.header("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(body, want) {
				t.Errorf("%s: %d %q, holds %q: %v", target, a.StatusCode, a.header("Content-Type"), want, strings.Contains(body, want))
			}
			if csp := a.header("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
				a.header("X-Content-Type-Options") != "nosniff" || a.header("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s: headers %v", target, a.Headers)
			}
			if strings.Contains(body, "internal-rotate-secret") {
				t.Errorf("%s: an anonymous page shows the authenticated skill", target)
			}
		}
		if a := do(call{method: http.MethodGet, target: "/catalog/skills/internal-rotate-secret", header: browser}); a.StatusCode != http.StatusNotFound {
			t.Errorf("the authenticated skill's page, anonymous: %d", a.StatusCode)
		}
	})

	form := func(key string, header map[string]string) call {
		h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		for k, v := range header {
			h[k] = v
		}
		return call{method: http.MethodPost, target: "/catalog/sign-in", header: h, body: "key=" + url.QueryEscape(key)}
	}
	t.Run("sign-in refuses other origins and bad keys", func(t *testing.T) {
		for name, c := range map[string]call{
			"no Origin":    form(keys.key, nil),
			"other Origin": form(keys.key, map[string]string{"Origin": "https://evil.example"}),
			"bad key":      form("sk-not-a-key", map[string]string{"Origin": gatewayOrigin}),
		} {
			if a := do(c); a.StatusCode < 400 || len(a.Cookies) > 0 {
				t.Errorf("%s: %d, cookies %q", name, a.StatusCode, a.Cookies)
			}
		}
	})
	var session string
	t.Run("sign-in sets the session cookie", func(t *testing.T) {
		a := do(form(keys.key, map[string]string{"Origin": gatewayOrigin}))
		if a.StatusCode != http.StatusSeeOther || len(a.Cookies) != 1 {
			t.Fatalf("sign-in: %d, cookies %q", a.StatusCode, a.Cookies)
		}
		c := a.Cookies[0]
		for _, want := range []string{websession.SecureCookieName + "=", "HttpOnly", "Secure", "SameSite=Strict", "Path=/", "Max-Age=43200"} {
			if !strings.Contains(c, want) {
				t.Errorf("Set-Cookie %q lacks %s", c, want)
			}
		}
		if strings.Contains(c, keys.key) || strings.Contains(c, apikey.Hash(keys.key)) {
			t.Errorf("the cookie carries the key or its hash: %q", c)
		}
		session, _, _ = strings.Cut(c, ";")
	})
	if session == "" {
		t.FailNow()
	}
	t.Run("the cookie is honoured on the pages only", func(t *testing.T) {
		a := do(call{method: http.MethodGet, target: "/catalog/skills/internal-rotate-secret", header: browser, cookies: []string{session}})
		if a.StatusCode != http.StatusOK || !strings.Contains(string(a.body), apikey.KeyID(keys.key)) || a.header("Cache-Control") != "no-store" {
			t.Errorf("the authenticated skill's page with the session: %d, Cache-Control %q", a.StatusCode, a.header("Cache-Control"))
		}
		for _, target := range []string{"/.well-known/agent-skills/index.json", "/skills/v1/pages/all.json", "/api/v1/skills?q=rotate"} {
			a := do(call{method: http.MethodGet, target: target, cookies: []string{session}})
			if a.StatusCode != http.StatusOK || strings.Contains(string(a.body), "internal-rotate-secret") {
				t.Errorf("%s with only the cookie: %d, shows the authenticated skill: %v", target, a.StatusCode, strings.Contains(string(a.body), "internal-rotate-secret"))
			}
		}
		if a := do(call{method: http.MethodGet, target: "/api/v1/skills/internal-rotate-secret", cookies: []string{session}}); a.StatusCode != http.StatusNotFound {
			t.Errorf("the native API with only the cookie: %d", a.StatusCode)
		}
		forged := strings.Replace(session, "=v1.", "=v1.A", 1)
		if a := do(call{method: http.MethodGet, target: "/catalog/skills/internal-rotate-secret", header: browser, cookies: []string{forged}}); a.StatusCode != http.StatusNotFound {
			t.Errorf("a forged cookie: %d", a.StatusCode)
		}
	})
	t.Run("sign-out", func(t *testing.T) {
		a := do(call{method: http.MethodPost, target: "/catalog/sign-out", cookies: []string{session},
			header: map[string]string{"Origin": gatewayOrigin, "Content-Type": "application/x-www-form-urlencoded"}})
		if a.StatusCode != http.StatusSeeOther || len(a.Cookies) != 1 || !strings.Contains(a.Cookies[0], "Max-Age=0") {
			t.Errorf("sign-out: %d, cookies %q", a.StatusCode, a.Cookies)
		}
	})
}
