package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// serveBuilt runs the built command's serve on a free loopback port of dir
// until the test ends (then interrupts it, as Ctrl-C does) and returns its
// origin.
func serveBuilt(t *testing.T, dir string, args ...string) string {
	t.Helper()
	origin, _ := serveBuiltLogs(t, dir, args...)
	return origin
}

// launchBuiltServe starts the built skilldrop serve on dir at a free loopback
// port; exited receives its Wait error once it ends.
func launchBuiltServe(t *testing.T, dir string, args ...string) (*exec.Cmd, *syncbuf.Buffer, *syncbuf.Buffer, chan error) {
	t.Helper()
	cmd := exec.Command(builtCLI(t), append([]string{"serve", "--dir", dir, "--addr", "127.0.0.1:0"}, args...)...)
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return cmd, stdout, stderr, exited
}

// serveBuiltLogs is serveBuilt, also returning what serve writes to stderr.
func serveBuiltLogs(t *testing.T, dir string, args ...string) (string, *syncbuf.Buffer) {
	t.Helper()
	cmd, stdout, stderr, exited := launchBuiltServe(t, dir, args...)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("skilldrop serve did not stop cleanly: %v", err)
			}
		case <-time.After(30 * time.Second): // a hang guard, not a figure
			_ = cmd.Process.Kill()
			t.Errorf("skilldrop serve did not stop on an interrupt: %v", <-exited)
		}
		if t.Failed() {
			t.Logf("skilldrop serve stderr:\n%s", stderr)
		}
	})
	var origin string
	eventually(t, "skilldrop serve prints its address", func() bool {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("skilldrop serve exited: %v\n%s%s", err, stdout, stderr)
		default:
		}
		if m := servingLine.FindStringSubmatch(stdout.String()); m != nil {
			origin = m[1]
		}
		return origin != ""
	})
	return origin, stderr
}

// anonymousNames GETs the RFC index of origin without a key and returns
// the names in it.
func anonymousNames(t *testing.T, origin string) []string {
	t.Helper()
	resp, err := http.Get(origin + "/.well-known/agent-skills/index.json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("index: %d %s", resp.StatusCode, b)
	}
	var idx struct{ Skills []struct{ Name string } }
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range idx.Skills {
		out = append(out, s.Name)
	}
	return out
}

// TestServeReadsAConfigOnceItIsWritten: agent-skills.yaml hides four
// skills and is rewritten the way a slow editor or a copy over a network
// writes it, a line at a time with pauses longer than serve's notification
// batching; read mid-write, a prefix of it is a valid config that hides
// fewer skills. An anonymous caller polling all the while never sees one,
// and the finished config is put in force.
func TestServeReadsAConfigOnceItIsWritten(t *testing.T) {
	dir := t.TempDir()
	hidden := []string{"s1", "s2", "s3", "s4"}
	config := "version: 1\nskills:\n"
	files := map[string]string{"skills/open.md": skillDoc("open")}
	for _, n := range hidden {
		config += "  - name: " + n + "\n    visibility: authenticated\n"
		files["skills/"+n+".md"] = skillDoc(n)
	}
	files["agent-skills.yaml"] = config
	skilltest.WriteFiles(t, dir, files)
	origin := serveBuilt(t, dir)
	if got := anonymousNames(t, origin); strings.Join(got, ",") != "open" {
		t.Fatalf("anonymous index %v before the rewrite", got)
	}

	rewritten := "# rewritten by a slow writer\n" + config + "  - name: open\n    description: Described by the new config.\n"
	written := make(chan error, 1)
	go func() {
		f, err := os.Create(filepath.Join(dir, "agent-skills.yaml")) // truncates: the file is empty first
		if err != nil {
			written <- err
			return
		}
		for _, line := range strings.SplitAfter(rewritten, "\n") {
			time.Sleep(250 * time.Millisecond) // past serve's 150 ms of notification quiet
			if _, err := f.WriteString(line); err != nil {
				written <- err
				return
			}
		}
		written <- f.Close()
	}()
	seen := map[string]bool{}
	poll := func() {
		for _, n := range anonymousNames(t, origin) {
			seen[n] = true
		}
	}
	for done := false; !done; {
		select {
		case err := <-written:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
			poll()
			time.Sleep(20 * time.Millisecond)
		}
	}
	want := `"digest": "` + digest.Of([]byte(rewritten)).String() + `"`
	eventually(t, "the finished config is put in force", func() bool {
		poll()
		code, out, _ := runCLI("status", "--dir", dir, "--json")
		return code == exitOK && strings.Contains(out, want)
	})
	for _, n := range hidden {
		if seen[n] {
			t.Errorf("an anonymous caller saw %s while agent-skills.yaml was being written", n)
		}
	}
}

// TestServeHealthz: the built command's serve answers the health check
// with its version, once it has indexed the directory.
func TestServeHealthz(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{"skills/a.md": skillDoc("a")})
	resp, err := http.Get(serveBuilt(t, dir) + routes.Healthz)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != `{"status":"ok","version":"`+testBinaryVersion+`"}`+"\n" {
		t.Fatalf("GET /healthz: %d %s", resp.StatusCode, b)
	}
}

// TestServeFailsClosedWhenTheCatalogIsDeleted, through the built command:
// with agent-skills.yaml hiding a skill, the catalog/ folder (which records
// the config in force) and the config are deleted while serve runs. Serve
// refuses to start over from an empty catalog, which would publish the
// hidden skill: no anonymous caller sees it, and serve started again fails,
// saying how to restore or start over on purpose.
func TestServeFailsClosedWhenTheCatalogIsDeleted(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{
		"skills/open.md":    skillDoc("open"),
		"skills/secret.md":  skillDoc("secret"),
		"agent-skills.yaml": "version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n",
	})
	origin, logs := serveBuiltLogs(t, dir)
	if got := anonymousNames(t, origin); strings.Join(got, ",") != "open" {
		t.Fatalf("anonymous index %v before the deletion", got)
	}
	if err := os.RemoveAll(filepath.Join(dir, "catalog")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "agent-skills.yaml")); err != nil {
		t.Fatal(err)
	}
	const refusal = "was deleted from the directory"
	eventually(t, "serve refuses to index the directory", func() bool {
		leaked(t, origin)
		return strings.Contains(logs.String(), refusal)
	})
	leaked(t, origin)
	if _, err := os.Stat(filepath.Join(dir, "catalog", "catalog.json")); err == nil {
		t.Fatal("serve wrote a new catalog")
	}
	if _, out, _ := builtRun(t, dir, "status", "--dir", dir); !strings.Contains(out, "its catalog was deleted, and nothing is published until it is restored") {
		t.Errorf("status of the directory:\n%s", out)
	}
	// Started again, serve indexes everything the catalog does not record:
	// it must refuse rather than serve the hidden skill as public.
	cmd, stdout, stderr, exited := launchBuiltServe(t, dir)
	var err error
	eventually(t, "serve started again exits or serves", func() bool {
		select {
		case err = <-exited:
			return true
		default:
		}
		if m := servingLine.FindStringSubmatch(stdout.String()); m != nil {
			leaked(t, m[1])
			_ = cmd.Process.Kill()
			t.Fatalf("serve started again serves the directory from an empty catalog:\n%s", stdout)
		}
		return false
	})
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitFailure || !strings.Contains(stderr.String(), refusal) ||
		!strings.Contains(stderr.String(), "to start over from an empty catalog on purpose, delete .skilldrop/existed/catalog/catalog.json") {
		t.Fatalf("serve started again: %v, %s", err, stderr)
	}
}

// leaked fails the test when an anonymous caller finds the skill "secret"
// in the RFC index or at its document.
func leaked(t *testing.T, origin string) {
	t.Helper()
	for _, path := range []string{"/.well-known/agent-skills/index.json", "/.well-known/agent-skills/secret/SKILL.md"} {
		resp, err := http.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(string(b), "secret") {
			t.Fatalf("an anonymous caller got the hidden skill at %s: %s", path, b)
		}
	}
}

// TestServeBannerCountsTheConfigsWarnings, through the built command: the
// banner serve prints once it has indexed says how many warnings the
// config has (entries naming nothing published: a misspelt hidden skill
// stays public) and points at status; a config without any gets no line.
func TestServeBannerCountsTheConfigsWarnings(t *testing.T) {
	for name, tt := range map[string]struct {
		config string
		want   string
	}{
		"two misspelt": {"version: 1\nskills:\n  - name: k8s-rolback\n    visibility: authenticated\n  - name: nots\n    visibility: authenticated\n",
			"warning: agent-skills.yaml has 2 warnings (entries that name nothing published"},
		"one misspelt": {"version: 1\nskills:\n  - name: k8s-rolback\n    visibility: authenticated\n",
			"warning: agent-skills.yaml has 1 warning (entries that name nothing published"},
		"all matched": {"version: 1\nskills:\n  - name: k8s-rollback\n    visibility: authenticated\n", ""},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			skilltest.WriteFiles(t, dir, map[string]string{"skills/k8s-rollback.md": skillDoc("k8s-rollback"), "skills/notes.md": skillDoc("notes"), "agent-skills.yaml": tt.config})
			cmd, stdout, _, exited := launchBuiltServe(t, dir)
			defer func() {
				_ = cmd.Process.Signal(os.Interrupt)
				if err := <-exited; err != nil {
					t.Errorf("skilldrop serve did not stop cleanly: %v", err)
				}
			}()
			eventually(t, "serve prints its banner", func() bool { return strings.Contains(stdout.String(), "Ctrl-C stops") })
			out := stdout.String()
			switch {
			case tt.want == "" && strings.Contains(out, "warning:"):
				t.Fatalf("a banner warning for a config without warnings:\n%s", out)
			case tt.want != "" && (!strings.Contains(out, tt.want) || !strings.Contains(out, "skilldrop status --dir "+dir+" lists them")):
				t.Fatalf("the banner lacks %q and the pointer to status:\n%s", tt.want, out)
			}
		})
	}
}
