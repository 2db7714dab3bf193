package indexer

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// scaleBucket is a directory store holding a generated bucket of n skills
// and its catalog, written directly (with the bucket's config in force and
// its sources recorded), as an indexed bucket of that size would be.
func scaleBucket(b *testing.B, n int) *store.Dir {
	b.Helper()
	dir := b.TempDir()
	gen := catalogtest.Generate(catalogtest.Default(n))
	gen.WriteDir(b, dir)
	st, err := store.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	c := gen.Catalog(b)
	cfg := gen.Config()
	info, err := st.Head(ctx, skillsconfig.Key)
	if err != nil {
		b.Fatal(err)
	}
	c.Config = &catalog.ConfigState{Digest: digest.Of([]byte(cfg)), ETag: info.ETag, AppliedAt: catalogtest.Epoch, YAML: cfg}
	infos, err := st.List(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	for _, info := range infos {
		c.Sources[info.Key] = catalog.Source{ETag: info.ETag}
	}
	raw, err := catalog.Encode(c, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Put(ctx, catalog.Key, raw, store.PutOptions{}); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkPublishAtScale is one upload reconciled into an indexed bucket
// of n skills: what each publish costs as the catalog grows. "catalog" is
// the catalog write alone (no origins: skilldrop publish --dir, reindex
// without --origin); "documents" also renders the large feed documents for
// one origin into the bucket, as the deployed indexer does.
func BenchmarkPublishAtScale(b *testing.B) {
	for _, mode := range []string{"catalog", "documents"} {
		for _, n := range []int{1000, 10000, 50000} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) { benchmarkPublish(b, n, mode == "documents") })
		}
	}
}

func benchmarkPublish(b *testing.B, n int, documents bool) {
	st := scaleBucket(b, n)
	cfg := Config{Store: st}
	if documents {
		origin, _ := url.Parse("https://skills.example.com")
		cfg.Origins = []*url.URL{origin}
	}
	ix, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if documents { // the documents as the catalog already pins them
		if _, err := ix.Reconcile(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		key := fmt.Sprintf("skills/bench-new-%06d.md", i)
		b.StopTimer()
		if _, err := st.Put(ctx, key, skillDoc(fmt.Sprintf("bench-new-%06d", i), "1", "A new skill."), store.PutOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := ix.Reconcile(ctx, key)
		if err != nil || len(res.Published) != 1 {
			b.Fatalf("reconcile: %v %+v", err, res)
		}
	}
}
