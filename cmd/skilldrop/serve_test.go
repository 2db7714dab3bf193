package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/digest"
)

// eventually polls cond until it holds; the bound only keeps a broken
// build from hanging, it is not the figure under test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var servingLine = regexp.MustCompile(`on (http://127\.0\.0\.1:\d+) `)

func TestServe(t *testing.T) {
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{
		"skills/alpha.md":   skillDoc("alpha"),
		"skills/secret.md":  skillDoc("secret"),
		"agent-skills.yaml": "version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n",
	})
	const key = "sk-local-key"

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--api-key-sha256", apikey.Hash(key)}, stdout, stderr)
	}()
	var origin string
	eventually(t, "serve prints its address", func() bool {
		if m := servingLine.FindStringSubmatch(stdout.String()); m != nil {
			origin = m[1]
			return true
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr)
		default:
		}
		return false
	})
	if !strings.Contains(stdout.String(), origin+"/.well-known/agent-skills/index.json") {
		t.Errorf("the URLs to try are not printed:\n%s", stdout)
	}

	get := func(path, auth string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, origin+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	type entry struct{ Name, URL, Digest string }
	index := func(auth string) map[string]entry {
		t.Helper()
		code, b := get("/.well-known/agent-skills/index.json", auth)
		if code != http.StatusOK {
			t.Fatalf("index: %d %s", code, b)
		}
		var idx struct{ Skills []entry }
		if err := json.Unmarshal(b, &idx); err != nil {
			t.Fatal(err)
		}
		out := map[string]entry{}
		for _, e := range idx.Skills {
			out[e.Name] = e
		}
		return out
	}
	names := func(m map[string]entry) []string {
		var out []string
		for n := range m {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}

	if got := names(index("")); !slices.Equal(got, []string{"alpha"}) {
		t.Errorf("anonymous index %v", got)
	}
	authed := index(key)
	if got := names(authed); !slices.Equal(got, []string{"alpha", "secret"}) {
		t.Errorf("authenticated index %v", got)
	}
	a := authed["alpha"]
	if a.URL != origin+"/skills/alpha.md" {
		t.Errorf("alpha url %s", a.URL)
	}
	code, body := get("/skills/alpha.md", "")
	if d, err := digest.Parse(a.Digest); code != http.StatusOK || err != nil || !d.Verify(body) || string(body) != skillDoc("alpha") {
		t.Errorf("alpha: %d, digest %s", code, a.Digest)
	}
	if code, _ := get("/skills/secret.md", ""); code != http.StatusNotFound {
		t.Errorf("secret served anonymously: %d", code)
	}

	// A new drop and a deletion are picked up while serving.
	skilltest.WriteFiles(t, dir, map[string]string{"skills/beta.md": skillDoc("beta")})
	if err := os.Remove(filepath.Join(dir, "skills", "alpha.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "beta published and alpha withdrawn", func() bool {
		got := names(index(""))
		return slices.Equal(got, []string{"beta"})
	})
	if code, _ := get("/skills/alpha.md", ""); code != http.StatusNotFound {
		t.Errorf("withdrawn alpha: %d", code)
	}

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d: %s", code, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestServeEmptyDirectoryServesAnEmptyIndex(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	dir := t.TempDir()
	go func() { done <- run(ctx, []string{"serve", "--dir", dir, "--addr", "127.0.0.1:0"}, stdout, stderr) }()
	var origin string
	eventually(t, "serve prints its address", func() bool {
		m := servingLine.FindStringSubmatch(stdout.String())
		if m != nil {
			origin = m[1]
		}
		return m != nil
	})
	resp, err := http.Get(origin + "/.well-known/agent-skills/index.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"skills":[]`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestServeUsage(t *testing.T) {
	blank := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(blank, []byte(" \n\t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		has  string
	}{
		{"operand", []string{"serve", "extra"}, exitUsage, "unexpected argument extra\n"},
		{"a key instead of a hash", []string{"serve", "--api-key-sha256", "sk-secret"}, exitUsage, "-api-key-sha256"},
		{"bad base URL", []string{"serve", "--dir", os.TempDir(), "--base-url", "https://x.example/prod"}, exitUsage, "public base URL"},
		{"missing directory", []string{"serve", "--dir", filepath.Join(os.TempDir(), "skilldrop-no-such-dir-xyz")}, exitUsage, "skilldrop-no-such-dir-xyz: no such directory"},
		{"a blank key file", []string{"serve", "--dir", os.TempDir(), "--keys", blank}, exitUsage, `the key store is empty (blank or whitespace only); write {"keys":[]}`},
		{"help", []string{"help", "serve"}, exitOK, "-addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.has) {
				t.Errorf("exit %d, output %q %q; want %d with %q", code, out, errOut, tc.code, tc.has)
			}
			if strings.Contains(out+errOut, "sk-secret") {
				t.Error("a secret is echoed")
			}
		})
	}
}

// TestUsageErrorsNameTheirSource: an --addr that is no HOST:PORT is a usage
// error before anything is read; a bad $SKILLDROP_LOG_LEVEL is named as
// the variable, not as a flag never given.
func TestUsageErrorsNameTheirSource(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI("serve", "--dir", dir, "--addr", "bogus"); code != exitUsage || !strings.Contains(errOut, "--addr bogus: want HOST:PORT") {
		t.Errorf("serve --addr bogus: exit %d, %s", code, errOut)
	}
	t.Setenv("SKILLDROP_LOG_LEVEL", "bogus")
	if code, _, errOut := runCLI("reindex", "--dir", dir); code != exitUsage || !strings.Contains(errOut, "$SKILLDROP_LOG_LEVEL: ") {
		t.Errorf("reindex with a bad $SKILLDROP_LOG_LEVEL: exit %d, %s", code, errOut)
	}
}
