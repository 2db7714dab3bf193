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

// indexedLine matches the log line of an indexing, with the revision it left.
var indexedLine = regexp.MustCompile(`"msg":"indexed".*"revision":(\d+)[,}]`)

// TestServeIndexesOnceAtStart: serve indexes the directory once before it
// listens; the watcher then starts from that index instead of indexing
// again, so "indexed … revision N" is logged once at start (it was twice),
// also where the folder holds an edit the index rejects (the edit make run
// invites: a skill's bytes changed under its old version label). A file
// copied in afterwards is the sign that the watcher's first pass is done.
func TestServeIndexesOnceAtStart(t *testing.T) {
	for _, tt := range []struct {
		name string
		prep func(t *testing.T, dir string)
	}{
		{"a new folder", func(t *testing.T, dir string) {
			skilltest.WriteFiles(t, dir, map[string]string{"skills/alpha.md": skillDoc("alpha")})
		}},
		{"a folder served before, holding a rejected edit", func(t *testing.T, dir string) {
			skilltest.WriteFiles(t, dir, map[string]string{"skills/alpha.md": skilltest.SkillMD("alpha", "1", "Alpha.")})
			if code, _, errOut := runCLI("reindex", "--dir", dir); code != exitOK {
				t.Fatalf("reindex: exit %d: %s", code, errOut)
			}
			skilltest.WriteFiles(t, dir, map[string]string{"skills/alpha.md": skilltest.SkillMD("alpha", "1", "Alpha, edited.")})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.prep(t, dir)
			serveOnceAtStart(t, dir)
		})
	}
}

func serveOnceAtStart(t *testing.T, dir string) {
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
	lines := indexedLine.FindAllStringSubmatch(stderr.String(), -1)
	if len(lines) == 0 {
		t.Fatalf("no indexing logged:\n%s", stderr)
	}
	start := 0
	for _, l := range lines {
		if l[1] == lines[0][1] {
			start++
		}
	}
	if start != 1 {
		t.Errorf("%d log lines of indexing revision %s, want 1:\n%s", start, lines[0][1], stderr)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
