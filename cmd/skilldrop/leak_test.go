package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/leakmatrix"
	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// servedMatrix is `skilldrop serve` of a copy of the leak matrix's bucket
// with its key store in a file (read again every second), its bare
// hashes in --api-key-sha256 and a signing key (so the AI Catalog and the
// bundles are served), the same for every serve of the bucket.
type servedMatrix struct {
	origin, keys, dir, signingKey string
	stderr                        *syncbuf.Buffer
}

// serveMatrix serves the bucket, or a copy of what another serve of it
// indexed (the same catalog, for a fresh process to render).
func serveMatrix(t *testing.T, revoked bool, from *servedMatrix) *servedMatrix {
	t.Helper()
	dir := t.TempDir()
	if from != nil {
		if err := os.CopyFS(dir, os.DirFS(from.dir)); err != nil {
			t.Fatal(err)
		}
	} else {
		files := map[string]string{}
		for k, b := range leakmatrix.Files() {
			files[k] = string(b)
		}
		skilltest.WriteFiles(t, dir, files)
	}
	m := &servedMatrix{keys: filepath.Join(t.TempDir(), "keys.json"), dir: dir, stderr: &syncbuf.Buffer{}}
	if from != nil {
		m.signingKey = from.signingKey
	} else {
		key, err := signing.Generate()
		if err != nil {
			t.Fatal(err)
		}
		m.signingKey = filepath.Join(t.TempDir(), "signing-key.pem")
		if err := os.WriteFile(m.signingKey, key.PrivateKeyPEM(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m.writeKeys(t, revoked)
	ctx, cancel := context.WithCancel(context.Background())
	stdout := &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--keys", m.keys, "--keys-refresh", "1s", "--base-url", "https://skills.example.com",
			"--api-key-sha256", leakmatrix.LegacyHashes(), "--signing-key", m.signingKey}, stdout, m.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve exited %d:\n%s", code, m.stderr)
		}
	})
	eventually(t, "serve prints its address", func() bool {
		if mm := servingLine.FindStringSubmatch(stdout.String()); mm != nil {
			m.origin = mm[1]
			return true
		}
		return false
	})
	return m
}

func (m *servedMatrix) writeKeys(t *testing.T, revoked bool) {
	t.Helper()
	tmp := m.keys + ".tmp"
	if err := os.WriteFile(tmp, []byte(leakmatrix.Store(revoked)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, m.keys); err != nil {
		t.Fatal(err)
	}
}

// client sends exactly the matrix's headers: no gzip of its own, no redirects.
var matrixClient = &http.Client{
	Transport:     &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (m *servedMatrix) do(t *testing.T) leakmatrix.Do {
	return func(r leakmatrix.Request) leakmatrix.Response {
		req, err := http.NewRequest(r.Method, m.origin+r.Target, strings.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range r.Header {
			req.Header.Set(k, v)
		}
		resp, err := matrixClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return leakmatrix.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}
}

// TestLeakMatrixThroughServe runs the leak matrix against one serve of
// the bucket, asked by every caller in turn, after revoking a key through
// the key file: each answer must be what a fresh serve gives the caller's
// twin (a key of the same audiences), and what the caller may see.
func TestLeakMatrixThroughServe(t *testing.T) {
	shared := serveMatrix(t, true, nil)
	do := shared.do(t)
	revoked := leakmatrix.Request{Method: http.MethodGet, Target: "/skills/alpha-deploy.md",
		Header: map[string]string{"Authorization": "Bearer " + leakmatrix.Revoked}}
	if r := do(revoked); r.Status != http.StatusOK {
		t.Fatalf("before revocation the key reads its skill: status %d", r.Status)
	}
	shared.writeKeys(t, false)
	eventually(t, "the revoked key is refused within the key file's refresh", func() bool { return do(revoked).Status == http.StatusUnauthorized })

	// The bucket is signed: the AI Catalog and the bundles the matrix asks
	// for are served, a hidden one's as 404.
	keyA := ""
	for _, c := range leakmatrix.Callers() {
		if c.Name == "key-a" && !c.InPath {
			keyA = c.Key
		}
	}
	for _, r := range []struct {
		target, key string
		want        int
	}{
		{routes.AICatalog, "", http.StatusOK},
		{routes.Bundle("/skills/open-notes.md"), "", http.StatusOK},
		{routes.Bundle("/skills/alpha-deploy.md"), "", http.StatusNotFound},
		{routes.Bundle("/skills/alpha-deploy.md"), keyA, http.StatusOK},
	} {
		req := leakmatrix.Request{Method: http.MethodGet, Target: r.target, Header: map[string]string{}}
		if r.key != "" {
			req.Header["Authorization"] = "Bearer " + r.key
		}
		if got := do(req).Status; got != r.want {
			t.Errorf("GET %s: %d, want %d", r.target, got, r.want)
		}
	}

	keys, err := serveKeys(leakmatrix.LegacyHashes(), shared.keys, "")
	if err != nil {
		t.Fatal(err)
	}
	leakmatrix.Run(t, func(leakmatrix.Caller) leakmatrix.Do { return do },
		func(leakmatrix.Caller) leakmatrix.Do { return serveMatrix(t, false, shared).do(t) },
		func(c leakmatrix.Caller) leakmatrix.Do {
			st, err := store.NewDir(shared.dir)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = st.Close() }()
			return leakmatrix.Filtered(t, st, c, keys, "https://skills.example.com", buildinfo.Version())
		})

	log := shared.stderr.String()
	for _, c := range leakmatrix.Callers() {
		if c.Key != "" && strings.Contains(log, c.Key) {
			t.Errorf("serve's log holds the key of %s", c.Name)
		}
	}
	for _, want := range []string{`"key_id":"key-ac","audiences":["partner-a","partner-c"]`, `"path":"/k/[key-a]/.well-known/agent-skills/index.json"`,
		`"event":"agent_skill.credential_refused","key_id":"key-expired","audiences":["partner-a"],"reason":"expired_key"`} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log has no %s", want)
		}
	}
}
