package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/skilldrop/skilldrop/pkg/store"
)

// target is the store a command works on: an S3 bucket (--bucket, with the
// SDK's configuration from the environment: AWS_REGION, credentials,
// AWS_ENDPOINT_URL) or a directory laid out like the bucket (--dir).
type target struct {
	bucket, dir string
}

func (t *target) flags(fs *flag.FlagSet) {
	fs.StringVar(&t.bucket, "bucket", "", "the S3 bucket (AWS configuration from the environment)")
	fs.StringVar(&t.dir, "dir", "", "a local directory laid out like the bucket (what skilldrop serve serves)")
}

var errTarget = errors.New("give exactly one of --bucket and --dir")

// open opens the target's store; close releases it.
func (t *target) open(ctx context.Context) (st store.Store, close func(), err error) {
	switch {
	case (t.bucket == "") == (t.dir == ""):
		return nil, nil, errTarget
	case t.dir != "":
		d, err := store.NewDir(t.dir)
		if err != nil {
			return nil, nil, err
		}
		return d, func() { _ = d.Close() }, nil
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	return store.NewS3(cfg, t.bucket), func() {}, nil
}

// String names the target in messages.
func (t *target) String() string {
	if t.dir != "" {
		return t.dir
	}
	return "s3://" + t.bucket
}
