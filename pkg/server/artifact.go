package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"strconv"
	"sync"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// serveArtifact answers GET or HEAD for the bytes of version ver of entry
// e under the integrity contract, with cacheControl: the RFC artifact paths
// and the native /api/v1/ byte paths both come here.
//
// The bytes come from the immutable blob of the validated version, read
// with a bound (never more than ver.Size+1 bytes are buffered), hashed
// completely and compared in constant time with the catalog's digest before
// the status line is written. A blob that is missing, of another size or
// another content is a mismatch: 503 with a generic body, the audit event
// agent_skill.digest_mismatch and the DigestMismatch metric. No
// Content-Encoding is ever set, so a client always receives the very bytes
// the digest names. A conditional request that matches the digest (the
// ETag) is answered 304 without reading the blob: nothing is sent that the
// digest does not already vouch for.
//
// The caller has checked the method and that the caller may see e.
func (s *Server) serveArtifact(w http.ResponseWriter, r *http.Request, rq *request, e *catalog.Entry, ver *catalog.Version, cacheControl string) {
	s.serveVerified(w, r, rq, e, ver, verified{digest: ver.Digest, size: ver.Size, limit: s.maxArtifact, contentType: ver.Format.ContentType()}, cacheControl)
}

// verified is a blob served under the integrity contract: its pinned
// digest and size, the most it may be, and what it is served as; path
// names it in the audit event when it is not the version's artifact.
type verified struct {
	digest      digest.Digest
	size, limit int64
	contentType string
	path        string
}

// serveVerified answers GET or HEAD for a blob of version ver of entry e:
// the artifact (serveArtifact) or its bundle (serveBundle).
func (s *Server) serveVerified(w http.ResponseWriter, r *http.Request, rq *request, e *catalog.Entry, ver *catalog.Version, b verified, cacheControl string) {
	log := rq.log
	etag := `"` + b.digest.String() + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", cacheControl)
	if ifNoneMatch(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if b.size < 0 || b.size > b.limit {
		log.Error("blob larger than this deployment serves", "skill", e.ID(), "version", ver.Label, "path", b.path, "size", b.size, "max", b.limit)
		unavailable(w, r)
		return
	}
	body, observed, release, err := s.readBlob(r.Context(), b.digest, b.size, b.limit, getBuffer)
	defer release()
	switch {
	case errors.Is(err, errMismatch):
		s.mismatch(r, rq, e, ver, b.path, b.digest, observed)
		unavailable(w, r)
		return
	case err != nil:
		log.Error("read blob", "skill", e.ID(), "version", ver.Label, "path", b.path, "error", err)
		unavailable(w, r)
		return
	}
	h.Set("Content-Type", b.contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// errMismatch: the blob does not hold the bytes the catalog pinned.
var errMismatch = errors.New("blob does not match its digest")

// readBlob reads the blob pinned as d and size bytes and verifies it: an
// artifact's, or one file's. On errMismatch, observed is the digest of what
// the blob holds when that could be computed within limit bytes (zero for a
// missing blob or a larger one). buffer provides the size+1 bytes read
// into (getBuffer, pooled, or newBuffer for a body that outlives the
// request's writes); release hands it back once body is no longer used and
// is never nil.
func (s *Server) readBlob(ctx context.Context, d digest.Digest, size, limit int64, buffer func(int) ([]byte, func())) (body []byte, observed digest.Digest, release func(), err error) {
	release = func() {}
	key := catalog.BlobKey(d)
	obj, err := s.store.Get(ctx, key, store.GetOptions{})
	if errors.Is(err, store.ErrNotFound) {
		return nil, digest.Digest{}, release, errMismatch
	}
	if err != nil {
		return nil, digest.Digest{}, release, fmt.Errorf("get %s: %w", key, err)
	}
	defer func() { _ = obj.Body.Close() }()

	// One byte more than expected tells an oversized blob from an exact one.
	buf, release := buffer(int(size) + 1)
	n, err := io.ReadFull(obj.Body, buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		// Shorter than (or exactly) the expected size: n bytes are all there is.
	case err != nil:
		return nil, digest.Digest{}, release, fmt.Errorf("read %s: %w", key, err)
	default:
		// More than the expected size: hash the rest without buffering it,
		// up to the cap, so the audit event can name what is stored.
		h := sha256.New()
		h.Write(buf)
		rest, err := io.Copy(h, io.LimitReader(obj.Body, limit))
		if err != nil || int64(n)+rest > limit {
			return nil, digest.Digest{}, release, errMismatch
		}
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		return nil, digest.FromSum(sum), release, errMismatch
	}
	body = buf[:n]
	got := digest.Of(body)
	if int64(n) != size || !got.Equal(d) {
		return nil, got, release, errMismatch
	}
	return body, got, release, nil
}

// mismatch records a failed integrity check of version ver of e: of the
// artifact (path "") or of the file at path, pinned as expected. The audit
// line comes first (it cannot fail), then the metric, whose failure must
// not change the answer.
func (s *Server) mismatch(r *http.Request, rq *request, e *catalog.Entry, ver *catalog.Version, path string, expected, observed digest.Digest) {
	host := ""
	if u, err := s.BaseURL(r); err == nil {
		host = u.Hostname()
	}
	s.auditor.DigestMismatch(r.Context(), obs.DigestMismatchEvent{
		SkillName: e.Name,
		Hostname:  host,
		Expected:  expected,
		Observed:  observed,
		Version:   ver.Label,
		RequestID: rq.id,
		Path:      path,
		KeyID:     rq.caller.KeyID,
		Audiences: rq.caller.AudienceNames(),
	})
	s.count(r, rq, obs.DigestMismatch, obs.DimensionSkill, e.Name)
}

// count counts an incident; a failing metrics sink never changes the answer.
func (s *Server) count(r *http.Request, rq *request, name, dimension, value string) {
	defer func() {
		if p := recover(); p != nil {
			rq.log.Error("metrics sink panicked", "metric", name, "panic", fmt.Sprint(p))
		}
	}()
	s.metrics.Count(r.Context(), name, dimension, value)
}

// unavailable is the generic 503 of a failed integrity check or an
// unreadable blob: it says nothing about the stored bytes.
func unavailable(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "30")
	writeError(w, r, http.StatusServiceUnavailable, codeUnavailable, "The service is temporarily unavailable.")
}

// Artifact buffers are pooled by power-of-two size class: a warm function
// serving the same artifacts then allocates (and zeroes) nothing per
// request. Small ones are not worth pooling.
const (
	minPooled = 16 << 10
	maxClass  = 28 // 256 MiB, far above any artifact cap
)

var bufferPools [maxClass + 1]sync.Pool

// newBuffer returns a fresh slice of length n, never recycled: for bodies
// that live on after the handler returns (an MCP answer is encoded later).
func newBuffer(n int) ([]byte, func()) { return make([]byte, n), func() {} }

// getBuffer returns a slice of length n and the function that recycles it.
// The caller must not touch the slice after calling the function.
func getBuffer(n int) ([]byte, func()) {
	class := bits.Len(uint(n - 1))
	if n < minPooled || class > maxClass {
		return make([]byte, n), func() {}
	}
	bp, _ := bufferPools[class].Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 1<<class)
		bp = &b
	}
	return (*bp)[:n], func() { bufferPools[class].Put(bp) }
}
