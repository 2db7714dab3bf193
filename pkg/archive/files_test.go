package archive

import (
	"archive/tar"
	"io/fs"
	"reflect"
	"sort"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/digest"
)

// TestFilesRecordEveryRegularFile validates archives as both formats and
// checks the files recorded against the bytes that went in: every regular
// file once, in path order, with its digest, size, media type and content;
// directories and symlinks are not files, a hard link is one with its
// target's content.
func TestFilesRecordEveryRegularFile(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	want := []struct{ path, body, mediaType string }{
		{"LICENSE", "MIT\n", "text/plain"},
		{"SKILL.md", skillDoc("files"), "text/markdown"},
		{"assets/logo.png", png, "image/png"},
		{"blob", "\x00\x01\x02", "application/octet-stream"},
		{"references/FORMS.MD", "# Forms\n", "text/markdown"},
		{"scripts/run.py", "print('hi')\n", "text/x-python"},
		{"templates/empty.txt", "", "text/plain"},
	}
	common := []file{
		{name: "references/", typ: tar.TypeDir, mode: fs.ModeDir | 0o755},
		{name: "SKILL.md", body: skillDoc("files")},
		{name: "references/FORMS.MD", body: "# Forms\n"},
		{name: "scripts/run.py", body: "print('hi')\n"},
		{name: "assets/logo.png", body: png},
		{name: "blob", body: "\x00\x01\x02"},
		{name: "LICENSE", body: "MIT\n"},
		{name: "templates/empty.txt", body: ""},
	}
	tarOnly := []file{
		{name: "scripts/link.py", typ: tar.TypeSymlink, link: "run.py"},
		{name: "scripts/hard.py", typ: tar.TypeLink, link: "scripts/run.py"},
	}
	for _, tc := range []struct {
		format Format
		data   []byte
		extra  []struct{ path, body, mediaType string }
	}{
		{FormatZip, goZip(t, common...), nil},
		{FormatTarGz, goTgz(t, append(common, tarOnly...)...),
			[]struct{ path, body, mediaType string }{{"scripts/hard.py", "print('hi')\n", "text/x-python"}}},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			res, err := ValidateFormat(tc.data, tc.format, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			all := append(append([]struct{ path, body, mediaType string }{}, want...), tc.extra...)
			var wantFiles []File
			for _, w := range all {
				wantFiles = append(wantFiles, File{Path: w.path, Digest: digest.Of([]byte(w.body)), Size: int64(len(w.body)), MediaType: w.mediaType, Data: []byte(w.body)})
			}
			sort.Slice(wantFiles, func(i, j int) bool { return wantFiles[i].Path < wantFiles[j].Path })
			got := res.Files
			for i := range got {
				if len(got[i].Data) == 0 {
					got[i].Data = []byte{} // compare empty content as empty
				}
			}
			for i := range wantFiles {
				if len(wantFiles[i].Data) == 0 {
					wantFiles[i].Data = []byte{}
				}
			}
			if !reflect.DeepEqual(got, wantFiles) {
				t.Errorf("files:\n got  %+v\n want %+v", brief(got), brief(wantFiles))
			}
		})
	}
}

func brief(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path+" "+f.MediaType+" "+f.Digest.Short())
	}
	return out
}

func TestMediaType(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"SKILL.md", "# x", "text/markdown"},
		{"a/b/REFERENCE.Markdown", "", "text/markdown"},
		{"data.json", "{}", "application/json"},
		{"config.YML", "a: 1", "application/yaml"},
		{"icon.svg", "<svg/>", "image/svg+xml"},
		{"Makefile", "all:\n", "text/plain"},
		{"README", "héllo", "text/plain"},
		{"bin/tool", "\x7fELF\x00", "application/octet-stream"},
		{"latin1", "caf\xe9", "application/octet-stream"},
		{"archive.tar.gz", "\x1f\x8b", "application/gzip"},
	} {
		if got := MediaType(tc.name, []byte(tc.data)); got != tc.want {
			t.Errorf("MediaType(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
