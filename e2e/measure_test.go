//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
)

// coldRuns is how many times each binary is started for TestColdStart.
const coldRuns = 5

// eventFor returns the message body among bodies whose record names key.
func eventFor(t testing.TB, bodies [][]byte, key string) []byte {
	t.Helper()
	for _, b := range bodies {
		p, _ := indexer.DecodePayload(b)
		for _, h := range p.Hints {
			if h.Key == key {
				return b
			}
		}
	}
	t.Fatalf("no event for %s among %d messages", key, len(bodies))
	return nil
}

// coldSample is one cold start: process start to listening, the runtime's
// init as aws-lambda-rie reports it, and process start to the first response.
type coldSample struct{ listening, init, first time.Duration }

func summarize(samples []coldSample) string {
	pick := func(f func(coldSample) time.Duration) string {
		ds := make([]time.Duration, len(samples))
		for i, s := range samples {
			ds[i] = f(s)
		}
		slices.Sort(ds)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		return fmt.Sprintf("median %6.1f ms (min %6.1f, max %6.1f)", ms(ds[len(ds)/2]), ms(ds[0]), ms(ds[len(ds)-1]))
	}
	return fmt.Sprintf("first response %s; listening %s; runtime init %s",
		pick(func(s coldSample) time.Duration { return s.first }),
		pick(func(s coldSample) time.Duration { return s.listening }),
		pick(func(s coldSample) time.Duration { return s.init }))
}

// TestColdStart starts each binary under aws-lambda-rie coldRuns times,
// invokes it once (the indexer with the emulator's event for one indexed
// key, the API with an index GET) and stops it, and logs the time from
// process start to the first response. Only the answers are asserted.
func TestColdStart(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	queue := newEventQueue(t, cfg, bucket)
	files := exampleFiles(t)
	upload(t, awstest.S3(cfg), bucket, files)
	const key = "skills/deploy-via-pr.md"
	event := eventFor(t, queue.Receive(t, len(files)), key)
	namespace := metricNamespace(t)
	if _, err := inProcessIndexer(t, cfg, bucket, namespace).Reindex(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys := newAPIKeys(t, cfg)
	apiEvent, err := json.Marshal(gatewayEvent(call{method: http.MethodGet, target: "/.well-known/agent-skills/index.json"}, "cold", time.Now()))
	if err != nil {
		t.Fatal(err)
	}

	binaries := []struct {
		name, id string
		env      map[string]string
		payload  []byte
		check    func(t *testing.T, b []byte)
	}{
		{"indexer", indexerID, indexerEnv(bucket, namespace), event,
			func(t *testing.T, b []byte) {
				if r := decodeResult(t, b); !slices.Contains(r.Unchanged, key) {
					t.Errorf("the event for %s gave %s", key, dumpJSON(r))
				}
			}},
		{"api", apiID, map[string]string{"SKILLDROP_BUCKET": bucket, "SKILLDROP_METRIC_NAMESPACE": namespace, "SKILLDROP_API_KEY_PARAMETER": keys.parameter}, apiEvent,
			func(t *testing.T, b []byte) {
				var r struct {
					StatusCode int    `json:"statusCode"`
					Body       string `json:"body"`
				}
				if err := json.Unmarshal(b, &r); err != nil || r.StatusCode != http.StatusOK || !bytes.Contains([]byte(r.Body), []byte(`"deploy-via-pr"`)) {
					t.Errorf("the index GET gave %s", clip(b))
				}
			}},
	}
	for _, bin := range binaries {
		t.Run(bin.name, func(t *testing.T) {
			path := bootstrap(t, runtime.GOARCH, bin.name)
			env := templateEnv(t, bin.id, bin.env)
			var samples []coldSample
			for range coldRuns {
				f := start(t, bin.name, path, env)
				b := f.mustInvoke(t, bin.payload)
				first := time.Since(f.started)
				f.stop()
				bin.check(t, b)
				samples = append(samples, coldSample{listening: f.ready.Sub(f.started), init: f.initDuration(), first: first})
			}
			t.Logf("%s cold start (%s, %d runs): %s", bin.name, runtime.GOARCH, coldRuns, summarize(samples))
		})
	}
}

// TestBinaries checks that the bootstraps are what provided.al2023 runs
// and template.yaml deploys (static ELF executables for the architecture,
// stripped, no net/rpc (lambda.norpc), no build paths (-trimpath)), and
// logs their sizes, for the host and for arm64.
func TestBinaries(t *testing.T) {
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range slices.Compact([]string{runtime.GOARCH, deployArch}) {
		for _, name := range []string{"indexer", "api"} {
			t.Run(arch+"/"+name, func(t *testing.T) {
				path := bootstrap(t, arch, name)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				f, err := elf.NewFile(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("%s is no ELF file: %v", path, err)
				}
				if want, ok := machines[arch]; !ok || f.Machine != want {
					t.Errorf("machine %v, want %v", f.Machine, want)
				}
				for _, p := range f.Progs {
					if p.Type == elf.PT_INTERP {
						t.Error("dynamically linked (PT_INTERP): the binary needs a libc, CGO_ENABLED=0 was not in effect")
					}
				}
				if f.Section(".symtab") != nil {
					t.Error("not stripped (-ldflags=-s)")
				}
				if bytes.Contains(b, []byte("net/rpc.")) {
					t.Error("net/rpc is linked in: the build lacks -tags lambda.norpc")
				}
				if bytes.Contains(b, []byte(repo+"/")) {
					t.Errorf("the binary holds the build path %s: the build lacks -trimpath", repo)
				}
				t.Logf("%s/%s bootstrap: %d bytes (%.1f MiB)", arch, name, len(b), float64(len(b))/(1<<20))
			})
		}
	}
}

// BenchmarkWarmIndex invokes a warm indexer with the emulator's event for
// one key that is already indexed (the common case: a redelivery, or a
// re-upload of the same bytes) and with the reindex payload over the
// example bucket, through aws-lambda-rie and, for comparison, in-process.
func BenchmarkWarmIndex(b *testing.B) {
	cfg := awstest.Config(b)
	bucket := awstest.Bucket(b, cfg)
	queue := newEventQueue(b, cfg, bucket)
	files := exampleFiles(b)
	upload(b, awstest.S3(cfg), bucket, files)
	event := eventFor(b, queue.Receive(b, len(files)), "skills/deploy-via-pr.md")
	namespace := metricNamespace(b)
	fn := startIndexer(b, bucket, namespace)
	fn.mustInvoke(b, []byte(indexer.ReindexPayload))
	ref := inProcessIndexer(b, cfg, bucket, namespace)
	ctx := context.Background()
	for _, p := range []struct {
		name    string
		payload []byte
	}{{"event", event}, {"reindex", []byte(indexer.ReindexPayload)}} {
		b.Run(p.name+"/rie", func(b *testing.B) {
			for b.Loop() {
				fn.mustInvoke(b, p.payload)
			}
		})
		b.Run(p.name+"/in-process", func(b *testing.B) {
			for b.Loop() {
				if _, err := ref.Handle(ctx, p.payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWarmAPIIndex times a warm GET of the RFC index through the
// runtime API (the API function after its first request), beside the same
// event handled in-process: the difference is what the Lambda runtime
// interface and the event's JSON round trip cost.
func BenchmarkWarmAPIIndex(b *testing.B) {
	cfg := awstest.Config(b)
	bucket := awstest.Bucket(b, cfg)
	upload(b, awstest.S3(cfg), bucket, exampleFiles(b))
	namespace := metricNamespace(b)
	ix := startIndexer(b, bucket, namespace)
	ix.mustInvoke(b, []byte(indexer.ReindexPayload))
	ix.stop()
	keys := newAPIKeys(b, cfg)
	fn := start(b, "api", bootstrap(b, runtime.GOARCH, "api"), templateEnv(b, apiID, map[string]string{
		"SKILLDROP_BUCKET":            bucket,
		"SKILLDROP_METRIC_NAMESPACE":  namespace,
		"SKILLDROP_API_KEY_PARAMETER": keys.parameter,
	}))
	ref := inProcessAPI(b, cfg, bucket, namespace, keys.parameter)
	event := gatewayEvent(call{method: http.MethodGet, target: "/.well-known/agent-skills/index.json"}, "bench", time.Now())
	payload, err := json.Marshal(event)
	if err != nil {
		b.Fatal(err)
	}
	fn.mustInvoke(b, payload) // the first request loads the catalog
	ctx := context.Background()
	b.Run("rie", func(b *testing.B) {
		for b.Loop() {
			fn.mustInvoke(b, payload)
		}
	})
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			resp, err := ref.Handle(ctx, event)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("in-process index: %d %v", resp.StatusCode, err)
			}
		}
	})
}
