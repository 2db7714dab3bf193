package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/aicatalog"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/didweb"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/provenance"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// signedBucket indexes files with a signing key for https://skills.example.com.
func signedBucket(t testing.TB, key signing.Signer, files map[string]string) store.Store {
	t.Helper()
	st := store.NewMemory()
	for k, body := range files {
		if _, err := st.Put(context.Background(), k, []byte(body), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := indexer.New(indexer.Config{Store: st, Signer: key, Origins: []*url.URL{{Scheme: "https", Host: "skills.example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Reindex(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

var signedFiles = map[string]string{
	"agent-skills.yaml":                   "version: 1\nskills:\n  - name: secret\n    visibility: authenticated\nlistings:\n  hidden:\n    skills:\n      - name: secret\n",
	"skills/alpha.md":                     skilltest.SkillMD("alpha", "1.0", "Alpha."),
	"skills/secret.md":                    skilltest.SkillMD("secret", "1", "Hidden."),
	"listings/partner-a/skills/faq.md":    skilltest.SkillMD("faq", "1", "FAQ."),
	"subagents/reviewer.md":               skilltest.AgentMD("reviewer", "1", "Reviews."),
	"listings/partner-a/skills/notes.md":  skilltest.SkillMD("notes", "2", "Notes."),
	"listings/partner-a/skills/other.md":  skilltest.SkillMD("other", "3", "Other."),
	"listings/partner-b/skills/faq-b.md":  skilltest.SkillMD("faq-b", "1", "FAQ b."),
	"listings/partner-b/skills/notes.md":  skilltest.SkillMD("notes", "1", "Notes b."),
	"listings/partner-c/skills/extra.md":  skilltest.SkillMD("extra", "1", "Extra."),
	"listings/partner-c/skills/second.md": skilltest.SkillMD("second", "1", "Second."),
}

func TestProvenanceRoutes(t *testing.T) {
	key, _ := signing.Generate()
	h := newHarness(t, signedBucket(t, key, signedFiles))

	// The key, as a PEM and in the DID document.
	w := h.do("GET", "/.well-known/skilldrop/signing-key.pem")
	if w.Code != 200 || w.Header().Get("Content-Type") != signing.PublicKeyMediaType {
		t.Fatalf("signing key: %d %s", w.Code, w.Body)
	}
	if pub, err := signing.ParsePublicKeyPEM(w.Body.Bytes()); err != nil || !pub.Equal(key.Public()) {
		t.Fatalf("the published key is not the signer's: %v", err)
	}
	w = h.do("GET", "/.well-known/did.json")
	origin := &url.URL{Scheme: "https", Host: "skills.example.com"}
	keys, err := didweb.Parse(w.Body.Bytes(), origin)
	if w.Code != 200 || err != nil || !keys[didweb.KeyURL(origin, key.Public())].Equal(key.Public()) {
		t.Fatalf("did.json: %d %v %s", w.Code, err, w.Body)
	}

	// The AI Catalog, the same for every caller.
	w = h.do("GET", "/.well-known/ai-catalog.json")
	if w.Code != 200 || w.Header().Get("Content-Type") != aicatalog.MediaType {
		t.Fatalf("ai-catalog: %d %s", w.Code, w.Body)
	}
	doc, _, err := aicatalog.Verify(w.Body.Bytes(), key.Public())
	if err != nil {
		t.Fatal(err)
	}
	if a := h.do("GET", "/.well-known/ai-catalog.json", bearer(goodKey)); a.Body.String() != w.Body.String() {
		t.Error("the AI Catalog differs for a caller with a key")
	}
	var paths []string
	for _, e := range doc.Entries {
		f := e.Extensions[aicatalog.Extension]
		paths = append(paths, f.Path)
		// Its digests are those of the documents an anonymous caller is served.
		got := h.do("GET", f.Path)
		if got.Code != 200 || digest.Of(got.Body.Bytes()) != f.Digest {
			t.Errorf("%s: served %d with digest %s, the AI Catalog says %s", f.Path, got.Code, digest.Of(got.Body.Bytes()), f.Digest)
		}
	}
	if strings.Join(paths, " ") != "/.well-known/agent-skills/index.json /.well-known/agent-skills/partner-a/index.json "+
		"/.well-known/agent-skills/partner-b/index.json /.well-known/agent-skills/partner-c/index.json" {
		t.Errorf("feeds %v: want the root and the listings with public skills (not 'hidden')", paths)
	}
	if w := h.do("GET", "/.well-known/ai-catalog.json", "Host: other.example.com"); w.Code != 200 {
		t.Errorf("the configured origin answers whatever the Host: %d", w.Code)
	}
	if w := h.do("POST", "/.well-known/ai-catalog.json"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}
	etag := w.Header().Get("ETag")
	if w := h.do("GET", "/.well-known/ai-catalog.json", "If-None-Match: "+etag); w.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", w.Code)
	}

	// Bundles beside each artifact path, hidden as the artifact is.
	for _, tc := range []struct {
		artifact string
		auth     []string
		name     string
	}{
		{"/skills/alpha.md", nil, "alpha"},
		{"/api/v1/skills/alpha/1.0/SKILL.md", nil, "alpha"},
		{"/.well-known/agent-skills/partner-a/skills/faq.md", nil, "faq"},
		{"/api/v1/subagents/reviewer/1/agent.md", nil, "reviewer"},
		{"/skills/secret.md", []string{bearer(goodKey)}, "secret"},
	} {
		art := h.do("GET", tc.artifact, tc.auth...)
		b := h.do("GET", tc.artifact+".sigstore.json", tc.auth...)
		if art.Code != 200 || b.Code != 200 || b.Header().Get("Content-Type") != provenance.BundleMediaType {
			t.Errorf("%s: artifact %d, bundle %d %s", tc.artifact, art.Code, b.Code, b.Body)
			continue
		}
		v, err := provenance.Verify(b.Body.Bytes(), key.Public())
		if err != nil || v.Subject != digest.Of(art.Body.Bytes()) || v.Publication.Name != tc.name {
			t.Errorf("%s: the bundle %+v, %v does not name the artifact served", tc.artifact, v, err)
		}
		if b.Header().Get("ETag") == "" || h.do("GET", tc.artifact+".sigstore.json", append(tc.auth, "If-None-Match: "+b.Header().Get("ETag"))...).Code != 304 {
			t.Errorf("%s: the bundle's ETag does not revalidate", tc.artifact)
		}
	}
	hidden := h.do("GET", "/skills/secret.md.sigstore.json")
	missing := h.do("GET", "/skills/nothing.md.sigstore.json")
	if hidden.Code != 404 || missing.Code != 404 || hidden.Body.String() != missing.Body.String() {
		t.Errorf("a hidden skill's bundle: %d %s; a missing one's: %d %s", hidden.Code, hidden.Body, missing.Code, missing.Body)
	}
	if w := h.do("POST", "/skills/secret.md.sigstore.json"); w.Code != 404 {
		t.Errorf("POST to a hidden skill's bundle: %d, want 404 as for a missing one", w.Code)
	}
	for _, p := range []string{"/api/v1/skills/alpha/1.0/SKILL.md.sigstore.json.sigstore.json", "/api/v1/skills/alpha/1.0.sigstore.json",
		"/skills/v1/alpha/versions/1.0.json.sigstore.json", "/api/v1/skills/secret/1/SKILL.md.sigstore.json"} {
		if w := h.do("GET", p); w.Code != 404 {
			t.Errorf("%s: %d, want 404", p, w.Code)
		}
	}
}

// TestProvenanceTampered: a signed object whose bytes changed in storage
// is never served: 503, the audit event and the metric, as for artifacts.
func TestProvenanceTampered(t *testing.T) {
	key, _ := signing.Generate()
	base := signedBucket(t, key, signedFiles)
	c, _, err := catalog.Load(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	bundle := c.Skills["alpha"].LatestVersion().Bundle
	sc := c.Signing.Catalogs[0].Rendition
	pem := c.Signing.CurrentKey().PEM
	other, _ := signing.Generate()
	for _, tc := range []struct {
		name, path, key string
		bytes           []byte
	}{
		{"bundle", "/skills/alpha.md.sigstore.json", catalog.BlobKey(bundle.Digest), []byte(`{"mediaType":"forged"}`)},
		{"AI Catalog", "/.well-known/ai-catalog.json", sc.Key, []byte(`{"specVersion":"1.0","entries":[]}`)},
		{"key", "/.well-known/skilldrop/signing-key.pem", catalog.BlobKey(pem.Digest), signing.PublicKeyPEM(other.Public())},
		{"key in the DID document", "/.well-known/did.json", catalog.BlobKey(pem.Digest), signing.PublicKeyPEM(other.Public())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := store.NewMemory()
			copyStore(t, base, st)
			if _, err := st.Put(context.Background(), tc.key, tc.bytes, store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, st)
			w := h.do("GET", tc.path)
			if w.Code != http.StatusServiceUnavailable || strings.Contains(w.Body.String(), string(tc.bytes)) {
				t.Fatalf("tampered %s: %d %s", tc.name, w.Code, w.Body)
			}
			if !strings.Contains(h.logs.String(), obs.EventDigestMismatch) || h.metrics.Total(obs.DigestMismatch) == 0 {
				t.Errorf("no audit event or metric for a tampered %s: %s", tc.name, h.logs)
			}
		})
	}
}

func copyStore(t *testing.T, from, to store.Store) {
	t.Helper()
	ctx := context.Background()
	infos, err := from.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		b, _, err := store.ReadAll(ctx, from, info.Key, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := to.Put(ctx, info.Key, b, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUnsignedCatalogHasNoProvenance: without a key nothing is published
// at the provenance routes, and no bundle beside any artifact.
func TestUnsignedCatalogHasNoProvenance(t *testing.T) {
	h := newHarness(t, indexed(t, map[string]string{"skills/alpha.md": skilltest.SkillMD("alpha", "1.0", "Alpha.")}))
	for _, p := range []string{"/.well-known/ai-catalog.json", "/.well-known/did.json", "/.well-known/skilldrop/signing-key.pem", "/skills/alpha.md.sigstore.json"} {
		if w := h.do("GET", p); w.Code != 404 {
			t.Errorf("%s: %d, want 404", p, w.Code)
		}
	}
	if w := h.do("GET", "/skills/alpha.md"); w.Code != 200 {
		t.Errorf("the artifact: %d", w.Code)
	}
}

// TestProvenanceLinks: the native version document and the MCP entry link
// the bundle, which is the one served beside the artifact.
func TestProvenanceLinks(t *testing.T) {
	key, _ := signing.Generate()
	h := newHarness(t, signedBucket(t, key, signedFiles))
	for _, doc := range []string{"/skills/v1/alpha/versions/1.0.json", "/subagents/v1/reviewer/versions/1.json"} {
		w := h.do("GET", doc)
		var v struct {
			URL        string `json:"url"`
			Digest     digest.Digest
			Provenance *struct {
				Bundle    string        `json:"bundle"`
				Digest    digest.Digest `json:"digest"`
				MediaType string        `json:"mediaType"`
			} `json:"provenance"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || v.Provenance == nil {
			t.Fatalf("%s: %v %s", doc, err, w.Body)
		}
		if v.Provenance.Bundle != v.URL+".sigstore.json" || v.Provenance.MediaType != provenance.BundleMediaType {
			t.Errorf("%s: provenance %+v beside %s", doc, v.Provenance, v.URL)
		}
		b := h.do("GET", strings.TrimPrefix(v.Provenance.Bundle, "https://skills.example.com"))
		got, err := provenance.Verify(b.Body.Bytes(), key.Public())
		if b.Code != 200 || digest.Of(b.Body.Bytes()) != v.Provenance.Digest || err != nil || got.Subject != v.Digest {
			t.Errorf("%s: the linked bundle: %d %v", doc, b.Code, err)
		}
	}

	c := newMCPClient(t, h, statelessRevision, "")
	var list struct {
		Skills []struct {
			URI  string `json:"uri"`
			Meta struct {
				Provenance *struct {
					Artifact struct {
						Path   string        `json:"path"`
						Digest digest.Digest `json:"digest"`
					} `json:"artifact"`
					Bundle struct {
						Path   string        `json:"path"`
						Digest digest.Digest `json:"digest"`
					} `json:"bundle"`
				} `json:"io.github.skilldrop/provenance"`
			} `json:"_meta"`
		} `json:"skills"`
	}
	c.result("skills/list", map[string]any{}, &list)
	if len(list.Skills) == 0 {
		t.Fatal("no skills over MCP")
	}
	for _, s := range list.Skills {
		p := s.Meta.Provenance
		if p == nil {
			t.Errorf("%s: no provenance in its entry", s.URI)
			continue
		}
		art, b := h.do("GET", p.Artifact.Path), h.do("GET", p.Bundle.Path)
		got, err := provenance.Verify(b.Body.Bytes(), key.Public())
		if art.Code != 200 || digest.Of(art.Body.Bytes()) != p.Artifact.Digest || err != nil || got.Subject != p.Artifact.Digest ||
			digest.Of(b.Body.Bytes()) != p.Bundle.Digest {
			t.Errorf("%s: artifact %d, bundle %d %v", s.URI, art.Code, b.Code, err)
		}
	}
}

// BenchmarkRequestPathSigned is the request path of a signed catalog
// against the same catalog unsigned, alternately in one run (pair): what
// signing changed for the routes every client uses (ratio ~1 is within
// noise), and the cost of the new routes (a bundle beside its artifact, the
// AI Catalog) against the artifact and the index.
func BenchmarkRequestPathSigned(b *testing.B) {
	files := map[string]string{}
	for i := range 1000 {
		name := fmt.Sprintf("skill-%04d", i)
		files["skills/"+name+".md"] = skilltest.SkillMD(name, "1", name+" does a thing")
	}
	key, _ := signing.Generate()
	signed := newHarness(b, signedBucket(b, key, files)).srv
	plain := newHarness(b, indexed(b, files)).srv
	get := func(srv *Server, path string, want int) func() {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		return func() {
			w := &discardWriter{h: http.Header{}}
			srv.ServeHTTP(w, req)
			if w.code != want {
				b.Fatalf("GET %s: %d", path, w.code)
			}
		}
	}
	for _, tc := range []struct{ name, op, base string }{
		{"index", routes.RFCIndex, routes.RFCIndex},
		{"artifact", "/skills/skill-0500.md", "/skills/skill-0500.md"},
		{"version-document", "/skills/v1/skill-0500/versions/1.json", "/skills/v1/skill-0500/versions/1.json"},
		{"search", "/api/v1/skills?q=skill-05", "/api/v1/skills?q=skill-05"},
	} {
		b.Run(tc.name+"/signed-vs-unsigned", func(b *testing.B) { pair(b, get(signed, tc.op, 200), get(plain, tc.base, 200)) })
	}
	b.Run("bundle-vs-artifact", func(b *testing.B) {
		pair(b, get(signed, "/skills/skill-0500.md.sigstore.json", 200), get(signed, "/skills/skill-0500.md", 200))
	})
	b.Run("ai-catalog-vs-index", func(b *testing.B) {
		pair(b, get(signed, routes.AICatalog, 200), get(signed, routes.RFCIndex, 200))
	})
}
