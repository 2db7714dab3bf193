package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// target is the store a command works on: an S3 bucket (--bucket, with the
// SDK's configuration from the environment: AWS_REGION, credentials,
// AWS_ENDPOINT_URL) or a directory laid out like the bucket (--dir).
type target struct {
	bucket, dir string
	aws         aws.Config // loaded by open for a bucket
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
	t.aws = cfg
	return store.NewS3(cfg, t.bucket), func() {}, nil
}

// openFor is open for the command cmd ("skilldrop status"). When the
// store cannot be opened it says why on stderr and ok is false, with the
// exit status: exitUsage when not exactly one of --bucket and --dir was
// given, else exitFailure.
func (t *target) openFor(ctx context.Context, cmd string, stderr io.Writer) (st store.Store, close func(), code int, ok bool) {
	st, close, err := t.open(ctx)
	if err != nil {
		printf(stderr, "%s: %v\n", cmd, err)
		if errors.Is(err, errTarget) {
			return nil, nil, exitUsage, false
		}
		return nil, nil, exitFailure, false
	}
	return st, close, exitOK, true
}

// metrics returns where an indexing run against the target counts its
// rejections: for a bucket, CloudWatch in namespace, as the indexer Lambda
// does (what the Lambda's status document records as already counted, it
// never counts again, so a CLI run that did not count would leave its
// rejections out of UploadRejected for good); for a directory, nowhere.
// Failed sends are logged, never returned. Call it after open.
func (t *target) metrics(namespace string, logger *slog.Logger) (obs.Metrics, error) {
	if t.bucket == "" {
		return obs.Nop{}, nil
	}
	return cwmetrics.New(cwmetrics.NewClient(t.aws), cwmetrics.Options{Namespace: namespace, Logger: logger})
}

// metricNamespace is the default of --metric-namespace: the Lambda's
// setting when the shell has it, else the Lambda's default.
func metricNamespace() string {
	if ns := os.Getenv("SKILLDROP_METRIC_NAMESPACE"); ns != "" {
		return ns
	}
	return cwmetrics.DefaultNamespace
}

// String names the target in messages.
func (t *target) String() string {
	if t.dir != "" {
		return t.dir
	}
	return "s3://" + t.bucket
}
