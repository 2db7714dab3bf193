package indexer

import (
	"context"
	"fmt"
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
// of n skills: what each publish costs as the catalog grows.
func BenchmarkPublishAtScale(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st := scaleBucket(b, n)
			ix, err := New(Config{Store: st})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
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
		})
	}
}
