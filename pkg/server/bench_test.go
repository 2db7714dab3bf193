package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// discardWriter is a ResponseWriter that keeps nothing: the network is
// not what these benchmarks measure.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(c int)   { w.code = c }
func (w *discardWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

func thousandSkills(b *testing.B) (*Server, *catalog.View) {
	st := store.NewMemory()
	bk := newBucket(b, st)
	for i := 0; i < 1000; i++ {
		name := fmt.Sprintf("skill-%04d", i)
		vis := catalog.Public
		if i%10 == 0 {
			vis = catalog.Authenticated
		}
		bk.skill(name, "", vis, artifact.FormatMarkdown, skillMD(name))
	}
	bk.publish()
	h := newHarness(b, st)
	snap, err := h.srv.catalog.get(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	v, err := snap.View(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return h.srv, v
}

// pair runs op and baseline alternately, so that both see the same load
// on a shared machine, and reports each one's ns/op and their ratio (the
// figure the targets are stated in).
func pair(b *testing.B, op, baseline func()) {
	op()
	baseline() // warm both
	var tOp, tBase time.Duration
	for b.Loop() {
		t0 := time.Now()
		op()
		t1 := time.Now()
		baseline()
		tOp += t1.Sub(t0)
		tBase += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tOp.Nanoseconds())/n, "op-ns/op")
	b.ReportMetric(float64(tBase.Nanoseconds())/n, "baseline-ns/op")
	b.ReportMetric(float64(tOp)/float64(tBase), "ratio")
}

// BenchmarkIndex compares a warm GET of the RFC index of a 1,000-skill
// catalog (anonymous, identity encoding) with a baseline that only
// JSON-encodes the same entries. Target: ratio <= 3.
func BenchmarkIndex(b *testing.B) {
	srv, view := thousandSkills(b)
	req := httptest.NewRequest(http.MethodGet, "/.well-known/agent-skills/index.json", nil)
	idx := discovery.TopLevel(view, audience.Anonymous, &url.URL{Scheme: "https", Host: "skills.example.com"})
	pair(b, func() {
		w := &discardWriter{h: http.Header{}}
		srv.ServeHTTP(w, req)
		if w.code != http.StatusOK || w.n < 100_000 {
			b.Fatalf("status %d, %d bytes", w.code, w.n)
		}
	}, func() {
		if err := json.NewEncoder(&discardWriter{}).Encode(idx); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkArtifact compares a GET of a 1 MiB artifact from the directory
// store (read, re-hash, compare, write) with reading and hashing the same
// file. Target: ratio <= 1.3.
func BenchmarkArtifact(b *testing.B) {
	benchArtifact(b, func(st store.Store, _ string) store.Store { return st })
}

// plainDir is a read-only store over a directory whose Get only opens the
// file: what Dir.Get costs without computing its ETag (an MD5 of the whole
// file on every Get). It isolates the handler's own overhead.
type plainDir struct {
	store.Store
	root string
}

func (p plainDir) Get(_ context.Context, key string, _ store.GetOptions) (*store.Object, error) {
	f, err := os.Open(filepath.Join(p.root, filepath.FromSlash(key)))
	if err != nil {
		return nil, store.ErrNotFound
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &store.Object{Info: store.Info{Key: key, Size: fi.Size(), ETag: fmt.Sprintf(`"%d-%d"`, fi.Size(), fi.ModTime().UnixNano())}, Body: f}, nil
}

// BenchmarkArtifactHandlerOverhead is BenchmarkArtifact over plainDir.
func BenchmarkArtifactHandlerOverhead(b *testing.B) {
	benchArtifact(b, func(st store.Store, dir string) store.Store { return plainDir{Store: st, root: dir} })
}

// benchArtifact is BenchmarkArtifact with the handler reading through
// serve(the directory store, its root).
func benchArtifact(b *testing.B, serve func(st store.Store, dir string) store.Store) {
	dir := b.TempDir()
	st, err := store.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1<<20)
	_, _ = rand.Read(body)
	bk := newBucket(b, st)
	e := bk.skill("big", "", catalog.Public, artifact.FormatZip, body)
	bk.publish()
	h := newHarness(b, serve(st, dir))
	req := httptest.NewRequest(http.MethodGet, "/skills/big.zip", nil)
	path := filepath.Join(dir, filepath.FromSlash(catalog.BlobKey(e.LatestVersion().Digest)))
	b.SetBytes(int64(len(body)))
	pair(b, func() {
		w := &discardWriter{h: http.Header{}}
		h.srv.ServeHTTP(w, req)
		if w.code != http.StatusOK || w.n != len(body) {
			b.Fatalf("status %d, %d bytes", w.code, w.n)
		}
	}, func() {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if !digest.FromSum(sha256.Sum256(data)).Equal(e.LatestVersion().Digest) {
			b.Fatal("baseline hash differs")
		}
	})
}

// benchNative compares a warm anonymous GET of a native document of the
// 1,000-skill catalog (identity encoding) with a baseline that only
// JSON-encodes the same document, built by package manifest.
func benchNative(b *testing.B, path string, doc func(f *manifest.Feed) any) {
	srv, view := thousandSkills(b)
	req := httptest.NewRequest(http.MethodGet, path, nil)
	f := &manifest.Feed{View: view, Base: &url.URL{Scheme: "https", Host: "skills.example.com"}, SearchIndex: manifest.NewSearchIndex(view)}
	pair(b, func() {
		w := &discardWriter{h: http.Header{}}
		srv.ServeHTTP(w, req)
		if w.code != http.StatusOK || w.n < 100 {
			b.Fatalf("status %d, %d bytes", w.code, w.n)
		}
	}, func() {
		if err := json.NewEncoder(&discardWriter{}).Encode(doc(f)); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkNativeIndex: /skills/v1/index.json (kept per revision).
func BenchmarkNativeIndex(b *testing.B) {
	benchNative(b, "/skills/v1/index.json", func(f *manifest.Feed) any { return f.Index(catalog.KindSkill) })
}

// BenchmarkNativePage: the first page the index advertises (kept per
// revision; about 100 items).
func BenchmarkNativePage(b *testing.B) {
	_, view := thousandSkills(b)
	idx := (&manifest.Feed{View: view}).Index(catalog.KindSkill)
	first := idx.Pages[0]
	r, ok := manifest.ParseRange(first.Range)
	if !ok {
		b.Fatalf("range %q", first.Range)
	}
	benchNative(b, first.Href, func(f *manifest.Feed) any { return f.Page(catalog.KindSkill, r) })
}

// BenchmarkNativeIdentity: a per-item document, rendered per request.
func BenchmarkNativeIdentity(b *testing.B) {
	benchNative(b, "/skills/v1/skill-0501/index.json", func(f *manifest.Feed) any {
		doc, _, _ := f.Identity(context.Background(), catalog.KindSkill, "skill-0501")
		return doc
	})
}

// BenchmarkNativeSearch: a search over the 1,000 skills, rendered per
// request, against ranking and encoding the same answer.
func BenchmarkNativeSearch(b *testing.B) {
	benchNative(b, "/api/v1/skills?q=thing&take=50", func(f *manifest.Feed) any {
		return f.Search(catalog.KindSkill, "thing", 0, 50)
	})
}
