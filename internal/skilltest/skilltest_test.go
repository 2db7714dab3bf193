package skilltest_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// TestDocumentsParse: the documents are valid, with the name, description
// and version label they were built with.
func TestDocumentsParse(t *testing.T) {
	tests := []struct {
		name      string
		doc       string
		agent     bool
		wantLabel string
	}{
		{"a skill with a version", skilltest.SkillMD("deploy", "1.2", "Does it."), false, "1.2"},
		{"a skill without one", skilltest.SkillMD("deploy", "", "Does it."), false, ""},
		{"an agent with a version", skilltest.AgentMD("deploy", "3", "Does it."), true, "3"},
		{"an agent without one", skilltest.AgentMD("deploy", "", "Does it."), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var name, description, label string
			var err error
			if tt.agent {
				var a *skillmd.Agent
				if a, err = skillmd.ParseAgent([]byte(tt.doc)); err == nil {
					name, description = a.Name, a.Description
					label, err = a.VersionLabel()
				}
			} else {
				var s *skillmd.Skill
				if s, err = skillmd.ParseSkill([]byte(tt.doc)); err == nil {
					name, description = s.Name, s.Description
					label, err = s.VersionLabel()
				}
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, tt.doc)
			}
			if name != "deploy" || description != "Does it." || label != tt.wantLabel {
				t.Errorf("name %q, description %q, label %q; want deploy, Does it., %q", name, description, label, tt.wantLabel)
			}
		})
	}
}

var files = map[string]string{"SKILL.md": skilltest.SkillMD("x", "1", "X."), "scripts/run.sh": "echo ok\n", "a.txt": ""}

// TestArchivesHoldTheFilesAndAreReproducible: each archive holds exactly
// the files, as regular uncompressed entries in path order, and the same
// files give the same bytes.
func TestArchivesHoldTheFilesAndAreReproducible(t *testing.T) {
	tests := []struct {
		name  string
		build func(testing.TB, map[string]string) []byte
		read  func(*testing.T, []byte) (files map[string]string, order []string)
	}{
		{"zip", skilltest.Zip, readZip},
		{"tar.gz", skilltest.TarGz, readTarGz},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.build(t, files)
			if !bytes.Equal(b, tt.build(t, maps.Clone(files))) {
				t.Error("two archives of the same files differ")
			}
			got, order := tt.read(t, b)
			if !maps.Equal(got, files) {
				t.Errorf("the archive holds %q, want %q", got, files)
			}
			if want := []string{"SKILL.md", "a.txt", "scripts/run.sh"}; !slices.Equal(order, want) {
				t.Errorf("entry order %q, want %q", order, want)
			}
		})
	}
}

func readZip(t *testing.T, b []byte) (map[string]string, []string) {
	r, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var order []string
	for _, f := range r.File {
		if f.Method != zip.Store || !f.Mode().IsRegular() {
			t.Errorf("%s: method %d, mode %v; want a regular file, stored", f.Name, f.Method, f.Mode())
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		got[f.Name] = string(body)
		order = append(order, f.Name)
	}
	return got, order
}

func readTarGz(t *testing.T, b []byte) (map[string]string, []string) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	got := map[string]string{}
	var order []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return got, order
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 {
			t.Errorf("%s: type %q mode %o; want a regular file with mode 644", h.Name, h.Typeflag, h.Mode)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = string(body)
		order = append(order, h.Name)
	}
}

func TestWriteFilesCreatesTheDirectories(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, files)
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}
