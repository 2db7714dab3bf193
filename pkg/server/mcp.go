package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// skillsExtension is the identifier of MCP's Skills extension (SEP-2640).
const skillsExtension = "io.modelcontextprotocol/skills"

// mcpTTLMs is the ttlMs of every MCP result: as long as the feeds' max-age,
// which is also how long a publish may take to show in a shared cache.
const mcpTTLMs = 60_000

// mcpEndpoint is the MCP Streamable HTTP endpoint (stateless, JSON
// responses): one mcp.Server for every request, whatever the caller or the
// catalog. What differs per request (the caller's authentication, the
// catalog snapshot, the advertised index URL) travels in the request's
// context as an mcpCall, which the SDK hands on to every handler.
type mcpEndpoint struct {
	server   *mcp.Server
	handler  *mcp.StreamableHTTPHandler
	indexes  mcpIndexes
	contents *contentCache
	noFast   bool         // tests only: every request takes the SDK's way
	fast     atomic.Int64 // requests the fast path answered
}

// mcpCall is what Server.ServeHTTP judged about one MCP request.
type mcpCall struct {
	r        *http.Request
	rq       *request
	snap     *snapshot
	view     *catalog.View // snap's entries
	caller   audience.Caller
	indexURL string // the RFC index advertised as agentSkillsUrl; "" advertises none
}

type mcpCallKey struct{}

// callFrom returns the request's mcpCall; every request reaches the SDK
// through serveMCP, which sets it.
func callFrom(ctx context.Context) *mcpCall {
	c, _ := ctx.Value(mcpCallKey{}).(*mcpCall)
	return c
}

// cacheScope is "private" whenever a valid key was presented: what a key
// holder sees may not sit in a shared cache.
func (c *mcpCall) cacheScope() string {
	if c.caller.Authenticated {
		return "private"
	}
	return "public"
}

// index is the MCP index of the call's snapshot as its caller sees it.
func (s *Server) index(c *mcpCall) mcpView { return s.mcp.indexes.get(c.view, c.caller) }

func (s *Server) newMCPEndpoint() *mcpEndpoint {
	caps := &mcp.ServerCapabilities{
		// The SDK answers tools/list and prompts/list whatever is declared,
		// so both are declared (and empty); nothing is pushed to a stateless
		// client, so no listChanged or subscribe: ttlMs says when to re-list.
		Tools:     &mcp.ToolCapabilities{},
		Prompts:   &mcp.PromptCapabilities{},
		Resources: &mcp.ResourceCapabilities{},
	}
	caps.AddExtension(skillsExtension, map[string]any{"directoryRead": true})
	srv := mcp.NewServer(&mcp.Implementation{Name: "skilldrop", Version: s.version}, &mcp.ServerOptions{
		Capabilities: caps,
		SetCacheable: func(ctx context.Context, _ mcp.Request, c *mcp.Cacheable) {
			if call := callFrom(ctx); call != nil {
				c.TTLMs, c.CacheScope = mcpTTLMs, call.cacheScope()
			}
		},
	})
	// Every file of every served skill is a skill:// resource, read through
	// one template whose handler looks the URI up in the caller's index.
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: skillPrefix + "{+path}",
		Name:        "skill-file",
		Description: "A file of a skill this server publishes (MCP Skills extension); skills/list names every one.",
	}, s.readSkillFile)
	srv.AddReceivingMiddleware(s.mcpMiddleware)
	for _, err := range []error{
		mcp.AddReceivingCustomMethod(srv, "skills/list", s.listSkills),
		mcp.AddReceivingCustomMethod(srv, "skills/get", s.getSkill),
		mcp.AddReceivingCustomMethod(srv, "resources/directory/read", s.readDirectory),
	} {
		if err != nil {
			panic("server: register MCP method: " + err.Error()) // names fixed here: a bug
		}
	}
	return &mcpEndpoint{
		server:   srv,
		contents: newContentCache(),
		handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: true,
			Logger:       s.log,
			// The SDK's guard judges the Host header against the listener
			// alone; Server.rebindingBlocked applies the same rule but also
			// admits the configured public host (a local reverse proxy).
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        s.maxBody,
		}),
	}
}

// mcpMiddleware adds to the SDK's own handling what depends on the call:
// agentSkillsUrl in the capabilities of initialize and server/discover,
// and resources/list from the caller's index (the SDK lists only resources
// registered one by one).
func (s *Server) mcpMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call := callFrom(ctx)
		if call == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error."}
		}
		if method == "resources/list" {
			return s.listResources(call, req)
		}
		res, err := next(ctx, method, req)
		if err != nil || call.indexURL == "" {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Capabilities = advertiseIndex(r.Capabilities, call.indexURL)
		case *mcp.DiscoverResult:
			r.Capabilities = advertiseIndex(r.Capabilities, call.indexURL)
		}
		return res, nil
	}
}

// advertiseIndex adds capabilities.experimental.agentSkillsUrl, an object
// as the MCP schema requires of every experimental value ({"url": …},
// where other servers print a bare string that the official SDKs refuse).
func advertiseIndex(caps *mcp.ServerCapabilities, indexURL string) *mcp.ServerCapabilities {
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	caps.Experimental = map[string]any{"agentSkillsUrl": map[string]any{"url": indexURL}}
	return caps
}

// serveMCP answers POST /mcp.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request, rq *request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", allowPost)
		writeError(w, r, http.StatusMethodNotAllowed, codeMethodNotAllowed, "Method not allowed.")
		return
	}
	if s.rebindingBlocked(r) {
		rq.log.Warn("mcp: non-loopback Host on a loopback listener refused", "host", clip(r.Host))
		writeError(w, r, http.StatusForbidden, codeForbidden, "Forbidden: invalid Host header.")
		return
	}
	body, ok := readBody(w, r, rq, s.maxBody, "mcp")
	if !ok {
		return
	}
	if isBatch(body) {
		// The SDK refuses batches only when the version header says
		// 2025-06-18 or later; they are refused here whatever it says.
		writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported.")
		return
	}
	snap, ok := s.snapshot(w, r, rq)
	if !ok {
		return
	}
	v, ok := s.catalogView(w, r, rq, snap)
	if !ok {
		return
	}
	call := &mcpCall{r: r, rq: rq, snap: snap, view: v, caller: rq.caller}
	if snap.anyVisible(v, rq.caller) {
		base, ok := s.origin(w, r, rq)
		if !ok {
			return
		}
		call.indexURL = discovery.Origin(base) + routes.RFCIndex
	}
	if s.fastAnswer(r.Context(), w, r, body, call) {
		return
	}
	r2 := r.WithContext(context.WithValue(r.Context(), mcpCallKey{}, call))
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	// The SDK marks its answers "no-cache, no-transform" itself.
	s.mcp.handler.ServeHTTP(w, r2)
}

// isBatch reports whether a body is a JSON array: a JSON-RPC batch.
func isBatch(body []byte) bool {
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}

// writeRPCError answers a JSON-RPC error that no request id can be given
// for (id null, as JSON-RPC 2.0 specifies).
func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	b := encodeJSON(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", ccNoStore)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// rebindingBlocked is the MCP DNS-rebinding guard: a request that reached
// a loopback listener under a Host that is not loopback came from a page
// that rebound a name to 127.0.0.1. API Gateway requests carry no local
// address (lambdahttp builds them), so they are never blocked; a local
// listener behind a reverse proxy may receive the configured public host.
func (s *Server) rebindingBlocked(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil || !isLoopback(la.String()) {
		return false
	}
	if isLoopback(r.Host) {
		return false
	}
	return s.base == nil || !strings.EqualFold(r.Host, s.base.Host)
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
