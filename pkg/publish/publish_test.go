package publish

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
)

func doc(name string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n# " + name + "\n"
}

func agent(name string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " sub-agent.\n---\nYou help.\n"
}

// tree writes files (relative path → content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPrepare(t *testing.T) {
	zipped := tree(t, map[string]string{"src/SKILL.md": doc("zipped")})
	packed, err := Prepare(filepath.Join(zipped, "src"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := tree(t, map[string]string{
		"my folder/SKILL.md":       doc("deploy-via-pr"),
		"my folder/scripts/run.sh": "echo",
		"flat/SKILL.md":            doc("flat"),
		"one.md":                   doc("one"),
		"subagents/reviewer.md":    agent("reviewer"),
		"helper.md":                agent("helper"),
		"writer/agent.md":          agent("writer"),
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
		{"a folder is packed under its frontmatter name", "my folder", Options{}, "skills/deploy-via-pr.zip", true},
		{"a folder into a listing", "my folder", Options{Listing: "partner-a"}, "listings/partner-a/skills/deploy-via-pr.zip", true},
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
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(tt.path)))
				if err != nil || !bytes.Equal(b, up.Body) {
					t.Fatalf("the body is not the file's bytes (%v)", err)
				}
			}
		})
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

func TestPrepareRefuses(t *testing.T) {
	dir := tree(t, map[string]string{
		"empty/README.md": "no skill here",
		"bad/SKILL.md":    "no frontmatter",
		"notes.txt":       "text",
		"big.md":          doc("big") + string(bytes.Repeat([]byte("x"), 200)),
		"agent/agent.md":  agent("agent"),
	})
	tests := []struct {
		name string
		path string
		opts Options
	}{
		{"a folder without SKILL.md", "empty", Options{}},
		{"a folder whose SKILL.md is invalid", "bad", Options{}},
		{"a file the contract does not know", "notes.txt", Options{}},
		{"a file over the artifact cap", "big.md", Options{Limits: archive.Limits{MaxArtifactBytes: 100}}},
		{"a sub-agent in a listing", "agent/agent.md", Options{Listing: "l"}},
		{"an invalid listing name", "big.md", Options{Listing: "Not_A_Name"}},
		{"a missing path", "nothing-here", Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if up, err := Prepare(filepath.Join(dir, tt.path), tt.opts); err == nil {
				t.Fatalf("prepared %s", up.Key)
			}
		})
	}
}
