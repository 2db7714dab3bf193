package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// S3 is a Store over one S3 bucket. Conditional writes are S3's own
// (If-Match / If-None-Match on PutObject), so they are atomic against every
// other writer of the bucket. It is safe for concurrent use.
//
// A missing bucket is an error, never ErrNotFound, for Get, Put and List
// (S3 says NoSuchBucket); a HEAD response has no body to say so, so Head of
// a key in a missing bucket does read as ErrNotFound.
type S3 struct {
	client *s3.Client
	bucket string
}

var (
	_ Store     = (*S3)(nil)
	_ Presigner = (*S3)(nil)
)

// NewS3 returns the store for bucket, with a client built from cfg. When an
// endpoint override is configured (cfg.BaseEndpoint, which the SDK fills from
// AWS_ENDPOINT_URL, or AWS_ENDPOINT_URL_S3) the client uses path-style
// addressing, which emulators need. optFns adjust the client further.
func NewS3(cfg aws.Config, bucket string, optFns ...func(*s3.Options)) *S3 {
	pathStyle := cfg.BaseEndpoint != nil || os.Getenv("AWS_ENDPOINT_URL_S3") != ""
	fns := append([]func(*s3.Options){func(o *s3.Options) {
		o.UsePathStyle = pathStyle
		// Artifacts are re-hashed with SHA-256 on every read, which the SDK's
		// CRC check would only duplicate; and objects stored without a
		// checksum (older uploads, emulators) make the SDK log a warning on
		// every GET otherwise.
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}}, optFns...)
	return NewS3FromClient(s3.NewFromConfig(cfg, fns...), bucket)
}

// NewS3FromClient returns the store for bucket over a ready client.
func NewS3FromClient(client *s3.Client, bucket string) *S3 {
	return &S3{client: client, bucket: bucket}
}

// Bucket is the bucket's name.
func (s *S3) Bucket() string { return s.bucket }

// Get implements Store.
func (s *S3) Get(ctx context.Context, key string, opts GetOptions) (*Object, error) {
	if key == "" {
		return nil, fmt.Errorf("get: %w: empty key", ErrInvalidKey)
	}
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}
	if opts.IfNoneMatch != "" {
		in.IfNoneMatch = &opts.IfNoneMatch
	}
	if opts.IfMatch != "" {
		in.IfMatch = &opts.IfMatch
	}
	if opts.VersionID != "" {
		in.VersionId = &opts.VersionID
	}
	if opts.Length > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", opts.Offset, opts.Offset+opts.Length-1))
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		if code, _ := errorCode(err); code == "InvalidArgument" && opts.VersionID != "" {
			// S3's answer for a version id in a bucket without versioning
			// (moto's is 404), or one of a form S3 never issues. Nothing
			// else Get sends can be an invalid argument.
			return nil, fmt.Errorf("get s3://%s/%s version %s: %w: %w", s.bucket, key, opts.VersionID, ErrNoSuchVersion, err)
		}
		return nil, s.wrap("get", key, err)
	}
	size := aws.ToInt64(out.ContentLength)
	if opts.Length > 0 {
		total, err := totalSize(aws.ToString(out.ContentRange))
		if err != nil {
			_ = out.Body.Close()
			return nil, fmt.Errorf("get s3://%s/%s: %w", s.bucket, key, err)
		}
		size = total
	}
	return &Object{
		Info: Info{
			Key:          key,
			ETag:         aws.ToString(out.ETag),
			Size:         size,
			LastModified: aws.ToTime(out.LastModified),
			VersionID:    aws.ToString(out.VersionId),
		},
		Body: out.Body,
	}, nil
}

// totalSize reads the object's size from a Content-Range answer
// ("bytes 0-99/1234").
func totalSize(contentRange string) (int64, error) {
	_, total, ok := strings.Cut(contentRange, "/")
	n, err := strconv.ParseInt(total, 10, 64)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("unexpected Content-Range %q", contentRange)
	}
	return n, nil
}

// PresignGet implements Presigner: a GET of one version of key, valid for
// expires, whose answer carries the given headers (S3's response-* query
// parameters, part of the signature, so the client cannot change them).
func (s *S3) PresignGet(ctx context.Context, key, versionID string, expires time.Duration, h ResponseHeaders) (string, error) {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}
	if versionID != "" {
		in.VersionId = &versionID
	}
	if h.ContentType != "" {
		in.ResponseContentType = &h.ContentType
	}
	if h.CacheControl != "" {
		in.ResponseCacheControl = &h.CacheControl
	}
	if h.ContentEncoding != "" {
		in.ResponseContentEncoding = &h.ContentEncoding
	}
	req, err := s3.NewPresignClient(s.client).PresignGetObject(ctx, in, s3.WithPresignExpires(expires))
	if err != nil {
		return "", fmt.Errorf("presign s3://%s/%s: %w", s.bucket, key, err)
	}
	return req.URL, nil
}

// Head implements Store.
func (s *S3) Head(ctx context.Context, key string) (Info, error) {
	if key == "" {
		return Info{}, fmt.Errorf("head: %w: empty key", ErrInvalidKey)
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return Info{}, s.wrap("head", key, err)
	}
	return Info{
		Key:          key,
		ETag:         aws.ToString(out.ETag),
		Size:         aws.ToInt64(out.ContentLength),
		LastModified: aws.ToTime(out.LastModified),
		VersionID:    aws.ToString(out.VersionId),
	}, nil
}

// Put implements Store. The body is sent from memory: over plain HTTP (an
// emulator) the SDK can only checksum a seekable body. The returned
// LastModified is the server's clock at the write (S3 does not return the
// object's own), to the second.
func (s *S3) Put(ctx context.Context, key string, body []byte, opts PutOptions) (Info, error) {
	if key == "" {
		return Info{}, fmt.Errorf("put: %w: empty key", ErrInvalidKey)
	}
	if err := checkPutOptions(opts); err != nil {
		return Info{}, fmt.Errorf("put %s: %w", key, err)
	}
	in := &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &key,
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
	}
	if opts.ContentType != "" {
		in.ContentType = &opts.ContentType
	}
	if opts.ContentEncoding != "" {
		in.ContentEncoding = &opts.ContentEncoding
	}
	if opts.IfMatch != "" {
		in.IfMatch = &opts.IfMatch
	}
	if opts.IfNoneMatch != "" {
		in.IfNoneMatch = &opts.IfNoneMatch
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		return Info{}, s.wrap("put", key, err)
	}
	modified, ok := awsmiddleware.GetServerTime(out.ResultMetadata)
	if !ok {
		modified = time.Now()
	}
	return Info{
		Key: key, ETag: aws.ToString(out.ETag), Size: int64(len(body)), LastModified: modified.UTC(),
		VersionID: aws.ToString(out.VersionId),
	}, nil
}

// List implements Store, following ListObjectsV2's continuation tokens.
//
// It asks for URL-encoded keys: S3 accepts keys with bytes XML 1.0 cannot
// carry (an ESC, say), and a listing holding one is otherwise an
// unparseable response, so one odd key would make the whole bucket
// unlistable. With the encoding, S3 encodes Key, Prefix, Delimiter and
// StartAfter in the response (not the continuation token); only Key is
// read here. Keys are decoded as query strings ('+' is a space), which is
// how S3 encodes them and also undoes moto's %20.
func (s *S3) List(ctx context.Context, prefix string) ([]Info, error) {
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, EncodingType: types.EncodingTypeUrl}
	if prefix != "" {
		in.Prefix = &prefix
	}
	var infos []Info
	p := s3.NewListObjectsV2Paginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list s3://%s/%s: %w", s.bucket, prefix, mapS3Error(err))
		}
		// An endpoint that ignores the parameter says so by leaving
		// EncodingType out, and its keys are then as stored.
		encoded := page.EncodingType == types.EncodingTypeUrl
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if encoded {
				if key, err = url.QueryUnescape(key); err != nil {
					return nil, fmt.Errorf("list s3://%s/%s: key %q is not URL-encoded: %w", s.bucket, prefix, aws.ToString(o.Key), err)
				}
			}
			infos = append(infos, Info{
				Key:          key,
				ETag:         aws.ToString(o.ETag),
				Size:         aws.ToInt64(o.Size),
				LastModified: aws.ToTime(o.LastModified),
			})
		}
	}
	return infos, nil
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	if key == "" {
		return fmt.Errorf("delete: %w: empty key", ErrInvalidKey)
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if err := s.wrap("delete", key, err); !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	return nil
}

func (s *S3) wrap(op, key string, err error) error {
	return fmt.Errorf("%s s3://%s/%s: %w", op, s.bucket, key, mapS3Error(err))
}

// mapS3Error translates the S3 answers the Store contract names into its
// sentinel errors, keeping the original in the chain. A missing bucket is
// deliberately not ErrNotFound: callers read "not found" as "absent", and a
// misconfigured bucket must fail loudly rather than look empty.
func mapS3Error(err error) error {
	code, status := errorCode(err)
	var sentinel error
	switch {
	case code == "NoSuchBucket":
	case code == "NoSuchVersion":
		sentinel = ErrNoSuchVersion
	case code == "NoSuchKey", code == "NotFound", status == http.StatusNotFound:
		sentinel = ErrNotFound
		var re *smithyhttp.ResponseError
		if errors.As(err, &re) && re.Response != nil && re.Response.Response != nil &&
			re.Response.Header.Get("X-Amz-Delete-Marker") == "true" {
			sentinel = ErrDeleted
		}
	case status == http.StatusPreconditionFailed, code == "PreconditionFailed",
		code == "ConditionalRequestConflict":
		sentinel = ErrPreconditionFailed
	case status == http.StatusNotModified, code == "NotModified":
		sentinel = ErrNotModified
	case status == http.StatusRequestedRangeNotSatisfiable, code == "InvalidRange":
		sentinel = ErrInvalidRange
	case status == http.StatusForbidden, code == "AccessDenied":
		sentinel = ErrAccessDenied
	}
	if sentinel == nil {
		return err
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}

// errorCode returns S3's error code and the HTTP status of err, as far as
// it carries them.
func errorCode(err error) (code string, status int) {
	// The interfaces smithy.APIError and smithyhttp.ResponseError satisfy.
	var apiErr interface{ ErrorCode() string }
	if errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	var respErr interface{ HTTPStatusCode() int }
	if errors.As(err, &respErr) {
		status = respErr.HTTPStatusCode()
	}
	return code, status
}
