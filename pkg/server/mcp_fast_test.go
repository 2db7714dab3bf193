package server

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestMCPFastAnswersAreTheSDKs sends the same requests to a server with
// the fast path and to one without it (the SDK answers everything) and
// requires the same answers: status, content type, caching header and
// JSON. The requests cover what the fast path answers (reads of text,
// binary, empty and percent-encoded files and listings, in each revision,
// with and without a key, string and integer ids) and what it must leave
// to the SDK (a header or _meta that disagrees, a key spelt in another
// case, an extra parameter, an unknown URI, a bad cursor, a fractional id,
// a missing Accept type, a tampered file).
func TestMCPFastAnswersAreTheSDKs(t *testing.T) {
	st := mcpBucket(t)
	fast, slow := newHarness(t, st), newHarness(t, st)
	slow.srv.mcp.noFast = true
	meta := func(extra string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}` + extra + `}`
	}
	type request struct {
		name     string
		body     string
		headers  []string
		wantFast bool
	}
	stateless := func(method, name string) []string {
		h := append([]string{}, mcpHeaders...)
		h = append(h, "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: "+method)
		if name != "" {
			h = append(h, "Mcp-Name: "+name)
		}
		return h
	}
	old := func(rev string) []string {
		return append(append([]string{}, mcpHeaders...), "MCP-Protocol-Version: "+rev)
	}
	read := func(id, uri, metaPart string) string {
		p := `"uri":"` + uri + `"`
		if metaPart != "" {
			p += "," + metaPart
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"resources/read","params":{` + p + `}}`
	}
	list := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"skills/list","params":{` + params + `}}`
	}
	var reqs []request
	for _, uri := range []string{
		"skill://code-review/SKILL.md", "skill://code-review/references/checklist.md", "skill://code-review/assets/logo.png",
		"skill://code-review/templates/empty.txt", "skill://code-review/references/%C3%BCber.md",
		"skill://partner-a.listing/partner-onboarding/SKILL.md",
	} {
		reqs = append(reqs,
			request{"2026 read " + uri, read(`"r-1"`, uri, meta("")), stateless("resources/read", uri), true},
			request{"2026 read with client info " + uri, read(`7`, uri, meta(`,"io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"}`)), stateless("resources/read", uri), true},
			request{"2025-11-25 read " + uri, read(`8`, uri, ""), old("2025-11-25"), true},
			request{"2025-06-18 read " + uri, read(`"x"`, uri, ""), old("2025-06-18"), true},
		)
	}
	cursor := encodeCursor("skill://deploy-via-pr/SKILL.md")
	reqs = append(reqs,
		request{"2026 list", list(`1`, meta("")), stateless("skills/list", ""), true},
		request{"2026 list after a cursor", list(`1`, `"cursor":"`+cursor+`",`+meta("")), stateless("skills/list", ""), true},
		request{"2025-11-25 list", list(`2`, ""), old("2025-11-25"), true},
		request{"2025-06-18 list after a cursor", list(`2`, `"cursor":"`+cursor+`"`), old("2025-06-18"), true},

		request{"unknown URI", read(`1`, "skill://nope/SKILL.md", meta("")), stateless("resources/read", "skill://nope/SKILL.md"), false},
		request{"hidden URI", read(`1`, "skill://internal-rotate-secret/SKILL.md", ""), old("2025-11-25"), false},
		request{"Mcp-Name disagrees", read(`1`, "skill://code-review/SKILL.md", meta("")), stateless("resources/read", "skill://deploy-via-pr/SKILL.md"), false},
		request{"Mcp-Method disagrees", read(`1`, "skill://code-review/SKILL.md", meta("")), stateless("skills/list", "skill://code-review/SKILL.md"), false},
		request{"_meta version disagrees", read(`1`, "skill://code-review/SKILL.md", meta("")), old("2025-11-25"), false},
		request{"no _meta in 2026", read(`1`, "skill://code-review/SKILL.md", ""), stateless("resources/read", "skill://code-review/SKILL.md"), false},
		request{"log level asked", read(`1`, "skill://code-review/SKILL.md", meta(`,"io.modelcontextprotocol/logLevel":"debug"`)), stateless("resources/read", "skill://code-review/SKILL.md"), false},
		request{"capabilities not an object", read(`1`, "skill://code-review/SKILL.md", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}`), stateless("resources/read", "skill://code-review/SKILL.md"), false},
		request{"key in another case", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"URI":"skill://code-review/SKILL.md"}}`, old("2025-11-25"), false},
		request{"an extra parameter", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://code-review/SKILL.md","requestState":"x"}}`, old("2025-11-25"), false},
		request{"an extra member", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://code-review/SKILL.md"},"x":1}`, old("2025-11-25"), false},
		request{"fractional id", read(`1.5`, "skill://code-review/SKILL.md", ""), old("2025-11-25"), false},
		request{"null id", read(`null`, "skill://code-review/SKILL.md", ""), old("2025-11-25"), false},
		request{"no revision header", read(`1`, "skill://code-review/SKILL.md", ""), mcpHeaders, false},
		request{"Accept without event streams", read(`1`, "skill://code-review/SKILL.md", ""), []string{"Content-Type: application/json", "Accept: application/json", "MCP-Protocol-Version: 2025-11-25"}, false},
		request{"bad cursor", list(`1`, `"cursor":"!!"`), old("2025-11-25"), false},
		request{"skills/get is the SDK's", `{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://code-review/SKILL.md"}}`, old("2025-11-25"), false},
	)
	for _, key := range []string{"", goodKey} {
		for _, rq := range reqs {
			t.Run(rq.name+map[string]string{"": "", goodKey: " (key)"}[key], func(t *testing.T) {
				hdr := rq.headers
				if key != "" {
					hdr = append(append([]string{}, hdr...), bearer(key))
				}
				want := rq.wantFast || rq.name == "hidden URI" && key != "" // visible with a key
				before := fast.srv.mcp.fast.Load()
				a, b := fast.post("/mcp", rq.body, hdr...), slow.post("/mcp", rq.body, hdr...)
				if used := fast.srv.mcp.fast.Load() > before; used != want {
					t.Errorf("fast path used: %v, want %v", used, rq.wantFast)
				}
				if a.Code != b.Code || a.Header().Get("Content-Type") != b.Header().Get("Content-Type") || a.Header().Get("Cache-Control") != b.Header().Get("Cache-Control") {
					t.Errorf("fast %d %q %q; SDK %d %q %q", a.Code, a.Header().Get("Content-Type"), a.Header().Get("Cache-Control"),
						b.Code, b.Header().Get("Content-Type"), b.Header().Get("Cache-Control"))
				}
				var ja, jb any
				errA, errB := json.Unmarshal(a.Body.Bytes(), &ja), json.Unmarshal(b.Body.Bytes(), &jb)
				if (errA == nil) != (errB == nil) || errA == nil && !reflect.DeepEqual(ja, jb) || errA != nil && a.Body.String() != b.Body.String() {
					t.Errorf("answers differ:\n fast %.400s\n SDK  %.400s", a.Body, b.Body)
				}
				if want && !strings.Contains(a.Body.String(), `"result"`) {
					t.Errorf("no result: %.200s", a.Body)
				}
			})
		}
	}
	t.Run("a tampered file is the SDK's to answer", func(t *testing.T) {
		st := mcpBucket(t)
		tamper(t, st, []byte("# Checklist\n\n- Tests <pass> & \"lint\" is clean\u2028\n"), []byte("EVIL"))
		h := newHarness(t, st)
		w := h.post("/mcp", read(`1`, "skill://code-review/references/checklist.md", ""), old("2025-11-25")...)
		if h.srv.mcp.fast.Load() != 0 || !strings.Contains(w.Body.String(), `"code":-32603`) || len(auditLines(t, h)) != 1 {
			t.Errorf("fast answers %d, answer %s, %d audit lines", h.srv.mcp.fast.Load(), w.Body, len(auditLines(t, h)))
		}
	})
}

// tamper replaces the blob holding orig with other bytes.
func tamper(t *testing.T, st store.Store, orig, with []byte) {
	t.Helper()
	if _, err := st.Put(context.Background(), catalog.BlobKey(digest.Of(orig)), with, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}
