// Package e2e runs skilldrop's two Lambda binaries (functions/indexer and
// functions/api, built as `bootstrap` the way template.yaml deploys them)
// under aws-lambda-rie, the Lambda Runtime Interface Emulator, and drives
// them through the real Lambda runtime API with real events: the S3 event
// records an AWS emulator delivers to an SQS queue, and API Gateway HTTP API
// (payload format 2.0) requests. Every answer is compared with the same event
// handled in-process by pkg/indexer, pkg/lambdahttp and pkg/server, so the
// binaries' wiring (environment, SDK clients, lambda.Start, the 6 MiB response
// limit) is what these tests add to the packages' own.
//
// The tests carry the build tag "e2e" and need what `make e2e` provides: the
// bootstrap binaries (SKILLDROP_E2E_BUILD/<GOARCH>/<function>/bootstrap),
// aws-lambda-rie (SKILLDROP_E2E_RIE) and an AWS emulator at AWS_ENDPOINT_URL.
// They also log the figures the issue asks for: cold start of each binary,
// the binaries' sizes, and (BenchmarkWarmIndex) a warm index invocation.
package e2e
