package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/buildinfo"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if built.bin != "" {
		_ = os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestDispatch(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
	}{
		{"no command", nil, exitUsage, "", "\n  validate "},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", "unknown command frobnicate\n"},
		{"help", []string{"help"}, exitOK, "validate skill files, folders, archives", ""},
		{"--help", []string{"--help"}, exitOK, "usage: skilldrop <command>", ""},
		{"help for a command", []string{"help", "validate"}, exitOK, "-max-entries", ""},
		{"help for an unknown command", []string{"help", "nope"}, exitUsage, "", `unknown command "nope"`},
		{"--version", []string{"--version"}, exitOK, "skilldrop " + buildinfo.Version() + "\n", ""},
		{"version", []string{"version"}, exitOK, "skilldrop " + buildinfo.Version() + "\n", ""},
		{"version takes no operands", []string{"version", "x"}, exitUsage, "", "unexpected argument x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdoutHas) || !strings.Contains(errOut, tt.stderrHas) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
					code, out, errOut, tt.code, tt.stdoutHas, tt.stderrHas)
			}
		})
	}
}

func TestRegisterRefusesDuplicates(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a second registration of validate did not panic")
		}
	}()
	register(&command{name: "validate"})
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{"a.zip": "a.zip", "my skill.zip": `"my skill.zip"`, "a\nb.md": `"a\nb.md"`, "": `""`, "café.md": "café.md",
		hostileKey: `"skills/\u009b31m\u202edm.exe\u200b.md"`} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}

// testBinaryVersion is the version builtCLI links into the binary.
const testBinaryVersion = "v9.8.7-test"

var built struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// builtCLI builds the command once per test binary, as `make cli` would
// (with testBinaryVersion), for the tests that must see what a user's
// terminal sees, the SDK's own output on stderr included.
func builtCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "skilldrop-cli-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "skilldrop")
		built.out, built.err = exec.Command("go", "build", "-ldflags", "-X github.com/skilldrop/skilldrop/pkg/buildinfo.version="+testBinaryVersion, "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// TestBinaryExitStatus runs the built command, as `go run ./cmd/skilldrop`
// would, to pin the exit statuses the process itself returns.
func TestBinaryExitStatus(t *testing.T) {
	bin := builtCLI(t)
	const version = testBinaryVersion
	// The version set at link time is what the binary says it is.
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil || string(out) != "skilldrop "+version+"\n" {
			t.Errorf("skilldrop %s: %q, %v; want skilldrop %s", args[0], out, err, version)
		}
	}
	dir := t.TempDir()
	good := writeFile(t, dir, "deploy.md", skillDoc("deploy"))
	bad := writeFile(t, dir, "other.md", skillDoc("deploy"))
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"validate", good}, exitOK},
		{[]string{"validate", good, bad}, exitFailure},
		{[]string{"validate"}, exitUsage},
		{[]string{"validate", "-no-such-flag", good}, exitUsage},
		{nil, exitUsage},
	} {
		cmd := exec.Command(bin, tt.args...)
		cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
		err := cmd.Run()
		if got := cmd.ProcessState.ExitCode(); got != tt.code {
			t.Errorf("skilldrop %q exited %d (%v), want %d", tt.args, got, err, tt.code)
		}
	}
}

// writeFile writes one file under dir and returns its path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	skilltest.WriteFiles(t, dir, map[string]string{name: body})
	return filepath.Join(dir, filepath.FromSlash(name))
}
