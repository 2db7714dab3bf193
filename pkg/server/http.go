package server

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/vouch"
)

// Stable error codes of the JSON error bodies.
const (
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeUnauthorized     = "invalid_credential"
	codeUnavailable      = "unavailable"
	codeTooLarge         = "payload_too_large"
	codeForbidden        = "forbidden"
	codeNoBaseURL        = "base_url_unknown"
	codeBadRequest       = "bad_request"
	codeTimeout          = "request_timeout"
	codeUnsupportedMedia = "unsupported_media_type"
	codeInternal         = "internal_error"
)

// Cache-Control values.
const (
	ccPublic  = "public, max-age=60"
	ccPrivate = "private, max-age=60"
	ccNoStore = "no-store"
	// Versioned bytes under /api/v1/ (see versionedCacheControl).
	ccPublicVersioned  = "public, max-age=3600"
	ccPrivateVersioned = "private, max-age=3600"
)

// feedCacheControl: anonymous feeds may sit in shared caches for a minute;
// what a key holder sees may not.
func feedCacheControl(rq *request) string {
	if rq.caller.Authenticated {
		return ccPrivate
	}
	return ccPublic
}

// artifactCacheControl follows the entry's visibility, not the caller's: a
// public artifact is the same bytes for everyone, an authenticated one must
// never land in a shared cache. Under a capability URL everything is
// private: its URL holds a key.
func artifactCacheControl(e *catalog.Entry, rq *request) string {
	if e.Visibility == catalog.Authenticated || rq.capability != "" {
		return ccPrivate
	}
	return ccPublic
}

// begin sets what every response carries and returns the request's state.
//
// Access-Control-Allow-Origin is "*" on every response of the feeds,
// private ones included: they honour no cookie, so a page from another
// origin can read an authenticated answer only by presenting the key
// itself. (The web catalog, whose session cookie is honoured on its pages
// only, drops it: serveCatalog.)
// Vary: Authorization is on every response too, because any answer can
// change with the credential (a wrong one is always 401); and where the
// origin in the documents comes from request headers (local serving, or
// trusted forwarded headers), Vary names those headers, so a shared cache
// never hands one origin's URLs to a request for another.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) *request {
	id := ""
	if v, ok := vouch.FromContext(r.Context()); ok {
		id = v.RequestID
	}
	if id == "" {
		id = newRequestID()
	}
	h := w.Header()
	h.Set("X-Request-Id", id)
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "ETag, WWW-Authenticate, X-Request-Id, Mcp-Session-Id")
	vary := "Authorization"
	if s.base == nil {
		if v, ok := vouch.FromContext(r.Context()); !ok || v.Domain == "" {
			if s.trustFwd {
				vary += ", X-Forwarded-Host, X-Forwarded-Proto"
			}
			if s.local {
				vary += ", Host"
			}
		}
	}
	h.Set("Vary", vary)
	if _, _, ok := routes.SplitCapability(r.URL.Path); ok {
		// Its URL holds a key: never sent on to another site.
		h.Set("Referrer-Policy", "no-referrer")
	}
	return &request{id: id, log: s.log.With(obs.RequestIDKey, id)}
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// logRequest writes the access line: never the key, only its id and
// audiences (and a capability URL's path with its key redacted).
func (s *Server) logRequest(rq *request, r *http.Request, w *statusWriter, start time.Time) {
	attrs := []any{
		"method", r.Method, "path", clip(rq.path(r)), "status", w.status(), "bytes", w.n,
		"duration_ms", float64(s.now().Sub(start).Microseconds()) / 1000, "authenticated", rq.caller.Authenticated,
	}
	switch {
	case rq.caller.Authenticated:
		attrs = append(attrs, "key_id", rq.caller.KeyID, "audiences", rq.caller.AudienceNames())
	case rq.keyID != "" && rq.keyAudiences != nil: // a configured key, refused
		attrs = append(attrs, "key_id", rq.keyID, "audiences", rq.keyAudiences)
	case rq.keyID != "":
		attrs = append(attrs, "key_id", rq.keyID)
	}
	if rq.authReason != "" {
		attrs = append(attrs, "auth_failure", rq.authReason)
	}
	if rq.session {
		attrs = append(attrs, "session", true)
	}
	rq.log.Info("request", attrs...)
}

func clip(s string) string {
	if len(s) > 256 {
		return s[:256] + "…"
	}
	return s
}

// statusWriter records the status and the body bytes written.
type statusWriter struct {
	http.ResponseWriter
	code int
	n    int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Flush lets streaming handlers (the MCP SDK) flush through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap serves http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// errorBody is the JSON body of every error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError answers status with a JSON body naming a stable code. Errors
// are never stored by caches: the next publish must be visible at once.
func writeError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	b, _ := json.Marshal(errorBody{errorDetail{code, msg}}) // cannot fail: strings only
	b = append(b, '\n')
	h := w.Header()
	h.Del("ETag")
	h.Del("Content-Encoding")
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", ccNoStore)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// preflight answers OPTIONS on any well-formed path, existing or not: a
// browser sends the preflight without the credential, so answering 404 for
// a skill only a key holder can see would break exactly those requests,
// and a preflight reveals nothing.
func preflight(w http.ResponseWriter, allow string) {
	h := w.Header()
	h.Set("Allow", allow)
	h.Set("Access-Control-Allow-Methods", allow)
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-None-Match, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "7200")
	h.Set("Cache-Control", "public, max-age=7200")
	w.WriteHeader(http.StatusNoContent)
}

// serveJSON answers a rendered JSON document: gzip-encoded when the client
// accepts it, 304 when If-None-Match names either encoding's ETag (both
// stand for the same content; the 304 carries the selected one's).
func serveJSON(w http.ResponseWriter, r *http.Request, d *feeddoc.Doc, cacheControl string) {
	h := w.Header()
	h.Set("Cache-Control", cacheControl)
	varyOn(h, "Accept-Encoding")
	etag, gz := d.ETag, d.GzETag != "" && acceptsGzip(r)
	if gz {
		etag = d.GzETag
	}
	h.Set("ETag", etag)
	if ifNoneMatch(r, d.ETag, d.GzETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSONBody(w, r, d, gz)
}

// serveAnswer answers a POST with a rendered JSON document: gzip-encoded
// when the client accepts it, never stored by a cache, no ETag (a POST
// answer has no representation to revalidate).
func serveAnswer(w http.ResponseWriter, r *http.Request, d *feeddoc.Doc) {
	h := w.Header()
	h.Set("Cache-Control", ccNoStore)
	varyOn(h, "Accept-Encoding")
	writeJSONBody(w, r, d, d.GzETag != "" && acceptsGzip(r))
}

// writeJSONBody writes d with status 200, gzip-encoded when gz is set.
func writeJSONBody(w http.ResponseWriter, r *http.Request, d *feeddoc.Doc, gz bool) {
	body := d.Body
	if gz {
		body = d.Gzipped()
	}
	writeJSONBytes(w, r, body, gz)
}

// writeJSONBytes writes a JSON body (gzip-encoded when gz) with status 200.
func writeJSONBytes(w http.ResponseWriter, r *http.Request, body []byte, gz bool) {
	h := w.Header()
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// ifNoneMatch reports whether the request's If-None-Match matches one of
// etags (strong ETags, compared weakly as RFC 9110 §13.1.2 requires), or is
// "*" (the representation exists: every caller checks that first).
func ifNoneMatch(r *http.Request, etags ...string) bool {
	for _, line := range r.Header.Values("If-None-Match") {
		for _, tag := range strings.Split(line, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" {
				return true
			}
			tag = strings.TrimPrefix(tag, "W/")
			for _, e := range etags {
				if e != "" && tag == e {
					return true
				}
			}
		}
	}
	return false
}

// acceptsGzip reports whether Accept-Encoding admits gzip: named (or
// x-gzip, or "*" without gzip named) with a non-zero q.
func acceptsGzip(r *http.Request) bool {
	star, named := false, false
	for _, line := range r.Header.Values("Accept-Encoding") {
		for _, item := range strings.Split(line, ",") {
			coding, params, _ := strings.Cut(item, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			ok := qNonZero(params)
			switch coding {
			case "gzip", "x-gzip":
				if !ok {
					return false
				}
				named = true
			case "*":
				star = ok
			}
		}
	}
	return named || star
}

func qNonZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q > 0
		}
	}
	return true
}

// cleanPath rejects every path that could name something other than what
// it spells: dot segments, empty segments, backslashes, control bytes and
// NUL in the decoded path, and escapes in the raw path that decode to a
// dot, a slash, a backslash, a percent sign or a control byte (%2e%2e,
// %2f, %5c, %25…, %00). Lookups then match published paths exactly.
func cleanPath(r *http.Request) bool {
	p := r.URL.Path
	if p == "" || p[0] != '/' || strings.Contains(p, "//") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return false
		}
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	for _, raw := range []string{r.URL.RawPath, r.URL.EscapedPath(), requestPath(r)} {
		if !cleanEscapes(raw) {
			return false
		}
	}
	return true
}

// requestPath is the path part of the request line as the client sent it.
func requestPath(r *http.Request) string {
	p, _, _ := strings.Cut(r.RequestURI, "?")
	return p
}

func cleanEscapes(raw string) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			return false
		case '%':
			if i+2 >= len(raw) {
				return false
			}
			b, err := hex.DecodeString(raw[i+1 : i+3])
			if err != nil {
				return false
			}
			if c := b[0]; c == '.' || c == '/' || c == '\\' || c == '%' || c < 0x20 || c == 0x7f {
				return false
			}
			i += 2
		}
	}
	return true
}

// errNoBaseURL: nothing in the configuration or the request says which
// origin the service is published at.
var errNoBaseURL = errors.New("no public base URL: configure SKILLDROP_PUBLIC_BASE_URL, or serve through API Gateway")

// errBadHost: the client named the origin (Host, or a trusted forwarded
// header) with something that is not a host; it is the client's error.
var errBadHost = errors.New("the request names no valid host")

// BaseURL is the public origin of a request, the same for every surface:
// the configured base URL; else the domain the platform (API Gateway)
// vouches the request came in on (vouch.Facts in the request context, where
// a client header cannot reach), with https; else, when trusted,
// X-Forwarded-Host and X-Forwarded-Proto; else, for local serving only, the
// Host header.
func (s *Server) BaseURL(r *http.Request) (*url.URL, error) {
	if s.base != nil {
		return s.base, nil
	}
	if v, ok := vouch.FromContext(r.Context()); ok && v.Domain != "" {
		if !validHost(v.Domain) {
			return nil, fmt.Errorf("the platform's domain name %q is not a host", clip(v.Domain))
		}
		return &url.URL{Scheme: "https", Host: strings.ToLower(v.Domain)}, nil
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if s.trustFwd {
		if host := firstItem(r.Header.Get("X-Forwarded-Host")); host != "" {
			if proto := strings.ToLower(firstItem(r.Header.Get("X-Forwarded-Proto"))); proto != "" {
				scheme = proto
			}
			if (scheme != "http" && scheme != "https") || !validHost(host) {
				return nil, fmt.Errorf("%w: forwarded origin %q://%q", errBadHost, clip(scheme), clip(host))
			}
			return &url.URL{Scheme: scheme, Host: strings.ToLower(host)}, nil
		}
	}
	if s.local {
		if !validHost(r.Host) {
			return nil, fmt.Errorf("%w: Host %q", errBadHost, clip(r.Host))
		}
		return &url.URL{Scheme: scheme, Host: strings.ToLower(r.Host)}, nil
	}
	return nil, errNoBaseURL
}

func firstItem(v string) string {
	item, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(item)
}

// validHost accepts "name", "name:port", "1.2.3.4:port" and "[v6]:port"
// with DNS name characters only, so nothing odd reaches a URL we publish.
func validHost(h string) bool {
	if h == "" || len(h) > 262 {
		return false
	}
	host := h
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		port := h[i+1:]
		if port == "" || len(port) > 5 {
			return false
		}
		n := 0
		for j := 0; j < len(port); j++ {
			if port[j] < '0' || port[j] > '9' {
				return false
			}
			n = n*10 + int(port[j]-'0')
		}
		if n < 1 || n > 65535 {
			return false
		}
		host = h[:i]
	}
	if strings.HasPrefix(host, "[") {
		a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		return strings.HasSuffix(host, "]") && err == nil && a.Is6()
	}
	if host == "" || len(host) > 253 {
		return false
	}
	for i := 0; i < len(host); i++ {
		if !hostByte(host[i]) {
			return false
		}
	}
	return true
}

func hostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

// varyOn adds name to the response's one Vary header (one line, not two:
// some caches and adapters keep only the first of repeated headers).
func varyOn(h http.Header, name string) {
	if v := h.Get("Vary"); v != "" {
		h.Set("Vary", v+", "+name)
		return
	}
	h.Set("Vary", name)
}
