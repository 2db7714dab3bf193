package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/lambdahttp"
	"github.com/skilldrop/skilldrop/pkg/store"
)

var mcpHeaders = []string{"Content-Type: application/json", "Accept: application/json, text/event-stream"}

const (
	initializeMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	pingMsg       = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	toolsListMsg  = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
)

func (h *harness) post(path, body string, headers ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.serve(httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)), headers...)
}

type rpcResponse struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

type initResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	Capabilities    struct {
		Experimental map[string]json.RawMessage `json:"experimental"`
		Extensions   map[string]json.RawMessage `json:"extensions"`
		Resources    json.RawMessage            `json:"resources"`
		Tools        json.RawMessage            `json:"tools"`
		Prompts      json.RawMessage            `json:"prompts"`
	} `json:"capabilities"`
	ServerInfo struct{ Name string } `json:"serverInfo"`
}

// indexURL is the URL capabilities.experimental.agentSkillsUrl advertises
// ("" for none); the value must be an object, {"url": …}.
func (ir initResult) indexURL(t testing.TB) string {
	t.Helper()
	raw, ok := ir.Capabilities.Experimental["agentSkillsUrl"]
	if !ok {
		return ""
	}
	var v struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.URL == "" {
		t.Fatalf("agentSkillsUrl %s is not {\"url\": …}", raw)
	}
	return v.URL
}

func decodeRPC(t testing.TB, status int, contentType string, body []byte) rpcResponse {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if !strings.HasPrefix(contentType, "application/json") {
		t.Fatalf("content type %q (JSON responses expected)", contentType)
	}
	var r rpcResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("response %s: %v", body, err)
	}
	if len(r.Error) > 0 {
		t.Fatalf("rpc error %s", r.Error)
	}
	return r
}

func decodeInit(t testing.TB, status int, contentType string, body []byte) initResult {
	t.Helper()
	var ir initResult
	if err := json.Unmarshal(decodeRPC(t, status, contentType, body).Result, &ir); err != nil {
		t.Fatal(err)
	}
	return ir
}

func TestMCPInitializeAdvertisesOnlyWhatTheCallerCanSee(t *testing.T) {
	const indexURL = "https://skills.example.com/.well-known/agent-skills/index.json"
	for _, tc := range []struct {
		name      string
		build     func(b *bucket)
		auth      string
		advertise bool
	}{
		{"public skills, anonymous", func(b *bucket) {
			b.skill("pub", "", catalog.Public, artifact.FormatMarkdown, skillMD("pub"))
		}, "", true},
		{"only authenticated skills, anonymous", func(b *bucket) {
			b.skill("sec", "", catalog.Authenticated, artifact.FormatMarkdown, skillMD("sec"))
		}, "", false},
		{"only authenticated skills, authenticated", func(b *bucket) {
			b.skill("sec", "", catalog.Authenticated, artifact.FormatMarkdown, skillMD("sec"))
		}, goodKey, true},
		{"only a listing's public skill, anonymous", func(b *bucket) {
			b.skill("l-only", "partner", catalog.Public, artifact.FormatMarkdown, skillMD("l-only"))
			b.listing("partner")
		}, "", true},
		{"only withdrawn skills", func(b *bucket) {
			b.skill("gone", "", catalog.Public, artifact.FormatMarkdown, skillMD("gone")).Withdrawn = true
		}, goodKey, false},
		{"empty catalog", func(*bucket) {}, goodKey, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := store.NewMemory()
			b := newBucket(t, st)
			tc.build(b)
			b.publish()
			h := newHarness(t, st)
			hdr := append([]string{}, mcpHeaders...)
			if tc.auth != "" {
				hdr = append(hdr, bearer(tc.auth))
			}
			w := h.post("/mcp", initializeMsg, hdr...)
			ir := decodeInit(t, w.Code, w.Header().Get("Content-Type"), w.Body.Bytes())
			want := ""
			if tc.advertise {
				want = indexURL
			}
			if got := ir.indexURL(t); got != want {
				t.Errorf("agentSkillsUrl %q, want %q", got, want)
			}
			if !tc.advertise && ir.Capabilities.Experimental != nil {
				t.Errorf("experimental %v advertised", ir.Capabilities.Experimental)
			}
			// Declared whatever the caller sees (a listing may be empty),
			// and nothing is pushed: no listChanged, no subscribe.
			c := ir.Capabilities
			if string(c.Resources) != `{}` || string(c.Tools) != `{}` || string(c.Prompts) != `{}` ||
				string(c.Extensions[skillsExtension]) != `{"directoryRead":true}` || len(c.Extensions) != 1 {
				t.Errorf("capabilities resources %s tools %s prompts %s extensions %v", c.Resources, c.Tools, c.Prompts, c.Extensions)
			}
			if ir.ServerInfo.Name != "skilldrop" {
				t.Errorf("server info %+v", ir.ServerInfo)
			}
			if cc := w.Header().Get("Cache-Control"); !strings.Contains(cc, "no-cache") && !strings.Contains(cc, "no-store") || w.Header().Get("Mcp-Session-Id") != "" {
				t.Errorf("Cache-Control %q, session %q", w.Header().Get("Cache-Control"), w.Header().Get("Mcp-Session-Id"))
			}
		})
	}
}

func TestMCPPingAndToolsList(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st)
	w := h.post("/mcp", pingMsg, mcpHeaders...)
	if r := decodeRPC(t, w.Code, w.Header().Get("Content-Type"), w.Body.Bytes()); r.ID != 2 || string(r.Result) != "{}" {
		t.Errorf("ping: %s", w.Body)
	}
	w = h.post("/mcp", toolsListMsg, mcpHeaders...)
	var tools struct {
		Tools []any `json:"tools"`
	}
	r := decodeRPC(t, w.Code, w.Header().Get("Content-Type"), w.Body.Bytes())
	if err := json.Unmarshal(r.Result, &tools); err != nil || tools.Tools == nil || len(tools.Tools) != 0 {
		t.Errorf("tools/list: %s", w.Body)
	}
	t.Run("oversized body is 413", func(t *testing.T) {
		h := newHarness(t, st, func(c *Config) { c.MaxBodyBytes = 64 })
		w := h.post("/mcp", initializeMsg, mcpHeaders...)
		if w.Code != http.StatusRequestEntityTooLarge || errorCode(t, w) != codeTooLarge {
			t.Errorf("status %d %s", w.Code, w.Body)
		}
	})
}

// TestMCPThroughAPIGateway sends initialize as API Gateway would: a v2
// event (aws-lambda-go's own fixture, turned into a POST /mcp) with a
// non-loopback Host, through the adapter and the real handler machinery.
func TestMCPThroughAPIGateway(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	h := newHarness(t, st, func(c *Config) { c.PublicBaseURL = "" })

	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go").Output()
	if err != nil {
		t.Fatalf("locate aws-lambda-go: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "events", "testdata", "apigw-v2-request-no-authorizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	ev.RawPath, ev.RequestContext.HTTP.Path, ev.RequestContext.HTTP.Method = "/mcp", "/mcp", http.MethodPost
	ev.Headers["content-type"] = "application/json"
	ev.Headers["accept"] = "application/json, text/event-stream"
	ev.Headers["host"] = "skills.example.org" // a custom domain in front; not loopback
	ev.Body = initializeMsg
	ev.RequestContext.DomainName = "skills.example.org"
	payload, _ := json.Marshal(ev)

	adapter := lambdahttp.New(h.srv)
	res, err := lambda.NewHandler(adapter.Handle).Invoke(context.Background(), payload)
	if err != nil {
		t.Fatal(err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(res, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.IsBase64Encoded {
		t.Fatal("JSON-RPC answer base64-encoded")
	}
	ir := decodeInit(t, resp.StatusCode, resp.Headers["Content-Type"], []byte(resp.Body))
	if got := ir.indexURL(t); got != "https://skills.example.org/.well-known/agent-skills/index.json" {
		t.Errorf("agentSkillsUrl %v", got)
	}
	if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
		t.Errorf("request id %q, want API Gateway's %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
	}
}

// TestMCPOnALoopbackListener pins the DNS-rebinding guard locally.
func TestMCPOnALoopbackListener(t *testing.T) {
	st := store.NewMemory()
	standardBucket(t, st)
	for _, tc := range []struct {
		name    string
		base    string
		host    func(ts *httptest.Server) string
		status  int
		wantURL func(ts *httptest.Server) string
	}{
		{"loopback Host", "", func(ts *httptest.Server) string { return ts.Listener.Addr().String() }, 200,
			func(ts *httptest.Server) string { return ts.URL + "/.well-known/agent-skills/index.json" }},
		{"localhost Host", "", func(ts *httptest.Server) string { return "localhost" }, 200,
			func(*httptest.Server) string { return "http://localhost/.well-known/agent-skills/index.json" }},
		{"rebound name", "", func(*httptest.Server) string { return "evil.example" }, 403, nil},
		{"the configured public host behind a local proxy", "https://skills.example.com", func(*httptest.Server) string { return "skills.example.com" }, 200,
			func(*httptest.Server) string { return "https://skills.example.com/.well-known/agent-skills/index.json" }},
		{"another host with a configured base", "https://skills.example.com", func(*httptest.Server) string { return "evil.example" }, 403, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, st, func(c *Config) { c.PublicBaseURL, c.Local = tc.base, true })
			ts := httptest.NewServer(h.srv)
			defer ts.Close()
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(initializeMsg))
			req.Host = tc.host(ts)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.wantURL == nil {
				return
			}
			ir := decodeInit(t, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			if got := ir.indexURL(t); got != tc.wantURL(ts) {
				t.Errorf("agentSkillsUrl %v, want %s", got, tc.wantURL(ts))
			}
		})
	}
}
