package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runMake runs make in the repository's root.
func runMake(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-C", repoRoot}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestMakeRunKeepsEdits: make run's copy of the example bucket is made once
// and kept, edits included; make run-reset starts from a fresh copy.
func TestMakeRunKeepsEdits(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "example-bucket")
	runMake(t, "run-dir", "RUN_DIR="+runDir)
	edited := filepath.Join(runDir, "skills", "deploy-via-pr.md")
	if err := os.WriteFile(edited, []byte("an edit"), 0o644); err != nil {
		t.Fatalf("the example bucket was not copied: %v", err)
	}
	runMake(t, "run-dir", "RUN_DIR="+runDir)
	if b, err := os.ReadFile(edited); err != nil || string(b) != "an edit" {
		t.Fatalf("a second make run lost the edit: %q, %v", b, err)
	}
	// run-reset removes the copy, then runs make run (not run here: -n).
	if out := runMake(t, "-n", "run-reset", "RUN_DIR="+runDir); !strings.Contains(out, "rm -rf "+runDir) {
		t.Fatalf("make run-reset does not start afresh:\n%s", out)
	}
}

// TestMakeRunSaysWhatItBuilds: make run builds the CLI before serving,
// and first says so and how long a first build takes (it downloads the
// modules and compiles them without a line of output), then serves with
// the binary it built.
func TestMakeRunSaysWhatItBuilds(t *testing.T) {
	out := runMake(t, "-n", "run", "RUN_DIR="+filepath.Join(t.TempDir(), "bucket"))
	say := strings.Index(out, "building the CLI, bin/skilldrop: the first build downloads the Go modules")
	build := strings.Index(out, "-o bin/skilldrop ./cmd/skilldrop")
	serve := strings.Index(out, "bin/skilldrop serve --dir ")
	if say < 0 || build < say || serve < build {
		t.Fatalf("make -n run does not say what it builds, then build, then serve:\n%s", out)
	}
}

// TestMakeCLIBuildsTheCLIAlone: make cli builds bin/skilldrop with the
// version set, and nothing for Lambda; make help lists it and run-reset.
func TestMakeCLIBuildsTheCLIAlone(t *testing.T) {
	out := runMake(t, "-n", "cli", "VERSION=v1.2.3")
	if !strings.Contains(out, "-o bin/skilldrop ./cmd/skilldrop") || !strings.Contains(out, "-X github.com/skilldrop/skilldrop/pkg/buildinfo.version=v1.2.3") ||
		strings.Contains(out, "functions/") || strings.Contains(out, "GOARCH") {
		t.Fatalf("make -n cli:\n%s", out)
	}
	if out := runMake(t, "-n", "build-lambda", "VERSION=v1.2.3"); strings.Count(out, "buildinfo.version=v1.2.3") != 2 {
		t.Fatalf("the Lambda binaries are not given the version:\n%s", out)
	}
	help := runMake(t, "help")
	for _, target := range []string{"  cli ", "  run-reset "} {
		if !strings.Contains(help, target) {
			t.Errorf("make help does not list %s:\n%s", strings.TrimSpace(target), help)
		}
	}
}

// TestMakeCLICrossBuilds: `make cli GOOS=… GOARCH=…` builds a static CLI
// for that platform as CLI_DIR/skilldrop-GOOS-GOARCH (.exe for Windows),
// never over the host's bin/skilldrop: Windows (the store's lock is
// LockFileEx there, flock elsewhere) and macOS on Apple silicon.
func TestMakeCLICrossBuilds(t *testing.T) {
	for _, tt := range []struct {
		goos, goarch, file string
		magic              []byte
	}{
		{"windows", "amd64", "skilldrop-windows-amd64.exe", []byte("MZ")},
		{"darwin", "arm64", "skilldrop-darwin-arm64", []byte{0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00, 0x00, 0x01}}, // Mach-O 64, CPU_TYPE_ARM64
	} {
		t.Run(tt.goos+"-"+tt.goarch, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			plan := runMake(t, "-n", "cli", "GOOS="+tt.goos, "GOARCH="+tt.goarch, "CLI_DIR="+dir)
			if !strings.Contains(plan, "CGO_ENABLED=0 GOOS="+tt.goos+" GOARCH="+tt.goarch+" ") {
				t.Errorf("make -n cli is not a static build for %s/%s:\n%s", tt.goos, tt.goarch, plan)
			}
			runMake(t, "cli", "GOOS="+tt.goos, "GOARCH="+tt.goarch, "CLI_DIR="+dir)
			b, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatalf("make cli GOOS=%s GOARCH=%s: %v", tt.goos, tt.goarch, err)
			}
			if !bytes.HasPrefix(b, tt.magic) {
				t.Errorf("%s does not start as a %s/%s executable: % x", tt.file, tt.goos, tt.goarch, b[:min(len(b), 8)])
			}
			if _, err := os.Stat(filepath.Join(dir, "skilldrop")); err == nil {
				t.Errorf("the cross build wrote %s/skilldrop, the host's binary", dir)
			}
		})
	}
}
