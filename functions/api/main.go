// Command api is the request-path Lambda behind the API Gateway HTTP API
// (payload format 2.0): it serves pkg/server's handler through the
// lambdahttp adapter. It only wires: environment, SDK clients built once,
// lambda.Start.
//
// Environment:
//
//	SKILLDROP_BUCKET             the bucket (required)
//	SKILLDROP_METRIC_NAMESPACE   CloudWatch namespace (default Skilldrop)
//	SKILLDROP_PUBLIC_BASE_URL    the public origin, e.g. a custom domain; unset:
//	                             the domain API Gateway received the request on
//	SKILLDROP_API_KEY_PARAMETER  SSM SecureString holding the key store: the JSON
//	                             document of named keys (audiences, expiry, path
//	                             use), or comma-separated SHA-256 hashes
//	SKILLDROP_KEYS_REFRESH       how often it is read again (default 60s, at most)
//	SKILLDROP_API_KEY_SHA256     comma-separated hashes, added to the parameter's
//	SKILLDROP_SESSION_SECRET_PARAMETER  SSM SecureString holding the secret (at
//	                             least 32 characters) that signs the web catalog's
//	                             session cookies, read once at start; unset: no sign-in
//	SKILLDROP_LOG_LEVEL          DEBUG, INFO (default), WARN or ERROR
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/apikey/ssmparam"
	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/lambdahttp"
	"github.com/skilldrop/skilldrop/pkg/memlimit"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
	"github.com/skilldrop/skilldrop/pkg/responselimit"
	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/store"
	"github.com/skilldrop/skilldrop/pkg/websession"
)

// envSessionParameter names the SSM SecureString of the session secret.
const envSessionParameter = "SKILLDROP_SESSION_SECRET_PARAMETER"

// settings is what the environment configures.
type settings struct {
	bucket    string
	namespace string
	baseURL   string
	parameter string
	session   string // the session secret's SSM parameter
	refresh   time.Duration
	hashes    apikey.Set
	level     slog.Level
}

// parseEnv reads the settings; every bad value is an error naming the variable.
func parseEnv(getenv func(string) string) (settings, error) {
	s := settings{
		bucket:    getenv("SKILLDROP_BUCKET"),
		namespace: getenv("SKILLDROP_METRIC_NAMESPACE"),
		baseURL:   getenv("SKILLDROP_PUBLIC_BASE_URL"),
		parameter: getenv(apikey.EnvParameter),
		session:   getenv(envSessionParameter),
	}
	if s.bucket == "" {
		return s, fmt.Errorf("SKILLDROP_BUCKET is required")
	}
	if s.baseURL != "" {
		if _, err := server.ParseBaseURL(s.baseURL); err != nil {
			return s, fmt.Errorf("SKILLDROP_PUBLIC_BASE_URL: %w", err)
		}
	}
	var err error
	if s.hashes, err = apikey.ParseSet(getenv(apikey.EnvHashes)); err != nil {
		return s, fmt.Errorf("%s: %w", apikey.EnvHashes, err)
	}
	if s.refresh, err = apikey.ParseRefresh(getenv(apikey.EnvRefresh)); err != nil {
		return s, fmt.Errorf("%s: %w", apikey.EnvRefresh, err)
	}
	if s.level, err = obs.ParseLevel(getenv(obs.EnvLogLevel)); err != nil {
		return s, fmt.Errorf("%s: %w", obs.EnvLogLevel, err)
	}
	return s, nil
}

func main() {
	s, err := parseEnv(os.Getenv)
	if err != nil {
		obs.NewLogger(os.Stdout, slog.LevelInfo).Error("api: bad configuration", "error", err.Error())
		os.Exit(1)
	}
	logger := obs.NewLogger(os.Stdout, s.level)
	fail := func(msg string, err error) {
		logger.Error("api: "+msg, "error", err.Error())
		os.Exit(1)
	}
	if _, err := memlimit.Apply(os.Getenv); err != nil {
		fail("memory limit", err)
	}
	ctx := context.Background()
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithAppID(buildinfo.AppID()))
	if err != nil {
		fail("load AWS configuration", err)
	}
	metrics, err := cwmetrics.New(cwmetrics.NewClient(awsCfg), cwmetrics.Options{Namespace: s.namespace, Logger: logger})
	if err != nil {
		fail("SKILLDROP_METRIC_NAMESPACE", err)
	}
	ssmClient := ssm.NewFromConfig(awsCfg)
	var keys apikey.Source = s.hashes
	if s.parameter != "" {
		param, err := ssmparam.New(ssmClient, s.parameter, apikey.CacheOptions{TTL: s.refresh})
		if err != nil {
			fail(apikey.EnvParameter, err)
		}
		keys = apikey.Union(param, s.hashes)
	}
	var secret []byte
	if s.session != "" {
		v, err := ssmparam.Fetch(ssmClient, s.session)(ctx)
		if err != nil {
			fail(envSessionParameter, err)
		}
		if secret = []byte(strings.TrimSpace(v)); len(secret) < websession.MinSecretBytes {
			fail(envSessionParameter, fmt.Errorf("the secret in %q has %d characters, want at least %d", s.session, len(secret), websession.MinSecretBytes))
		}
	}
	bucket := store.NewS3(awsCfg, s.bucket)
	h, err := server.New(server.Config{
		Store:            bucket,
		Keys:             keys,
		Metrics:          metrics,
		Auditor:          obs.NewAuditor(logger),
		Logger:           logger,
		PublicBaseURL:    s.baseURL,
		Version:          buildinfo.Version(),
		MaxResponseBytes: responselimit.MaxBytes,
		Fits:             lambdahttp.Fits,
		Presigner:        bucket,
		SessionSecret:    secret,
	})
	if err != nil {
		fail("configuration", err)
	}
	lambda.Start(lambdahttp.New(h))
}
