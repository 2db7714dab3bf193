package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/webcatalog"
	"github.com/skilldrop/skilldrop/pkg/websession"
)

// maxSignInBody caps the sign-in form's body: one key, form-encoded.
const maxSignInBody = 4 << 10

// Cache-Control of the web catalog's pages: a signed-in page is never
// stored (a shared browser's back button must not show it after sign-out),
// an anonymous one is revalidated on every use.
const (
	ccPageAnonymous = "private, no-cache"
	ccPageSignedIn  = ccNoStore
)

// errIntegrity: a document a page shows does not hold the bytes the
// catalog pins (already audited and counted).
var errIntegrity = errors.New("stored bytes do not match the catalog's digest")

// web is what one web catalog request knows of its caller.
type web struct {
	base   *url.URL
	jar    websession.Jar // the session cookie: Secure on any origin but plain-HTTP loopback
	keyID  string
	notice string
}

// serveCatalog answers the web catalog's pages (/catalog/…): HTML, under
// the strict security headers of webcatalog.Headers, never with CORS (no
// other origin has any business reading a page), gzip-encoded when the
// browser accepts it. The caller is judged as for the feeds (rq), and only
// here a session cookie can stand for the key it was issued for: the
// feeds and MCP never read it.
func (s *Server) serveCatalog(w http.ResponseWriter, r *http.Request, rq *request, route routes.Match) {
	h := w.Header()
	h.Del("Access-Control-Allow-Origin")
	h.Del("Access-Control-Expose-Headers")
	varyOn(h, "Cookie")
	webcatalog.Headers(h)
	page := routes.ParseCatalog(r.URL.Path)
	allow := allowRead
	if route.Post {
		allow = "GET, HEAD, OPTIONS, POST"
		if page.Kind == routes.CatalogSignOutPage {
			allow = allowPost
		}
	}
	if r.Method == http.MethodOptions {
		h.Set("Allow", allow)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	base, ok := s.origin(w, r, rq)
	if !ok {
		return
	}
	c := &web{base: base, jar: sessionJar(base), keyID: rq.caller.KeyID}
	if page.Kind == routes.CatalogAsset {
		s.serveAsset(w, r, c, page.Name)
		return
	}
	if !rq.caller.Authenticated && !s.openSession(w, r, rq, c) {
		return
	}
	if !rq.caller.Authenticated {
		c.keyID = ""
	}
	post := r.Method == http.MethodPost
	switch {
	case post && !route.Post, !post && r.Method != http.MethodGet && r.Method != http.MethodHead,
		!post && page.Kind == routes.CatalogSignOutPage:
		h.Set("Allow", allow)
		s.pageError(w, r, c, http.StatusMethodNotAllowed, "Method not allowed", "This page does not take that method.")
		return
	case post && !sameOrigin(r, base):
		rq.log.Warn("web catalog: cross-origin form refused", "origin", clip(r.Header.Get("Origin")))
		s.pageError(w, r, c, http.StatusForbidden, "Forbidden", "The form was not sent from this catalog's own pages.")
		return
	}
	switch page.Kind {
	case routes.CatalogSignInPage:
		if post {
			s.signIn(w, r, rq, c)
			return
		}
		s.writePage(w, r, c, http.StatusOK, func(b io.Writer) error {
			return webcatalog.RenderSignIn(b, webcatalog.SignInPage{L: c.layout("Sign in"), Enabled: s.signer != nil, Unavailable: c.signInUnavailable()})
		})
	case routes.CatalogListings: // the list's filter names the listings the caller may see
		h.Set("Cache-Control", ccNoStore)
		http.Redirect(w, r, routes.Catalog, http.StatusFound)
	case routes.CatalogListingNoSlash: // to the listing's page, hidden or missing alike (which then answers 404)
		h.Set("Cache-Control", ccNoStore)
		to := routes.CatalogListing(page.Listing)
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, to, http.StatusFound)
	case routes.CatalogSignOutPage:
		if rq.keyID != "" {
			rq.log.Info("web session ended", "key_id", rq.keyID)
		}
		http.SetCookie(w, c.jar.Clear())
		h.Set("Cache-Control", ccNoStore)
		http.Redirect(w, r, routes.Catalog, http.StatusSeeOther)
	default:
		s.servePage(w, r, rq, c, page)
	}
}

// servePage answers a page that shows the catalog: the list, a listing's,
// an entry's.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request, rq *request, c *web, page routes.CatalogPage) {
	if page.Kind == routes.CatalogUnknown {
		s.notFound(w, r, c)
		return
	}
	snap, err := s.catalog.get(r.Context())
	if err != nil {
		rq.log.Error("catalog unavailable", "error", err)
		s.unavailablePage(w, r, c)
		return
	}
	v, err := snap.View(r.Context())
	if errors.Is(err, catalog.ErrChanged) {
		snap, v, err = s.currentView(r.Context())
	}
	if err != nil {
		rq.log.Error("catalog entries unavailable", "error", err)
		s.unavailablePage(w, r, c)
		return
	}
	site := &webcatalog.Site{View: v, Index: snap.webIndex(), Caller: rq.caller, Base: c.base, KeyID: c.keyID}
	switch page.Kind {
	case routes.CatalogList, routes.CatalogListingPage:
		q, err := webcatalog.ParseListQuery(r.URL.RawQuery)
		if err != nil {
			s.pageError(w, r, c, http.StatusBadRequest, "Bad request", strings.TrimPrefix(err.Error(), webcatalog.ErrBadQuery.Error()+": "))
			return
		}
		var p webcatalog.ListPage
		var found bool
		if page.Kind == routes.CatalogListingPage {
			p, found = site.Listing(page.Listing, q)
		} else {
			p, found = site.List(q)
		}
		if !found {
			s.notFound(w, r, c)
			return
		}
		p.L.Notice = c.notice
		s.writePage(w, r, c, http.StatusOK, func(b io.Writer) error { return webcatalog.RenderList(b, p) })
	case routes.CatalogSkillPage, routes.CatalogSubagentPage:
		kind := catalog.KindSkill
		if page.Kind == routes.CatalogSubagentPage {
			kind = catalog.KindSubagent
		}
		p, found, err := site.Entry(r.Context(), kind, page.Listing, page.Name, s.pageFile(r, rq), s.bodies)
		switch {
		case errors.Is(err, errIntegrity):
			s.unavailablePage(w, r, c)
			return
		case err != nil:
			rq.log.Error("web catalog: entry page", "name", clip(page.Name), "error", err)
			s.unavailablePage(w, r, c)
			return
		case !found:
			s.notFound(w, r, c)
			return
		}
		p.L.Notice = c.notice
		s.writePage(w, r, c, http.StatusOK, func(b io.Writer) error { return webcatalog.RenderEntry(b, p) })
	default:
		s.notFound(w, r, c)
	}
}

// pageFile reads a file a page shows under the integrity contract: a blob
// that does not hash to the pinned digest is audited and counted like an
// artifact's, and no byte of it is shown.
func (s *Server) pageFile(r *http.Request, rq *request) webcatalog.ReadFile {
	return func(ctx context.Context, e *catalog.Entry, ver *catalog.Version, f catalog.File) ([]byte, error) {
		if f.Size < 0 || f.Size > s.maxArtifact {
			return nil, errIntegrity
		}
		body, observed, release, err := s.readBlob(ctx, f.Digest, f.Size, s.maxArtifact, newBuffer)
		defer release()
		if errors.Is(err, errMismatch) {
			s.mismatch(r, rq, e, ver, f.Path, f.Digest, observed)
			return nil, errIntegrity
		}
		return body, err
	}
}

// openSession honours a session cookie: a valid one authenticates rq as
// the key it names, for this page; an ended or forged one is cleared with
// a notice. It answers the request itself (false) only when the key store
// cannot be read.
func (s *Server) openSession(w http.ResponseWriter, r *http.Request, rq *request, c *web) bool {
	value := c.jar.Value(r)
	if value == "" {
		return true
	}
	if s.signer == nil {
		http.SetCookie(w, c.jar.Clear())
		return true
	}
	sess, err := s.signer.Open(value, s.now(), func(id string) ([]string, error) { return s.keys.Named(r.Context(), id) })
	switch {
	case errors.Is(err, apikey.ErrUnavailable):
		rq.log.Error("api key hashes unavailable", "error", err)
		s.unavailablePage(w, r, c)
		return false
	case err != nil:
		rq.authReason = "session: " + err.Error()
		http.SetCookie(w, c.jar.Clear())
		c.notice = "Your session has ended: sign in again to see what needs a key."
		return true
	}
	// The key the session is bound to (its id and hash) is still
	// configured; it must also be unexpired, and it decides the audiences,
	// as the store says now.
	caller, ok, err := s.CallerBySession(r.Context(), sess)
	switch {
	case err != nil:
		rq.log.Error("api key store unavailable", "error", err)
		s.unavailablePage(w, r, c)
		return false
	case !ok:
		rq.keyID, rq.authReason = sess.KeyID, "session: "+apikey.ReasonExpired
		http.SetCookie(w, c.jar.Clear())
		c.notice = "Your session has ended: sign in again to see what needs a key."
		return true
	}
	rq.caller, rq.session = caller, true
	c.keyID = sess.KeyID
	return true
}

// signIn checks the posted key as a Bearer credential would be checked
// and, when it is valid, sets the session cookie and sends the browser to
// the catalog.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request, rq *request, c *web) {
	form := func(status int, msg string) {
		s.writePage(w, r, c, status, func(b io.Writer) error {
			return webcatalog.RenderSignIn(b, webcatalog.SignInPage{L: c.layout("Sign in"), Enabled: s.signer != nil,
				Unavailable: c.signInUnavailable(), Error: msg})
		})
	}
	if s.signer == nil {
		form(http.StatusForbidden, "Sign-in is not configured on this deployment.")
		return
	}
	if msg := c.signInUnavailable(); msg != "" {
		rq.log.Warn("web catalog: sign-in over plain HTTP refused", "host", clip(c.base.Host))
		form(http.StatusForbidden, msg)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSignInBody))
	if err != nil {
		form(http.StatusRequestEntityTooLarge, "The form could not be read.")
		return
	}
	vals, err := url.ParseQuery(string(body))
	if err != nil || len(vals["key"]) != 1 {
		form(http.StatusBadRequest, "Enter one API key.")
		return
	}
	key := strings.TrimSpace(vals.Get("key"))
	res, err := s.keys.Verify(r.Context(), http.Header{"Authorization": {"Bearer " + key}})
	switch {
	case err != nil:
		rq.log.Error("api key hashes unavailable", "error", err)
		s.unavailablePage(w, r, c)
		return
	case res.Status != apikey.Valid:
		rq.keyID, rq.authReason, rq.keyAudiences = res.KeyID, res.Reason, res.Audiences
		w.Header().Set("WWW-Authenticate", apikey.Challenge+`, error="invalid_token"`)
		form(http.StatusUnauthorized, "That API key is not valid here.")
		return
	}
	value, expires := s.signer.Issue(res.KeyID, apikey.Hash(key), s.now(), websession.MaxAge)
	http.SetCookie(w, c.jar.Cookie(value, expires, s.now()))
	rq.keyID = res.KeyID
	rq.log.Info("web session started", "key_id", res.KeyID, "audiences", res.Audiences, "expires", expires)
	w.Header().Set("Cache-Control", ccNoStore)
	http.Redirect(w, r, routes.Catalog, http.StatusSeeOther)
}

// serveAsset answers the embedded stylesheet and script.
func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request, c *web, name string) {
	a := webcatalog.AssetNamed(name)
	if a == nil {
		s.notFound(w, r, c)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", allowRead)
		s.pageError(w, r, c, http.StatusMethodNotAllowed, "Method not allowed", "This page does not take that method.")
		return
	}
	h := w.Header()
	h.Set("Cache-Control", webcatalog.AssetCacheControl)
	h.Set("ETag", a.ETag)
	if ifNoneMatch(r, a.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", a.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(a.Body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.Body)
	}
}

// layout is a page's layout for this caller.
func (c *web) layout(title string) webcatalog.Layout {
	l := webcatalog.NewLayout(title, c.base, c.keyID)
	l.Notice = c.notice
	return l
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request, c *web) {
	s.pageError(w, r, c, http.StatusNotFound, "Not found", "There is nothing here, or nothing you can see without signing in.")
}

func (s *Server) unavailablePage(w http.ResponseWriter, r *http.Request, c *web) {
	w.Header().Set("Retry-After", "5")
	s.pageError(w, r, c, http.StatusServiceUnavailable, "Temporarily unavailable", "The catalog cannot be shown right now; try again in a moment.")
}

// pageError answers an HTML page saying what went wrong.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, c *web, status int, title, msg string) {
	s.writePage(w, r, c, status, func(b io.Writer) error {
		return webcatalog.RenderError(b, webcatalog.ErrorPage{L: c.layout(title), Message: msg})
	})
}

// writePage renders a page into a buffer and writes it with status,
// gzip-encoded when the browser accepts it.
func (s *Server) writePage(w http.ResponseWriter, r *http.Request, c *web, status int, render func(io.Writer) error) {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		s.log.Error("web catalog: render", "error", err)
		writeError(w, r, http.StatusInternalServerError, codeInternal, "Internal error.")
		return
	}
	h := w.Header()
	h.Del("ETag")
	cc := ccPageAnonymous
	if c.keyID != "" {
		cc = ccPageSignedIn
	}
	h.Set("Cache-Control", cc)
	varyOn(h, "Accept-Encoding")
	body := buf.Bytes()
	if acceptsGzip(r) {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.DefaultCompression) // a valid level: cannot fail
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = z.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// serveRoot answers the origin root: a browser asking for HTML is sent to
// the web catalog; every other client gets what it always got, the JSON
// 404 (nothing is published at "/": the route table reserves it).
func (s *Server) serveRoot(w http.ResponseWriter, r *http.Request) {
	varyOn(w.Header(), "Accept")
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && acceptsHTML(r) {
		w.Header().Set("Cache-Control", ccNoStore)
		http.Redirect(w, r, routes.Catalog, http.StatusFound)
		return
	}
	writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.")
}

// acceptsHTML reports whether Accept names text/html (or XHTML) with a
// non-zero q: what a browser's navigation sends, and no JSON client does.
func acceptsHTML(r *http.Request) bool {
	for _, line := range r.Header.Values("Accept") {
		for _, item := range strings.Split(line, ",") {
			mt, params, _ := strings.Cut(item, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "text/html", "application/xhtml+xml":
				if qNonZero(params) {
					return true
				}
			}
		}
	}
	return false
}

// sameOrigin is the CSRF check of a form's POST: the browser's Origin
// header must name this catalog's origin. A POST without one is refused:
// every browser that can send the session cookie sends Origin with a POST.
func sameOrigin(r *http.Request, base *url.URL) bool {
	o := r.Header.Values("Origin")
	if len(o) != 1 {
		return false
	}
	u, err := url.Parse(o[0])
	return err == nil && u.Path == "" && u.RawQuery == "" && u.User == nil &&
		strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(u.Host, base.Host)
}

// signInUnavailable says why signing in cannot work on this origin, "" when
// it can: over plain HTTP anywhere but loopback the session cookie must be
// Secure, and a browser drops a Secure cookie an http:// page sets, so the
// sign-in would seem to succeed and leave the browser signed out.
func (c *web) signInUnavailable() string {
	if c.base.Scheme != "http" || !c.jar.Secure {
		return ""
	}
	return "Sign-in needs HTTPS: this catalog was reached over plain HTTP at " + c.base.Host + ", where a browser " +
		"drops the Secure session cookie, so signing in here would leave you signed out. Open the catalog over " +
		"https://, or, for a local server, at http://localhost or http://127.0.0.1."
}

// sessionJar is the origin's session cookie: Secure (secureOrigin), or on
// a plain-HTTP loopback origin named for its port, so that two local
// servers do not sign each other out.
func sessionJar(base *url.URL) websession.Jar {
	port := base.Port()
	if port == "" {
		port = "80"
	}
	return websession.Jar{Secure: secureOrigin(base), Port: port}
}

// secureOrigin reports whether the session cookie must be Secure: on every
// origin but plain HTTP on a loopback host, where browsers keep a Secure
// cookie from no one.
func secureOrigin(base *url.URL) bool {
	if base.Scheme != "http" {
		return true
	}
	host := base.Hostname()
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
