package server

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// serveNative answers the native feed (/manifest.json, /skills/v1/…,
// /subagents/v1/…) and the /api/v1/ API: documents as JSON with the same
// caching as the RFC index, artifact bytes under the integrity contract,
// and the check-updates POSTs. manifest.Resolve decides what a path is;
// this decides how it goes over HTTP.
//
// What the caller cannot see is not found before the method is judged, as
// for artifacts: a 405 for a hidden skill's URL would tell it exists.
func (s *Server) serveNative(w http.ResponseWriter, r *http.Request, rq *request) {
	p := r.URL.Path
	if kind, ok := checkUpdatesKind(p); ok {
		s.serveCheckUpdates(w, r, rq, kind)
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
	// Only the search routes read a query; a malformed one there is a bad
	// request, elsewhere it is ignored like any query.
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil && searchPaths[p] {
		if readMethod(w, r) {
			writeError(w, r, http.StatusBadRequest, manifest.CodeInvalidParameter, "the query string is malformed: "+err.Error())
		}
		return
	}
	if p == allPages(catalog.KindSkill) || p == allPages(catalog.KindSubagent) {
		if d := snap.storedDocument("", p, rq.caller); d != nil {
			if readMethod(w, r) {
				s.serveStored(w, r, rq, snap, d, feedCacheControl(rq), func() (*feeddoc.Doc, bool) {
					v, err := snap.View(r.Context())
					if err != nil {
						return nil, false
					}
					doc, _, err := snap.native(r.Context(), v, p, nil, rq.caller, base)
					return doc, err == nil && doc != nil
				})
			}
			return
		}
	}
	v, ok := s.catalogView(w, r, rq, snap)
	if !ok {
		return
	}
	// The bundle beside versioned bytes is found as the bytes are.
	target, bundle := p, false
	if m := routes.Lookup(p); m.Bundle {
		target, bundle = m.Artifact, true
	}
	doc, res, err := snap.native(r.Context(), v, target, query, rq.caller, base)
	if errors.Is(err, catalog.ErrChanged) {
		// A version's history is read from the revision the view was
		// compiled from; a publish since replaced it. Answer from the
		// current revision instead, once.
		if snap, v, err = s.currentView(r.Context()); err == nil {
			doc, res, err = snap.native(r.Context(), v, target, query, rq.caller, base)
		}
	}
	if err != nil {
		nativeUnavailable(w, r, rq, err)
		return
	}
	// A gone version's bundle is gone with it; one that never had a
	// bundle has none to be gone.
	goneBundle := res.Outcome == manifest.Gone && res.Version != nil && res.Version.Bundle != nil
	if bundle && (doc != nil || res.Outcome != manifest.Bytes && !goneBundle) {
		writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.")
		return
	}
	if doc == nil && res.Outcome == manifest.NotFound {
		writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.")
		return
	}
	if !readMethod(w, r) {
		return
	}
	switch {
	case doc != nil:
		serveJSON(w, r, doc, feedCacheControl(rq))
	case res.Outcome == manifest.Bytes && bundle:
		s.serveBundle(w, r, rq, res.Entry, res.Version, versionedCacheControl(res.Entry))
	case res.Outcome == manifest.Bytes:
		s.serveArtifact(w, r, rq, res.Entry, res.Version, versionedCacheControl(res.Entry))
	case res.Outcome == manifest.BadRequest && res.Err != nil:
		writeError(w, r, http.StatusBadRequest, res.Err.Code, res.Err.Message)
	case res.Outcome == manifest.Gone && res.Err != nil:
		writeError(w, r, http.StatusGone, res.Err.Code, res.Err.Message)
	default: // an outcome this server does not know: never guess
		rq.log.Error("native feed: unexpected outcome", "path", clip(p), "outcome", int(res.Outcome))
		writeError(w, r, http.StatusInternalServerError, codeInternal, "Internal error.")
	}
}

// nativeUnavailable answers a feed that cannot answer at all. Without a
// catalog that is a 503, never a 404 or an empty list: clients read those
// as "everything was deleted" and remove what they synced.
func nativeUnavailable(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	if errors.Is(err, manifest.ErrNoCatalog) || errors.Is(err, catalog.ErrChanged) {
		rq.log.Error("catalog unavailable", "error", err)
		w.Header().Set("Retry-After", "5")
		writeError(w, r, http.StatusServiceUnavailable, codeUnavailable, "The service is temporarily unavailable.")
		return
	}
	rq.log.Error("native feed cannot answer", "error", err)
	writeError(w, r, http.StatusInternalServerError, codeInternal, "Internal error.")
}

// versionedCacheControl is the Cache-Control of versioned bytes under
// /api/v1/: they never change, so a shared cache may keep a public version
// for an hour, which is also the longest a withdrawn version may live on
// in one (DESIGN.md). An authenticated entry's bytes are private.
func versionedCacheControl(e *catalog.Entry) string {
	if e.Visibility == catalog.Authenticated {
		return ccPrivateVersioned
	}
	return ccPublicVersioned
}

// searchPaths take a query string; everywhere else it is ignored.
var searchPaths = map[string]bool{routes.SkillAPI: true, routes.SubagentAPI: true}

// checkUpdatesKind tells the check-updates routes, and which collection
// each answers from.
func checkUpdatesKind(p string) (catalog.Kind, bool) {
	switch p {
	case manifest.CheckUpdatesPath:
		return catalog.KindSkill, true
	case manifest.SubagentCheckUpdatesPath:
		return catalog.KindSubagent, true
	}
	return "", false
}

// serveCheckUpdates answers POST of a JSON array of {"name", "version"}
// with, per item, the latest version the caller can see and whether it
// differs. The answer depends on the credential and the moment, so it is
// never stored.
func (s *Server) serveCheckUpdates(w http.ResponseWriter, r *http.Request, rq *request, kind catalog.Kind) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", allowPost)
		writeError(w, r, http.StatusMethodNotAllowed, codeMethodNotAllowed, "Method not allowed: POST a JSON array of {\"name\", \"version\"} objects.")
		return
	}
	if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
		writeError(w, r, http.StatusUnsupportedMediaType, codeUnsupportedMedia,
			"The body must be JSON (Content-Type: application/json), not "+clip(ct)+".")
		return
	}
	limit := min(s.maxBody, manifest.MaxCheckUpdatesBody)
	body, ok := readBody(w, r, rq, limit, "check-updates")
	if !ok {
		return
	}
	queries, err := manifest.ParseUpdateQueries(body)
	if err != nil {
		var me *manifest.Error
		if !errors.As(err, &me) { // ParseUpdateQueries promises *Error; stay safe
			me = &manifest.Error{Code: manifest.CodeInvalidBody, Message: err.Error()}
		}
		writeError(w, r, http.StatusBadRequest, me.Code, me.Message)
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
	f := manifest.Feed{View: v, Caller: rq.caller}
	serveAnswer(w, r, feeddoc.Render(f.CheckUpdatesOf(kind, queries), feeddoc.RequestLevel))
}

// jsonContentType is lenient about what announces a JSON body: none at
// all, application/json, text/json, any application/…+json, text/plain
// (what browsers' fetch sends a string body as) and
// application/x-www-form-urlencoded (what `curl -d` sends by default); the
// body must parse as JSON whatever it claims, and the route has no side
// effects for a forged cross-site post to abuse. Parameters such as charset
// are ignored. Multipart bodies are refused with a clear 415.
func jsonContentType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case mt == "application/json", mt == "text/json", mt == "text/plain", mt == "application/x-www-form-urlencoded":
		return true
	case strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"):
		return true
	}
	return false
}

// maxNativeRenders bounds the native documents one snapshot keeps. Only
// the root, the two indexes and the pages those advertise are kept, per
// class of caller, so a catalog needs about 4 + 2·(skills+sub-agents)/100
// of them for each; beyond the bound documents are rendered per request.
const maxNativeRenders = 512

// nativeKey names a kept native document. It has no origin: the kept
// documents hold only origin-root-absolute hrefs, never an absolute URL
// (manifest.Root, Index and Page), so one rendering serves every origin.
type nativeKey struct {
	path  string
	class string // audience.Class.Key in the path's collection
}

// nativeClass is the caller's class for a native path: in the collection
// the path is of (the root lists no entry: one class for everyone).
func nativeClass(v *catalog.View, path string, c audience.Caller) audience.Class {
	switch {
	case strings.HasPrefix(path, skillsRoot):
		return v.Class(catalog.ScopeSkills, c)
	case strings.HasPrefix(path, subagentsRoot):
		return v.Class(catalog.ScopeSubagents, c)
	}
	return audience.Class{}
}

// nativeRender is a native document as snapshot.native returns it.
type nativeRender struct {
	doc *feeddoc.Doc
	res manifest.Result
	err error
}

// pageKey names the page hrefs one collection's index advertises to one
// class of caller, computed once per snapshot.
type pageKey struct {
	kind  catalog.Kind
	class string
}

// native resolves a native path for a caller: doc is the rendered JSON
// when the answer is a document (kept for the snapshot when it is the
// root, an index or an advertised page), else res says what it is. err is
// Resolve's: the feed cannot answer at all.
func (s *snapshot) native(ctx context.Context, v *catalog.View, path string, query url.Values, c audience.Caller, base *url.URL) (*feeddoc.Doc, manifest.Result, error) {
	if !s.keepsNative(v, path, c) {
		return resolveNative(ctx, v, s.searchIndex(), path, query, c, base)
	}
	// Kept documents (the root, indexes, pages) read no query and no
	// history, and outlive the request that renders them first; each is
	// rendered for its class's caller.
	class := nativeClass(v, path, c)
	r := s.nativeRenders.get(nativeKey{path: path, class: class.Key()}, func() nativeRender {
		doc, res, err := resolveNative(context.WithoutCancel(ctx), v, s.searchIndex(), path, nil, class.Caller(), base)
		return nativeRender{doc, res, err}
	})
	return r.doc, r.res, r.err
}

func resolveNative(ctx context.Context, v *catalog.View, idx *manifest.SearchIndex, path string, query url.Values, c audience.Caller, base *url.URL) (*feeddoc.Doc, manifest.Result, error) {
	f := manifest.Feed{View: v, Caller: c, Base: base, SearchIndex: idx}
	res, err := f.Resolve(ctx, path, query)
	if err != nil || res.Outcome != manifest.Document {
		return nil, res, err
	}
	return feeddoc.Render(res.Document, feeddoc.RequestLevel), res, nil
}

// allPages is the path of the page holding every entry of kind.
func allPages(kind catalog.Kind) string {
	if kind == catalog.KindSubagent {
		return routes.AllPage(routes.SubagentFeed)
	}
	return routes.AllPage(routes.SkillFeed)
}

// Collection roots of the native feed.
const (
	skillsRoot    = routes.SkillFeed + "/"
	subagentsRoot = routes.SubagentFeed + "/"
)

// keepsNative reports whether path names a document the snapshot keeps:
// the root, an index, the page of everything, or a page the current index
// advertises. Other page tokens are answered too (a client may hold an
// older index), but they are unbounded, so they are rendered per request.
func (s *snapshot) keepsNative(v *catalog.View, path string, c audience.Caller) bool {
	switch path {
	case routes.Manifest, skillsRoot + "index.json", subagentsRoot + "index.json",
		allPages(catalog.KindSkill), allPages(catalog.KindSubagent):
		return true
	}
	switch {
	case strings.HasPrefix(path, skillsRoot+"pages/"):
		return s.pages(v, catalog.KindSkill, c)[path]
	case strings.HasPrefix(path, subagentsRoot+"pages/"):
		return s.pages(v, catalog.KindSubagent, c)[path]
	}
	return false
}

// pages returns the page hrefs the index of kind advertises to the caller.
func (s *snapshot) pages(v *catalog.View, kind catalog.Kind, c audience.Caller) map[string]bool {
	scope := catalog.ScopeSkills
	if kind == catalog.KindSubagent {
		scope = catalog.ScopeSubagents
	}
	class := v.Class(scope, c)
	return s.pageSets.get(pageKey{kind, class.Key()}, func() map[string]bool {
		// Index needs no base URL: it holds hrefs only.
		idx := (&manifest.Feed{View: v, Caller: class.Caller()}).Index(kind)
		hrefs := make(map[string]bool, len(idx.Pages))
		for _, p := range idx.Pages {
			hrefs[p.Href] = true
		}
		return hrefs
	})
}
