package publish

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

func doc(name string) string { return skilltest.SkillMD(name, "", "The "+name+" skill.") }

func agent(name string) string { return skilltest.AgentMD(name, "", "The "+name+" sub-agent.") }

// tree writes files (relative path → content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, files)
	return dir
}

func TestPrepare(t *testing.T) {
	zipped := tree(t, map[string]string{"src/SKILL.md": doc("zipped")})
	packed, err := Prepare(filepath.Join(zipped, "src"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := tree(t, map[string]string{
		"deploy-via-pr/SKILL.md":            doc("deploy-via-pr"),
		"deploy-via-pr/scripts/run.sh":      "echo",
		"flat/SKILL.md":                     doc("flat"),
		"one.md":                            doc("one"),
		"subagents/reviewer.md":             agent("reviewer"),
		"helper.md":                         agent("helper"),
		"writer/agent.md":                   agent("writer"),
		"writer/notes.md":                   "not published",
		"both/SKILL.md":                     doc("both"),
		"both/agent.md":                     agent("both"),
		"bucket/subagents/auditor/agent.md": agent("auditor"),
	})
	if err := os.WriteFile(filepath.Join(dir, "zipped.zip"), packed.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		path   string
		opts   Options
		key    string
		packed bool
	}{
		{"a folder is packed under its name", "deploy-via-pr", Options{}, "skills/deploy-via-pr.zip", true},
		{"a folder into a listing", "deploy-via-pr/", Options{Listing: "partner-a"}, "listings/partner-a/skills/deploy-via-pr.zip", true},
		{"a sub-agent folder uploads its agent.md", "writer", Options{}, "subagents/writer.md", false},
		{"a folder holding both is a skill", "both", Options{}, "skills/both.zip", true},
		{"a folder holding both, read as a sub-agent", "both", Options{Subagent: true}, "subagents/both.md", false},
		{"a folder below subagents/ is a sub-agent", "bucket/subagents/auditor/", Options{}, "subagents/auditor.md", false},
		{"a SKILL.md alone", "flat/SKILL.md", Options{}, "skills/flat.md", false},
		{"a <name>.md", "one.md", Options{}, "skills/one.md", false},
		{"an archive keeps its extension", "zipped.zip", Options{}, "skills/zipped.zip", false},
		{"a .md under subagents/", "subagents/reviewer.md", Options{}, "subagents/reviewer.md", false},
		{"a .md read as a sub-agent", "helper.md", Options{Subagent: true}, "subagents/helper.md", false},
		{"an agent.md", "writer/agent.md", Options{}, "subagents/writer.md", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, err := Prepare(filepath.Join(dir, filepath.FromSlash(tt.path)), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if up.Key != tt.key || up.Packed != tt.packed {
				t.Fatalf("key %q packed %v, want %q %v", up.Key, up.Packed, tt.key, tt.packed)
			}
			k, err := artifact.ParseKey(up.Key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := artifact.Validate(k, up.Body, archive.Limits{}); err != nil {
				t.Fatalf("the upload fails the indexer's rules: %v", err)
			}
			if !tt.packed {
				file := filepath.Join(dir, filepath.FromSlash(tt.path))
				if st, err := os.Stat(file); err == nil && st.IsDir() {
					file = filepath.Join(file, "agent.md")
				}
				b, err := os.ReadFile(file)
				if err != nil || !bytes.Equal(b, up.Body) {
					t.Fatalf("the body is not the file's bytes (%v)", err)
				}
			}
		})
	}
}

// TestAFolderIsNamedByItsFolder: the folder's name is the name the upload's
// key implies, as skills/<name>/SKILL.md implies it in the bucket, so a
// frontmatter name that differs fails the rule every reader applies
// rather than being uploaded under the frontmatter's name.
func TestAFolderIsNamedByItsFolder(t *testing.T) {
	dir := tree(t, map[string]string{"mismatch/SKILL.md": doc("other-name"), "agents/mismatch/agent.md": agent("other-name")})
	for _, tt := range []struct {
		path string
		opts Options
		key  string
	}{
		{"mismatch", Options{}, "skills/mismatch.zip"},
		{"agents/mismatch", Options{}, "subagents/mismatch.md"},
	} {
		up, err := Prepare(filepath.Join(dir, tt.path), tt.opts)
		if err != nil || up.Key != tt.key {
			t.Fatalf("Prepare(%s) = %+v, %v; want key %s", tt.path, up, err, tt.key)
		}
		k, err := artifact.ParseKey(up.Key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := artifact.Validate(k, up.Body, archive.Limits{}); err == nil {
			t.Fatalf("%s validates", tt.path)
		} else if e, _ := artifact.AsError(err); e == nil || e.Code != artifact.CodeNameMismatch {
			t.Fatalf("%s: %v, want name_mismatch", tt.path, err)
		}
	}
	if _, err := Prepare(filepath.Join(dir, "agents", "mismatch"), Options{Listing: "l"}); !errors.Is(err, ErrOptions) {
		t.Fatalf("a sub-agent folder into a listing: %v, want ErrOptions", err)
	}
}

func TestPrepareIsDeterministicForAFolder(t *testing.T) {
	dir := tree(t, map[string]string{"SKILL.md": doc("same"), "a/b.txt": "b"})
	a, err := Prepare(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	later := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "a/b.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	b, err := Prepare(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Body, b.Body) {
		t.Fatal("packing the same folder twice gave different bytes: a re-publish would be version_exists")
	}
}

// TestPrepareRefuses pins what each refusal is: a rejection with the code
// the indexer would give (code), options that cannot apply (ErrOptions),
// or neither (the file system's error).
func TestPrepareRefuses(t *testing.T) {
	dir := tree(t, map[string]string{
		"empty/README.md":     "no skill here",
		"agentless/notes.md":  "no agent here",
		"bad/SKILL.md":        "no frontmatter",
		"labelled/SKILL.md":   "---\nname: labelled\ndescription: D.\nmetadata:\n  version: latest\n---\n",
		"linked/SKILL.md":     doc("linked"),
		"grown/SKILL.md":      doc("grown"),
		"grown/data.txt":      string(bytes.Repeat([]byte("x"), 200)),
		"notes.txt":           "text",
		"big.md":              doc("big") + string(bytes.Repeat([]byte("x"), 200)),
		"agent/agent.md":      agent("agent"),
		"subagents/helper.md": agent("helper"),
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "linked", "passwd")); err != nil {
		t.Fatal(err)
	}
	const fsError, options = "(file system)", "(options)"
	tests := []struct {
		name string
		path string
		opts Options
		want string // a rejection code, fsError or options
	}{
		{"a folder without SKILL.md", "empty", Options{}, archive.CodeMissingSkillMD},
		{"a sub-agent folder without agent.md", "agentless", Options{Subagent: true}, archive.CodeMissingSkillMD},
		{"a folder whose SKILL.md is invalid", "bad", Options{}, skillmd.CodeInvalidFrontmatter},
		{"a folder whose SKILL.md has a reserved version", "labelled", Options{}, skillmd.CodeReservedVersion},
		{"a folder holding a symlink", "linked", Options{}, archive.CodeSymlink},
		{"a folder with more content than allowed", "grown", Options{Limits: archive.Limits{MaxExpandedBytes: 100}}, archive.CodeExpandedTooLarge},
		{"a file the contract does not know", "notes.txt", Options{}, artifact.CodeUnsupportedFile},
		{"a file over the artifact cap", "big.md", Options{Limits: archive.Limits{MaxArtifactBytes: 100}}, artifact.CodeTooLarge},
		{"a sub-agent in a listing", "agent/agent.md", Options{Listing: "l"}, options},
		{"a sub-agent file in a listing", "subagents/helper.md", Options{Listing: "l"}, options},
		{"a sub-agent and a listing", "nothing-here", Options{Listing: "l", Subagent: true}, options},
		{"an invalid listing name", "big.md", Options{Listing: "Not_A_Name"}, options},
		{"an invalid listing name for a missing path", "nothing-here", Options{Listing: "Not_A_Name"}, options},
		{"a missing path", "nothing-here", Options{}, fsError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, err := Prepare(filepath.Join(dir, tt.path), tt.opts)
			if err == nil {
				t.Fatalf("prepared %s", up.Key)
			}
			got := fsError
			if e, ok := artifact.AsError(err); ok {
				got = e.Code
			} else if errors.Is(err, ErrOptions) {
				got = options
			}
			if got != tt.want {
				t.Fatalf("err = %v: %s, want %s", err, got, tt.want)
			}
			if strings.Count(err.Error(), "pack:") > 1 {
				t.Fatalf("err = %q names pack twice", err)
			}
		})
	}
}

func TestPrepareNamesTheDotFilesLeftOut(t *testing.T) {
	dir := tree(t, map[string]string{"SKILL.md": doc("dotty"), ".env": "TOKEN=x", ".git/HEAD": "ref", "lib/.npmrc": "//r/:_authToken=x", "lib/a.txt": "a"})
	up, err := Prepare(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".env", ".git/", "lib/.npmrc"}; !slices.Equal(up.LeftOut, want) {
		t.Fatalf("LeftOut %q, want %q", up.LeftOut, want)
	}
	if bytes.Contains(up.Body, []byte("TOKEN")) || bytes.Contains(up.Body, []byte(".npmrc")) {
		t.Fatal("a dot-file reached the archive")
	}
}
