//go:build integration

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestReindexVerifyOnABucket: `reindex --verify` against a bucket of the
// emulator repairs a tampered blob through S3's conditional write, names
// the one it cannot repair, and status reads the record from the bucket.
func TestReindexVerifyOnABucket(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	st := store.NewS3(cfg, bucket)
	ctx := context.Background()
	deploy := skilltest.SkillMD("deploy", "1.0", "Does deploys.")
	pdf := skilltest.Zip(t, map[string]string{"SKILL.md": skilltest.SkillMD("pdf", "1", "PDFs."), "scripts/fill.py": "print(1)\n"})
	for key, body := range map[string][]byte{"skills/deploy.md": []byte(deploy), "skills/pdf.zip": pdf} {
		if _, err := st.Put(ctx, key, body, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := runCLI("reindex", "--bucket", bucket); code != exitOK {
		t.Fatalf("reindex: %d %s", code, errOut)
	}
	put := func(key, body string) {
		if _, err := st.Put(ctx, key, []byte(body), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(catalog.BlobKey(digest.Of([]byte(deploy))), strings.ToUpper(deploy))
	put(catalog.BlobKey(digest.Of([]byte("print(1)\n"))), "print(2)\n")
	code, out, errOut := runCLI("reindex", "--bucket", bucket, "--verify")
	if code != exitOK || !strings.Contains(out, "verified s3://"+bucket+": 4 blobs, 2 verified, 2 repaired, 0 unrecoverable, 0 failed;") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	b, _, err := store.ReadAll(ctx, st, catalog.BlobKey(digest.Of([]byte(deploy))), 0)
	if err != nil || string(b) != deploy {
		t.Fatalf("blob after the repair: %q, %v", b, err)
	}

	if err := st.Delete(ctx, "skills/deploy.md"); err != nil {
		t.Fatal(err)
	}
	put(catalog.BlobKey(digest.Of([]byte(deploy))), "tampered")
	if code, out, _ := runCLI("reindex", "--bucket", bucket, "--verify"); code != exitFailure || !strings.Contains(out, "unrecoverable skill deploy 1.0 - ") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI("status", "--bucket", bucket); code != exitOK || !strings.Contains(out, "4 blobs, 3 verified, 0 repaired, 1 unrecoverable, 0 failed;") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
}
