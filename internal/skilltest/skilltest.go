// Package skilltest builds what tests publish: SKILL.md and agent.md
// documents, the zip and .tar.gz archives that carry them, and folders of
// files as an operator has them.
//
// Archives are reproducible: entries in path order, stored uncompressed
// (gzip at level 0 for .tar.gz) and stamped with one fixed time, so their
// bytes, and so their digests, depend on nothing but the files; never on
// the Go version's compressor. Hostile or malformed archives are not built
// here: the tests that need them write every header field themselves.
package skilltest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// modified is the time every archive entry carries.
var modified = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// SkillMD is a valid SKILL.md for name with description, labelled version
// (in metadata.version) unless version is "", when the indexer derives the
// label from the content digest.
func SkillMD(name, version, description string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\n", name, description)
	if version != "" {
		fmt.Fprintf(&b, "metadata:\n  version: %q\n", version)
	}
	fmt.Fprintf(&b, "---\n# %s\n", name)
	return b.String()
}

// AgentMD is a valid agent.md (a sub-agent definition) for name with
// description, labelled version (the top-level version key, where agent.md
// keeps it) unless version is "".
func AgentMD(name, version, description string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\n", name, description)
	if version != "" {
		fmt.Fprintf(&b, "version: %q\n", version)
	}
	b.WriteString("---\nYou review changes.\n")
	return b.String()
}

// Zip is a zip archive of files (slash-separated path → content). Paths
// are written as given, so a test can archive "../x" on purpose.
func Zip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: modified})
		if err != nil {
			t.Fatalf("zip entry %q: %v", name, err)
		}
		if _, err := fw.Write([]byte(files[name])); err != nil {
			t.Fatalf("zip entry %q: %v", name, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("zip: %v", err)
	}
	return buf.Bytes()
}

// TarGz is a .tar.gz archive of files (slash-separated path → content),
// each a regular file with mode 0644.
func TarGz(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		body := files[name]
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: modified, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("tar entry %q: %v", name, err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatalf("tar entry %q: %v", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatalf("tar: %v", err)
	}
	if err := gz.Close(); err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return buf.Bytes()
}

// WriteFiles writes files (slash-separated path relative to dir → content)
// under dir, creating the directories they need.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// VariationSelectors spells s in variation selectors, one a byte (U+FE00+b
// below 16, U+E0100+b-16 from 16): text that shows as nothing after the
// character before it, the way hidden instructions are smuggled.
func VariationSelectors(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c < 16 {
			b.WriteRune(0xFE00 + rune(c))
		} else {
			b.WriteRune(0xE0100 + rune(c) - 16)
		}
	}
	return b.String()
}
