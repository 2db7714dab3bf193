//go:build e2e && burst

package e2e

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/burst"
)

// perEventInstances is how many indexer instances the per-event baseline
// runs under aws-lambda-rie (which takes one invocation at a time): Lambda
// would start one per concurrent event; this many keep every event of a
// burst waiting only on the emulator, not on a free instance.
const perEventInstances = 16

// burstIndexers starts n indexer binaries under aws-lambda-rie with the
// template's environment, reaching the emulator through the traffic
// counter, and returns an Invoke that hands each payload to a free one.
func burstIndexers(b *testing.B, s *burst.Setup, n int) func(context.Context, []byte) ([]byte, error) {
	b.Helper()
	env := indexerEnv(s.Bucket, metricNamespace(b))
	env["SKILLDROP_ORIGINS"] = burst.Origin.String() // as the template passes the API's domain
	free := make(chan *function, n)
	for i := range n {
		e := templateEnv(b, indexerID, env)
		e["AWS_ENDPOINT_URL"] = s.IndexerEndpoint
		free <- start(b, fmt.Sprintf("indexer-%d", i), bootstrap(b, runtime.GOARCH, "indexer"), e)
	}
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		f := <-free
		defer func() { free <- f }()
		return f.invoke(ctx, payload)
	}
}

// BenchmarkBurstThroughTheRuntimeAPI is pkg/indexer's BenchmarkBurst with
// the indexer binary under aws-lambda-rie: two instances for the batched
// delivery (the mapping's MaximumConcurrency), perEventInstances for one
// invocation per event.
//
//	make bench-burst
func BenchmarkBurstThroughTheRuntimeAPI(b *testing.B) {
	cfg := awstest.Config(b)
	for _, c := range burst.Cases {
		for _, d := range []burst.Delivery{burst.Batched, burst.PerEvent} {
			b.Run(c.Name(d), func(b *testing.B) {
				bootstrap(b, runtime.GOARCH, "indexer") // before the bucket is made: fails fast outside make
				rieExecutable(b)
				s := burst.Prepare(b, cfg, c.Skills)
				instances := burst.Writers
				if d == burst.PerEvent {
					instances = perEventInstances
				}
				s.Invoke = burstIndexers(b, s, instances)
				burst.Bench(b, s, d, c)
			})
		}
	}
}
