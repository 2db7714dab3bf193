package main

import (
	"encoding/json"
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
	cmd := exec.Command(builtCLI(t), append([]string{"serve", "--dir", dir, "--addr", "127.0.0.1:0"}, args...)...)
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
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
	return origin
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
