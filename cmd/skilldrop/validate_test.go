package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/publish"
)

// skillDoc is a valid SKILL.md for name, without a version.
func skillDoc(name string) string { return skilltest.SkillMD(name, "", "Does "+name+".") }

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	agent := "---\nname: reviewer\ndescription: Reviews.\n---\nYou review.\n"
	files := map[string][]byte{
		"deploy.md":                    []byte(skillDoc("deploy")),
		"folder/deploy/SKILL.md":       []byte(skillDoc("deploy")),
		"dotted/deploy/SKILL.md":       []byte(skillDoc("deploy")),
		"dotted/deploy/.env":           []byte("TOKEN=secret"),
		"deploy.zip":                   skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("deploy"), "run.sh": "echo"}),
		"deploy.tgz":                   skilltest.TarGz(t, map[string]string{"SKILL.md": skillDoc("deploy")}),
		"bucket/subagents/reviewer.md": []byte(agent),
		"reviewer.md":                  []byte(agent),
		"other.md":                     []byte(skillDoc("deploy")),
		"evil/deploy.zip":              skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("deploy"), "../../etc/cron.d/x": "boom"}),
		"mislabelled/deploy.tgz":       skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("deploy")}),
		"notes.txt":                    []byte("x"),
		"Bad.md":                       []byte(skillDoc("bad")),
		"my skill/deploy.md":           []byte(skillDoc("deploy")),
		"warn/deploy.md":               []byte("---\nname: deploy\ndescription: d\nshiny: yes\n---\n"),
	}
	for name, body := range files {
		writeFile(t, dir, name, string(body))
	}
	p := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	ok := func(name, skill, typ string) string {
		return fmt.Sprintf("ok %s %s %s %s", printable(p(name)), skill, typ, digest.Of(files[name]))
	}
	packed := func(dir, skill string) string {
		up, err := publish.Prepare(dir, publish.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("ok %s %s archive %s", printable(dir), skill, digest.Of(up.Body))
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		lines     []string // stdout, line by line; a rejection line is matched by its prefix
		stderrHas string
	}{
		{"every accepted form", []string{p("deploy.md"), p("folder/deploy/SKILL.md"), p("deploy.zip"), p("deploy.tgz"), p("bucket/subagents/reviewer.md")}, exitOK,
			[]string{ok("deploy.md", "deploy", "skill-md"), ok("folder/deploy/SKILL.md", "deploy", "skill-md"), ok("deploy.zip", "deploy", "archive"),
				ok("deploy.tgz", "deploy", "archive"), ok("bucket/subagents/reviewer.md", "reviewer", "agent-md")}, ""},
		{"--subagent reads .md as agent.md", []string{"--subagent", p("reviewer.md")}, exitOK, []string{ok("reviewer.md", "reviewer", "agent-md")}, ""},
		{"flags after the files", []string{p("reviewer.md"), "-subagent"}, exitOK, []string{ok("reviewer.md", "reviewer", "agent-md")}, ""},
		{"without --subagent a .md is a skill", []string{p("reviewer.md")}, exitOK, []string{ok("reviewer.md", "reviewer", "skill-md")}, ""},
		{"one rejection fails the run", []string{p("deploy.md"), p("other.md")}, exitFailure,
			[]string{ok("deploy.md", "deploy", "skill-md"), "rejected " + p("other.md") + " name_mismatch: "}, ""},
		{"hostile archive", []string{p("evil/deploy.zip")}, exitFailure, []string{"rejected " + p("evil/deploy.zip") + " path_traversal: "}, ""},
		{"extension and bytes disagree", []string{p("mislabelled/deploy.tgz")}, exitFailure, []string{"rejected " + p("mislabelled/deploy.tgz") + " format_mismatch: "}, ""},
		{"unknown extension", []string{p("notes.txt")}, exitFailure, []string{"rejected " + p("notes.txt") + " unsupported_file: "}, ""},
		{"invalid implied name", []string{p("Bad.md")}, exitFailure, []string{"rejected " + p("Bad.md") + " invalid_key: "}, ""},
		{"missing file", []string{p("missing.md")}, exitUsage, nil, p("missing.md") + ": no such file or directory"},
		{"missing folder", []string{p("deploy.md"), p("missing") + "/"}, exitUsage, nil, p("missing") + "/: no such file or directory"},
		{"lowered size cap", []string{"-max-artifact-bytes", "20", p("deploy.md")}, exitFailure, []string{"rejected " + p("deploy.md") + " artifact_too_large: "}, ""},
		{"lowered entry cap", []string{"--max-entries=1", p("deploy.zip")}, exitFailure, []string{"rejected " + p("deploy.zip") + " too_many_entries: "}, ""},
		{"clock skew accepted", []string{"--max-clock-skew-secs", "5", p("deploy.md")}, exitOK, []string{ok("deploy.md", "deploy", "skill-md")}, ""},
		{"a skill folder is validated as the zip publish packs", []string{p("folder/deploy")}, exitOK, []string{packed(p("folder/deploy"), "deploy")}, ""},
		{"a folder's dot-files are left out, and said so", []string{p("dotted/deploy")}, exitOK, []string{packed(p("dotted/deploy"), "deploy")}, "left out of the archive (dot-files are never published; they often hold credentials): .env\n"},
		{"a folder without SKILL.md", []string{p("bucket")}, exitFailure, []string{"rejected " + p("bucket") + " missing_skill_md: "}, ""},
		{"a path with a space is quoted", []string{p("my skill/deploy.md")}, exitOK, []string{ok("my skill/deploy.md", "deploy", "skill-md")}, ""},
		{"warnings go to stderr", []string{p("warn/deploy.md")}, exitOK, []string{ok("warn/deploy.md", "deploy", "skill-md")}, `unknown frontmatter key "shiny"`},
		{"after -- everything is a file", []string{"--", "-subagent"}, exitUsage, nil, "-subagent: no such file or directory"},
		{"no file", nil, exitUsage, nil, "no FILE-or-FOLDER given"},
		{"bad flag", []string{"-frobnicate", p("deploy.md")}, exitUsage, nil, "flag provided but not defined"},
		{"bad flag value", []string{"-max-entries", "many", p("deploy.md")}, exitUsage, nil, "invalid value"},
		{"raising the size cap", []string{"-max-artifact-bytes", "8388608", p("deploy.md")}, exitUsage, nil, "not raise it"},
		{"negative cap", []string{"-max-entries", "-1", p("deploy.md")}, exitUsage, nil, "invalid_limits"},
		{"-h", []string{"-h"}, exitOK, nil, "usage: skilldrop validate [--subagent] [--json] [--max-…] FILE-or-FOLDER..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"validate"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if out == "" {
				got = nil
			}
			if len(got) != len(tt.lines) {
				t.Fatalf("stdout lines %q, want %q", got, tt.lines)
			}
			for i, want := range tt.lines {
				if prefix := strings.HasPrefix(want, "rejected "); got[i] != want && (!prefix || !strings.HasPrefix(got[i], want)) {
					t.Errorf("line %d = %q, want %q", i, got[i], want)
				}
			}
			if !strings.Contains(errOut, tt.stderrHas) {
				t.Fatalf("stderr %q, want it to contain %q", errOut, tt.stderrHas)
			}
		})
	}
}

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestValidateFailsWhenResultsCannotBeWritten(t *testing.T) {
	good := writeFile(t, t.TempDir(), "deploy.md", skillDoc("deploy"))
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"validate", good}, brokenPipe{}, &errOut); code != exitFailure || !strings.Contains(errOut.String(), "broken pipe") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming the write error", code, errOut.String())
	}
}
