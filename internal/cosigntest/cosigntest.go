// Package cosigntest runs the pinned cosign (make cosign builds it from the
// Go module proxy; SKILLDROP_COSIGN names it) the way a user verifies a
// skilldrop bundle: offline, with the operator's public key alone.
package cosigntest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/provenance"
)

// Env names the cosign binary the tests run.
const Env = "SKILLDROP_COSIGN"

// Cosign is the binary.
type Cosign struct{ path string }

// Need returns the cosign make built, or skips the test when Env is unset
// (outside make); with it set, a missing binary fails.
func Need(t testing.TB) *Cosign {
	t.Helper()
	p := os.Getenv(Env)
	if p == "" {
		t.Skip(Env + " is not set: run the tier through make (make e2e, make test-clients), which builds the pinned cosign")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v (make cosign builds it)", Env, p, err)
	}
	return &Cosign{path: p}
}

// VerifyBlobAttestation runs cosign verify-blob-attestation on an artifact
// and its bundle, given as bytes, with the public key (PEM) alone: no
// transparency log, no certificate, the predicate type skilldrop signs.
// It returns cosign's output and whether it verified.
func (c *Cosign) VerifyBlobAttestation(t testing.TB, keyPEM, bundle, artifact []byte) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{"key.pem": keyPEM, "artifact": artifact, "artifact.sigstore.json": bundle}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard, not a figure
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path, "verify-blob-attestation",
		"--key", filepath.Join(dir, "key.pem"),
		"--type", provenance.PredicateType,
		"--bundle", filepath.Join(dir, "artifact.sigstore.json"),
		"--insecure-ignore-tlog=true",
		filepath.Join(dir, "artifact"))
	// Offline: no TUF root to fetch, no home to write one into.
	cmd.Env = []string{"HOME=" + dir, "TUF_ROOT=" + filepath.Join(dir, "tuf"), "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("cosign did not finish: %s", out)
	}
	return string(out), err == nil
}
