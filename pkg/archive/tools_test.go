package archive

import (
	"os"
	"path/filepath"
	"testing"
)

// TestValidateRealTools validates one skill tree as real tools pack it
// (testdata/tools/make.sh regenerates the archives): the policy must accept
// what they write for ordinary trees, and every file here must be named.
func TestValidateRealTools(t *testing.T) {
	want := map[string]string{
		"gnu-tar.tar.gz":       "", // GNU long-name and long-link headers (L, K)
		"gnu-tar-posix.tar.gz": "", // one PAX header per entry that needs one
		"gnu-tar-ustar.tar.gz": "",
		"bsdtar.tgz":           "",
		"python-pax.tar.gz":    "",
		"python-gnu.tar.gz":    "",
		// git archive puts the commit id in a PAX global header, which the
		// policy refuses whatever it holds.
		"git-archive.tar.gz":          CodeUnsupportedEntry,
		"python.zip":                  "",
		"bsdtar.zip":                  "",
		"bsdtar-store.zip":            "", // stored entries with data descriptors
		"info-zip.zip":                "",
		"info-zip-streamed-store.zip": "", // stored entries with data descriptors
		// Info-ZIP's zip 3.0 leaves bit 11 unset on UTF-8 names, which
		// Python then reads as CP437.
		"info-zip-utf8-unflagged.zip": CodeInvalidName,
		"git-archive.zip":             "", // the commit id as the archive comment
	}
	files, err := filepath.Glob(filepath.Join("testdata", "tools", "*[zp]"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Fatalf("%d archives in testdata/tools, %d expected: %v", len(files), len(want), files)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			code, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Validate(data, name, Limits{})
			switch e, _ := AsError(err); {
			case code == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case code == "" && res.Skill.Name != "tools":
				t.Fatalf("skill %q, want tools", res.Skill.Name)
			case code != "" && (e == nil || e.Code != code):
				t.Fatalf("got %v, want code %s", err, code)
			}
		})
	}
}
