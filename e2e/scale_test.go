//go:build e2e && scale

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/catalog"
)

// The scale tier (build tags e2e and scale, `make bench-scale`) measures
// issue 11's table through the binaries of two builds in one run: "base",
// the merge-base the figures were taken on, and "head", this tree.
// The two builds' Go APIs differ, so everything goes through their
// executables: the skilldrop CLI (reindex, serve, publish) and the api
// bootstrap under aws-lambda-rie. Each build indexes its own copy of the
// same generated bucket, in its own catalog format.
//
// scale_test.go holds the run's settings, the buckets, the table of
// figures and TestScale; scale_cold_test.go, scale_serve_test.go and
// scale_bench_test.go measure.

// What `make bench-scale` sets.
const (
	envScaleBuild  = "SKILLDROP_SCALE_BUILD"  // <dir>/<version>/skilldrop and <dir>/<version>/api/bootstrap
	envScaleSizes  = "SKILLDROP_SCALE_SIZES"  // comma-separated skill counts (default 1000)
	envScaleLong   = "SKILLDROP_SCALE_LONG"   // skill counts also generated with long descriptions (default none)
	envScaleRounds = "SKILLDROP_SCALE_ROUNDS" // interleaved rounds of each benchmark (default 3)
	envScaleJobs   = "SKILLDROP_SCALE_JOBS"   // re-indexes run at once while the buckets are prepared (default 3)
)

// scaleVersions are the builds compared, the baseline first.
var scaleVersions = []string{"base", "head"}

// longDescription is the description length of the "long" buckets: the
// 1,000 characters the issue tried, within skillmd's 1,024.
const longDescription = 1000

// scaleBuild is one build's executables.
type scaleBuild struct {
	version string
	cli     string // the skilldrop CLI
	api     string // functions/api's bootstrap for the host
}

// scaleSettings is what the run measures.
type scaleSettings struct {
	builds []scaleBuild
	sizes  []int
	long   []int
	rounds int
	jobs   int
}

// bucketSpec names one generated bucket: n skills, with catalogtest's
// default 200-character descriptions or long ones.
type bucketSpec struct {
	n    int
	long bool
}

func (s bucketSpec) String() string {
	if s.long {
		return fmt.Sprintf("%d-long", s.n)
	}
	return strconv.Itoa(s.n)
}

// specs are the buckets the run measures, in size order: every size with
// default descriptions, then the long ones.
func (s scaleSettings) specs() []bucketSpec {
	var out []bucketSpec
	for _, n := range s.sizes {
		out = append(out, bucketSpec{n: n})
	}
	for _, n := range s.long {
		out = append(out, bucketSpec{n: n, long: true})
	}
	return out
}

// scale is the state of the run, shared by its tests and benchmarks and
// torn down by TestMain: buckets are generated and indexed once, by
// whichever test needs them first.
var scale struct {
	once     sync.Once
	settings scaleSettings
	err      error
	root     string // every bucket of the run lives below it

	mu      sync.Mutex
	buckets map[bucketSpec]*scaleBucket
	served  map[servedKey]*servedBucket
	figures figureTable
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopServed()
	if len(scale.figures.rows) > 0 {
		fmt.Print(scale.figures.markdown())
	}
	if scale.root != "" {
		_ = os.RemoveAll(scale.root)
	}
	os.Exit(code)
}

// settings reads the run's settings once; a missing build fails the test.
func settings(t testing.TB) scaleSettings {
	t.Helper()
	scale.once.Do(func() { scale.settings, scale.err = loadSettings() })
	if scale.err != nil {
		t.Fatal(scale.err)
	}
	return scale.settings
}

func loadSettings() (scaleSettings, error) {
	var s scaleSettings
	dir := os.Getenv(envScaleBuild)
	if dir == "" {
		return s, fmt.Errorf("%s is not set: run the scale tier with `make bench-scale`, which builds both versions", envScaleBuild)
	}
	for _, v := range scaleVersions {
		b := scaleBuild{version: v, cli: filepath.Join(dir, v, "skilldrop"), api: filepath.Join(dir, v, "api", "bootstrap")}
		for _, p := range []string{b.cli, b.api} {
			if _, err := os.Stat(p); err != nil {
				return s, fmt.Errorf("the %s build: %w (run `make bench-scale`)", v, err)
			}
		}
		s.builds = append(s.builds, b)
	}
	var err error
	if s.sizes, err = intList(envScaleSizes, "1000"); err != nil {
		return s, err
	}
	if s.long, err = intList(envScaleLong, ""); err != nil {
		return s, err
	}
	if s.rounds, err = positive(envScaleRounds, 3); err != nil {
		return s, err
	}
	if s.jobs, err = positive(envScaleJobs, 3); err != nil {
		return s, err
	}
	return s, nil
}

// positive parses the count in the variable name, def when unset.
func positive(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive count", name, v)
	}
	return n, nil
}

// intList parses the comma-separated positive counts of the variable name.
func intList(name, def string) ([]int, error) {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s=%q: want comma-separated positive counts", name, v)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// scaleBucket is one generated bucket and each build's indexed copy of it.
type scaleBucket struct {
	spec    bucketSpec
	gen     *catalogtest.Bucket // nil for the empty bucket
	indexed map[string]*indexedBucket
}

// indexedBucket is a directory bucket as one build's `reindex --dir` left it.
type indexedBucket struct {
	dir string
	run cliRun
	// err is the re-index's failure: a finding to report, not a test error.
	err error
}

// catalogBytes is the size of catalog/catalog.json, or -1 without one.
func (ib *indexedBucket) catalogBytes() int64 {
	fi, err := os.Stat(filepath.Join(ib.dir, filepath.FromSlash(catalog.Key)))
	if err != nil {
		return -1
	}
	return fi.Size()
}

// publicSkill is a top-level, public skill of the bucket, near the middle
// of the name order (what a version document or a search is asked about).
func (b *scaleBucket) publicSkill(t testing.TB) catalogtest.Item {
	t.Helper()
	items := b.gen.Skills
	for i := len(items) / 2; i < len(items); i++ {
		if it := items[i]; it.Listing == "" && !it.Authenticated {
			return it
		}
	}
	t.Fatalf("bucket %s has no public top-level skill", b.spec)
	return catalogtest.Item{}
}

// bucketFor returns the bucket of spec, preparing it first if no test has.
func bucketFor(t testing.TB, spec bucketSpec) *scaleBucket {
	t.Helper()
	prepareBuckets(t, []bucketSpec{spec})
	scale.mu.Lock()
	defer scale.mu.Unlock()
	return scale.buckets[spec]
}

// prepareBuckets generates each bucket of specs not prepared yet and has
// every build re-index a linked copy of it, scaleJobs re-indexes at once,
// the largest first (the merge-base's re-index of a directory grows with
// the square of its size: it lists skills/ for every key). A spec of zero
// skills is an empty directory.
func prepareBuckets(t testing.TB, specs []bucketSpec) {
	t.Helper()
	s := settings(t)
	scale.mu.Lock()
	defer scale.mu.Unlock()
	if scale.root == "" {
		root, err := os.MkdirTemp("", "skilldrop-scale-")
		if err != nil {
			t.Fatal(err)
		}
		scale.root = root
		scale.buckets = map[bucketSpec]*scaleBucket{}
	}
	type job struct {
		b  *scaleBucket
		bd scaleBuild
		ib *indexedBucket
	}
	var jobs []job
	for _, spec := range specs {
		if scale.buckets[spec] != nil {
			continue
		}
		b := &scaleBucket{spec: spec, indexed: map[string]*indexedBucket{}}
		src := filepath.Join(scale.root, spec.String(), "sources")
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		if spec.n > 0 {
			cs := catalogtest.Default(spec.n)
			if spec.long {
				cs.DescriptionLen = longDescription
			}
			b.gen = catalogtest.Generate(cs)
			started := time.Now()
			b.gen.WriteDir(t, src)
			t.Logf("bucket %s: %d skills, %d sub-agents written in %v", spec, len(b.gen.Skills), len(b.gen.Subagents), time.Since(started).Round(time.Millisecond))
		}
		for _, bd := range s.builds {
			ib := &indexedBucket{dir: filepath.Join(scale.root, spec.String(), bd.version)}
			linkTree(t, src, ib.dir)
			b.indexed[bd.version] = ib
			jobs = append(jobs, job{b, bd, ib})
		}
		scale.buckets[spec] = b
	}
	// The largest first, base before head: base's are the long ones.
	slices.SortStableFunc(jobs, func(a, b job) int {
		if a.b.spec.n != b.b.spec.n {
			return b.b.spec.n - a.b.spec.n
		}
		return strings.Compare(a.bd.version, b.bd.version)
	})
	var wg sync.WaitGroup
	next := make(chan job)
	for range s.jobs {
		wg.Go(func() {
			for j := range next {
				j.ib.run, j.ib.err = runCLI(j.bd, reindexArgs(j.bd, j.ib.dir)...)
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, j := range jobs {
		spec, ib := j.b.spec, j.ib
		if ib.err != nil {
			t.Logf("bucket %s: the %s re-index failed after %v: %v", spec, j.bd.version, ib.run.wall.Round(time.Millisecond), ib.err)
			continue
		}
		t.Logf("bucket %s: the %s re-index took %v (CPU %v); catalog.json %d bytes",
			spec, j.bd.version, ib.run.wall.Round(time.Millisecond), ib.run.cpu.Round(time.Millisecond), ib.catalogBytes())
	}
}

// reindexArgs re-indexes dir as the build's deployment would: head renders
// the documents too large for one response for the origin the API
// Gateway events name (the template passes the API's origin to the
// indexer); base has nothing of the kind.
func reindexArgs(b scaleBuild, dir string) []string {
	args := []string{"reindex", "--dir", dir}
	if b.version != "base" {
		args = append(args, "--origin", gatewayOrigin)
	}
	return args
}

// cliRun is what one run of a CLI command cost, from the kernel's
// accounting of the child process. (Not its peak RSS: a child's ru_maxrss
// counts the test process's own, which it was forked from.)
type cliRun struct {
	wall time.Duration
	cpu  time.Duration // user + system
	out  string        // stdout and stderr
}

// runCLI runs the build's CLI with args and returns its costs; a non-zero
// exit is an error carrying the end of its output.
func runCLI(b scaleBuild, args ...string) (cliRun, error) {
	cmd := exec.Command(b.cli, args...)
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	started := time.Now()
	err := cmd.Run()
	r := cliRun{wall: time.Since(started), out: out.String()}
	if ps := cmd.ProcessState; ps != nil {
		r.cpu = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return r, fmt.Errorf("%s %s: %w: %s", b.version, strings.Join(args[:1], " "), err, tail(r.out, 1500))
	}
	return r, nil
}

// linkTree makes dst a copy of the tree at src whose files are hard links:
// instant at 50,000 files, and safe because no build writes a file in
// place (the directory store writes a temporary file and renames it).
// .skilldrop/ (a store's lock and temporary files) is left out.
func linkTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() && rel == ".skilldrop" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return os.Link(p, target)
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

// copyOf is a linked copy of the build's indexed bucket of spec, named
// purpose, that a test may write into (serve and publish do).
func copyOf(t testing.TB, spec bucketSpec, version, purpose string) string {
	t.Helper()
	ib := bucketFor(t, spec).indexed[version]
	if ib.err != nil {
		t.Skipf("the %s build could not index bucket %s: %v", version, spec, ib.err)
	}
	dir := filepath.Join(filepath.Dir(ib.dir), version+"-"+purpose)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	linkTree(t, ib.dir, dir)
	return dir
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// TestScale measures issue 11's table in one run, in this order: the
// buckets and their re-index (buckets), the api's cold start under
// aws-lambda-rie (cold), and `skilldrop serve` (serve). BenchmarkScale
// measures the rest against the same buckets. Nothing is asserted but that
// each build answers what it is asked; the figures go to the log and the
// run's table.
func TestScale(t *testing.T) {
	t.Run("buckets", testScaleBuckets)
	t.Run("cold", testScaleColdStart)
	t.Run("serve", testScaleServe)
}

// testScaleBuckets indexes every bucket of the run with each build and
// records what the re-index cost and the catalog it wrote. A build that
// cannot index a bucket is a figure too (the issue: the merge-base writes
// a 78 MB catalog at 50,000 skills with long descriptions, which its
// readers refuse).
func testScaleBuckets(t *testing.T) {
	s := settings(t)
	specs := append([]bucketSpec{{}}, s.specs()...)
	prepareBuckets(t, specs)
	for _, spec := range specs[1:] {
		b := bucketFor(t, spec)
		for _, bd := range s.builds {
			ib := b.indexed[bd.version]
			if ib.err != nil {
				scale.figures.note(fmt.Sprintf("reindex --dir, wall (%d at once)", s.jobs), spec, bd.version, "failed: "+clipText(ib.err.Error(), 80))
				continue
			}
			scale.figures.set(fmt.Sprintf("reindex --dir, wall (%d at once)", s.jobs), spec, bd.version, seconds(ib.run.wall))
			scale.figures.set("reindex --dir, CPU", spec, bd.version, seconds(ib.run.cpu))
			scale.figures.set("catalog.json", spec, bd.version, megabytes(ib.catalogBytes()))
		}
	}
}

// figure is one measured value and how to print it.
type figure struct {
	v    float64
	unit string // "s", "ms", "MB", "%" or ""
	text string // a finding in place of a value ("failed", "HTTP 503")
}

func seconds(d time.Duration) figure { return figure{v: d.Seconds(), unit: "s"} }
func millis(d time.Duration) figure  { return figure{v: float64(d.Microseconds()) / 1000, unit: "ms"} }
func megabytes(b int64) figure       { return figure{v: float64(b) / 1e6, unit: "MB"} }
func percent(p float64) figure       { return figure{v: p, unit: "%"} }

func (f figure) String() string {
	switch {
	case f.text != "":
		return f.text
	case f.unit == "ms" && f.v < 1:
		return fmt.Sprintf("%.1f µs", f.v*1000)
	case f.unit == "ms":
		return fmt.Sprintf("%.1f ms", f.v)
	case f.unit == "s":
		return fmt.Sprintf("%.2f s", f.v)
	case f.unit == "MB":
		return fmt.Sprintf("%.2f MB", f.v)
	case f.unit == "%":
		return fmt.Sprintf("%.1f%%", f.v)
	case f.unit == "x":
		return fmt.Sprintf("%.1fx", f.v)
	}
	return fmt.Sprintf("%g", f.v)
}

// figureTable is the run's figures by row, bucket and build, printed by
// TestMain as one table with head/base ratios.
type figureTable struct {
	mu   sync.Mutex
	rows []string // in the order first set
	vals map[string]map[bucketSpec]map[string]figure
}

func (ft *figureTable) set(row string, spec bucketSpec, version string, f figure) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.vals == nil {
		ft.vals = map[string]map[bucketSpec]map[string]figure{}
	}
	if ft.vals[row] == nil {
		ft.rows = append(ft.rows, row)
		ft.vals[row] = map[bucketSpec]map[string]figure{}
	}
	if ft.vals[row][spec] == nil {
		ft.vals[row][spec] = map[string]figure{}
	}
	ft.vals[row][spec][version] = f
}

// note records a finding in place of a figure.
func (ft *figureTable) note(row string, spec bucketSpec, version, text string) {
	ft.set(row, spec, version, figure{text: text})
}

// markdown is the table: one line per row and bucket, base, head, head/base.
func (ft *figureTable) markdown() string {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	var b strings.Builder
	b.WriteString("\n| figure | skills | base | head | head/base |\n|---|---|---|---|---|\n")
	for _, row := range ft.rows {
		specs := make([]bucketSpec, 0, len(ft.vals[row]))
		for s := range ft.vals[row] {
			specs = append(specs, s)
		}
		slices.SortFunc(specs, func(a, c bucketSpec) int {
			if a.long != c.long {
				return map[bool]int{false: -1, true: 1}[a.long]
			}
			return a.n - c.n
		})
		for _, s := range specs {
			base, okB := ft.vals[row][s]["base"]
			head, okH := ft.vals[row][s]["head"]
			ratio := ""
			if okB && okH && base.text == "" && head.text == "" && base.v != 0 {
				ratio = fmt.Sprintf("%.2f", head.v/base.v)
			}
			cell := func(f figure, ok bool) string {
				if !ok {
					return ""
				}
				return f.String()
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row, s, cell(base, okB), cell(head, okH), ratio)
		}
	}
	return b.String()
}
