package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// The large documents (the RFC index and listings of a big catalog, the
// page of everything) are rendered by the indexer into the bucket for the
// origins it was given, and the catalog's head records them: the request
// path answers them from the head alone (ETag, 304, HEAD), sends their
// bytes when the response can carry them (read once per revision, pinned
// to the version written, re-hashed), and otherwise redirects to a
// presigned GET of that version, which cannot change under the client.

// maxStored bounds the pre-rendered documents one snapshot keeps in memory.
const maxStored = 16

// presignFor is how long a redirect's URL is valid: at most the feeds'
// max-age (public), and the 60 s an authenticated answer may live.
const presignFor = 60 * time.Second

// storedBody is a pre-rendered rendition as read and verified.
type storedBody struct {
	body []byte
	err  error
}

// storedDocument returns the document the indexer rendered for origin
// (a page of hrefs only is rendered once, for origin ""), path and the
// caller's class in this revision, or nil.
func (s *snapshot) storedDocument(origin, path string, c audience.Caller) *catalog.Document {
	return s.head.Document(origin, path, c)
}

// read returns the bytes of a rendition: read once per revision from the
// version the indexer wrote, and checked against its digest and size. A
// failure to read is tried again by the next request; a mismatch is kept.
func (s *snapshot) read(ctx context.Context, r catalog.Rendition) ([]byte, error) {
	key := r.Key + "@" + r.VersionID
	got := s.stored.get(key, func() storedBody {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reloadTimeout)
		defer cancel()
		obj, err := s.store.Get(rctx, r.Key, store.GetOptions{VersionID: r.VersionID})
		if err != nil {
			return storedBody{err: fmt.Errorf("read %s: %w", r.Key, err)}
		}
		defer func() { _ = obj.Body.Close() }()
		// Sized from the rendition: one buffer, not the doubling of
		// io.ReadAll (a cold process pays for every page it touches).
		buf := bytes.NewBuffer(make([]byte, 0, r.Size+1+bytes.MinRead))
		_, err = buf.ReadFrom(io.LimitReader(obj.Body, r.Size+1))
		b := buf.Bytes()
		if err != nil {
			return storedBody{err: fmt.Errorf("read %s: %w", r.Key, err)}
		}
		if got := digest.Of(b); int64(len(b)) != r.Size || !got.Equal(r.Digest) {
			return storedBody{err: &mismatchError{expected: r.Digest, observed: got}}
		}
		return storedBody{body: b}
	})
	s.forgetFailure(key, got.err)
	return got.body, got.err
}

// pinned checks, once per revision, that the version a redirect would send
// the client to is there and is the object the indexer wrote (its ETag),
// so a redirect never leads to a missing or replaced document.
func (s *snapshot) pinned(ctx context.Context, r catalog.Rendition) error {
	key := r.Key + "@" + r.VersionID + "#pin"
	got := s.stored.get(key, func() storedBody {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reloadTimeout)
		defer cancel()
		obj, err := s.store.Get(rctx, r.Key, store.GetOptions{VersionID: r.VersionID, Length: 1})
		if err != nil {
			return storedBody{err: fmt.Errorf("check %s: %w", r.Key, err)}
		}
		_ = obj.Body.Close()
		if r.ETag != "" && obj.ETag != r.ETag || obj.Size != r.Size {
			return storedBody{err: &replacedError{key: r.Key, version: r.VersionID}}
		}
		return storedBody{}
	})
	s.forgetFailure(key, got.err)
	return got.err
}

// forgetFailure lets the next request try key again unless err is final:
// the object is missing, or is not what was written.
func (s *snapshot) forgetFailure(key string, err error) {
	var m *mismatchError
	var rp *replacedError
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.As(err, &m) && !errors.As(err, &rp) {
		s.stored.forget(key)
	}
}

// replacedError is a pinned version that is not the object the indexer wrote.
type replacedError struct{ key, version string }

func (e *replacedError) Error() string {
	return fmt.Sprintf("stored document %s version %s is not the one written", e.key, e.version)
}

// mismatchError is a stored rendition whose bytes are not the digest's.
type mismatchError struct{ expected, observed digest.Digest }

func (e *mismatchError) Error() string {
	return fmt.Sprintf("stored document holds %s, want %s", e.observed, e.expected)
}

// serveStored answers GET or HEAD of a pre-rendered document with
// cacheControl; rerender renders it on the request path instead, for a
// rendition that cannot be read or does not match its digest (it is then
// never served, nor redirected to).
func (s *Server) serveStored(w http.ResponseWriter, r *http.Request, rq *request, snap *snapshot, d *catalog.Document,
	cacheControl string, rerender func() (*feeddoc.Doc, bool)) {
	etag, gzETag := feeddoc.ETags(d.Identity.Digest, int(d.Identity.Size))
	gz := d.Gzip != nil && gzETag != "" && acceptsGzip(r)
	rend, tag := d.Identity, etag
	if gz {
		rend, tag = *d.Gzip, gzETag
	}
	h := w.Header()
	h.Set("Cache-Control", cacheControl)
	varyOn(h, "Accept-Encoding")
	h.Set("ETag", tag)
	if ifNoneMatch(r, etag, gzETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		h.Set("Content-Type", "application/json")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Length", strconv.FormatInt(rend.Size, 10))
		if gz {
			h.Set("Content-Encoding", "gzip")
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	if s.maxResponse <= 0 || rend.Size <= s.maxResponse {
		body, err := snap.read(r.Context(), rend)
		switch {
		case err == nil && s.fits(h, gz, body):
			writeJSONBytes(w, r, body, gz)
			return
		case err != nil:
			s.storedFailure(r, rq, d, rend, err)
			s.serveRendered(w, r, rq, rerender, cacheControl)
			return
		}
	}
	if s.presigner == nil || rend.VersionID == "" {
		// Nowhere to send the client, or no version to pin (a bucket
		// without versioning: the object could change under the client):
		// the document as rendered here, which cannot fit either, answers
		// what the platform says of it.
		s.serveRendered(w, r, rq, rerender, cacheControl)
		return
	}
	if err := snap.pinned(r.Context(), rend); err != nil {
		s.storedFailure(r, rq, d, rend, err)
		s.serveRendered(w, r, rq, rerender, cacheControl)
		return
	}
	rh := store.ResponseHeaders{ContentType: "application/json", CacheControl: cacheControl}
	if gz {
		rh.ContentEncoding = "gzip"
	}
	u, err := s.presigner.PresignGet(r.Context(), rend.Key, rend.VersionID, presignFor, rh)
	if err != nil {
		rq.log.Error("presign a stored document", "path", clip(d.Path), "key", rend.Key, "error", err)
		unavailable(w, r)
		return
	}
	// The redirect itself is never stored: its URL expires.
	h.Set("Cache-Control", ccNoStore)
	h.Set("Location", u)
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusFound)
}

// serveRendered answers a document rendered on the request path, or 503
// when it cannot be rendered or does not fit the platform's response.
func (s *Server) serveRendered(w http.ResponseWriter, r *http.Request, rq *request, rerender func() (*feeddoc.Doc, bool), cacheControl string) {
	doc, ok := rerender()
	if !ok {
		unavailable(w, r)
		return
	}
	gzFits := doc.GzETag != "" && acceptsGzip(r) && s.fits(w.Header(), true, doc.Gzipped())
	switch {
	case !s.fits(w.Header(), false, doc.Body) && !gzFits:
		rq.log.Error("a document too large for a response, and none stored for this origin and caller", "path", clip(rq.path(r)), "bytes", len(doc.Body))
		unavailable(w, r)
	default:
		serveJSON(w, r, doc, cacheControl)
	}
}

// storedFailure records a rendition that could not be served: a mismatch
// is an integrity incident (audit event and metric), anything else a log line.
func (s *Server) storedFailure(r *http.Request, rq *request, d *catalog.Document, rend catalog.Rendition, err error) {
	var m *mismatchError
	if !errors.As(err, &m) {
		rq.log.Error("read a stored document", "path", clip(d.Path), "key", rend.Key, "error", err)
		return
	}
	host := ""
	if u, err := s.BaseURL(r); err == nil {
		host = u.Hostname()
	}
	s.auditor.DigestMismatch(r.Context(), obs.DigestMismatchEvent{
		Hostname: host, Expected: m.expected, Observed: m.observed, RequestID: rq.id, Path: d.Path,
		KeyID: rq.caller.KeyID, Audiences: rq.caller.AudienceNames(),
	})
	s.count(r, rq, obs.DigestMismatch, obs.DimensionSkill, "")
}

// fits reports whether a JSON response with these headers and body is one
// the platform can return.
func (s *Server) fits(h http.Header, gz bool, body []byte) bool {
	if s.fitsFn != nil {
		hh := h.Clone()
		hh.Set("Content-Type", "application/json")
		if gz {
			hh.Set("Content-Encoding", "gzip")
		}
		return s.fitsFn(hh, body)
	}
	return s.maxResponse <= 0 || int64(len(body)) <= s.maxResponse
}
