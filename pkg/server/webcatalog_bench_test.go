package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// generatedServer serves a generated catalog of n skills (catalogtest's
// organisation-shaped bucket) from a memory store, with the SKILL.md of
// every markdown skill recorded as its one file and stored as its blob, as
// the indexer leaves them. It returns a markdown skill's name, whose
// version is signed and has findings.
func generatedServer(b *testing.B, n int) (*Server, string) {
	b.Helper()
	bucket := catalogtest.Generate(catalogtest.Default(n))
	c := bucket.Catalog(b)
	st := store.NewMemory()
	page := ""
	for i, it := range bucket.Skills {
		if it.Format != artifact.FormatMarkdown || it.Listing != "" || it.Authenticated {
			continue
		}
		body := catalogtest.Body(b, it)
		e := c.Skills[it.Name]
		v := e.Versions[0]
		v.Files = []catalog.File{{Path: artifact.SkillFile, Digest: digest.Of(body), Size: int64(len(body)), MediaType: "text/markdown"}}
		if i >= n/2 && page == "" {
			page = it.Name
			// Signed and with findings, so that the skill page renders both sections.
			v.Bundle = &catalog.Bundle{BlobRef: catalog.BlobRef{Digest: digest.Of([]byte(it.Name)), Size: 2048}, Key: "bench"}
			v.Scan = &scan.Result{Verdict: scan.Warn, Engine: "2026.12.1"}
			for line := range 5 {
				v.Scan.Findings = append(v.Scan.Findings, scan.Finding{Rule: "persistence.shell-rc", Category: "persistence",
					Severity: scan.SeverityMedium, File: "scripts/setup.sh", Line: line + 1,
					Message: "appends to a shell start-up file (.bashrc, .zshrc, .profile …), which runs in every later shell the user opens"})
			}
			if _, err := st.Put(context.Background(), catalog.BlobKey(v.Digest), body, store.PutOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		e.SetVersions([]catalog.Version{v})
	}
	raw, err := catalog.Encode(c, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Put(context.Background(), catalog.Key, raw, store.PutOptions{}); err != nil {
		b.Fatal(err)
	}
	return newHarness(b, st).srv, page
}

// BenchmarkWebCatalog compares, warm and anonymous, a web catalog page with
// a search answer of the same catalog in the same run (pair: alternating,
// so both see the same load): the first page of the list, a search page
// and a skill page, each against GET /api/v1/skills?q=…&take=25 (as many
// results as a page shows), at 1,000, 10,000 and 50,000 skills. Target:
// ratio <= 2.
func BenchmarkWebCatalog(b *testing.B) {
	baseline := "/api/v1/skills?take=25&q=review+terraform"
	for _, n := range []int{1000, 10000, 50000} {
		srv, skill := generatedServer(b, n)
		for _, tc := range []struct{ name, target string }{
			{"list", "/catalog/"},
			{"search", "/catalog/?q=review+terraform"},
			{"skill", "/catalog/skills/" + skill},
		} {
			op := httptest.NewRequest(http.MethodGet, tc.target, nil)
			base := httptest.NewRequest(http.MethodGet, baseline, nil)
			serve := func(r *http.Request) {
				w := &discardWriter{h: http.Header{}}
				srv.ServeHTTP(w, r)
				if w.code != http.StatusOK || w.n < 500 {
					b.Fatalf("%s: status %d, %d bytes", r.URL, w.code, w.n)
				}
			}
			if tc.name == "skill" {
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.target, nil))
				if !strings.Contains(w.Body.String(), "persistence.shell-rc") || !strings.Contains(w.Body.String(), "cosign verify-blob-attestation") {
					b.Fatalf("the skill page shows no findings or provenance: %d", w.Code)
				}
			}
			b.Run(fmt.Sprintf("page=%s/skills=%d", tc.name, n), func(b *testing.B) {
				pair(b, func() { serve(op) }, func() { serve(base) })
			})
		}
	}
}
