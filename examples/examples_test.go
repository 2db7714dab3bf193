// Package examples holds the example bucket that `make run` serves and the
// sources of its archives. Its tests keep both honest: the committed
// archives are exactly what their sources pack to (regenerate with
// `go test ./examples -update`), and the whole bucket indexes with nothing
// rejected.
package examples

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/pack"
	"github.com/skilldrop/skilldrop/pkg/store"
)

var update = flag.Bool("update", false, "rewrite the example archives from examples/src")

// archives maps each committed archive to the folder it is packed from.
var archives = map[string]string{
	"bucket/skills/pdf-tools.zip":        "src/pdf-tools",
	"bucket/skills/release-notes.tar.gz": "src/release-notes",
}

func TestArchivesMatchTheirSources(t *testing.T) {
	for archive, src := range archives {
		var want []byte
		var err error
		if strings.HasSuffix(archive, ".zip") {
			want, err = pack.Zip(os.DirFS(src), 1<<20)
		} else {
			want, err = tarGz(src)
		}
		if err != nil {
			t.Fatalf("pack %s: %v", src, err)
		}
		if *update {
			if err := os.WriteFile(archive, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(archive)
		if err != nil {
			t.Fatalf("%v (run `go test ./examples -update`)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what %s packs to; run `go test ./examples -update`", archive, src)
		}
	}
}

// tarGz packs a folder deterministically: sorted entries, fixed times and
// owners, no links.
func tarGz(dir string) ([]byte, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, p := range files {
		body, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(body)), ModTime: pack.Epoch, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TestBucketIndexesCleanly indexes a copy of the example bucket, as `make
// run` does, and checks that everything it holds is published.
func TestBucketIndexesCleanly(t *testing.T) {
	dir := t.TempDir()
	if err := exec.Command("cp", "-R", "bucket/.", dir).Run(); err != nil {
		t.Fatal(err)
	}
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	ix, err := indexer.New(indexer.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.Reindex(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rejected {
		t.Errorf("rejected %s: %s: %s", r.Key, r.Code, r.Message)
	}
	c, _, err := catalog.Load(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	v := catalog.Compile(c, "")
	names := func(es []*catalog.Entry) (out []string) {
		for _, e := range es {
			out = append(out, e.Name+":"+e.LatestVersion().Label)
		}
		return out
	}
	checks := []struct{ what, got, want string }{
		{"public skills", strings.Join(names(v.Skills(audience.Anonymous)), " "), "deploy-via-pr:1.2.0 pdf-tools:0.9.0 release-notes:2.1.0"},
		{"all skills", strings.Join(names(v.Skills(audience.Unrestricted)), " "), "deploy-via-pr:1.2.0 internal-rotate-secret:3 pdf-tools:0.9.0 release-notes:2.1.0"},
		{"public sub-agents", strings.Join(names(v.Subagents(audience.Anonymous)), " "), "changelog-reviewer:1.0.0"},
		{"all sub-agents", strings.Join(names(v.Subagents(audience.Unrestricted)), " "), "changelog-reviewer:1.0.0 security-auditor:0.3.1"},
	}
	members, ok := v.Listing("partner-a", audience.Anonymous)
	checks = append(checks, struct{ what, got, want string }{"partner-a listing", strings.Join(names(members), " "), "deploy-via-pr:1.2.0 partner-faq:2026.11.1 partner-onboarding:1.0"})
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if !ok {
		t.Error("partner-a listing is not visible anonymously")
	}
	if e := v.Skill("release-notes", audience.Anonymous); e == nil || e.LatestVersion().Subagent != "changelog-reviewer" {
		t.Error("release-notes does not route to changelog-reviewer")
	}
}
