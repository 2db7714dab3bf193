package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"

	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// target is the store a command works on: an S3 bucket (--bucket, with the
// AWS configuration of --region and --profile, else of the environment:
// AWS_REGION, AWS_PROFILE, credentials, AWS_ENDPOINT_URL) or a directory
// laid out like the bucket (--dir).
type target struct {
	bucket, dir     string
	region, profile string
	aws             aws.Config // loaded by open for a bucket
	// log receives the SDK's own log lines (at DEBUG): without it they
	// would reach the terminal raw, such as the IMDS fallback warning the
	// credential chain prints off EC2. nil discards them.
	log *slog.Logger
}

func (t *target) flags(fs *flag.FlagSet) {
	fs.StringVar(&t.bucket, "bucket", "", "the S3 bucket")
	fs.StringVar(&t.dir, "dir", "", "a local directory laid out like the bucket (what skilldrop serve serves)")
	fs.StringVar(&t.region, "region", "", "with --bucket, the bucket's AWS region (default: $AWS_REGION, else the profile's region)")
	fs.StringVar(&t.profile, "profile", "", "with --bucket, the AWS profile of ~/.aws/config to use (default: $AWS_PROFILE, else the profile named default)")
}

// localSettle is how long a local directory's agent-skills.yaml must have
// been left alone before it is read (indexer.Config.ConfigSettle): an
// editor's save or a copy can be read while it is still being written, and
// a config cut short may hide less than the whole one. A bucket's objects
// are written whole.
const localSettle = time.Second

// configSettle is the indexer's ConfigSettle for the target.
func (t *target) configSettle() time.Duration {
	if t.dir != "" {
		return localSettle
	}
	return 0
}

// defaultVisibilityFlag adds --default-visibility to a command that
// indexes: the deployment's default, as the indexer Lambda's
// SKILLDROP_DEFAULT_VISIBILITY gives it ("": the one the catalog records).
func defaultVisibilityFlag(fs *flag.FlagSet) func() (catalog.Visibility, error) {
	v := fs.String("default-visibility", "", "public or authenticated: what entries get when agent-skills.yaml sets none, recorded in the catalog\n"+
		"as the deployment's SKILLDROP_DEFAULT_VISIBILITY is (default: the one the catalog records, else public)")
	return func() (catalog.Visibility, error) {
		vis, err := catalog.ParseVisibility(*v)
		if err != nil {
			return "", fmt.Errorf("--default-visibility: %w", err)
		}
		return vis, nil
	}
}

// waitFlag adds --wait to a command that changes a bucket and then waits
// for its indexer to say what it did (awaitCatalog); what is what the
// indexer does, for the help text.
func waitFlag(fs *flag.FlagSet, what string) func() (time.Duration, error) {
	d := fs.Duration("wait", 2*time.Minute, "with --bucket, how long to wait for the indexer to "+what+" (0: do not wait)")
	return func() (time.Duration, error) {
		if *d < 0 {
			return 0, fmt.Errorf("--wait %s: want 0 or more", *d)
		}
		return *d, nil
	}
}

// Errors of open. errTarget and a *setupError are the command line's to
// fix (exitUsage); a *credentialsError is the environment's (exitFailure).
var errTarget = errors.New("give exactly one of --bucket and --dir")

// setupError is an AWS configuration that cannot work as given, with what
// to do about it.
type setupError struct{ msg string }

func (e *setupError) Error() string { return e.msg }

// credentialsError is a failure to find credentials, with how to give them
// and, when the operator configured a source, what the SDK said of it.
type credentialsError struct {
	msg    string
	detail error
}

func (e *credentialsError) Error() string {
	if e.detail == nil {
		return e.msg
	}
	return e.msg + "\n  detail: " + oneLine(e.detail.Error())
}

func (e *credentialsError) Unwrap() error { return e.detail }

// regionName is the shape of an AWS region name (eu-west-1, us-gov-east-1).
var regionName = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d+$`)

// open opens the target's store; close releases it. For a bucket it
// resolves the region and credentials before any request, so a missing
// one is said as such rather than as the SDK's endpoint or IMDS error.
func (t *target) open(ctx context.Context) (st store.Store, close func(), err error) {
	if err := t.check(); err != nil {
		return nil, nil, err
	}
	if t.dir != "" {
		if st, err := os.Stat(t.dir); errors.Is(err, fs.ErrNotExist) || (err == nil && !st.IsDir()) {
			return nil, nil, &setupError{fmt.Sprintf("--dir %s: no such directory", printable(t.dir))}
		}
		d, err := store.NewDir(t.dir, store.DirTracks(catalog.Key))
		if err != nil {
			return nil, nil, err
		}
		return d, func() { _ = d.Close() }, nil
	}
	if t.region != "" && !regionName.MatchString(t.region) {
		return nil, nil, &setupError{fmt.Sprintf("--region %s is not an AWS region name (like eu-west-1)", printable(t.region))}
	}
	opts := []func(*config.LoadOptions) error{config.WithAppID(buildinfo.AppID()), config.WithLogger(sdkLogger{t.log})}
	if t.region != "" {
		opts = append(opts, config.WithRegion(t.region))
	}
	if t.profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(t.profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	var noProfile config.SharedConfigProfileNotExistError
	switch {
	case errors.As(err, &noProfile):
		return nil, nil, &setupError{fmt.Sprintf("the AWS profile %s is in neither the AWS config file nor the credentials file "+
			"(~/.aws/config, ~/.aws/credentials, or $AWS_CONFIG_FILE, $AWS_SHARED_CREDENTIALS_FILE): "+
			"create it with `aws configure --profile %s`, or name another with --profile or AWS_PROFILE", printable(noProfile.Profile), printable(noProfile.Profile))}
	case err != nil:
		return nil, nil, &setupError{fmt.Sprintf("the AWS configuration cannot be loaded: %s", oneLine(err.Error()))}
	case cfg.Region == "":
		return nil, nil, &setupError{fmt.Sprintf("no AWS region for s3://%s: give --region REGION, or set AWS_REGION, "+
			"or set a region in the AWS profile (--profile or AWS_PROFILE)", t.bucket)}
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		ce := &credentialsError{msg: fmt.Sprintf("no AWS credentials for s3://%s: give --profile NAME, or set AWS_PROFILE, "+
			"or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones); "+
			"for an SSO profile, run `aws sso login` first", t.bucket)}
		if t.credentialSourceNamed() {
			ce.detail = err // the operator named a source: what went wrong with it matters
		}
		return nil, nil, ce
	}
	t.aws = cfg
	return store.NewS3(cfg, t.bucket), func() {}, nil
}

// sdkLogger hands the SDK's log lines to a command's logger at DEBUG.
type sdkLogger struct{ log *slog.Logger }

func (l sdkLogger) Logf(class logging.Classification, format string, v ...any) {
	if l.log != nil {
		l.log.Debug("aws sdk", "class", string(class), "msg_sdk", fmt.Sprintf(format, v...))
	}
}

// check refuses flags that cannot name a target, before anything is read.
func (t *target) check() error {
	switch {
	case (t.bucket == "") == (t.dir == ""):
		return errTarget
	case t.dir != "" && (t.region != "" || t.profile != ""):
		return &setupError{"--region and --profile apply to --bucket only"}
	}
	return nil
}

// credentialSourceNamed reports whether the operator named a source of
// credentials (a profile, keys, a web identity or container endpoint). When
// none was, the SDK's chain ends at the EC2 instance metadata service, and
// its error says nothing useful off EC2.
func (t *target) credentialSourceNamed() bool {
	if t.profile != "" {
		return true
	}
	for _, v := range []string{"AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// openFor is open for the command cmd ("skilldrop status"). When the
// store cannot be opened it says why on stderr and ok is false, with the
// exit status: exitUsage when the command line is what must change (not
// exactly one of --bucket and --dir, no region, an unknown profile), else
// exitFailure.
func (t *target) openFor(ctx context.Context, cmd string, stderr io.Writer) (st store.Store, close func(), code int, ok bool) {
	st, close, err := t.open(ctx)
	if err != nil {
		printf(stderr, "%s: %v\n", cmd, err)
		var se *setupError
		if errors.Is(err, errTarget) || errors.As(err, &se) {
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

// metricNamespace resolves --metric-namespace: the flag, else the Lambda's
// setting when the shell has it, else the Lambda's default.
func metricNamespace(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
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
