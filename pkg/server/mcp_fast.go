package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path answers, without the MCP SDK, the two requests whose
// answers are large and frequent, resources/read of a file and
// skills/list, when the request is one the SDK would take as it stands,
// and then answers what the SDK would (TestMCPFastAnswersAreTheSDKs pins
// it, request by request). It exists for cost: per request the SDK
// decodes the message several times and encodes the answer twice over,
// about 0.3 ms before any content and a further 1.5 ms for 100 KiB, where
// the artifact GET of the same bytes takes 0.1 ms. Everything else, every
// error included, is left to the SDK: the fast path reports false having
// written nothing.

// The revisions the fast path speaks, and the _meta keys of 2026-07-28.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// fastRequest is a request the fast path recognised.
type fastRequest struct {
	id        []byte // the id, re-encoded as the SDK re-encodes it
	method    string
	stateless bool // 2026-07-28: the answer carries resultType and the server's identity
	uri       string
	cursor    string
}

// fastAnswer answers r (whose body is body) on the fast path, or reports
// false having written nothing.
func (s *Server) fastAnswer(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte, call *mcpCall) bool {
	if s.mcp.noFast {
		return false
	}
	req, ok := recognize(r, body)
	if !ok {
		return false
	}
	// The result is written in parts (the large one shared, not copied).
	var result [][]byte
	switch req.method {
	case "resources/read":
		var release func()
		result, release, ok = s.fastRead(ctx, call, req)
		defer release()
	case "skills/list":
		result, ok = s.fastList(call, req)
	}
	if !ok {
		return false
	}
	parts := append([][]byte{[]byte(`{"jsonrpc":"2.0","id":`), req.id, []byte(`,"result":`)}, result...)
	parts = append(parts, []byte("}"))
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, no-transform") // as the SDK marks its answers
	h.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(http.StatusOK)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			break
		}
	}
	s.mcp.fast.Add(1)
	return true
}

// fastRead is the result of resources/read of a served file whose blob
// verifies; anything else (unknown URI, mismatch, store error) is false,
// and the SDK path reads again and answers it.
func (s *Server) fastRead(ctx context.Context, call *mcpCall, req *fastRequest) (parts [][]byte, release func(), ok bool) {
	release = func() {}
	f := s.index(call).file(req.uri)
	if f == nil || f.file.Size < 0 || f.file.Size > maxFastRead {
		return nil, release, false
	}
	body, _, release, err := s.readBlob(ctx, f.file.Digest, f.file.Size, f.file.Size, getBuffer)
	if err != nil {
		return nil, release, false
	}
	enc := s.mcp.contents.encoded(f.file.Digest, f.file.MediaType, body)
	var head bytes.Buffer
	head.WriteByte('{')
	s.writeServerInfo(&head, req)
	head.WriteString(`"ttlMs":` + strconv.Itoa(mcpTTLMs) + `,"cacheScope":"` + call.cacheScope() + `","contents":[{"uri":`)
	writeHTMLEscaped(&head, req.uri)
	head.WriteString(`,"mimeType":`)
	writeHTMLEscaped(&head, f.file.MediaType)
	head.WriteString(`,"` + enc.field + `":`)
	tail := "}]}"
	if req.stateless {
		tail = `}],"resultType":"complete"}`
	}
	return [][]byte{head.Bytes(), enc.value, []byte(tail)}, release, true
}

// maxFastRead bounds the files the fast path reads: larger ones (which the
// indexer does not admit to MCP anyway) go the SDK's way.
const maxFastRead = 8 << 20

// fastList is the result of skills/list; a bad cursor is false.
func (s *Server) fastList(call *mcpCall, req *fastRequest) ([][]byte, bool) {
	v := s.index(call)
	from, to, count, next, err := v.skillPage(req.cursor)
	if err != nil {
		return nil, false
	}
	var head bytes.Buffer
	head.WriteByte('{')
	s.writeServerInfo(&head, req)
	head.WriteString(`"resultType":"complete","ttlMs":` + strconv.Itoa(mcpTTLMs) + `,"cacheScope":"` + call.cacheScope() + `","skills":[`)
	parts := make([][]byte, 0, 2*count+2)
	parts = append(parts, head.Bytes())
	for _, sk := range v.skills[from:to] {
		if !v.seen(sk) {
			continue
		}
		if len(parts) > 1 {
			parts = append(parts, comma)
		}
		parts = append(parts, sk.json)
	}
	tail := "]}"
	if next != "" {
		tail = `],"nextCursor":"` + next + `"}` // base64url: nothing to escape
	}
	return append(parts, []byte(tail)), true
}

var comma = []byte(",")

// writeServerInfo writes the _meta a 2026-07-28 answer carries, and a comma.
func (s *Server) writeServerInfo(b *bytes.Buffer, req *fastRequest) {
	if !req.stateless {
		return
	}
	b.WriteString(`"_meta":{"` + metaServerInfo + `":`)
	b.Write(encodeJSON(&mcp.Implementation{Name: "skilldrop", Version: s.version}))
	b.WriteString("},")
}

// writeHTMLEscaped writes s as json.Marshal does (HTML escaping on), as the
// SDK encodes a ReadResourceResult.
func writeHTMLEscaped(b *bytes.Buffer, s string) {
	v, _ := json.Marshal(s) // a string: cannot fail
	b.Write(v)
}

// recognize returns the request r carries when the fast path may answer
// it: POST with a JSON body and an Accept the SDK takes; a protocol
// revision header of 2026-07-28, 2025-11-25 or 2025-06-18; one JSON-RPC
// call (jsonrpc, id, method, params and nothing else; an integer or string
// id) of resources/read (params: uri) or skills/list (params: cursor).
// For 2026-07-28, params._meta must hold exactly what that revision
// requires (the same protocol version, client capabilities, optionally
// client information) and the Mcp-Method and Mcp-Name headers must agree
// with the body; for the others, params carries no _meta at all. Keys
// are matched exactly, as the SDK matches them.
func recognize(r *http.Request, body []byte) (*fastRequest, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" || !acceptsBoth(r.Header.Values("Accept")) {
		return nil, false
	}
	rev := r.Header.Get("MCP-Protocol-Version")
	if rev != statelessRevisionHeader && rev != "2025-11-25" && rev != "2025-06-18" {
		return nil, false
	}
	var msg map[string]json.RawMessage
	if !decodeExactly(body, &msg) || len(msg) != 4 || string(msg["jsonrpc"]) != `"2.0"` {
		return nil, false
	}
	req := &fastRequest{stateless: rev == statelessRevisionHeader}
	var ok bool
	if req.id, ok = canonicalID(msg["id"]); !ok || json.Unmarshal(msg["method"], &req.method) != nil {
		return nil, false
	}
	var params map[string]json.RawMessage
	if !decodeExactly(msg["params"], &params) {
		return nil, false
	}
	meta, hasMeta := params["_meta"]
	delete(params, "_meta")
	switch {
	case req.method == "resources/read" && len(params) == 1 && json.Unmarshal(params["uri"], &req.uri) == nil:
	case req.method == "skills/list" && len(params) == 0:
	case req.method == "skills/list" && len(params) == 1 && json.Unmarshal(params["cursor"], &req.cursor) == nil:
	default:
		return nil, false
	}
	if !req.stateless {
		return req, !hasMeta
	}
	if r.Header.Get("Mcp-Method") != req.method || req.method == "resources/read" && r.Header.Get("Mcp-Name") != req.uri {
		return nil, false
	}
	var m map[string]json.RawMessage
	if !hasMeta || !decodeExactly(meta, &m) || string(m[metaProtocolVersion]) != `"`+rev+`"` {
		return nil, false
	}
	// Decoded into the SDK's own types: what it could not decode is not
	// for the fast path.
	var caps mcp.ClientCapabilities
	var info mcp.Implementation
	switch {
	case !decodeExactly(m[metaClientCapabilities], &caps):
		return nil, false
	case len(m) == 3 && decodeExactly(m[metaClientInfo], &info):
	case len(m) != 2:
		return nil, false
	}
	return req, true
}

// statelessRevisionHeader is the revision that selects the stateless protocol.
const statelessRevisionHeader = "2026-07-28"

// decodeExactly decodes one JSON object that is the whole of b.
func decodeExactly(b []byte, v any) bool {
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return false
	}
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}

// canonicalID re-encodes a request id as the SDK does: a string as a
// string, an integer as an integer; anything else is not for the fast path.
func canonicalID(raw json.RawMessage) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		v, _ := json.Marshal(s)
		return v, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < -(1<<53) || n > 1<<53 {
		return nil, false
	}
	return []byte(strconv.FormatInt(n, 10)), true
}

// acceptsBoth reports whether Accept admits JSON and event streams, as the
// SDK requires of every POST.
func acceptsBoth(values []string) bool {
	jsonOK, streamOK := false, false
	for _, v := range values {
		for raw := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}
