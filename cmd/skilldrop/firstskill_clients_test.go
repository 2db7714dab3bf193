//go:build clients

package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// TestClientREADMEFirstSkill runs the README's "Your first skill" block as a new
// user would, against skilldrop serve of a copy of the example bucket
// signed as make run signs it (--signing-key): the built command for its
// skilldrop lines (in the folder the block works in, the served copy for
// .run/example-bucket, the key serve signs with for .run/signing-key.pem),
// the pinned skills CLI for its install. The skill gets an executable script first, so the test also
// pins what the README says of the exec bit: the skills CLI installs the
// script without it, although the archive publish packs keeps it.
func TestClientREADMEFirstSkill(t *testing.T) {
	cli := needSkillsCLI(t)
	bin := builtCLI(t)
	key := writeSigningKey(t)
	origin, bucket, _ := serveExampleBucketWith(t, "--signing-key", key)
	work, proj := t.TempDir(), t.TempDir()
	block := section(t, "## Your first skill")
	start := strings.Index(block, "```sh\n")
	end := strings.Index(block[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the section has no sh block")
	}
	ran := 0
	for _, line := range strings.Split(block[start+6:start+6+end], "\n") {
		if i := strings.Index(line, "  #"); i >= 0 {
			line = line[:i]
		}
		args := strings.Fields(line)
		switch {
		case len(args) == 0, args[0] == "make", strings.HasPrefix(args[0], "$EDITOR"):
			continue // make cli is builtCLI; the editor is the user's
		case args[0] == "bin/skilldrop":
			for i, a := range args {
				args[i] = strings.NewReplacer(".run/example-bucket", bucket, ".run/signing-key.pem", key).Replace(a)
			}
			code, out, errOut := builtRunWith(t, bin, work, args[1:]...)
			if code != exitOK {
				t.Fatalf("%s: exit %d\n%s%s", line, code, out, errOut)
			}
			if args[1] == "init" {
				skilltest.WriteFiles(t, work, map[string]string{"my-skill/scripts/run.sh": "#!/bin/sh\necho ran\n"})
				if err := os.Chmod(filepath.Join(work, "my-skill", "scripts", "run.sh"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		case args[0] == "npx" && args[1] == "skills":
			waitFor(t, "serve publishes my-skill", func() bool { return byName(fetchIndex(t, origin+routes.RFCIndex))["my-skill"].Digest != "" })
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "http://127.0.0.1:8080", origin)
			}
			cli.run(t, proj, args[2:]...)
		default:
			t.Fatalf("the block has a line this test does not know how to run: %q", line)
		}
		ran++
	}
	if ran != 4 {
		t.Fatalf("ran %d lines of the block, want init, validate, publish and skills add", ran)
	}
	installed := filepath.Join(proj, ".agents", "skills", "my-skill")
	if b, err := os.ReadFile(filepath.Join(installed, "SKILL.md")); err != nil || !strings.Contains(string(b), "name: my-skill") {
		t.Fatalf("my-skill is not installed: %v", err)
	}
	st, err := os.Stat(filepath.Join(installed, "scripts", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&0o111 != 0 {
		t.Errorf("the skills CLI kept the exec bit (%v): the README says it does not", st.Mode())
	}
	served := fetch(t, byName(fetchIndex(t, origin+routes.RFCIndex))["my-skill"].URL)
	zr, err := zip.NewReader(bytes.NewReader(served), int64(len(served)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == "scripts/run.sh" && f.Mode()&0o111 == 0 {
			t.Errorf("the served archive holds scripts/run.sh as %v: the exec bit is lost before the CLI", f.Mode())
		}
	}
}
