//go:build e2e

package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/samtemplate"
	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/indexer"
)

// capBytes is the artifact cap the template deploys (MaxArtifactBytes).
const capBytes = archive.DefaultMaxArtifactBytes

// Keys the tests add to the example bucket.
const (
	atTheCapKey   = "skills/at-the-cap.zip"   // exactly capBytes: accepted, served within 6 MiB
	overTheCapKey = "skills/over-the-cap.zip" // capBytes+1: rejected
	misnamedKey   = "skills/misnamed.md"      // its frontmatter names another skill: rejected
	shortLivedKey = "skills/short-lived.md"   // deleted after indexing: withdrawn
)

// bucketFiles is what an operator drops: the example bucket and the
// test's own keys.
func bucketFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := exampleFiles(t)
	files[atTheCapKey] = zipOfSize(t, "at-the-cap", capBytes)
	files[overTheCapKey] = zipOfSize(t, "over-the-cap", capBytes+1)
	files[misnamedKey] = []byte(skilltest.SkillMD("someone-else", "", "Claims a name its key does not imply."))
	files[shortLivedKey] = []byte(skilltest.SkillMD("short-lived", "", "Published, then deleted."))
	return files
}

// exampleFiles is the example bucket `make run` serves: skill-md in both
// forms, a zip, a tar.gz, sub-agents, a listing, and an agent-skills.yaml
// with an authenticated skill and sub-agent.
func exampleFiles(t testing.TB) map[string][]byte {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "examples", "bucket")
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatalf("read the example bucket: %v", err)
	}
	return files
}

// zipOfSize returns a valid skill archive of exactly size bytes: SKILL.md
// and a stored entry of incompressible (seeded pseudo-random, so
// reproducible) padding, sized so that the archive lands on size. A stored
// entry's archive bytes grow one for one with its content, so one probe
// build gives the padding length.
func zipOfSize(t testing.TB, name string, size int) []byte {
	t.Helper()
	build := func(pad int) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		modified := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, e := range []struct {
			name   string
			method uint16
			body   []byte
		}{
			{"SKILL.md", zip.Deflate, []byte(skilltest.SkillMD(name, "", "An archive exactly at the artifact cap."))},
			{"padding.bin", zip.Store, pseudoRandom(pad)},
		} {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method, Modified: modified})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(e.body); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	b := build(size - len(build(0)))
	if len(b) != size {
		t.Fatalf("the %s archive is %d bytes, want %d", name, len(b), size)
	}
	return b
}

func pseudoRandom(n int) []byte {
	b := make([]byte, n)
	_, _ = mrand.NewChaCha8([32]byte{'s', 'k', 'i', 'l', 'l', 'd', 'r', 'o', 'p'}).Read(b) // never fails
	return b
}

// sortedKeys returns the keys of files in order (the upload order).
func sortedKeys(files map[string][]byte) []string {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// upload puts every file into bucket.
func upload(t testing.TB, client *s3.Client, bucket string, files map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	for _, k := range sortedKeys(files) {
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: bytes.NewReader(files[k])}); err != nil {
			t.Fatalf("put s3://%s/%s: %v", bucket, k, err)
		}
	}
}

// remove deletes key from bucket.
func remove(t testing.TB, client *s3.Client, bucket, key string) {
	t.Helper()
	if _, err := client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Fatalf("delete s3://%s/%s: %v", bucket, key, err)
	}
}

// watchedPrefixes are template.yaml's notification filters for the indexer,
// read from the template itself (internal/samtemplate pins them): the
// indexer's own writes (blobs/, catalog/) never notify it.
func watchedPrefixes(t testing.TB) []string {
	t.Helper()
	tpl, err := samtemplate.Load()
	if err != nil {
		t.Fatal(err)
	}
	prefixes := tpl.NotificationPrefixes(indexerID)
	if len(prefixes) == 0 {
		t.Fatalf("template.yaml gives %s no S3 notification prefixes", indexerID)
	}
	return prefixes
}

// newEventQueue routes bucket's notifications for template.yaml's prefixes
// to a new queue, where each message must decode as the indexer decodes it.
func newEventQueue(t testing.TB, cfg aws.Config, bucket string) *awstest.EventQueue {
	t.Helper()
	return awstest.RouteEvents(t, cfg, bucket, watchedPrefixes(t), eventRecords)
}

// eventRecords counts the records of an event message as the indexer reads it.
func eventRecords(body []byte) (int, error) {
	p, err := indexer.DecodePayload(body)
	return len(p.Hints), err
}

// apiKeys is an API key and the SSM SecureString holding its hash, as the
// operator creates it before deploying (deleted when the test ends).
type apiKeys struct {
	key       string
	parameter string
}

func newAPIKeys(t testing.TB, cfg aws.Config) apiKeys {
	t.Helper()
	var b [16]byte
	_, _ = rand.Read(b[:])
	k := apiKeys{key: "sk-e2e-" + hex.EncodeToString(b[:]), parameter: "/" + awstest.Name(t, "skilldrop-e2e") + "/api-keys"}
	awstest.SecureString(t, cfg, k.parameter, apikey.Hash(k.key))
	return k
}

// metricNamespace is a CloudWatch namespace of the test's own.
func metricNamespace(t testing.TB) string {
	return "SkilldropE2E/" + awstest.Name(t, "ns")
}
