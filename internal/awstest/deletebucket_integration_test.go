//go:build integration

package awstest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// oddKeys are keys S3 accepts that an XML body cannot carry as they are
// (ESC; https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html
// says keys with such characters need replacing in XML requests, and XML
// 1.0 has no way to write most control characters at all), or that URL
// encodings disagree about.
var oddKeys = []string{"skills/\x1bbad\t\x7f.md", "skills/cr\rlf.md", "skills/a b+c%zz.md", "skills/é ü+.md", "top"}

func bucketGone(t *testing.T, client *s3.Client, name string) {
	t.Helper()
	_, err := client.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: &name})
	var nf *s3types.NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("HeadBucket %s after DeleteBucket = %v, want NotFound", name, err)
	}
}

// TestDeleteBucketDeletesOddKeys: every version and delete marker of keys
// an XML request cannot carry goes, in buckets with versioning and
// without, and then the bucket; the test is told of no error.
func TestDeleteBucketDeletesOddKeys(t *testing.T) {
	cfg := Config(t)
	client := S3(cfg)
	ctx := context.Background()
	for _, versioned := range []bool{false, true} {
		name := Name(t, "skilldrop-test")
		if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
			t.Fatal(err)
		}
		if versioned {
			if _, err := client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &name,
				VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range oddKeys {
			for range 2 {
				if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &name, Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
					t.Fatal(err)
				}
			}
			// A delete marker, in the versioned bucket.
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &name, Key: aws.String(k)}); err != nil {
				t.Fatal(err)
			}
			if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &name, Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
				t.Fatal(err)
			}
		}
		rec := &errorsOf{TB: t}
		DeleteBucket(rec, client, name)
		if len(rec.errs) > 0 {
			t.Fatalf("versioned %v: DeleteBucket reported %q", versioned, rec.errs)
		}
		bucketGone(t, client, name)
	}
}

// TestDeleteBucketFailsOnAKeptKey: a version under a legal hold cannot be
// deleted (DeleteObjects names it in an Error, DeleteObject answers 403:
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html);
// DeleteBucket tells the test so, naming the key, and keeps the bucket,
// at once rather than retrying until its deadline.
func TestDeleteBucketFailsOnAKeptKey(t *testing.T) {
	cfg := Config(t)
	client := S3(cfg)
	ctx := context.Background()
	name := Name(t, "skilldrop-test")
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	const held = "skills/held.md"
	for _, k := range []string{"skills/free.md", held} {
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &name, Key: aws.String(k), Body: strings.NewReader(k),
			ObjectLockLegalHoldStatus: s3types.ObjectLockLegalHoldStatusOn, ChecksumAlgorithm: s3types.ChecksumAlgorithmCrc32}); err != nil {
			t.Fatal(err)
		}
	}
	release := func(k string) {
		if _, err := client.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: &name, Key: aws.String(k),
			LegalHold: &s3types.ObjectLockLegalHold{Status: s3types.ObjectLockLegalHoldStatusOff}}); err != nil {
			t.Fatal(err)
		}
	}
	release("skills/free.md")
	rec := &errorsOf{TB: t}
	DeleteBucket(rec, client, name)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], `cannot delete key "skills/held.md"`) {
		t.Fatalf("DeleteBucket reported %q; want the held key named", rec.errs)
	}
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("the bucket is gone (%v) although a key could not be deleted", err)
	}
	release(held)
	DeleteBucket(t, client, name)
	bucketGone(t, client, name)
}
