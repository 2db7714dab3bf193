package lambdahttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/skilldrop/skilldrop/pkg/vouch"
)

var (
	fixtureDirOnce sync.Once
	fixtureDir     string
	fixtureDirErr  error
)

// fixture reads one of aws-lambda-go's own event fixtures from the module
// cache, so the tests run on the JSON API Gateway really sends.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	fixtureDirOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go").Output()
		if err != nil {
			fixtureDirErr = err
			return
		}
		fixtureDir = filepath.Join(strings.TrimSpace(string(out)), "events", "testdata")
	})
	if fixtureDirErr != nil {
		t.Fatalf("locate aws-lambda-go: %v", fixtureDirErr)
	}
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seen is what the echo handler observed.
type seen struct {
	Method, Path, RawQuery, Host, RemoteAddr, Proto string
	Query                                           map[string][]string
	Headers                                         map[string]string
	Body                                            string
	Vouched                                         vouch.Facts
	HasVouched                                      bool
}

func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v, ok := vouch.FromContext(r.Context())
	s := seen{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Host: r.Host, RemoteAddr: r.RemoteAddr,
		Proto: r.Proto, Query: r.URL.Query(), Headers: map[string]string{}, Body: string(body), Vouched: v, HasVouched: ok}
	for k := range r.Header {
		s.Headers[k] = r.Header.Get(k)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}

// invoke runs payload through the real aws-lambda-go handler machinery,
// with the Adapter as functions/api starts it.
func invoke(t *testing.T, h http.Handler, payload []byte, opts ...Option) events.APIGatewayV2HTTPResponse {
	t.Helper()
	out, err := lambda.NewHandler(New(h, opts...)).Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("decode response %s: %v", out, err)
	}
	return resp
}

func decodeSeen(t *testing.T, resp events.APIGatewayV2HTTPResponse) seen {
	t.Helper()
	if resp.StatusCode != http.StatusOK || resp.IsBase64Encoded {
		t.Fatalf("status %d base64 %v body %s", resp.StatusCode, resp.IsBase64Encoded, resp.Body)
	}
	var s seen
	if err := json.Unmarshal([]byte(resp.Body), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRequestFromFixtures(t *testing.T) {
	t.Run("no-authorizer GET at the root carries host, domain and request id", func(t *testing.T) {
		s := decodeSeen(t, invoke(t, http.HandlerFunc(echo), fixture(t, "apigw-v2-request-no-authorizer.json")))
		want := vouch.Facts{Domain: "aaaaaaaaaa.execute-api.us-west-2.amazonaws.com", RequestID: "LV7fzho-PHcEJPw="}
		if !s.HasVouched || s.Vouched != want {
			t.Errorf("vouched = %+v (%v), want %+v", s.Vouched, s.HasVouched, want)
		}
		if s.Method != http.MethodGet || s.Path != "/" || s.Host != "aaaaaaaaaa.execute-api.us-west-2.amazonaws.com" || s.RemoteAddr != "1.2.3.4" || s.Proto != "HTTP/1.1" {
			t.Errorf("request = %+v", s)
		}
		if s.Headers["User-Agent"] != "curl/7.58.0" || s.Headers["X-Forwarded-Proto"] != "https" {
			t.Errorf("headers = %v", s.Headers)
		}
		if _, ok := s.Headers["Host"]; ok {
			t.Error("Host left in the header map; net/http keeps it in Request.Host only")
		}
	})
	t.Run("iam event keeps repeated query parameters, cookies and the body", func(t *testing.T) {
		s := decodeSeen(t, invoke(t, http.HandlerFunc(echo), fixture(t, "apigw-v2-request-iam.json")))
		if s.Path != "/my/path" || s.RawQuery != "parameter1=value1&parameter1=value2&parameter2=value" {
			t.Errorf("path %q query %q", s.Path, s.RawQuery)
		}
		if got := s.Query["parameter1"]; !reflect.DeepEqual(got, []string{"value1", "value2"}) {
			t.Errorf("parameter1 = %v", got)
		}
		if s.Headers["Cookie"] != "cookie1; cookie2" || s.Headers["Header1"] != "value1" {
			t.Errorf("headers = %v", s.Headers)
		}
		if s.Body != "{\r\n\t\"a\": 1\r\n}" {
			t.Errorf("body = %q", s.Body)
		}
		if s.Host != "id.execute-api.us-east-1.amazonaws.com" {
			t.Errorf("host without a host header = %q, want the domain name", s.Host)
		}
	})
}

func event(mut func(*events.APIGatewayV2HTTPRequest)) []byte {
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: "/x",
		Headers: map[string]string{"host": "api.example.com"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "api.example.com", RequestID: "req-1", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/x", Protocol: "HTTP/1.1", SourceIP: "203.0.113.9"},
		},
	}
	if mut != nil {
		mut(&ev)
	}
	b, _ := json.Marshal(ev)
	return b
}

func TestRequestConversion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mut   func(*events.APIGatewayV2HTTPRequest)
		check func(t *testing.T, s seen)
	}{
		{"base64 body is decoded", func(ev *events.APIGatewayV2HTTPRequest) {
			ev.RequestContext.HTTP.Method = "POST"
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 'h', 'i'}), true
		}, func(t *testing.T, s seen) {
			if s.Body != "\x00\x01\x02hi" || s.Method != http.MethodPost {
				t.Errorf("body %q method %s", s.Body, s.Method)
			}
		}},
		{"a forged Host header does not change the gateway domain", func(ev *events.APIGatewayV2HTTPRequest) {
			ev.Headers["host"] = "evil.example"
			ev.Headers["x-forwarded-host"] = "evil.example"
		}, func(t *testing.T, s seen) {
			if s.Vouched.Domain != "api.example.com" || s.Host != "evil.example" {
				t.Errorf("domain %q host %q", s.Vouched.Domain, s.Host)
			}
		}},
		{"decoded path with space, question mark and hash stays one path", func(ev *events.APIGatewayV2HTTPRequest) {
			ev.RawPath, ev.RawQueryString = "/a b?c#d", "q=1"
		}, func(t *testing.T, s seen) {
			if s.Path != "/a b?c#d" || s.RawQuery != "q=1" {
				t.Errorf("path %q query %q", s.Path, s.RawQuery)
			}
		}},
		{"encoded path is decoded once", func(ev *events.APIGatewayV2HTTPRequest) {
			ev.RawPath = "/skills/a%20b.md"
		}, func(t *testing.T, s seen) {
			if s.Path != "/skills/a b.md" {
				t.Errorf("path %q", s.Path)
			}
		}},
		{"empty raw path is the root", func(ev *events.APIGatewayV2HTTPRequest) {
			ev.RawPath = ""
		}, func(t *testing.T, s seen) {
			if s.Path != "/" {
				t.Errorf("path %q", s.Path)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, decodeSeen(t, invoke(t, http.HandlerFunc(echo), event(tc.mut))))
		})
	}
}

func TestMalformedEventIsBadRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(*events.APIGatewayV2HTTPRequest)
	}{
		{"no method", func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = "" }},
		{"bad base64", func(ev *events.APIGatewayV2HTTPRequest) { ev.Body, ev.IsBase64Encoded = "!!!", true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			resp := invoke(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }), event(tc.mut))
			if resp.StatusCode != http.StatusBadRequest || called {
				t.Errorf("status %d, handler called %v", resp.StatusCode, called)
			}
			var body map[string]map[string]string
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || body["error"]["code"] != "bad_request" {
				t.Errorf("body %s: %v", resp.Body, err)
			}
		})
	}
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.Bytes()
}

func TestResponseConversion(t *testing.T) {
	zipBytes := []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe")
	for _, tc := range []struct {
		name       string
		method     string
		handler    http.HandlerFunc
		wantStatus int
		wantBody   []byte
		wantBase64 bool
		wantHeader map[string]string
		wantCookie []string
	}{
		{"JSON travels as text", "GET", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"a":"é"}`))
		}, 200, []byte(`{"a":"é"}`), false, map[string]string{"Content-Type": "application/json"}, nil},
		{"markdown travels as text", "GET", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			_, _ = w.Write([]byte("---\nname: x\n---\n"))
		}, 200, []byte("---\nname: x\n---\n"), false, nil, nil},
		{"zip is base64", "GET", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/zip")
			_, _ = w.Write(zipBytes)
		}, 200, zipBytes, true, nil, nil},
		{"gzip-encoded JSON is base64", "GET", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gz(`{"a":1}`))
		}, 200, gz(`{"a":1}`), true, map[string]string{"Content-Encoding": "gzip"}, nil},
		{"invalid UTF-8 markdown is base64", "GET", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			_, _ = w.Write([]byte{0xff, 'a'})
		}, 200, []byte{0xff, 'a'}, true, nil, nil},
		{"no content type is base64", "GET", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("abc"))
		}, 200, []byte("abc"), true, nil, nil},
		{"multi-value headers are joined, cookies listed", "GET", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Add("Vary", "Authorization")
			w.Header().Add("Vary", "Accept-Encoding")
			w.Header().Add("Set-Cookie", "a=1; Path=/")
			w.Header().Add("Set-Cookie", "b=2, 3")
			w.WriteHeader(http.StatusNoContent)
		}, 204, nil, false, map[string]string{"Vary": "Authorization, Accept-Encoding"}, []string{"a=1; Path=/", "b=2, 3"}},
		{"status without a write", "GET", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusNotModified)
		}, 304, nil, false, nil, nil},
		{"no write at all is 200", "GET", func(http.ResponseWriter, *http.Request) {}, 200, nil, false, nil, nil},
		{"HEAD drops a body but keeps its length", "HEAD", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"a":1}`))
		}, 200, nil, false, map[string]string{"Content-Length": "7"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := invoke(t, tc.handler, event(func(ev *events.APIGatewayV2HTTPRequest) { ev.RequestContext.HTTP.Method = tc.method }))
			if resp.StatusCode != tc.wantStatus || resp.IsBase64Encoded != tc.wantBase64 {
				t.Errorf("status %d base64 %v, want %d %v", resp.StatusCode, resp.IsBase64Encoded, tc.wantStatus, tc.wantBase64)
			}
			body := []byte(resp.Body)
			if resp.IsBase64Encoded {
				var err error
				if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(body, tc.wantBody) && (len(body) > 0 || len(tc.wantBody) > 0) {
				t.Errorf("body %q, want %q", body, tc.wantBody)
			}
			for k, v := range tc.wantHeader {
				if resp.Headers[k] != v {
					t.Errorf("header %s = %q, want %q", k, resp.Headers[k], v)
				}
			}
			if !reflect.DeepEqual(resp.Cookies, tc.wantCookie) && (len(resp.Cookies) > 0 || len(tc.wantCookie) > 0) {
				t.Errorf("cookies %v, want %v", resp.Cookies, tc.wantCookie)
			}
		})
	}
}

func TestResponseBound(t *testing.T) {
	const limit = 200 << 10
	for _, tc := range []struct {
		name       string
		size       int
		typ        string
		wantStatus int
	}{
		{"text within the bound", 130 << 10, "application/json", 200},
		{"binary that fits raw but not as base64", 130 << 10, "application/zip", 502},
		{"binary that fits as base64", 100 << 10, "application/zip", 200},
		{"text beyond the body budget", 150 << 10, "application/json", 502},
		{"text whose JSON escaping does not fit", 100 << 10, "text/plain\n", 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				typ, fill := strings.CutSuffix(tc.typ, "\n")
				w.Header().Set("Content-Type", typ)
				c := byte('a')
				if fill {
					c = '\n'
				}
				_, _ = w.Write(bytes.Repeat([]byte{c}, tc.size))
			})
			resp := invoke(t, h, event(nil), WithMaxResponseBytes(limit))
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if tc.wantStatus == 502 && !strings.Contains(resp.Body, "response_too_large") {
				t.Errorf("body %s", resp.Body)
			}
		})
	}
}
