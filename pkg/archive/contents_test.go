package archive

import (
	"testing"
)

// TestContents: Contents reads the files of an archive Validate refuses
// for its SKILL.md alone (none at the root, a broken frontmatter), and
// refuses, as Validate does, what is hostile whatever the SKILL.md.
func TestContents(t *testing.T) {
	for name, data := range map[string]func(testing.TB) []byte{
		"files under a top folder, zip": func(t testing.TB) []byte {
			return goZip(t, file{name: "x/SKILL.md", body: skill}, file{name: "x/run.sh", body: "echo hi\n"})
		},
		"files under a top folder, tar.gz": func(t testing.TB) []byte {
			return goTgz(t, file{name: "x/SKILL.md", body: skill}, file{name: "x/run.sh", body: "echo hi\n"})
		},
		"a broken frontmatter": func(t testing.TB) []byte {
			return goZip(t, file{name: "SKILL.md", body: "---\nname: [\n---\n"}, file{name: "x/run.sh", body: "echo hi\n"})
		},
	} {
		ext := ".zip"
		if name == "files under a top folder, tar.gz" {
			ext = ".tar.gz"
		}
		b := data(t)
		if _, err := Validate(b, "a"+ext, Limits{}); err == nil {
			t.Fatalf("%s: Validate accepts it", name)
		}
		res, err := Contents(b, "a"+ext, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Skill != nil || len(res.Files) != 2 || res.Files[1].Path != "x/run.sh" || string(res.Files[1].Data) != "echo hi\n" {
			t.Errorf("%s: skill %v, files %+v", name, res.Skill, res.Files)
		}
	}
	for name, data := range map[string][]byte{
		"a path traversal": goZip(t, file{name: "../run.sh", body: "echo hi\n"}),
		"not an archive":   []byte("plain text"),
	} {
		if _, err := Contents(data, "a.zip", Limits{}); err == nil {
			t.Errorf("%s: Contents accepts it", name)
		}
	}
	if _, err := Contents(goZip(t, file{name: "a", body: "b"}), "a.txt", Limits{}); err == nil {
		t.Error("a name that is no archive's: accepted")
	}
}
