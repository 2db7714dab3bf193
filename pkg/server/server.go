// Package server is skilldrop's request path: one http.Handler that serves
// the Agent Skills Discovery RFC index and its listings, the native feed
// (/manifest.json, /skills/v1/, /subagents/v1/) and its /api/v1/ API with
// search and check-updates, every published artifact under the integrity
// contract (re-hashed completely before the status line; a mismatch is a
// 503, an audit event and a metric, never a byte of the tampered content),
// MCP at /mcp, and the HTTP semantics
// clients and caches expect: Bearer API keys, CORS, strong ETags and
// conditional requests, Cache-Control, Vary and gzip for JSON feeds.
//
// The same handler runs in Lambda (through lambdahttp) and locally
// (`skilldrop serve`); the only differences are where the public base URL
// comes from and which store is read.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/webcatalog"
	"github.com/skilldrop/skilldrop/pkg/websession"
)

// Defaults for the zero values of Config.
const (
	// DefaultRevalidateEvery bounds how often a warm handler asks the store
	// whether the catalog changed: a publish is visible within this (plus
	// one request) of its catalog write.
	DefaultRevalidateEvery = time.Second
	// DefaultMaxStale is how long the last good catalog is served while the
	// store cannot be read; after that every request answers 503.
	DefaultMaxStale = 60 * time.Second
	// DefaultMaxBodyBytes caps POST bodies (MCP messages, check-updates).
	DefaultMaxBodyBytes = 1 << 20
)

// Config configures a handler. Store is required; everything else has a
// working zero value.
type Config struct {
	// Store holds the catalog and the validated blobs.
	Store store.Store
	// Keys supplies the key store: the keys' SHA-256 hashes, ids,
	// audiences, expiries and path use. nil configures no keys: anonymous
	// requests work and every presented key is invalid.
	Keys apikey.Source
	// Metrics counts DigestMismatch (nil: obs.Nop).
	Metrics obs.Metrics
	// Auditor logs audit events (nil: events go to Logger).
	Auditor *obs.Auditor
	// Logger receives one line per request and every error (nil: discard).
	Logger *slog.Logger

	// PublicBaseURL, when set, is the origin every absolute URL is built
	// from ("https://skills.example.com"): scheme and host only.
	PublicBaseURL string
	// TrustForwardedHeaders lets X-Forwarded-Host and X-Forwarded-Proto name
	// the origin when no base URL is configured and the request did not
	// come through API Gateway. Only set it behind a proxy that overwrites
	// them: a client can send anything.
	TrustForwardedHeaders bool
	// Local allows the Host header as the origin (`skilldrop serve`), when
	// nothing better is known. In Lambda the origin is API Gateway's domain.
	Local bool

	// RevalidateEvery is DefaultRevalidateEvery when zero.
	RevalidateEvery time.Duration
	// MaxStale is DefaultMaxStale when zero; negative never serves stale.
	MaxStale time.Duration
	// MaxArtifactBytes bounds what is buffered for one artifact
	// (archive.DefaultMaxArtifactBytes when zero).
	MaxArtifactBytes int64
	// MaxBodyBytes caps request bodies (DefaultMaxBodyBytes when zero);
	// check-updates bodies are capped at manifest.MaxCheckUpdatesBody too.
	MaxBodyBytes int64
	// MaxResponseBytes is the largest response body the platform returns
	// (0: no limit, as for `skilldrop serve`), and Fits, when set, says
	// exactly whether a response fits (its headers and body, as the
	// platform encodes them). A pre-rendered document that does not fit is
	// answered with a redirect to a presigned GET (Presigner) of it.
	MaxResponseBytes int64
	Fits             func(h http.Header, body []byte) bool
	// Presigner presigns those redirects (nil: none; documents are always
	// answered directly, as a local directory has no other way).
	Presigner store.Presigner
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Version is reported as the MCP server version ("dev" when empty).
	Version string
	// SessionSecret signs the web catalog's session cookies (at least
	// websession.MinSecretBytes of randomness, the same for every instance
	// of a deployment). nil turns sign-in off: the pages show what an
	// anonymous caller sees.
	SessionSecret []byte
}

// Server is the handler New returns. It is safe for concurrent use.
type Server struct {
	store       store.Store
	keys        *apikey.Verifier
	metrics     obs.Metrics
	auditor     *obs.Auditor
	log         *slog.Logger
	base        *url.URL // configured origin, or nil
	trustFwd    bool
	local       bool
	maxArtifact int64
	maxBody     int64
	maxResponse int64
	fitsFn      func(http.Header, []byte) bool
	presigner   store.Presigner
	now         func() time.Time
	version     string

	catalog *catalogCache
	mcp     *mcpEndpoint
	signer  *websession.Signer // nil: no sign-in
	bodies  *webcatalog.Bodies // rendered documents of the web catalog, by digest
}

// New validates cfg and returns the handler.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is required")
	}
	s := &Server{
		store:       cfg.Store,
		metrics:     cfg.Metrics,
		auditor:     cfg.Auditor,
		log:         cfg.Logger,
		trustFwd:    cfg.TrustForwardedHeaders,
		local:       cfg.Local,
		maxArtifact: cfg.MaxArtifactBytes,
		maxBody:     cfg.MaxBodyBytes,
		maxResponse: cfg.MaxResponseBytes,
		fitsFn:      cfg.Fits,
		presigner:   cfg.Presigner,
		now:         cfg.Now,
		version:     cfg.Version,
	}
	if cfg.SessionSecret != nil {
		sg, err := websession.NewSigner(cfg.SessionSecret)
		if err != nil {
			return nil, fmt.Errorf("server: Config.SessionSecret: %w", err)
		}
		s.signer = sg
	}
	s.bodies = webcatalog.NewBodies(0)
	if cfg.PublicBaseURL != "" {
		u, err := ParseBaseURL(cfg.PublicBaseURL)
		if err != nil {
			return nil, err
		}
		s.base = u
	}
	if s.metrics == nil {
		s.metrics = obs.Nop{}
	}
	if s.log == nil {
		s.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if s.auditor == nil {
		s.auditor = obs.NewAuditor(s.log)
	}
	if s.maxArtifact <= 0 {
		s.maxArtifact = archive.DefaultMaxArtifactBytes
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.keys = apikey.NewVerifier(cfg.Keys, s.now)
	if s.version == "" {
		s.version = "dev"
	}
	every := cfg.RevalidateEvery
	if every <= 0 {
		every = DefaultRevalidateEvery
	}
	stale := cfg.MaxStale
	if stale == 0 {
		stale = DefaultMaxStale
	}
	s.catalog = newCatalogCache(s.store, every, stale, s.now, s.log)
	s.mcp = s.newMCPEndpoint()
	return s, nil
}

// ParseBaseURL checks a configured public base URL: absolute http(s), a
// host, and nothing after it but an optional "/". Clients build the native
// feed's paths from the origin root, so a base path could never work.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("public base URL %q: %w", raw, err)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("public base URL %q: scheme must be https or http", raw)
	case u.Host == "" || !validHost(u.Host):
		return nil, fmt.Errorf("public base URL %q: no valid host", raw)
	case u.User != nil, u.RawQuery != "", u.Fragment != "", u.Path != "" && u.Path != "/":
		return nil, fmt.Errorf("public base URL %q: want only scheme and host (skilldrop serves at an origin root)", raw)
	}
	return &url.URL{Scheme: u.Scheme, Host: strings.ToLower(u.Host)}, nil
}

// Route classes, for Allow headers and CORS preflight.
const (
	allowRead = "GET, HEAD, OPTIONS"
	allowPost = "OPTIONS, POST"
)

// ServeHTTP implements http.Handler. The order matters: the credential is
// judged first, so an invalid key gets the same 401 on every path and
// learns nothing about what exists; then the path is vetted; then routed,
// by the URL table (routes.Lookup) and nothing else, so every path the
// server answers is one agent-skills.yaml cannot take. A capability URL
// (/k/<key>/…) is the same request with the key presented in its path and
// the path after the key; only the RFC feed is answered there.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.now()
	rq := s.begin(w, r)
	sw := &statusWriter{ResponseWriter: w}
	defer func() { s.logRequest(rq, r, sw, start) }()

	if !s.authenticate(sw, r, rq) {
		return
	}
	if !cleanPath(r) {
		writeError(sw, r, http.StatusNotFound, codeNotFound, "Not found.")
		return
	}
	if rq.capability != "" {
		r = rq.underCapability(r)
		if m := routes.Lookup(r.URL.Path); m.Surface != routes.SurfaceIndex && m.Surface != routes.SurfaceArtifact {
			writeError(sw, r, http.StatusNotFound, codeNotFound, "Not found.")
			return
		}
	}
	route := routes.Lookup(r.URL.Path)
	if route.Surface == routes.SurfaceCatalog { // its own methods, no CORS
		s.serveCatalog(sw, r, rq, route)
		return
	}
	if r.Method == http.MethodOptions {
		allow := allowRead
		if route.Post {
			allow = allowPost
		}
		preflight(sw, allow)
		return
	}

	switch route.Surface {
	case routes.SurfaceMCP:
		s.serveMCP(sw, r, rq)
	case routes.SurfaceNative:
		s.serveNative(sw, r, rq)
	case routes.SurfaceIndex: // the seed-style and the path-prefix spelling of an index alike
		s.serveIndex(sw, r, rq, route.Listing)
	case routes.SurfaceArtifact:
		s.servePath(sw, r, rq, route)
	case routes.SurfaceRoot:
		s.serveRoot(sw, r)
	case routes.SurfaceRevocations:
		s.serveRevocations(sw, r, rq)
	case routes.SurfaceHealth:
		s.serveHealth(sw, r, rq)
	case routes.SurfaceProvenance:
		s.serveProvenance(sw, r, rq)
	default: // a namespace that is never served (a capability URL's key ended)
		writeError(sw, r, http.StatusNotFound, codeNotFound, "Not found.")
	}
}

// readBody reads the request body, at most limit bytes. When it cannot, it
// answers the request itself (413 for a larger body, 400 for one that could
// not be read, 408 for one the server's read timeout cut off, logged under
// what) and ok is false.
func readBody(w http.ResponseWriter, r *http.Request, rq *request, limit int64, what string) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, r, http.StatusRequestEntityTooLarge, codeTooLarge, "The request body is too large.")
			return nil, false
		}
		rq.log.Warn(what+": read request body", "error", err)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The server's read timeout ended a body that came too slowly.
			writeError(w, r, http.StatusRequestTimeout, codeTimeout, "The request body did not arrive in time.")
			return nil, false
		}
		writeError(w, r, http.StatusBadRequest, codeBadRequest, "The request body could not be read.")
		return nil, false
	}
	return body, true
}

// readMethod answers 405 unless the method is GET or HEAD.
func readMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", allowRead)
	writeError(w, r, http.StatusMethodNotAllowed, codeMethodNotAllowed, "Method not allowed.")
	return false
}

// serveIndex answers the top-level index (listing "") or a listing's, at
// whichever of the listing's paths it was asked for: one document, one
// ETag, the same visibility.
func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request, rq *request, listing string) {
	if !readMethod(w, r) {
		return
	}
	snap, ok := s.snapshot(w, r, rq)
	if !ok {
		return
	}
	base, ok := s.origin(w, r, rq)
	if !ok {
		return
	}
	path := routes.RFCIndex
	if listing != "" {
		path = routes.ListingIndex(listing)
	}
	cc := feedCacheControl(rq)
	if rq.capability != "" {
		// Its URLs carry the key, so it is rendered for this request alone.
		v, ok := s.catalogView(w, r, rq, snap)
		if !ok {
			return
		}
		doc, found := capabilityIndex(v, listing, rq.caller, discovery.Origin(base)+routes.Capability(rq.capability, ""))
		if !found {
			writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.")
			return
		}
		s.serveRendered(w, r, rq, func() (*feeddoc.Doc, bool) { return doc, true }, cc)
		return
	}
	if d := snap.storedDocument(discovery.Origin(base), path, rq.caller); d != nil {
		s.serveStored(w, r, rq, snap, d, cc, func() (*feeddoc.Doc, bool) {
			v, err := snap.View(r.Context())
			if err != nil {
				rq.log.Error("catalog entries unavailable", "error", err)
				return nil, false
			}
			return snap.index(v, listing, rq.caller, base)
		})
		return
	}
	v, ok := s.catalogView(w, r, rq, snap)
	if !ok {
		return
	}
	doc, found := snap.index(v, listing, rq.caller, base)
	if !found {
		writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.")
		return
	}
	s.serveRendered(w, r, rq, func() (*feeddoc.Doc, bool) { return doc, true }, cc)
}

// servePath answers an artifact at its URL path, or the bundle beside it
// (route.Bundle), or 404.
func (s *Server) servePath(w http.ResponseWriter, r *http.Request, rq *request, route routes.Match) {
	snap, ok := s.snapshot(w, r, rq)
	if !ok {
		return
	}
	v, ok := s.catalogView(w, r, rq, snap)
	if !ok {
		return
	}
	p := r.URL.Path
	if route.Bundle {
		p = route.Artifact
	}
	e := v.ByPath(p, rq.caller)
	if e == nil {
		// The bundle beside a gone artifact is gone with it, if it had one.
		if g := v.GoneAt(p, rq.caller); g != nil && (!route.Bundle || g.LatestVersion().Bundle != nil) && readMethod(w, r) {
			gone(w, r, g.LatestVersion())
			return
		}
		writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.")
		return
	}
	if !readMethod(w, r) {
		return
	}
	ver := e.LatestVersion()
	if ver == nil { // Live entries always have one; never serve a guess
		writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.")
		return
	}
	if route.Bundle {
		s.serveBundle(w, r, rq, e, ver, artifactCacheControl(e, rq))
		return
	}
	s.serveArtifact(w, r, rq, e, ver, artifactCacheControl(e, rq))
}

// gone answers 410 for a version taken out of service, with its reason.
func gone(w http.ResponseWriter, r *http.Request, v *catalog.Version) {
	res, _ := manifest.GoneResult(v)
	writeError(w, r, http.StatusGone, res.Err.Code, res.Err.Message)
}

// serveRevocations answers the list of versions taken out of service that
// the caller may see, cached as the RFC index is.
func (s *Server) serveRevocations(w http.ResponseWriter, r *http.Request, rq *request) {
	if !readMethod(w, r) {
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
	doc := feeddoc.Render(discovery.RevocationList(v, rq.caller), feeddoc.RequestLevel)
	s.serveRendered(w, r, rq, func() (*feeddoc.Doc, bool) { return doc, true }, feedCacheControl(rq))
}

// snapshot returns the current catalog, or answers 503: a catalog that
// cannot be read is never mistaken for an empty one.
func (s *Server) snapshot(w http.ResponseWriter, r *http.Request, rq *request) (*snapshot, bool) {
	snap, err := s.catalog.get(r.Context())
	if err != nil {
		rq.log.Error("catalog unavailable", "error", err)
		w.Header().Set("Retry-After", "5")
		writeError(w, r, http.StatusServiceUnavailable, codeUnavailable, "The service is temporarily unavailable.")
		return nil, false
	}
	return snap, true
}

// catalogView returns the entries of snap's revision, or answers 503. A
// revision replaced since its head was read is read again, once.
func (s *Server) catalogView(w http.ResponseWriter, r *http.Request, rq *request, snap *snapshot) (*catalog.View, bool) {
	v, err := snap.View(r.Context())
	if errors.Is(err, catalog.ErrChanged) {
		_, v, err = s.currentView(r.Context())
	}
	if err != nil {
		rq.log.Error("catalog entries unavailable", "error", err)
		w.Header().Set("Retry-After", "5")
		writeError(w, r, http.StatusServiceUnavailable, codeUnavailable, "The service is temporarily unavailable.")
		return nil, false
	}
	return v, true
}

// currentView reads the catalog again and returns its snapshot and view:
// a read of the revision at hand found it replaced (catalog.ErrChanged).
func (s *Server) currentView(ctx context.Context) (*snapshot, *catalog.View, error) {
	s.catalog.invalidate()
	snap, err := s.catalog.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	v, err := snap.View(ctx)
	return snap, v, err
}

// origin returns the public origin of the request, or answers 400 for a
// Host that is not one and 500 when the deployment gives no way to know it.
func (s *Server) origin(w http.ResponseWriter, r *http.Request, rq *request) (*url.URL, bool) {
	u, err := s.BaseURL(r)
	switch {
	case errors.Is(err, errBadHost):
		writeError(w, r, http.StatusBadRequest, codeBadRequest, "The Host header is not valid.")
		return nil, false
	case err != nil:
		rq.log.Error("no public base URL", "error", err)
		writeError(w, r, http.StatusInternalServerError, codeNoBaseURL, "The public base URL of this service is not configured.")
		return nil, false
	}
	return u, true
}

// request is what the handler knows about one request.
type request struct {
	id  string
	log *slog.Logger
	// caller is who the request is, resolved once (authenticate).
	caller audience.Caller
	// keyID names a key that was presented and refused, with authReason
	// why, and keyAudiences are its audiences when it is a configured key
	// (expired, or not a path key; nil for a key that is not configured).
	keyID, authReason string
	keyAudiences      []string
	// session is set for a caller a web catalog session cookie names.
	session bool
	// capability is the key of a capability URL ("" for another request),
	// which the documents' URLs are built under; it is never logged.
	capability string
	// logPath is the request's path as logs write it: a capability URL's
	// key redacted to its id.
	logPath string
}

// authenticate resolves the request's caller, from its Authorization
// header or a capability URL's path, or answers it (401 for a credential
// that is not valid, 503 when the key store cannot be read) and reports
// false. It is the one place a caller comes from.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, rq *request) bool {
	tok, _, inPath := routes.SplitCapability(r.URL.Path)
	var res apikey.Result
	var err error
	switch {
	case inPath && len(r.Header.Values("Authorization")) > 0:
		res = apikey.Result{Status: apikey.Invalid, Reason: reasonTwoCredentials}
	case inPath:
		res, err = s.keys.VerifyPath(r.Context(), tok)
	default:
		res, err = s.keys.Verify(r.Context(), r.Header)
	}
	if inPath {
		rq.capability = tok
		rq.logPath = routes.RedactCapability(r.URL.Path, res.KeyID)
	}
	switch {
	case err != nil:
		rq.log.Error("api key store unavailable", "error", err)
		writeError(w, r, http.StatusServiceUnavailable, codeUnavailable, "The service is temporarily unavailable.")
		return false
	case res.Status == apikey.Invalid:
		rq.keyID, rq.authReason, rq.keyAudiences = res.KeyID, res.Reason, res.Audiences
		if res.Reason == apikey.ReasonExpired || res.Reason == apikey.ReasonNotPathKey {
			s.auditor.CredentialRefused(r.Context(), obs.CredentialRefusedEvent{
				KeyID: res.KeyID, Audiences: res.Audiences, Reason: res.Reason, Path: clip(rq.path(r)), RequestID: rq.id,
			})
		}
		w.Header().Set("WWW-Authenticate", apikey.Challenge+`, error="invalid_token"`)
		writeError(w, r, http.StatusUnauthorized, codeUnauthorized, "The credential is not valid.")
		return false
	}
	rq.caller = res.Caller
	return true
}

// CallerBySession is the caller a session's key (its id and configured
// hash) is now, read from the key store as it is (a sign-in cookie must
// still name a configured, unexpired key, the very one it was issued for):
// ok is false when the store holds none, and err wraps
// apikey.ErrUnavailable when the store cannot be read. What the caller sees is then decided as on every surface: by
// catalog.Entry.VisibleTo (and Listing.VisibleTo), behind the View's
// accessors, and whatever is kept per caller is kept per class
// (View.Class), never per key.
func (s *Server) CallerBySession(ctx context.Context, sess websession.Session) (c audience.Caller, ok bool, err error) {
	return s.keys.Bound(ctx, sess.KeyID, sess.KeyHash)
}

// reasonTwoCredentials: a capability URL that also carries an
// Authorization header names two callers; neither is guessed at.
const reasonTwoCredentials = "credential_in_path_and_header"

// path is the request's path as logs may write it: a capability URL's key
// redacted to its id, and any other path with whatever could be a key sent
// in a malformed one redacted too (routes.RedactCapability).
func (rq *request) path(r *http.Request) string {
	if rq.logPath != "" {
		return rq.logPath
	}
	return routes.RedactCapability(r.URL.Path, "")
}

// underCapability is r as the path after a capability URL's key names it.
func (rq *request) underCapability(r *http.Request) *http.Request {
	_, rest, _ := routes.SplitCapability(r.URL.Path)
	r2 := r.WithContext(r.Context())
	u := *r.URL
	u.Path, u.RawPath = rest, ""
	r2.URL = &u
	r2.RequestURI = u.RequestURI()
	return r2
}

// capabilityIndex renders the RFC index (listing "") or a listing's for
// caller with every URL under prefix (the origin and the capability URL's
// key), so the client fetches the artifacts under the key too.
func capabilityIndex(v *catalog.View, listing string, caller audience.Caller, prefix string) (*feeddoc.Doc, bool) {
	entries := v.Skills(caller)
	if listing != "" {
		var ok bool
		if entries, ok = v.Listing(listing, caller); !ok {
			return nil, false
		}
	}
	return feeddoc.Render(discovery.BuildAt(entries, prefix), feeddoc.RequestLevel), true
}

var _ http.Handler = (*Server)(nil)
