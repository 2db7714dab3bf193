package main

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// loadFrom reads one document of the directory store dir with load
// (catalog.Load, catalog.LoadStatus).
func loadFrom[T any](t *testing.T, dir string, load func(context.Context, store.Store) (T, store.Info, error)) T {
	t.Helper()
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	doc, _, err := load(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func exists(dir, key string) bool {
	_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(key)))
	return err == nil
}

func TestPublishToADirectory(t *testing.T) {
	bucket := t.TempDir()
	src := t.TempDir()
	t.Chdir(src)
	skilltest.WriteFiles(t, src, map[string]string{
		"deploy-via-pr/SKILL.md":       skilltest.SkillMD("deploy-via-pr", "1.0", "Deploy through a pull request."),
		"deploy-via-pr/scripts/run.sh": "echo deploy",
		"flat/SKILL.md":                skilltest.SkillMD("flat", "1", "One file."),
		"other/flat/SKILL.md":          skilltest.SkillMD("flat", "2", "The same name from another key."),
		"mismatch/SKILL.md":            skilltest.SkillMD("other-name", "1", "Named otherwise than its folder."),
		"auditor/agent.md":             "---\nname: auditor\ndescription: Audits.\n---\nYou audit.\n",
		"bad.md":                       "no frontmatter",
		"subagents/reviewer.md":        "---\nname: reviewer\ndescription: Reviews.\n---\nYou review.\n",
	})
	steps := []struct {
		name   string
		args   []string
		mutate map[string]string
		code   int
		stdout string
		key    string // uploaded; with a leading "!", not uploaded
		live   string // a skill live in the catalog afterwards
	}{
		{"a folder is packed and published", []string{"deploy-via-pr"}, nil,
			exitOK, "published skills/deploy-via-pr.zip deploy-via-pr 1.0 sha256:", "skills/deploy-via-pr.zip", "deploy-via-pr"},
		{"the same folder again is a no-op", []string{"deploy-via-pr/"}, nil,
			exitOK, "unchanged skills/deploy-via-pr.zip deploy-via-pr 1.0 sha256:", "skills/deploy-via-pr.zip", "deploy-via-pr"},
		{"changed files under the same label", []string{"deploy-via-pr"}, map[string]string{"deploy-via-pr/scripts/run.sh": "echo changed"},
			exitFailure, "rejected deploy-via-pr version_exists", "", "deploy-via-pr"},
		{"a folder named otherwise than its frontmatter is not uploaded", []string{"mismatch"}, nil,
			exitFailure, `rejected mismatch name_mismatch: "skills/mismatch.zip": the frontmatter name "other-name" differs from "mismatch"`, "!skills/other-name.zip", ""},
		{"a sub-agent folder publishes its agent.md", []string{"auditor/"}, nil,
			exitOK, "published subagents/auditor.md auditor ", "subagents/auditor.md", ""},
		{"a SKILL.md alone", []string{"flat/SKILL.md"}, nil,
			exitOK, "published skills/flat.md flat 1 ", "skills/flat.md", "flat"},
		{"a sub-agent", []string{"subagents/reviewer.md"}, nil,
			exitOK, "published subagents/reviewer.md reviewer ", "subagents/reviewer.md", ""},
		{"an invalid file is not uploaded", []string{"bad.md"}, nil,
			exitFailure, "rejected bad.md invalid_frontmatter", "!skills/bad.md", ""},
		{"a second key for a published name is not uploaded", []string{"other/flat"}, nil,
			exitFailure, "rejected other/flat name_conflict", "!skills/flat.zip", "flat"},
		{"into a listing", []string{"--listing", "partner-a", "other/flat"}, nil,
			exitOK, "published listings/partner-a/skills/flat.zip flat 2 ", "listings/partner-a/skills/flat.zip", "partner-a/flat"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			skilltest.WriteFiles(t, src, s.mutate)
			code, out, errOut := runCLI(append([]string{"publish", "--dir", bucket}, s.args...)...)
			if code != s.code || !strings.Contains(out, s.stdout) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q", code, out, errOut, s.code, s.stdout)
			}
			if k, absent := strings.CutPrefix(s.key, "!"); absent {
				if exists(bucket, k) {
					t.Fatalf("%s was uploaded despite the rejection", k)
				}
			} else if s.key != "" && !exists(bucket, s.key) {
				t.Fatalf("%s not uploaded", s.key)
			}
			if s.live != "" {
				if e := loadFrom(t, bucket, catalog.Load).Skills[s.live]; e == nil || !e.Live() {
					t.Fatalf("%s not live in the catalog", s.live)
				}
			}
		})
	}
}

func TestPublishUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
	}{
		{"no target", []string{"publish", "x.md"}},
		{"two targets", []string{"publish", "--dir", dir, "--bucket", "b", "x.md"}},
		{"no path", []string{"publish", "--dir", dir}},
		{"two paths", []string{"publish", "--dir", dir, "a.md", "b.md"}},
		{"an invalid listing", []string{"publish", "--dir", dir, "--listing", "Not_A_Name", "x.md"}},
		{"a sub-agent in a listing", []string{"publish", "--dir", dir, "--listing", "l", "--subagent", "x.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, _ := runCLI(tt.args...); code != exitUsage {
				t.Fatalf("exit %d, want %d", code, exitUsage)
			}
		})
	}
}

func removeKey(t *testing.T, dir, key string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
		t.Fatal(err)
	}
}

// TestPublishPrintsTheRealCode: what the contract refuses in a folder is
// printed with its stable code, as the indexer would record it, never as
// "unreadable".
func TestPublishPrintsTheRealCode(t *testing.T) {
	bucket := t.TempDir()
	src := t.TempDir()
	t.Chdir(src)
	skilltest.WriteFiles(t, src, map[string]string{
		"lat/SKILL.md":    "---\nname: lat\ndescription: Reserved.\nmetadata:\n  version: latest\n---\n",
		"linked/SKILL.md": skilltest.SkillMD("linked", "1", "Has a link."),
		"empty/notes.md":  "no SKILL.md",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "linked", "passwd")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want string
	}{
		{"./lat", "rejected ./lat reserved_version: "},
		{"linked", "rejected linked symlink: "},
		{"empty", "rejected empty missing_skill_md: "},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, out, errOut := runCLI("publish", "--dir", bucket, tt.path)
			if code != exitFailure || !strings.HasPrefix(out, tt.want) || strings.Count(out, "pack:") > 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, tt.want)
			}
		})
	}
}

// TestPublishLeavesOutDotFiles: a skill folder that is also a working copy
// publishes without its .env and .git, and the operator is told.
func TestPublishLeavesOutDotFiles(t *testing.T) {
	bucket := t.TempDir()
	src := t.TempDir()
	t.Chdir(src)
	skilltest.WriteFiles(t, src, map[string]string{
		"dotty/SKILL.md":   skilltest.SkillMD("dotty", "1", "Has secrets beside it."),
		"dotty/.env":       "API_TOKEN=hunter2",
		"dotty/.git/HEAD":  "ref: refs/heads/main",
		"dotty/run.sh":     "echo run",
		"dotty/lib/.npmrc": "//registry/:_authToken=hunter2",
	})
	code, out, errOut := runCLI("publish", "--dir", bucket, "dotty")
	if code != exitOK || !strings.HasPrefix(out, "published skills/dotty.zip") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "warning dotty: left out of the archive") || !strings.Contains(errOut, ".env, .git/, lib/.npmrc") {
		t.Fatalf("stderr %q does not name the dot-files left out", errOut)
	}
	body, err := os.ReadFile(filepath.Join(bucket, "skills", "dotty.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if want := []string{"SKILL.md", "run.sh"}; !slices.Equal(names, want) {
		t.Fatalf("the published archive holds %q, want %q", names, want)
	}
}

// TestPublishRefusesTheConfig: publish uploads skills and sub-agents;
// agent-skills.yaml is refused with how to check and upload it, and nothing
// is uploaded.
func TestPublishRefusesTheConfig(t *testing.T) {
	bucket, src := t.TempDir(), t.TempDir()
	cfg := writeFile(t, src, "agent-skills.yaml", "version: 1\n")
	code, out, _ := runCLI("publish", "--dir", bucket, cfg)
	if code != exitFailure || !strings.Contains(out, "unsupported_file") || !strings.Contains(out, "skilldrop validate agent-skills.yaml") ||
		!strings.Contains(out, "aws s3 cp agent-skills.yaml") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(bucket, "agent-skills.yaml")); !os.IsNotExist(err) {
		t.Fatalf("the config was uploaded: %v", err)
	}
}

// TestPublishPrintsScanWarnings: a version published with findings (warn)
// says so on stderr, one "scan:" warning per finding, as validate does:
// the operator sees what the feeds will show with it.
func TestPublishPrintsScanWarnings(t *testing.T) {
	bucket, src := t.TempDir(), t.TempDir()
	skilltest.WriteFiles(t, src, map[string]string{
		"rcw/SKILL.md": skilltest.SkillMD("rcw", "1", "Sets an alias.") + "echo \"alias ll=ls\" >> ~/.zshrc\n",
		"ok/SKILL.md":  skilltest.SkillMD("ok", "1", "Clean."),
	})
	code, out, errOut := runCLI("publish", "--dir", bucket, filepath.Join(src, "rcw"))
	if code != exitOK || !strings.HasPrefix(out, "published skills/rcw.zip ") ||
		!regexp.MustCompile(`(?m)^warning .*rcw: scan: SKILL\.md:\d+: medium persistence\.shell-rc: `).MatchString(errOut) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut = runCLI("publish", "--dir", bucket, filepath.Join(src, "ok")); code != exitOK || strings.Contains(errOut, "scan:") {
		t.Errorf("a clean skill: exit %d, stderr %q", code, errOut)
	}
}
