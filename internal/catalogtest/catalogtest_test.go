package catalogtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"slices"
	"strconv"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func TestGenerateIsDeterministicAndValid(t *testing.T) {
	spec := Default(2000)
	spec.DescriptionLen = 300
	a, b := Generate(spec), Generate(spec)
	if !slices.EqualFunc(a.Skills, b.Skills, func(x, y Item) bool { return x.Name == y.Name && x.Description == y.Description }) {
		t.Fatal("the same Spec generated different skills")
	}
	names, descs := map[string]bool{}, map[string]bool{}
	var archives, auth int
	for _, it := range a.Skills {
		if err := skillmd.ValidateName(it.Name); err != nil {
			t.Fatalf("name %q: %v", it.Name, err)
		}
		if names[it.Name] {
			t.Fatalf("name %q twice", it.Name)
		}
		names[it.Name] = true
		descs[it.Description] = true
		if n := len(it.Description); n > spec.DescriptionLen || n < spec.DescriptionLen-40 {
			t.Fatalf("description of %d characters, want about %d: %q", n, spec.DescriptionLen, it.Description)
		}
		if it.Format != artifact.FormatMarkdown {
			archives++
		}
		if it.Authenticated {
			auth++
		}
	}
	if len(descs) != len(a.Skills) {
		t.Errorf("%d distinct descriptions for %d skills", len(descs), len(a.Skills))
	}
	if want := spec.Skills / spec.ArchiveEvery; archives != want {
		t.Errorf("%d archives, want %d", archives, want)
	}
	if want := spec.Skills / spec.AuthenticatedEvery; auth != want {
		t.Errorf("%d authenticated, want %d", auth, want)
	}
	if c := Generate(Spec{Skills: 10, DescriptionLen: 100, Seed: 2}); c.Skills[0].Description == a.Skills[0].Description {
		t.Error("another seed gave the same text")
	}
}

// TestDescriptionsCompressLikeProse keeps the generated text from
// degenerating into repetition, which would make gzip figures meaningless:
// English prose gzips about 2.5-3.5:1, one repeated string a hundredfold.
func TestDescriptionsCompressLikeProse(t *testing.T) {
	spec := Default(5000)
	spec.DescriptionLen = 1000
	var raw bytes.Buffer
	for _, it := range Generate(spec).Skills {
		raw.WriteString(it.Description)
		raw.WriteByte('\n')
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(raw.Bytes())
	_ = zw.Close()
	ratio := float64(raw.Len()) / float64(gz.Len())
	t.Logf("%d bytes of descriptions gzip to %d (%.2f:1)", raw.Len(), gz.Len(), ratio)
	if ratio < 1.8 || ratio > 4.5 {
		t.Errorf("gzip ratio %.2f:1, want prose-like (1.8 to 4.5)", ratio)
	}
}

// TestIndexedSourcesMatchCatalog indexes the written sources with the
// indexer and checks that they all publish, and that the result is the
// catalog Catalog builds directly.
func TestIndexedSourcesMatchCatalog(t *testing.T) {
	spec := Default(120)
	spec.ArchiveEvery = 10
	b := Generate(spec)
	dir := t.TempDir()
	b.WriteDir(t, dir)
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	ix, err := indexer.New(indexer.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := ix.Reindex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rejected) > 0 {
		t.Fatalf("rejected: %+v", res.Rejected)
	}
	if want := len(b.Skills) + len(b.Subagents); len(res.Published) != want {
		t.Fatalf("%d published, want %d", len(res.Published), want)
	}
	got, _, err := catalog.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "skill", got.Skills, b.Catalog(t).Skills)
	checkSame(t, "sub-agent", got.Subagents, b.Catalog(t).Subagents)
	indexed, direct := catalog.Compile(got, ""), b.View(t)
	for _, auth := range []bool{false, true} {
		for l := range spec.Listings {
			gm, _ := indexed.Listing(listingName(l), callerOf(auth))
			dm, _ := direct.Listing(listingName(l), callerOf(auth))
			if !slices.Equal(entryNames(gm), entryNames(dm)) {
				t.Errorf("listing %s (auth %v): indexed %v, direct %v", listingName(l), auth, entryNames(gm), entryNames(dm))
			}
		}
	}
}

func checkSame(t *testing.T, what string, got, want map[string]*catalog.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d %ss indexed, %d built", len(got), what, len(want))
	}
	for id, w := range want {
		g := got[id]
		if g == nil {
			t.Fatalf("%s %s: not indexed", what, id)
		}
		gv, wv := g.LatestVersion(), w.LatestVersion()
		if g.Name != w.Name || g.Listing != w.Listing || g.Source != w.Source || g.Path != w.Path ||
			g.Visibility != w.Visibility || !slices.Equal(g.Listings, w.Listings) ||
			gv.Label != wv.Label || gv.Digest != wv.Digest || gv.Type != wv.Type || gv.Format != wv.Format ||
			gv.Description != wv.Description {
			t.Errorf("%s %s: indexed %+v %+v, built %+v %+v", what, id, g, gv, w, wv)
		}
	}
}

func entryNames(es []*catalog.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

func TestPutWritesTheSameObjects(t *testing.T) {
	b := Generate(Default(30))
	st := store.NewMemory()
	ctx := context.Background()
	b.Put(t, ctx, st)
	for _, o := range b.Objects(t) {
		body, _, err := store.ReadAll(ctx, st, o.Key, 0)
		if err != nil || !bytes.Equal(body, o.Body) {
			t.Fatalf("%s: %v", o.Key, err)
		}
	}
}

var (
	bucketDir = flag.String("bucket", "", "TestWriteBucket: write a generated bucket into this directory")
	skills    = flag.Int("skills", 50000, "TestWriteBucket: how many skills")
	descLen   = flag.Int("desc", 200, "TestWriteBucket: description length")
	authEvery = flag.Int("auth-every", 10, "TestWriteBucket: every n-th skill is authenticated (0: none)")
)

// TestWriteBucket writes a generated bucket for measurements by hand:
//
//	go test ./internal/catalogtest -run TestWriteBucket -bucket /tmp/b -skills 50000
func TestWriteBucket(t *testing.T) {
	if *bucketDir == "" {
		t.Skip("no -bucket directory given")
	}
	spec := Default(*skills)
	spec.DescriptionLen = *descLen
	spec.AuthenticatedEvery = *authEvery
	Generate(spec).WriteDir(t, *bucketDir)
}

// BenchmarkGenerateAndWriteDir is what a scale test pays for its bucket.
func BenchmarkGenerateAndWriteDir(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				Generate(Default(n)).WriteDir(b, b.TempDir())
			}
		})
	}
}

// callerOf is the caller the tests mean by auth: a key of every audience,
// or none.
func callerOf(auth bool) audience.Caller {
	if auth {
		return audience.Unrestricted
	}
	return audience.Anonymous
}
