// Command indexer is the indexer Lambda: it receives the bucket's S3 event
// notifications (or the documented reindex payload, {"skilldrop":"reindex"})
// and hands them to pkg/indexer. It only wires: environment, SDK clients
// built once, lambda.Start.
//
// Environment:
//
//	SKILLDROP_BUCKET                   the bucket (required)
//	SKILLDROP_METRIC_NAMESPACE         CloudWatch namespace (default Skilldrop)
//	SKILLDROP_MAX_ARTIFACT_BYTES       service caps; unset means the default
//	SKILLDROP_MAX_ENTRIES
//	SKILLDROP_MAX_EXPANDED_BYTES
//	SKILLDROP_MAX_DECOMPRESSION_RATIO
//	SKILLDROP_ORIGINS                  comma-separated origins (https://host) the large feed
//	                                   documents are rendered into the bucket for
//	SKILLDROP_QUEUE_URL                the indexer's own queue, where a large re-index or
//	                                   reconcile is fed in chunks (unset: it reads every key itself)
//	SKILLDROP_DEFAULT_VISIBILITY       public or authenticated: what an entry gets when
//	                                   agent-skills.yaml sets neither its visibility nor a
//	                                   default_visibility (unset: the one the catalog records)
//	SKILLDROP_API_MEMORY_MB            the api function's memory: the catalog is kept to what
//	                                   it can hold decoded (memlimit.CatalogFor); unset: catalog.MaxBytes
//	SKILLDROP_SIGNING_KEY              the KMS key (id, ARN or alias) every publication and catalog
//	                                   revision is signed with (unset: nothing is signed)
//	SKILLDROP_LOG_LEVEL                DEBUG, INFO (default), WARN or ERROR
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/memlimit"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
	"github.com/skilldrop/skilldrop/pkg/queue"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/signing/kmssigner"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// settings is what the environment configures.
type settings struct {
	bucket     string
	namespace  string
	queueURL   string
	signingKey string
	origins    []*url.URL
	limits     archive.Limits
	level      slog.Level
	// defaultVis is the deployment's default visibility ("": unset).
	defaultVis catalog.Visibility
	maxCatalog int64 // 0: catalog.MaxBytes
}

// parseEnv reads the settings; every bad value is an error naming the variable.
func parseEnv(getenv func(string) string) (settings, error) {
	s := settings{bucket: getenv("SKILLDROP_BUCKET"), namespace: getenv("SKILLDROP_METRIC_NAMESPACE"), queueURL: getenv("SKILLDROP_QUEUE_URL"),
		signingKey: getenv("SKILLDROP_SIGNING_KEY")}
	if s.bucket == "" {
		return s, fmt.Errorf("SKILLDROP_BUCKET is required")
	}
	var err error
	if s.level, err = obs.ParseLevel(getenv(obs.EnvLogLevel)); err != nil {
		return s, fmt.Errorf("%s: %w", obs.EnvLogLevel, err)
	}
	if s.defaultVis, err = catalog.ParseVisibility(getenv("SKILLDROP_DEFAULT_VISIBILITY")); err != nil {
		return s, fmt.Errorf("SKILLDROP_DEFAULT_VISIBILITY: %w", err)
	}
	for o := range strings.SplitSeq(getenv("SKILLDROP_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		u, err := indexer.ParseOrigin(o)
		if err != nil {
			return s, fmt.Errorf("SKILLDROP_ORIGINS: %w", err)
		}
		s.origins = append(s.origins, u)
	}
	ints := []struct {
		name string
		max  int64
		set  func(int64)
	}{
		{"SKILLDROP_MAX_ARTIFACT_BYTES", archive.DefaultMaxArtifactBytes, func(v int64) { s.limits.MaxArtifactBytes = v }},
		{"SKILLDROP_API_MEMORY_MB", 10240, func(v int64) { s.maxCatalog = min(catalog.MaxBytes, memlimit.CatalogFor(v)) }},
		{"SKILLDROP_MAX_ENTRIES", 1 << 20, func(v int64) { s.limits.MaxEntries = int(v) }},
		{"SKILLDROP_MAX_EXPANDED_BYTES", 1 << 40, func(v int64) { s.limits.MaxExpandedBytes = v }},
	}
	for _, v := range ints {
		raw := getenv(v.name)
		if raw == "" {
			continue
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= 0 || n > v.max {
			return s, fmt.Errorf("%s=%q: want an integer from 1 to %d", v.name, raw, v.max)
		}
		v.set(n)
	}
	if raw := getenv("SKILLDROP_MAX_DECOMPRESSION_RATIO"); raw != "" {
		r, err := strconv.ParseFloat(raw, 64)
		if err != nil || !(r >= 1 && r <= 1e6) {
			return s, fmt.Errorf("SKILLDROP_MAX_DECOMPRESSION_RATIO=%q: want a number from 1 to 1000000", raw)
		}
		s.limits.MaxRatio = r
	}
	return s, nil
}

func main() {
	s, err := parseEnv(os.Getenv)
	if err != nil {
		obs.NewLogger(os.Stdout, slog.LevelInfo).Error("indexer: bad configuration", "error", err.Error())
		os.Exit(1)
	}
	logger := obs.NewLogger(os.Stdout, s.level)
	if _, err := memlimit.Apply(os.Getenv); err != nil {
		logger.Error("indexer: memory limit", "error", err.Error())
		os.Exit(1)
	}
	ctx := context.Background()
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithAppID(buildinfo.AppID()))
	if err != nil {
		logger.Error("indexer: load AWS configuration", "error", err.Error())
		os.Exit(1)
	}
	metrics, err := cwmetrics.New(cwmetrics.NewClient(awsCfg), cwmetrics.Options{Namespace: s.namespace, Logger: logger})
	if err != nil {
		logger.Error("indexer: SKILLDROP_METRIC_NAMESPACE", "error", err.Error())
		os.Exit(1)
	}
	var q queue.Sender
	if s.queueURL != "" {
		q = queue.NewSQS(sqs.NewFromConfig(awsCfg), s.queueURL)
	}
	var signer signing.Signer
	if s.signingKey != "" {
		// The public key is read once, here: a key that cannot sign fails
		// the start, not the first publication.
		if signer, err = kmssigner.New(ctx, kms.NewFromConfig(awsCfg), s.signingKey); err != nil {
			logger.Error("indexer: SKILLDROP_SIGNING_KEY", "error", err.Error())
			os.Exit(1)
		}
	}
	ix, err := indexer.New(indexer.Config{
		Store:   store.NewS3(awsCfg, s.bucket),
		Bucket:  s.bucket,
		Metrics: metrics,
		Auditor: obs.NewAuditor(logger),
		Logger:  logger,
		Limits:  s.limits,
		Queue:   q,
		Origins: s.origins,
		// S3 writes an object whole, so agent-skills.yaml needs no ConfigSettle here.
		DefaultVisibility: s.defaultVis,
		// catalog_full fires before a route of the api could run out of memory.
		MaxCatalogBytes: s.maxCatalog,
		Signer:          signer,
	})
	if err != nil {
		logger.Error("indexer: configuration", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(func(ctx context.Context, raw json.RawMessage) (any, error) {
		id := ""
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			id = lc.AwsRequestID
		}
		return ix.WithRequestID(id).Respond(ctx, raw)
	})
}
