//go:build integration

package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// bucketAndIndexer is a bucket of the emulator, its store, and an indexer
// of it for the test to run where the Lambda would.
func bucketAndIndexer(t *testing.T) (string, store.Store, *indexer.Indexer) {
	t.Helper()
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	st := store.NewS3(cfg, bucket)
	ix, err := indexer.New(indexer.Config{Store: st, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return bucket, st, ix
}

// TestPublishReportsWhatTheBucketsIndexerDid runs the built command's
// publish against a bucket of the emulator while the test plays the
// indexer Lambda (moto runs none): once the upload lands it reconciles the
// key, as the upload's event would. publish says what the catalog then
// holds: published, held under an invalid agent-skills.yaml (exit 3),
// rejected by the indexer for a reason it could not foresee (a name taken
// meanwhile), and uploaded when no indexer came within --wait (exit 4).
func TestPublishReportsWhatTheBucketsIndexerDid(t *testing.T) {
	bucket, st, ix := bucketAndIndexer(t)
	ctx := context.Background()
	src := t.TempDir()
	skilltest.WriteFiles(t, src, map[string]string{
		"one.md": skillDoc("one"), "two.md": skillDoc("two"), "three.md": skillDoc("three"), "four.md": skillDoc("four"), "five.md": skillDoc("five"),
	})
	put := func(key, body string) {
		t.Helper()
		if _, err := st.Put(ctx, key, []byte(body), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// lambda reconciles key once it is in the bucket (first running
	// before, which may publish what was uploaded earlier).
	lambda := func(key string, before func()) chan error {
		done := make(chan error, 1)
		go func() {
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if _, err := st.Head(ctx, key); errors.Is(err, store.ErrNotFound) {
					continue
				} else if err != nil {
					done <- err
					return
				}
				if before != nil {
					before()
				}
				_, err := ix.Reconcile(ctx, key)
				done <- err
				return
			}
			done <- errors.New(key + " never landed")
		}()
		return done
	}
	publish := func(name string, wait string) (int, string, string) {
		return builtRun(t, src, "publish", "--bucket", bucket, "--wait", wait, name+".md")
	}

	done := lambda("skills/one.md", nil)
	if code, out, errOut := publish("one", "30s"); code != exitOK || !strings.HasPrefix(out, "published skills/one.md one ") {
		t.Fatalf("publish with the indexer at work: exit %d, %q %q", code, out, errOut)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	put("agent-skills.yaml", "version: 1\nskills:\n  - name: two\n    visibilty: authenticated\n")
	done = lambda("skills/two.md", nil)
	code, out, errOut := publish("two", "30s")
	if code != exitHeld || !strings.HasPrefix(out, "held skills/two.md two ") || !strings.Contains(errOut, "agent-skills.yaml is invalid") {
		t.Fatalf("publish under an invalid config: exit %d, stdout %q, stderr %q; want held, exit 3", code, out, errOut)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The bytes the catalog serves already, uploaded again while the config
	// is refused: unchanged (not held), and the refusal is said, waited for or not.
	for _, wait := range []string{"30s", "0"} {
		code, out, errOut = publish("one", wait)
		if code != exitOK || !strings.HasPrefix(out, "unchanged skills/one.md one ") || !strings.Contains(errOut, "agent-skills.yaml is invalid") {
			t.Fatalf("publish --wait %s of the same bytes under an invalid config: exit %d, stdout %q, stderr %q; want unchanged and a warning", wait, code, out, errOut)
		}
	}
	put("agent-skills.yaml", "version: 1\n")
	if _, err := ix.Reconcile(ctx, "agent-skills.yaml"); err != nil {
		t.Fatal(err)
	}

	// Meanwhile another upload claims the name and is indexed first.
	done = lambda("skills/three.md", func() {
		put("skills/three/SKILL.md", skillDoc("three"))
		if _, err := ix.Reconcile(ctx, "skills/three/SKILL.md"); err != nil {
			t.Error(err)
		}
	})
	code, out, errOut = publish("three", "30s")
	if code != exitFailure || !strings.HasPrefix(out, "rejected three.md name_conflict: ") {
		t.Fatalf("publish of a name taken meanwhile: exit %d, stdout %q, stderr %q; want the indexer's rejection", code, out, errOut)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// No indexer: nothing to wait for but the deadline.
	code, out, errOut = publish("four", "2s")
	if code != exitPending || !strings.HasPrefix(out, "uploaded skills/four.md four ") || !strings.Contains(errOut, "not indexed within 2s") {
		t.Fatalf("publish with no indexer: exit %d, stdout %q, stderr %q; want uploaded, exit 4", code, out, errOut)
	}
	// An invalid config no indexer has read yet: --wait 0 says it will hold the upload.
	put("agent-skills.yaml", "version: 1\nskills:\n  - name: five\n    visibility: secret\n")
	code, out, errOut = publish("five", "0")
	if code != exitOK || !strings.HasPrefix(out, "uploaded skills/five.md five ") ||
		!strings.Contains(errOut, "warning five.md: the bucket's agent-skills.yaml is invalid (") {
		t.Fatalf("publish --wait 0 under a config not read yet: exit %d, stdout %q, stderr %q; want uploaded and a warning", code, out, errOut)
	}
	// The same config, and --wait that runs out: the same warning (it was
	// said with --wait 0 only), text and JSON.
	skilltest.WriteFiles(t, src, map[string]string{"six.md": skillDoc("six"), "seven.md": skillDoc("seven")})
	code, out, errOut = publish("six", "2s")
	if code != exitPending || !strings.HasPrefix(out, "uploaded skills/six.md six ") ||
		!strings.Contains(errOut, "warning six.md: the bucket's agent-skills.yaml is invalid (") {
		t.Fatalf("publish --wait 2s under a config not read yet: exit %d, stdout %q, stderr %q; want uploaded and a warning", code, out, errOut)
	}
	code, out, _ = builtRun(t, src, "publish", "--bucket", bucket, "--wait", "2s", "--json", "seven.md")
	var p publication
	if err := json.Unmarshal([]byte(out), &p); err != nil || code != exitPending || p.Result != "uploaded" ||
		len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "agent-skills.yaml is invalid") {
		t.Fatalf("publish --json --wait 2s under a config not read yet: exit %d, %v, %s; want uploaded and the warning", code, err, out)
	}
}

// TestWithdrawWaitsForTheBucketsIndexer: the built command's withdraw
// deletes the key and reports withdrawn once the indexer (the test, in
// the Lambda's place, on the deletion) has withdrawn it; with --wait 0 it
// says only that it deleted the key.
func TestWithdrawWaitsForTheBucketsIndexer(t *testing.T) {
	bucket, st, ix := bucketAndIndexer(t)
	ctx := context.Background()
	for _, name := range []string{"gone", "later"} {
		if _, err := st.Put(ctx, "skills/"+name+".md", []byte(skillDoc(name)), store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ix.Reindex(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if _, err := st.Head(ctx, "skills/gone.md"); errors.Is(err, store.ErrNotFound) {
				_, err = ix.Reconcile(ctx, "skills/gone.md")
				done <- err
				return
			}
		}
		done <- errors.New("never deleted")
	}()
	if code, out, errOut := builtRun(t, t.TempDir(), "withdraw", "--bucket", bucket, "--wait", "30s", "gone"); code != exitOK || out != "withdrawn skill gone skills/gone.md\n" {
		t.Fatalf("withdraw: exit %d, %q %q", code, out, errOut)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := builtRun(t, t.TempDir(), "withdraw", "--bucket", bucket, "--wait", "0", "later"); code != exitOK ||
		out != "deleted skill later skills/later.md\n" || !strings.Contains(errOut, "not waited for") {
		t.Fatalf("withdraw --wait 0: exit %d, %q %q", code, out, errOut)
	}
}

// TestWithdrawRemovesAHeldUploadFromABucket: against a bucket of the
// emulator, an upload the indexer holds (agent-skills.yaml invalid) is not
// published, yet withdraw deletes its key and says so, and so is a
// rejected upload's: neither can go live later.
func TestWithdrawRemovesAHeldUploadFromABucket(t *testing.T) {
	bucket, st, ix := bucketAndIndexer(t)
	ctx := context.Background()
	// A name mismatch under a valid config is rejected; then, under an
	// invalid one, a new upload is held.
	for _, round := range []map[string]string{
		{"agent-skills.yaml": "version: 1\n", "skills/broken.md": skillDoc("other")},
		{"agent-skills.yaml": "version: 1\nskills:\n  - name: held-one\n    visibilty: authenticated\n", "skills/held-one.md": skillDoc("held-one")},
	} {
		for k, body := range round {
			if _, err := st.Put(ctx, k, []byte(body), store.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ix.Reindex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"held-one": "removed skill held-one skills/held-one.md held\n", "broken": "removed skill broken skills/broken.md rejected\n"} {
		if code, out, errOut := builtRun(t, t.TempDir(), "withdraw", "--bucket", bucket, name); code != exitOK || out != want {
			t.Fatalf("withdraw %s: exit %d, %q %q; want %q", name, code, out, errOut, want)
		}
		if _, err := st.Head(ctx, "skills/"+name+".md"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("withdraw %s left its key: %v", name, err)
		}
	}
}
