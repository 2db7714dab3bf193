package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
)

// firstRevision matches the log line of an indexing that left revision 1.
var firstRevision = regexp.MustCompile(`"msg":"indexed".*"revision":1[,}]`)

// TestServeIndexesOnceAtStart: serve indexes the directory once before it
// listens; the watcher then starts from that index instead of indexing
// again, so "indexed … revision 1" is logged once (it was twice). A file
// copied in afterwards is the sign that the watcher's first pass is done.
func TestServeIndexesOnceAtStart(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{"skills/alpha.md": skillDoc("alpha")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--dir", dir, "--addr", "127.0.0.1:0"}, stdout, stderr) }()
	var origin string
	eventually(t, "serve prints its address", func() bool {
		m := servingLine.FindStringSubmatch(stdout.String())
		if m != nil {
			origin = m[1]
		}
		return m != nil
	})
	// Renamed into place, so the watcher's first pass, which may run
	// meanwhile, never reads it half-written (and logs a rejection).
	skilltest.WriteFiles(t, dir, map[string]string{".beta.md": skillDoc("beta")})
	if err := os.Rename(filepath.Join(dir, ".beta.md"), filepath.Join(dir, "skills", "beta.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a file copied in is served", func() bool {
		resp, err := http.Get(origin + "/api/v1/skills/beta")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if n := len(firstRevision.FindAllString(stderr.String(), -1)); n != 1 {
		t.Errorf("%d log lines of indexing revision 1, want 1:\n%s", n, stderr)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
