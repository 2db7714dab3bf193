package server

import (
	"crypto/ecdsa"
	"errors"
	"net/http"
	"strconv"

	"github.com/skilldrop/skilldrop/pkg/aicatalog"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/didweb"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// What the indexer signed is served as it was stored: the request path
// reads the bytes the catalog pins, re-hashes them, and never signs.

// serveProvenance answers the AI Catalog of the request's origin, the DID
// document of the signing keys and the current key. A catalog signed by
// no key answers 404 on all three, as does an origin the AI Catalog was
// not signed for. What they hold is public by construction (the AI Catalog
// lists only what anyone may read), so every caller gets the same answer.
func (s *Server) serveProvenance(w http.ResponseWriter, r *http.Request, rq *request) {
	if !readMethod(w, r) {
		return
	}
	snap, ok := s.snapshot(w, r, rq)
	if !ok {
		return
	}
	sg := snap.head.Signing
	notFound := func() { writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.") }
	switch r.URL.Path {
	case routes.AICatalog:
		base, ok := s.origin(w, r, rq)
		if !ok {
			return
		}
		sc := sg.Catalog(discovery.Origin(base))
		if sc == nil {
			notFound()
			return
		}
		body, ok := s.readSigned(w, r, rq, snap, sc.Rendition)
		if ok {
			serveSigned(w, r, body, sc.Rendition, aicatalog.MediaType)
		}
	case routes.SigningKey:
		k := sg.CurrentKey()
		if k == nil {
			notFound()
			return
		}
		rend := keyRendition(k)
		if body, ok := s.readSigned(w, r, rq, snap, rend); ok {
			serveSigned(w, r, body, rend, signing.PublicKeyMediaType)
		}
	case routes.DIDDocument:
		if sg.CurrentKey() == nil {
			notFound()
			return
		}
		base, ok := s.origin(w, r, rq)
		if !ok {
			return
		}
		keys := make([]*ecdsa.PublicKey, 0, len(sg.Keys))
		for i := len(sg.Keys) - 1; i >= 0; i-- { // the current key first
			body, ok := s.readSigned(w, r, rq, snap, keyRendition(&sg.Keys[i]))
			if !ok {
				return
			}
			pub, err := signing.ParsePublicKeyPEM(body)
			if err != nil {
				rq.log.Error("a recorded signing key does not parse", "key", sg.Keys[i].ID, "error", err)
				unavailable(w, r)
				return
			}
			keys = append(keys, pub)
		}
		doc := feeddoc.Render(didweb.New(base, keys), feeddoc.RequestLevel)
		serveJSON(w, r, doc, ccPublic)
	default: // a provenance row this handler does not know: never guess
		notFound()
	}
}

// keyRendition is where a key's PEM is: its blob.
func keyRendition(k *catalog.SigningKey) catalog.Rendition {
	return catalog.Rendition{Key: catalog.BlobKey(k.PEM.Digest), Digest: k.PEM.Digest, Size: k.PEM.Size}
}

// readSigned reads a pinned object, once per revision, re-hashed; on a
// failure it answers 503 itself (an integrity incident for a mismatch).
func (s *Server) readSigned(w http.ResponseWriter, r *http.Request, rq *request, snap *snapshot, rend catalog.Rendition) ([]byte, bool) {
	body, err := snap.read(r.Context(), rend)
	if err == nil {
		return body, true
	}
	var m *mismatchError
	if errors.As(err, &m) {
		host := ""
		if u, err := s.BaseURL(r); err == nil {
			host = u.Hostname()
		}
		s.auditor.DigestMismatch(r.Context(), obs.DigestMismatchEvent{
			Hostname: host, Expected: m.expected, Observed: m.observed, RequestID: rq.id, Path: clip(rq.path(r)),
		})
		s.count(r, rq, obs.DigestMismatch, obs.DimensionSkill, "")
	} else {
		rq.log.Error("read a signed object", "path", clip(rq.path(r)), "key", rend.Key, "error", err)
	}
	unavailable(w, r)
	return nil, false
}

// serveSigned answers a stored object verbatim: its bytes are what was
// signed (or the key), so no encoding is applied.
func serveSigned(w http.ResponseWriter, r *http.Request, body []byte, rend catalog.Rendition, contentType string) {
	etag := `"` + rend.Digest.Hex()[:32] + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", ccPublic)
	if ifNoneMatch(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// serveBundle answers the bundle of version ver of e, beside its artifact
// at path (its own path plus routes.BundleSuffix), under the integrity
// contract: 404 for a version signed by no key. The caller has checked the
// method and that the caller may see e.
func (s *Server) serveBundle(w http.ResponseWriter, r *http.Request, rq *request, e *catalog.Entry, ver *catalog.Version, cacheControl string) {
	if ver.Bundle == nil {
		writeError(w, r, http.StatusNotFound, codeNotFound, "Not found.")
		return
	}
	s.serveVerified(w, r, rq, e, ver, verified{
		digest: ver.Bundle.Digest, size: ver.Bundle.Size, limit: provenance.MaxBundleBytes,
		contentType: provenance.BundleMediaType, path: r.URL.Path,
	}, cacheControl)
}
