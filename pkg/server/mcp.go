package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// maxMCPServers bounds the cached MCP servers, one per advertised URL.
const maxMCPServers = 32

// mcpServers holds the MCP Streamable HTTP handler (stateless, JSON
// responses) and the servers it dispatches to: one per advertised index
// URL, since initialize's capabilities depend on the caller (can it see a
// skill?) and on the public origin, and an mcp.Server fixes them.
type mcpServers struct {
	version string
	handler *mcp.StreamableHTTPHandler

	mu    sync.Mutex
	byURL map[string]*mcp.Server
}

type advertKey struct{}

func newMCPServers(version string, maxBody int64, log *slog.Logger) *mcpServers {
	m := &mcpServers{version: version, byURL: map[string]*mcp.Server{}}
	m.handler = mcp.NewStreamableHTTPHandler(m.server, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       log,
		// The SDK's guard judges the Host header against the listener
		// alone; Server.rebindingBlocked applies the same rule but also
		// admits the configured public host (a local reverse proxy).
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxBody,
	})
	return m
}

// server returns the mcp.Server for the URL the request's context
// advertises ("" advertises nothing).
func (m *mcpServers) server(r *http.Request) *mcp.Server {
	adv, _ := r.Context().Value(advertKey{}).(string)
	m.mu.Lock()
	defer m.mu.Unlock()
	if srv, ok := m.byURL[adv]; ok {
		return srv
	}
	srv := newMCPServer(m.version, adv)
	if len(m.byURL) < maxMCPServers {
		m.byURL[adv] = srv
	}
	return srv
}

// newMCPServer builds a server whose initialize answer carries
// capabilities.experimental.agentSkillsUrl and resources.listChanged when
// indexURL is set, and neither otherwise (no empty advertisement). The
// tools capability is declared, empty, so tools/list answers [].
func newMCPServer(version, indexURL string) *mcp.Server {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	if indexURL != "" {
		caps.Experimental = map[string]any{"agentSkillsUrl": indexURL}
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	return mcp.NewServer(&mcp.Implementation{Name: "skilldrop", Version: version}, &mcp.ServerOptions{Capabilities: caps})
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
	snap, ok := s.snapshot(w, r, rq)
	if !ok {
		return
	}
	v, ok := s.catalogView(w, r, rq, snap)
	if !ok {
		return
	}
	adv := ""
	if snap.anyVisible(v, rq.authenticated) {
		base, ok := s.origin(w, r, rq)
		if !ok {
			return
		}
		adv = discovery.Origin(base) + routes.RFCIndex
	}
	r2 := r.WithContext(context.WithValue(r.Context(), advertKey{}, adv))
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	// The SDK marks its answers "no-cache, no-transform" itself.
	s.mcp.handler.ServeHTTP(w, r2)
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
