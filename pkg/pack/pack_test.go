package pack

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skilldrop/skilldrop/pkg/archive"
)

const skillMD = "---\nname: deploy-via-pr\ndescription: Deploy through a pull request.\n---\n# Deploy\n"

func folder(mod time.Time) fstest.MapFS {
	return fstest.MapFS{
		"SKILL.md":          {Data: []byte(skillMD), ModTime: mod, Mode: 0o600},
		"scripts/run.sh":    {Data: []byte("#!/bin/sh\necho hi\n"), ModTime: mod, Mode: 0o700},
		"docs/a/b/notes.md": {Data: []byte("notes"), ModTime: mod},
		"README.md":         {Data: []byte("readme"), ModTime: mod},
	}
}

func entries(t *testing.T, b []byte) []*zip.File {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return zr.File
}

func TestZipIsDeterministic(t *testing.T) {
	a, err := Zip(folder(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)), 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Zip(folder(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the same files with other modification times packed to different bytes")
	}
	var names []string
	for _, f := range entries(t, a) {
		names = append(names, f.Name)
		if !f.Modified.Equal(Epoch) {
			t.Errorf("%s: modified %v, want %v", f.Name, f.Modified, Epoch)
		}
	}
	want := "README.md SKILL.md docs/a/b/notes.md scripts/run.sh"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("entries %q, want sorted %q", got, want)
	}
}

func TestZipModes(t *testing.T) {
	b, err := Zip(folder(time.Now()), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range entries(t, b) {
		want := fs.FileMode(0o644)
		if f.Name == "scripts/run.sh" {
			want = 0o755
		}
		if f.Mode() != want {
			t.Errorf("%s: mode %v, want %v", f.Name, f.Mode(), want)
		}
	}
}

func TestZipPassesTheArchiveValidator(t *testing.T) {
	b, err := Zip(folder(time.Now()), 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := archive.Validate(b, "deploy-via-pr.zip", archive.DefaultLimits())
	if err != nil {
		t.Fatalf("packed archive rejected: %v", err)
	}
	if res.Skill.Name != "deploy-via-pr" || len(res.Entries) != 4 {
		t.Fatalf("validated %q with %d entries, want deploy-via-pr with 4", res.Skill.Name, len(res.Entries))
	}
}

// TestFolderLeavesOutDotFiles: the archive is public, so dot-files and
// dot-directories (credentials, version control, desktop metadata) are
// never packed, and Folder names each one left out.
func TestFolderLeavesOutDotFiles(t *testing.T) {
	fsys := folder(time.Now())
	for _, name := range []string{
		".env", ".npmrc", ".git/config", ".git/objects/ab/cdef", ".github/workflows/ci.yml",
		"docs/.DS_Store", "scripts/.secret", "scripts/.cache/x",
	} {
		fsys[name] = &fstest.MapFile{Data: []byte("TOKEN=hunter2")}
	}
	p, err := Folder(fsys, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range entries(t, p.Zip) {
		got = append(got, f.Name)
	}
	if want := []string{"README.md", "SKILL.md", "docs/a/b/notes.md", "scripts/run.sh"}; !slices.Equal(got, want) {
		t.Fatalf("entries %q, want %q", got, want)
	}
	want := []string{".env", ".git/", ".github/", ".npmrc", "docs/.DS_Store", "scripts/.cache/", "scripts/.secret"}
	if !slices.Equal(p.LeftOut, want) {
		t.Fatalf("LeftOut %q, want %q", p.LeftOut, want)
	}
	// The same bytes as the folder without them.
	if clean, err := Zip(folder(time.Now()), 0); err != nil || !bytes.Equal(clean, p.Zip) {
		t.Fatalf("the archive differs from the folder's without dot-files (%v)", err)
	}
	if p, err := Folder(folder(time.Now()), 0); err != nil || p.LeftOut != nil {
		t.Fatalf("LeftOut %q (%v) for a folder without dot-files", p.LeftOut, err)
	}
}

func TestZipRefusesLinksAndBudgets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skillMD), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		fsys fs.FS
		max  int64
		want error
	}{
		{"a symlink in the folder", os.DirFS(dir), 0, ErrUnsupported},
		{"more content than allowed", folder(time.Now()), int64(len(skillMD)), ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Zip(tt.fsys, tt.max)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if strings.Count(err.Error(), "pack:") != 1 {
				t.Fatalf("err = %q: want the package named once", err)
			}
		})
	}
	_, err := Zip(os.DirFS(dir), 0)
	if fe := (*FileError)(nil); !errors.As(err, &fe) || fe.Name != "passwd" || !fe.Symlink {
		t.Fatalf("err = %#v, want a *FileError naming the symlink passwd", err)
	}
}

func TestZipWithinBudget(t *testing.T) {
	fsys := folder(time.Now())
	var total int64
	for _, f := range fsys {
		total += int64(len(f.Data))
	}
	if _, err := Zip(fsys, total); err != nil {
		t.Fatalf("exactly the budget: %v", err)
	}
}
