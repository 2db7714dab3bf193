package server

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// The protocol revisions a host may speak: the stateless one (requests
// carry their _meta) and the two initialize-based ones.
const (
	statelessRevision = "2026-07-28"
	revision20251125  = "2025-11-25"
	revision20250618  = "2025-06-18"
)

var revisions = []string{statelessRevision, revision20251125, revision20250618}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// mcpClient speaks JSON-RPC to a harness as an MCP host would, in one
// protocol revision, with or without a key.
type mcpClient struct {
	t       testing.TB
	h       *harness
	version string
	key     string
	id      atomic.Int64
}

// newMCPClient returns a client of revision; an initialize-based one has
// completed the handshake (the server is stateless: it remembers nothing).
func newMCPClient(t testing.TB, h *harness, version, key string) *mcpClient {
	t.Helper()
	c := &mcpClient{t: t, h: h, version: version, key: key}
	if version != statelessRevision {
		res, rerr, _ := c.call("initialize", map[string]any{
			"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test-host", "version": "1"},
		})
		if rerr != nil {
			t.Fatalf("initialize %s: %+v", version, rerr)
		}
		var ir struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if err := json.Unmarshal(res, &ir); err != nil || ir.ProtocolVersion != version {
			t.Fatalf("initialize negotiated %q (want %s): %s", ir.ProtocolVersion, version, res)
		}
		c.call("notifications/initialized", nil)
	}
	return c
}

// call sends one request (a notification when method starts with
// "notifications/") and returns its result or error, and the response.
func (c *mcpClient) call(method string, params map[string]any) (json.RawMessage, *rpcError, *httptest.ResponseRecorder) {
	c.t.Helper()
	params = maps.Clone(params) // _meta is added below, for this revision only
	if params == nil {
		params = map[string]any{}
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	notification := strings.HasPrefix(method, "notifications/")
	if !notification {
		msg["id"] = c.id.Add(1)
	}
	hdr := append([]string{}, mcpHeaders...)
	if c.key != "" {
		hdr = append(hdr, bearer(c.key))
	}
	if method != "initialize" {
		hdr = append(hdr, "MCP-Protocol-Version: "+c.version)
	}
	if c.version == statelessRevision {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    c.version,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
		hdr = append(hdr, "Mcp-Method: "+method)
		if uri, ok := params["uri"].(string); ok && method == "resources/read" {
			hdr = append(hdr, "Mcp-Name: "+uri)
		}
	}
	msg["params"] = params
	body, _ := json.Marshal(msg)
	w := c.h.post("/mcp", string(body), hdr...)
	if notification {
		return nil, nil, w
	}
	var resp struct {
		ID     int64           `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		c.t.Fatalf("%s: HTTP %d, body %.300s: %v", method, w.Code, w.Body, err)
	}
	if resp.Error == nil && w.Code != http.StatusOK {
		c.t.Fatalf("%s: HTTP %d with a result", method, w.Code)
	}
	return resp.Result, resp.Error, w
}

// result calls and fails on an error; out receives the result.
func (c *mcpClient) result(method string, params map[string]any, out any) {
	c.t.Helper()
	res, rerr, _ := c.call(method, params)
	if rerr != nil {
		c.t.Fatalf("%s %v: error %+v", method, params, rerr)
	}
	if err := json.Unmarshal(res, out); err != nil {
		c.t.Fatalf("%s: %v in %s", method, err, res)
	}
}

// wantError calls and fails unless the answer is the error code.
func (c *mcpClient) wantError(method string, params map[string]any, code int64) *rpcError {
	c.t.Helper()
	res, rerr, _ := c.call(method, params)
	if rerr == nil || rerr.Code != code {
		c.t.Fatalf("%s %.200v: result %.200s, error %+v; want error %d", method, params, res, rerr, code)
	}
	return rerr
}

// Wire shapes of the extension, as a host decodes them.
type (
	wireSkill struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   []wireResource  `json:"resources"`
	}
	wireResource struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	}
	wireCaching struct {
		ResultType string `json:"resultType"`
		TTLMs      *int   `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
	wireList struct {
		wireCaching
		Skills     []wireSkill `json:"skills"`
		NextCursor string      `json:"nextCursor"`
	}
	wireGet struct {
		wireCaching
		Skill      wireSkill `json:"skill"`
		NextCursor *string   `json:"nextCursor"`
	}
	wireContents struct {
		wireCaching
		Contents []struct {
			URI      string  `json:"uri"`
			MIMEType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     *[]byte `json:"blob"`
		} `json:"contents"`
	}
	wireResources struct {
		wireCaching
		Resources []struct {
			URI         string `json:"uri"`
			Name        string `json:"name"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
			Size        int64  `json:"size"`
		} `json:"resources"`
		NextCursor string `json:"nextCursor"`
	}
)

// listAll pages through skills/list.
func (c *mcpClient) listAll() []wireSkill {
	c.t.Helper()
	var all []wireSkill
	cursor := ""
	for range 1000 {
		var page wireList
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		c.result("skills/list", params, &page)
		all = append(all, page.Skills...)
		if cursor = page.NextCursor; cursor == "" {
			return all
		}
	}
	c.t.Fatal("skills/list never ends")
	return nil
}

// read reads one resource and returns its bytes and media type.
func (c *mcpClient) read(uri string) ([]byte, string, wireContents) {
	c.t.Helper()
	var res wireContents
	c.result("resources/read", map[string]any{"uri": uri}, &res)
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		c.t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	ct := res.Contents[0]
	switch {
	case ct.Text != nil && ct.Blob == nil:
		return []byte(*ct.Text), ct.MIMEType, res
	case ct.Blob != nil && ct.Text == nil:
		return *ct.Blob, ct.MIMEType, res
	}
	c.t.Fatalf("read %s: want exactly one of text and blob: %+v", uri, ct)
	return nil, "", res
}

// indexed publishes files (bucket key → content) into a memory store with
// the real indexer, as an operator's drops would be.
func indexed(t testing.TB, files map[string]string) store.Store {
	t.Helper()
	st := store.NewMemory()
	for key, body := range files {
		if _, err := st.Put(context.Background(), key, []byte(body), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := indexer.New(indexer.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Reindex(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

// mcpBucket is the bucket the host tests publish: an archive with text,
// binary and empty files in subdirectories (names with a space and
// non-ASCII included), a skill-md, a listing's own skill beside a
// top-level skill it includes by name, an authenticated skill, a skill the
// config describes differently from its frontmatter, one over the Skills
// extension's 512 files, an external entry and a sub-agent.
func mcpBucket(t testing.TB) store.Store {
	t.Helper()
	wide := map[string]string{"SKILL.md": skilltest.SkillMD("wide", "1", "Too many files for MCP.")}
	for i := range 512 {
		wide["refs/r"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+".md"] = "x"
	}
	return indexed(t, map[string]string{
		"skills/code-review.zip": string(skilltest.Zip(t, map[string]string{
			"SKILL.md":                "---\nname: code-review\ndescription: Review a change (1 < 2 > 0) & \"well\".\nlicense: MIT\nallowed-tools: [Read, Grep]\nmetadata:\n  version: \"2.1\"\n  owner: platform\n---\n# Code review\n\nSee `references/checklist.md`.\n",
			"references/checklist.md": "# Checklist\n\n- Tests <pass> & \"lint\" is clean\u2028\n",
			"references/read me.md":   "spaces in names\n",
			"references/über.md":      "non-ASCII names\n",
			"scripts/lint.sh":         "#!/bin/sh\nexec golangci-lint run ./...\n",
			"assets/logo.png":         "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe",
			"templates/empty.txt":     "",
		})),
		"skills/deploy-via-pr.md":                         skilltest.SkillMD("deploy-via-pr", "1.0", "Deploy through a pull request."),
		"skills/internal-rotate-secret/SKILL.md":          skilltest.SkillMD("internal-rotate-secret", "", "Rotate a secret."),
		"skills/overridden.md":                            skilltest.SkillMD("overridden", "", "The frontmatter's own words."),
		"skills/wide.zip":                                 string(skilltest.Zip(t, wide)),
		"listings/partner-a/skills/partner-onboarding.md": skilltest.SkillMD("partner-onboarding", "", "Onboard a partner."),
		"subagents/reviewer.md":                           skilltest.AgentMD("reviewer", "1", "Reviews."),
		"agent-skills.yaml": "version: 1\nskills:\n" +
			"  - name: internal-rotate-secret\n    visibility: authenticated\n" +
			"  - name: overridden\n    description: The operator's words.\n" +
			"  - name: elsewhere\n    type: skill-md\n    url: https://cdn.example.org/elsewhere.md\n    description: External.\n" +
			"    digest: sha256:" + strings.Repeat("ab", 32) + "\n" +
			"listings:\n  partner-a:\n    skills:\n      - name: deploy-via-pr\n",
	})
}
