//go:build integration

package indexer

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestADeletedCatalogIsNotAFreshStart: `aws s3 sync --delete` of a folder
// without the config to the bucket's root deletes agent-skills.yaml and
// the catalog, which records the config in force. The bucket is versioned,
// so the catalog left a delete marker: no round starts over from an empty
// catalog (which would publish what the config hid); once its last version
// is restored, the deleted config is config_missing and the hidden skill
// stays hidden. With every version deleted on purpose, it starts over.
func TestADeletedCatalogIsNotAFreshStart(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.VersionedBucket(t, cfg)
	e := newEnvOn(t, store.NewS3(cfg, bucket), func(c *Config) { c.Bucket = bucket })
	k := secretKinds[0]
	e.config(k.hide)
	e.drop(k.key, k.body("1"))
	if k.anonymousSees(e) || !k.keySees(e) {
		t.Fatal("the config did not hide the skill")
	}
	client := awstest.S3(cfg)
	ctx := context.Background()
	last, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String(catalog.Key)})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{skillsconfig.Key, catalog.Key} {
		if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.ix.Reconcile(ctx, skillsconfig.Key, k.key); !errors.Is(err, ErrCatalogDeleted) {
		t.Fatalf("a round after the catalog was deleted: %v, want ErrCatalogDeleted", err)
	}
	if _, err := e.st.Head(ctx, catalog.Key); !errors.Is(err, store.ErrDeleted) {
		t.Fatalf("the round wrote a catalog from empty (head: %v)", err)
	}

	// The operator restores the catalog's last version.
	src := bucket + "/" + catalog.Key + "?versionId=" + aws.ToString(last.VersionId)
	if _, err := client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket, Key: aws.String(catalog.Key), CopySource: &src}); err != nil {
		t.Fatal(err)
	}
	res := e.reconcile(skillsconfig.Key, k.key)
	if !slices.Equal(rejectionCodes(res), []string{CodeConfigMissing}) || k.anonymousSees(e) || !k.keySees(e) {
		t.Fatalf("after the restore: anonymous %v, key holder %v; %s", k.anonymousSees(e), k.keySees(e), dump(res))
	}

	// Every version deleted on purpose: a fresh start, with no config.
	versions, err := client.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: aws.String(catalog.Key)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []*string
	for _, v := range versions.Versions {
		ids = append(ids, v.VersionId)
	}
	for _, m := range versions.DeleteMarkers {
		ids = append(ids, m.VersionId)
	}
	for _, id := range ids {
		if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: aws.String(catalog.Key), VersionId: id}); err != nil {
			t.Fatal(err)
		}
	}
	e.reconcile(k.key)
	if !k.anonymousSees(e) {
		t.Fatal("with every version of the catalog deleted, the bucket did not start over")
	}
}
