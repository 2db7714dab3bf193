//go:build e2e && scale

package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/internal/skilltest"
)

// searchQuery is the search measured: two common words, a page of 50 (the
// words kind of pkg/manifest's BenchmarkSearchScale).
var searchQuery = "/api/v1/skills?take=50&q=" + url.QueryEscape("review terraform")

// BenchmarkScale times, for each bucket with default descriptions and each
// build, warm GETs against the build's serve (the RFC index without
// Accept-Encoding, a version document, a search) and one publish of a new
// small skill into the build's indexed copy (`skilldrop publish --dir`,
// one process per op, which indexes the key before it exits). Sub-benchmarks
// are <op>/<build>/<skills>; each runs once per round, the builds
// alternating, so that a noisy neighbour weighs on both alike (the names
// repeat: go test suffixes #01, #02, which `make bench-scale` strips for
// benchstat). Publishes report the child's CPU time per op beside the
// wall-clock ns/op. The medians over the rounds go to the run's table.
func BenchmarkScale(b *testing.B) {
	s := settings(b)
	for _, spec := range s.specs() {
		if spec.long {
			continue
		}
		bk := bucketFor(b, spec)
		gets := []struct{ op, path string }{
			{"index", rfcIndexPath},
			{"version", "/skills/v1/" + bk.publicSkill(b).Name + "/versions/" + catalogtest.Version + ".json"},
			{"search", searchQuery},
		}
		procs := map[string]*serveProc{}
		for _, bd := range s.builds {
			sb := servedFor(b, spec, bd)
			p := sb.ready(b)
			if p == nil {
				b.Logf("%s %s: no warm GETs: serve %s", bd.version, spec, sb.failure)
				continue
			}
			p.resume()
			for _, g := range gets {
				if status, body, _, err := p.get(g.path, nil); err != nil || status != http.StatusOK {
					b.Fatalf("%s %s: GET %s: %d %v %s", bd.version, spec, g.path, status, err, clip(body))
				}
			}
			p.pause()
			procs[bd.version] = p
		}
		for range s.rounds {
			for _, g := range gets {
				for _, bd := range s.builds {
					p := procs[bd.version]
					if p == nil {
						continue
					}
					p.resume()
					b.Run(benchName(g.op, bd.version, spec), func(b *testing.B) {
						var n int
						for b.Loop() {
							status, body, _, err := p.get(g.path, nil)
							if err != nil || status != http.StatusOK {
								b.Fatalf("GET %s: %d %v", g.path, status, err)
							}
							n = len(body)
						}
						b.ReportMetric(float64(n), "resp-B")
						benchResults.add(b, g.op, bd.version, spec)
					})
					p.pause()
				}
			}
		}
		// The serves are done with: stopped, so that a larger bucket's
		// measurements share the machine with none of them.
		for _, p := range procs {
			p.stop()
		}

		dirs, work := map[string]string{}, b.TempDir()
		for _, bd := range s.builds {
			dirs[bd.version] = copyOf(b, spec, bd.version, "publish")
		}
		serial := 0
		for range s.rounds {
			for _, bd := range s.builds {
				b.Run(benchName("publish", bd.version, spec), func(b *testing.B) {
					var cpu time.Duration
					for range b.N {
						b.StopTimer()
						serial++
						name := fmt.Sprintf("published-%s-%05d", bd.version, serial)
						file := filepath.Join(work, name+".md")
						if err := os.WriteFile(file, []byte(skilltest.SkillMD(name, "1.0.0", "A new small skill.")), 0o644); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						r, err := runCLI(bd, "publish", "--dir", dirs[bd.version], file)
						b.StopTimer()
						if err != nil || !strings.HasPrefix(r.out, "published ") {
							b.Fatalf("publish %s: %v\n%s", name, err, tail(r.out, 2000))
						}
						cpu += r.cpu
						b.StartTimer()
					}
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
					benchResults.add(b, "publish", bd.version, spec)
				})
			}
		}
	}
	benchResults.report()
}

func benchName(op, version string, spec bucketSpec) string {
	return fmt.Sprintf("%s/%s/%d", op, version, spec.n)
}

// benchOps are the sub-benchmarks' operations, in the order of the table.
var benchOps = []string{"index", "version", "search", "publish"}

// benchCollector keeps the ns/op of each round of every sub-benchmark, so
// that the run's table can show the median over the rounds.
type benchCollector struct {
	mu   sync.Mutex
	last map[string]benchSample // by the sub-benchmark's full name (the round's suffix included)
}

type benchSample struct {
	op, version string
	spec        bucketSpec
	nsPerOp     float64
}

// benchResults are BenchmarkScale's.
var benchResults benchCollector

// add records b's ns/op; go test reports the last call of a
// sub-benchmark's function, so a later call replaces an earlier one.
func (c *benchCollector) add(b *testing.B, op, version string, spec bucketSpec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]benchSample{}
	}
	c.last[b.Name()] = benchSample{op: op, version: version, spec: spec, nsPerOp: float64(b.Elapsed().Nanoseconds()) / float64(b.N)}
}

// report puts the median ns/op over the rounds into the run's table.
func (c *benchCollector) report() {
	c.mu.Lock()
	defer c.mu.Unlock()
	type key struct {
		op, version string
		spec        bucketSpec
	}
	rounds := map[key][]float64{}
	var specs []bucketSpec
	for _, r := range c.last {
		k := key{r.op, r.version, r.spec}
		rounds[k] = append(rounds[k], r.nsPerOp)
		if !slices.Contains(specs, r.spec) {
			specs = append(specs, r.spec)
		}
	}
	slices.SortFunc(specs, func(a, b bucketSpec) int { return a.n - b.n })
	for _, op := range benchOps {
		for _, spec := range specs {
			for _, v := range scaleVersions {
				if ns := rounds[key{op, v, spec}]; len(ns) > 0 {
					slices.Sort(ns)
					row := fmt.Sprintf("BenchmarkScale/%s, median of %d rounds", op, len(ns))
					scale.figures.set(row, spec, v, figure{v: ns[len(ns)/2] / 1e6, unit: "ms"})
				}
			}
		}
	}
}
