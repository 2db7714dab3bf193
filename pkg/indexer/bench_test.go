package indexer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/pack"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// benchArchive is a zip of SKILL.md and 999 text files of about 4 KiB each
// (4 MB of content that compresses about 3:1), within the default caps,
// deflated by pack.Zip as skilldrop publish uploads a folder.
func benchArchive(b *testing.B) []byte {
	b.Helper()
	words := strings.Fields("skill agent deploy review branch merge request pipeline cache index catalog digest blob version label listing bucket archive")
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{"SKILL.md": string(skillDoc("big", "1", "A skill with a thousand entries."))}
	for i := range 999 {
		var sb strings.Builder
		for sb.Len() < 4096 {
			sb.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(12) == 0 {
				fmt.Fprintf(&sb, " %d\n", rng.Int())
			} else {
				sb.WriteByte(' ')
			}
		}
		files[fmt.Sprintf("docs/%02d/file-%03d.md", i%40, i)] = sb.String()
	}
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body), Mode: 0o644}
	}
	data, err := pack.Zip(fsys, 0)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkIndexArchive1000 indexes a 1000-entry archive end to end against
// the local directory store: read, validate, blob write, catalog write,
// verification. Each iteration starts from an empty bucket.
func BenchmarkIndexArchive1000(b *testing.B) {
	data := benchArchive(b)
	root := b.TempDir()
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir, err := os.MkdirTemp(root, "bucket")
		if err != nil {
			b.Fatal(err)
		}
		st, err := store.NewDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		e := newEnvOn(b, st)
		e.put("skills/big.zip", data)
		b.StartTimer()
		res, err := e.ix.Reconcile(ctx, "skills/big.zip")
		b.StopTimer()
		if err != nil || len(res.Published) != 1 {
			b.Fatalf("err %v, result %s", err, dump(res))
		}
		_ = st.Close()
		b.StartTimer()
	}
}

// BenchmarkRedeliveredArchive1000 is the same key indexed again unchanged:
// read and validate, then nothing to write.
func BenchmarkRedeliveredArchive1000(b *testing.B) {
	data := benchArchive(b)
	e := newEnv(b)
	e.put("skills/big.zip", data)
	e.reconcile("skills/big.zip")
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := e.ix.Reconcile(ctx, "skills/big.zip")
		if err != nil || len(res.Unchanged) != 1 {
			b.Fatalf("err %v, result %s", err, dump(res))
		}
	}
}

// BenchmarkRebuildWithConfig re-indexes a bucket of 200 dropped skills and
// agent-skills.yaml from an empty catalog, with a config that only sets
// visibility for an older drop (one pass over the bucket) and with one
// whose entry claims an older drop's path (a second pass decides it).
func BenchmarkRebuildWithConfig(b *testing.B) {
	for _, bc := range []struct{ name, config string }{
		{"settings only", "version: 1\nskills:\n  - name: s000\n    visibility: authenticated\n"},
		{"collides with an older drop", "version: 1\nskills:\n  - name: evil\n    url: /skills/s000.md\n    body: |\n" + indent(skillDoc("evil", "1", "Evil."))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnv(b)
			for i := range 200 {
				name := fmt.Sprintf("s%03d", i)
				e.put("skills/"+name+".md", skillDoc(name, "1", "Skill "+name+"."))
			}
			e.put(skillsconfig.Key, []byte(bc.config))
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e.del(catalog.Key)
				b.StartTimer()
				res, err := e.ix.Reindex(ctx)
				if err != nil || len(res.Published) < 200 {
					b.Fatalf("err %v, result %s", err, dump(res))
				}
			}
		})
	}
}
