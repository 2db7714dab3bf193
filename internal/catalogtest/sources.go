package catalogtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// Object is one source object of a bucket.
type Object struct {
	Key  string
	Body []byte
}

// Body is the source object of a generated item: a SKILL.md, or one in a
// zip or .tar.gz beside a script, or an agent.md.
func Body(t testing.TB, it Item) []byte {
	t.Helper()
	if it.Kind == catalog.KindSubagent {
		return []byte(skilltest.AgentMD(it.Name, Version, it.Description))
	}
	md := skilltest.SkillMD(it.Name, Version, it.Description)
	files := map[string]string{"SKILL.md": md, "scripts/run.sh": "#!/bin/sh\necho " + it.Name + "\n"}
	switch it.Format {
	case artifact.FormatZip:
		return skilltest.Zip(t, files)
	case artifact.FormatTarGz:
		return skilltest.TarGz(t, files)
	}
	return []byte(md)
}

// Objects returns every source object of the bucket: skills, sub-agents,
// then agent-skills.yaml.
func (b *Bucket) Objects(t testing.TB) []Object {
	t.Helper()
	out := make([]Object, 0, len(b.Skills)+len(b.Subagents)+1)
	for _, items := range [][]Item{b.Skills, b.Subagents} {
		for _, it := range items {
			out = append(out, Object{Key: it.Key, Body: Body(t, it)})
		}
	}
	return append(out, Object{Key: skillsconfig.Key, Body: []byte(b.Config())})
}

// writers is how many objects are written at once.
const writers = 8

// WriteDir writes the bucket's source objects as files under dir, laid out
// as a directory store (store.Dir) reads them. It writes the files
// directly, without the store's per-object sync, so 50,000 skills take
// seconds.
func (b *Bucket) WriteDir(t testing.TB, dir string) {
	t.Helper()
	objs := b.Objects(t)
	made := map[string]bool{}
	for _, o := range objs {
		if d := path.Dir(o.Key); !made[d] {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
				t.Fatal(err)
			}
			made[d] = true
		}
	}
	write(t, objs, func(o Object) error {
		return os.WriteFile(filepath.Join(dir, filepath.FromSlash(o.Key)), o.Body, 0o644)
	})
}

// Put stores the bucket's source objects in st.
func (b *Bucket) Put(t testing.TB, ctx context.Context, st store.Store) {
	t.Helper()
	write(t, b.Objects(t), func(o Object) error {
		if _, err := st.Put(ctx, o.Key, o.Body, store.PutOptions{}); err != nil {
			return fmt.Errorf("put %s: %w", o.Key, err)
		}
		return nil
	})
}

// write runs fn over objs on a few goroutines and fails the test with
// every error, from the test's own goroutine.
func write(t testing.TB, objs []Object, fn func(Object) error) {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan Object)
	)
	for range writers {
		wg.Go(func() {
			for o := range next {
				if err := fn(o); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, o := range objs {
		next <- o
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
