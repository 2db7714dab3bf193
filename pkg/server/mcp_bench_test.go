package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// mcpRequest is a stateless (2026-07-28) JSON-RPC request to /mcp.
func mcpRequest(method, params string) func() *http.Request {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "" {
		meta = params + "," + meta
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + meta + `}}`
	name := ""
	if i := strings.Index(params, `"uri":"`); i >= 0 {
		name = params[i+7 : len(params)-1]
	}
	return func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", method)
		if name != "" {
			r.Header.Set("Mcp-Name", name)
		}
		return r
	}
}

func serveOK(b *testing.B, srv *Server, r *http.Request, min int) {
	w := &discardWriter{h: http.Header{}}
	srv.ServeHTTP(w, r)
	if w.code != http.StatusOK && w.code != 0 || w.n < min { // 0: written without WriteHeader, a 200
		b.Fatalf("%s %s: status %d, %d bytes", r.Method, r.URL.Path, w.code, w.n)
	}
}

// BenchmarkMCPSkillsList is a warm skills/list of a 1,000-skill catalog
// (three files each; one page), against a warm GET of the same catalog's
// RFC index through the same handler.
func BenchmarkMCPSkillsList(b *testing.B) {
	st := store.NewMemory()
	bk := newBucket(b, st)
	for i := range 1000 {
		name := fmt.Sprintf("skill-%04d", i)
		servedSkill(bk, name, catalog.Public, map[string][]byte{
			"references/guide.md": []byte("# Guide\n"), "scripts/run.sh": []byte("#!/bin/sh\n"),
		})
	}
	bk.publish()
	h := newHarness(b, st)
	list := mcpRequest("skills/list", "")
	index := httptest.NewRequest(http.MethodGet, "/.well-known/agent-skills/index.json", nil)
	pair(b, func() { serveOK(b, h.srv, list(), 500_000) }, func() { serveOK(b, h.srv, index, 100_000) })
}

// BenchmarkMCPRead is resources/read of a 100 KiB file against the
// artifact GET of the same bytes (one blob) through the same handler and
// store. Target: ratio <= 1.5. The text and binary cases are warm (the
// content's encoding kept); "text, encoded per read" drops it before every
// read, and "text, through the SDK" turns the fast path off: the figures
// for a first read and for the SDK's own handling.
func BenchmarkMCPRead(b *testing.B) {
	raw := make([]byte, 100<<10)
	_, _ = rand.Read(raw)
	text := "---\nname: big\ndescription: A large skill.\n---\n" + hex.EncodeToString(raw[:50<<10])[:100<<10-44] + "\n"
	for _, tc := range []struct {
		name        string
		format      artifact.Format
		path        string
		body        []byte
		cold, noSDK bool
	}{
		{"text", artifact.FormatMarkdown, "SKILL.md", []byte(text), false, false},
		{"binary", artifact.FormatZip, "assets/blob.bin", append([]byte("PK\x03\x04"), raw[:100<<10-4]...), false, false},
		{"text, encoded per read", artifact.FormatMarkdown, "SKILL.md", []byte(text), true, false},
		{"text, through the SDK", artifact.FormatMarkdown, "SKILL.md", []byte(text), false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			st := store.NewMemory()
			bk := newBucket(b, st)
			files := map[string][]byte{tc.path: tc.body}
			e := servedSkill(bk, "big", catalog.Public, files)
			// The artifact is the very same blob.
			v := e.LatestVersion()
			for _, f := range v.Files {
				if f.Path == tc.path {
					v.Digest, v.Size, v.Format = f.Digest, f.Size, tc.format
				}
			}
			e.Path = "/skills/big." + string(tc.format)
			bk.publish()
			h := newHarness(b, st)
			h.srv.mcp.noFast = tc.noSDK
			read := mcpRequest("resources/read", `"uri":"skill://big/`+tc.path+`"`)
			get := httptest.NewRequest(http.MethodGet, e.Path, nil)
			b.SetBytes(int64(len(tc.body)))
			pair(b, func() {
				if tc.cold {
					h.srv.mcp.contents = newContentCache()
				}
				serveOK(b, h.srv, read(), len(tc.body))
			}, func() { serveOK(b, h.srv, get, len(tc.body)) })
		})
	}
}
