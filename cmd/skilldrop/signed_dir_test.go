package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/signing"
)

// writeSigningKey writes a new PKCS#8 P-256 key, as make run makes one,
// and returns its file.
func writeSigningKey(t *testing.T) string {
	t.Helper()
	k, err := signing.Generate()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "signing-key.pem")
	if err := os.WriteFile(f, k.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPublishWithdrawRefuseASignedDirWithoutTheKey, through the built
// command: on a directory whose catalog is signed (as make run's is),
// publish and withdraw without --signing-key change nothing and say which
// flag to add (they uploaded or deleted, then failed to index, and serve
// published what they said had failed); with the key both do their work.
func TestPublishWithdrawRefuseASignedDirWithoutTheKey(t *testing.T) {
	bucket, work := t.TempDir(), t.TempDir()
	key := writeSigningKey(t)
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/old.md": skillDoc("old")})
	skilltest.WriteFiles(t, work, map[string]string{"new.md": skillDoc("new")})
	if code, _, errOut := builtRun(t, work, "reindex", "--dir", bucket, "--signing-key", key); code != exitOK {
		t.Fatalf("reindex --signing-key: exit %d, %s", code, errOut)
	}
	code, out, errOut := builtRun(t, work, "publish", "--dir", bucket, "new.md")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "add --signing-key FILE") || !strings.Contains(errOut, "nothing was uploaded") {
		t.Fatalf("publish to a signed dir without a key: exit %d, %q %q; want exit 2 and the flag to add", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(bucket, "skills", "new.md")); !os.IsNotExist(err) {
		t.Fatalf("publish refused, yet wrote skills/new.md: %v", err)
	}
	code, out, errOut = builtRun(t, work, "withdraw", "--dir", bucket, "old")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "add --signing-key FILE") || !strings.Contains(errOut, "nothing was deleted") {
		t.Fatalf("withdraw from a signed dir without a key: exit %d, %q %q; want exit 2 and the flag to add", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(bucket, "skills", "old.md")); err != nil {
		t.Fatalf("withdraw refused, yet skills/old.md is gone: %v", err)
	}
	// Another key: refused as well, before anything changes, so that a
	// wrong key file does not rotate the catalog's key as a side effect.
	other := writeSigningKey(t)
	code, out, errOut = builtRun(t, work, "publish", "--dir", bucket, "--signing-key", other, "new.md")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "skilldrop reindex --dir DIR --signing-key FILE") || !strings.Contains(errOut, "nothing was uploaded") {
		t.Fatalf("publish to a signed dir with another key: exit %d, %q %q; want exit 2 and how to rotate", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(bucket, "skills", "new.md")); !os.IsNotExist(err) {
		t.Fatalf("publish with another key refused, yet wrote skills/new.md: %v", err)
	}
	code, out, errOut = builtRun(t, work, "withdraw", "--dir", bucket, "--signing-key", other, "old")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "nothing was deleted") {
		t.Fatalf("withdraw from a signed dir with another key: exit %d, %q %q; want exit 2", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(bucket, "skills", "old.md")); err != nil {
		t.Fatalf("withdraw with another key refused, yet skills/old.md is gone: %v", err)
	}
	if code, out, errOut := builtRun(t, work, "publish", "--dir", bucket, "--signing-key", key, "new.md"); code != exitOK || !strings.HasPrefix(out, "published skills/new.md new ") {
		t.Fatalf("publish --signing-key: exit %d, %q %q", code, out, errOut)
	}
	if code, out, errOut := builtRun(t, work, "withdraw", "--dir", bucket, "--signing-key", key, "old"); code != exitOK || !strings.HasPrefix(out, "withdrawn skill old skills/old.md") {
		t.Fatalf("withdraw --signing-key: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := builtRun(t, work, "withdraw", "--bucket", "b", "--region", "us-east-1", "--signing-key", key, "old"); code != exitUsage || !strings.Contains(errOut, "--signing-key applies to --dir") {
		t.Fatalf("withdraw --bucket --signing-key: exit %d, %q", code, errOut)
	}
}
