package awstest

import (
	"bytes"
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// maxBatch is the most keys one DeleteObjects takes.
const maxBatch = 1000

// objectVersion names one version of a key (or a delete marker).
type objectVersion struct{ key, version string }

// DeleteBucket deletes every object version and delete marker in bucket,
// then the bucket. What it cannot delete fails the test (t.Errorf), naming
// the key: a bucket left behind is a leak nothing else would show.
//
// Keys go in batches (DeleteObjects), except those an XML request cannot
// carry, and those the batch refused or left behind, which are deleted one
// by one (DeleteObject names the key in the URL). A version still listed
// after its own DeleteObject succeeded is an error, not a reason to retry.
func DeleteBucket(t testing.TB, client *s3.Client, bucket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a generated bucket holds tens of thousands of objects
	defer cancel()
	alone := map[objectVersion]bool{} // tried: true one by one, false in a batch
	for {
		ids, err := listVersions(ctx, client, bucket)
		if err != nil {
			t.Errorf("cleanup: list %s: %v", bucket, err)
			return
		}
		if len(ids) == 0 {
			break
		}
		var batch, single []s3types.ObjectIdentifier
		for _, id := range ids {
			v := versionOf(id)
			byItself, tried := alone[v]
			switch {
			case byItself:
				t.Errorf("cleanup: %s: key %q version %s is still there after DeleteObject succeeded", bucket, v.key, v.version)
				return
			case tried || !carriedByXML(v.key):
				single = append(single, id)
			default:
				batch = append(batch, id)
			}
		}
		for len(batch) > 0 {
			n := min(len(batch), maxBatch)
			for _, id := range batch[:n] {
				alone[versionOf(id)] = false
			}
			single = append(single, deleteBatch(ctx, t, client, bucket, batch[:n])...)
			batch = batch[n:]
		}
		for _, id := range single {
			v := versionOf(id)
			alone[v] = true
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: id.Key, VersionId: id.VersionId}); err != nil {
				t.Errorf("cleanup: %s: cannot delete key %q version %s: %v", bucket, v.key, v.version, err)
				return
			}
		}
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Errorf("cleanup: delete bucket %s: %v", bucket, err)
	}
}

// deleteBatch deletes ids with one quiet DeleteObjects and returns those it
// did not delete: each key S3 answered an Error for (a quiet answer lists
// nothing else), or all of them when the request itself failed.
func deleteBatch(ctx context.Context, t testing.TB, client *s3.Client, bucket string, ids []s3types.ObjectIdentifier) []s3types.ObjectIdentifier {
	t.Helper()
	out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &bucket, Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	if err != nil {
		t.Logf("cleanup: %s: DeleteObjects of %d keys failed (%v); deleting them one by one", bucket, len(ids), err)
		return ids
	}
	var failed []s3types.ObjectIdentifier
	for _, e := range out.Errors {
		key, version := aws.ToString(e.Key), aws.ToString(e.VersionId)
		t.Logf("cleanup: %s: DeleteObjects refused key %q version %q (%s: %s); deleting it alone",
			bucket, key, version, aws.ToString(e.Code), aws.ToString(e.Message))
		// An Error naming no version (moto's) stands for each one sent.
		for _, id := range ids {
			if v := versionOf(id); v.key == key && (version == "" || v.version == version) {
				failed = append(failed, id)
			}
		}
	}
	return failed
}

func versionOf(id s3types.ObjectIdentifier) objectVersion {
	return objectVersion{aws.ToString(id.Key), aws.ToString(id.VersionId)}
}

// carriedByXML reports whether key reaches S3 as it is in an XML request
// body. XML 1.0 has no way to write most control characters: the SDK's
// encoder sends U+FFFD for them, so a DeleteObjects would name another key.
func carriedByXML(key string) bool {
	for _, r := range key {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return utf8.ValidString(key)
}

// listVersions returns the first page of bucket's object versions and
// delete markers, keys as stored. Each listing starts from the beginning,
// everything listed before being deleted by then: moto answers a
// URL-encoded NextKeyMarker that, given back, no longer matches its keys.
func listVersions(ctx context.Context, client *s3.Client, bucket string) ([]s3types.ObjectIdentifier, error) {
	page, err := client.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket, EncodingType: s3types.EncodingTypeUrl}, withEncodedKeys)
	if err != nil {
		return nil, err
	}
	var ids []s3types.ObjectIdentifier
	add := func(key, version *string) error {
		k, err := url.QueryUnescape(aws.ToString(key))
		if err != nil {
			return err
		}
		ids = append(ids, s3types.ObjectIdentifier{Key: &k, VersionId: version})
		return nil
	}
	for _, v := range page.Versions {
		if err := add(v.Key, v.VersionId); err != nil {
			return nil, err
		}
	}
	for _, m := range page.DeleteMarkers {
		if err := add(m.Key, m.VersionId); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// withEncodedKeys makes a ListObjectVersions answer that ignored
// encoding-type=url (moto's does) read as S3's: each Key URL-encoded, and
// EncodingType url. Otherwise one key holding a character XML 1.0 cannot
// carry makes the whole listing unparseable, and the bucket undeletable.
func withEncodedKeys(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		// After the deserializer: it reads the body this returns.
		return st.Deserialize.Insert(middleware.DeserializeMiddlewareFunc("EncodeListedKeys", encodeListedKeys), "OperationDeserializer", middleware.After)
	})
}

var listedKey = regexp.MustCompile(`<Key>([^<]*)</Key>`)

func encodeListedKeys(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if err != nil || !ok || resp.StatusCode != http.StatusOK {
		return out, md, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return out, md, err
	}
	if !bytes.Contains(body, []byte("<EncodingType>")) {
		body = listedKey.ReplaceAllFunc(body, func(m []byte) []byte {
			key := html.UnescapeString(string(listedKey.FindSubmatch(m)[1]))
			return []byte("<Key>" + url.QueryEscape(key) + "</Key>")
		})
		body = bytes.Replace(body, []byte("</ListVersionsResult>"), []byte("<EncodingType>url</EncodingType></ListVersionsResult>"), 1)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return out, md, nil
}
