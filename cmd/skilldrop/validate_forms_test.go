package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/publish"
)

// exampleBucket is the repository's example bucket, the one make run serves.
var exampleBucket = filepath.Join(repoRoot, "examples", "bucket")

// TestValidateTheExampleBucket validates every file and every skill and
// sub-agent folder of examples/bucket, as the README's operator commands
// say to (one FILE-or-FOLDER each): all of them are valid.
func TestValidateTheExampleBucket(t *testing.T) {
	var paths []string
	err := filepath.WalkDir(exampleBucket, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(exampleBucket, p)
		parent := filepath.Base(filepath.Dir(p))
		switch {
		case !d.IsDir():
			paths = append(paths, p)
		case rel != "." && (parent == "skills" || parent == "subagents"):
			paths = append(paths, p+string(filepath.Separator)) // a folder, as people type it
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent-skills.yaml", "skills/internal-rotate-secret/", "subagents/security-auditor/", "subagents/security-auditor/agent.md"} {
		if !slices.Contains(paths, filepath.Join(exampleBucket, filepath.FromSlash(want))+map[bool]string{true: "/", false: ""}[strings.HasSuffix(want, "/")]) {
			t.Fatalf("the walk missed %s: %q", want, paths)
		}
	}
	code, out, errOut := runCLI(append([]string{"validate"}, paths...)...)
	if code != exitOK || strings.Contains(out, "rejected") || strings.Count(out, "\nok ")+1 != len(paths) {
		t.Fatalf("validate of the example bucket: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestValidateFolders pins how a folder is read: named by the folder, a
// sub-agent folder by its agent.md, and a skill folder inside a bucket
// layout as what the bucket serves from it.
func TestValidateFolders(t *testing.T) {
	dir := t.TempDir()
	const agent = "---\nname: auditor\ndescription: Audits.\n---\nYou audit.\n"
	skilltest.WriteFiles(t, dir, map[string]string{
		"mismatch/SKILL.md":                   skillDoc("other-name"),
		"src/auditor/agent.md":                agent,
		"src/auditor/notes.md":                "beside",
		"bucket/skills/served/SKILL.md":       skillDoc("served"),
		"bucket/skills/served/run.sh":         "echo",
		"bucket/skills/wrong/SKILL.md":        skillDoc("other-name"),
		"bucket/subagents/auditor/agent.md":   agent,
		"bucket/listings/p/skills/x/SKILL.md": skillDoc("x"),
		"only-skill/SKILL.md":                 skillDoc("only-skill"),
	})
	p := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	served := skillDoc("served")
	packed, err := publish.Prepare(p("bucket/skills/served"), publish.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		args      []string
		code      int
		stdout    string
		stderrHas []string
	}{
		{"a folder named otherwise than its frontmatter", []string{p("mismatch")}, exitFailure,
			"rejected " + p("mismatch") + ` name_mismatch: "skills/mismatch.zip": the frontmatter name "other-name" differs from "mismatch"`, nil},
		{"the same rule as for its SKILL.md", []string{p("mismatch/SKILL.md")}, exitFailure,
			"rejected " + p("mismatch/SKILL.md") + ` name_mismatch: `, nil},
		{"a sub-agent folder is its agent.md", []string{p("src/auditor/")}, exitOK,
			"ok " + p("src/auditor/") + " auditor agent-md " + digest.Of([]byte(agent)).String(),
			[]string{"warning " + p("src/auditor/") + ": only its agent.md is published; ignored: notes.md"}},
		{"a sub-agent folder of a bucket", []string{p("bucket/subagents/auditor/")}, exitOK,
			"ok " + p("bucket/subagents/auditor/") + " auditor agent-md " + digest.Of([]byte(agent)).String(), nil},
		{"--subagent on a folder without agent.md", []string{"--subagent", p("only-skill")}, exitFailure,
			"rejected " + p("only-skill") + " missing_skill_md: ", nil},
		{"a skill folder of a bucket is what the bucket serves", []string{p("bucket/skills/served/")}, exitOK,
			"ok " + p("bucket/skills/served/") + " served skill-md " + digest.Of([]byte(served)).String(),
			[]string{
				"warning " + p("bucket/skills/served/") + ": ignored: a skill folder publishes only its SKILL.md (skills/served/SKILL.md); a multi-file skill is an archive (skilldrop publish packs a folder into one): run.sh",
				"note " + p("bucket/skills/served/") + ": the bucket serves skills/served/SKILL.md alone, as a skill-md; `skilldrop publish` uploads the folder packed instead, as skills/served.zip: an archive, " + digest.Of(packed.Body).String(),
			}},
		{"a skill folder of a bucket that both refuse", []string{p("bucket/skills/wrong/")}, exitFailure,
			"rejected " + p("bucket/skills/wrong/") + ` name_mismatch: `,
			[]string{"note " + p("bucket/skills/wrong/") + ": the bucket reads skills/wrong/SKILL.md alone; `skilldrop publish` would refuse the folder: name_mismatch: "}},
		{"a listing's skill folder", []string{p("bucket/listings/p/skills/x")}, exitOK,
			"ok " + p("bucket/listings/p/skills/x") + " x skill-md " + digest.Of([]byte(skillDoc("x"))).String(),
			[]string{"as listings/p/skills/x.zip: an archive"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"validate"}, tt.args...)...)
			if code != tt.code || !strings.HasPrefix(out, tt.stdout) || strings.Count(out, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q; want exit %d and %q\nstderr: %s", code, out, tt.code, tt.stdout, errOut)
			}
			for _, want := range tt.stderrHas {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q\nlacks %q", errOut, want)
				}
			}
		})
	}
	// --json carries what the bucket serves and what publish uploads.
	code, out, _ := runCLI("validate", "--json", p("bucket/skills/served"))
	var doc struct {
		OK      bool
		Results []validation
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK || !doc.OK || len(doc.Results) != 1 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	r := doc.Results[0]
	if r.Key != "skills/served/SKILL.md" || r.Type != "skill-md" || r.Digest != digest.Of([]byte(served)) ||
		r.Publish == nil || r.Publish.Key != "skills/served.zip" || r.Publish.Type != "archive" || r.Publish.Digest != digest.Of(packed.Body) {
		t.Fatalf("result %+v, publish %+v", r, r.Publish)
	}
}

// TestValidateTheConfig: agent-skills.yaml is validated as the indexer
// will validate it once uploaded, with a suggestion for a misspelt key.
func TestValidateTheConfig(t *testing.T) {
	good := "version: 1\nskills:\n  - name: a\n    visibility: authenticated\n"
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{
		"good/agent-skills.yaml": good,
		"typo/agent-skills.yaml": "version: 1\nskills:\n  - name: a\n    visibilty: authenticated\n",
		"bad/agent-skills.yaml":  "version: 1\nskills:\n  - name: a\n    url: /manifest.json\n",
	})
	p := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	for _, tt := range []struct {
		path, want string
		code       int
	}{
		{"good/agent-skills.yaml", "ok " + p("good/agent-skills.yaml") + " - config " + digest.Of([]byte(good)).String() + "\n", exitOK},
		{"typo/agent-skills.yaml", "rejected " + p("typo/agent-skills.yaml") + ` invalid_config: YAML: line 4: unknown key "visibilty" in an entry (did you mean "visibility"?)` + "\n", exitFailure},
		{"bad/agent-skills.yaml", "rejected " + p("bad/agent-skills.yaml") + " invalid_config: skills[0].url: /manifest.json collides with the native manifest\n", exitFailure},
	} {
		code, out, errOut := runCLI("validate", p(tt.path))
		if code != tt.code || out != tt.want {
			t.Errorf("validate %s: exit %d, stdout %q, stderr %q; want exit %d, %q", tt.path, code, out, errOut, tt.code, tt.want)
		}
	}
}

// TestValidateSizesReadForPeople: a size rejection is written in binary
// units, from pkg/artifact and from pkg/archive alike.
func TestValidateSizesReadForPeople(t *testing.T) {
	dir := t.TempDir()
	big := writeFile(t, dir, "big.md", skillDoc("big")+strings.Repeat("x", 6<<20+12345))
	zipped := writeFile(t, dir, "full.zip", string(skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("full"), "data": strings.Repeat("a", 2<<20)})))
	code, out, _ := runCLI("validate", "--max-expanded-bytes", "1048576", big, zipped)
	for _, want := range []string{
		"rejected " + big + " artifact_too_large: the artifact is larger than max_artifact_bytes: 6.0 MiB > 4 MiB; ",
		"rejected " + zipped + ` expanded_too_large: "data": content exceeds max_expanded_bytes (1 MiB); `,
	} {
		if code != exitFailure || !strings.Contains(out, want) {
			t.Errorf("exit %d, stdout %q; want %q", code, out, want)
		}
	}
}
