//go:build e2e && scale

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/catalogtest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// The api's cold start is measured as TestColdStart measures it (process
// start under aws-lambda-rie to the first response), over each build's
// catalog uploaded to a bucket of its own in the emulator.

const (
	rfcIndexPath = "/.well-known/agent-skills/index.json"
	allPagePath  = "/skills/v1/pages/all.json"
)

// uploadedPrefixes are what the api reads of an indexed bucket for the
// requests measured (the index and a version document): the catalog and,
// for head, the documents rendered for it. The sources and blobs stay on
// disk: the emulator takes about 4 ms per object, so 100,000 of them would
// cost minutes per build for nothing these requests read.
var uploadedPrefixes = []string{"catalog/", "rendered/"}

// uploadIndexed puts dir's files under uploadedPrefixes into bucket,
// eight at a time, and returns how many and how long it took.
func uploadIndexed(t testing.TB, client *s3.Client, bucket, dir string) (int, time.Duration) {
	t.Helper()
	var keys []string
	for _, prefix := range uploadedPrefixes {
		root := filepath.Join(dir, filepath.FromSlash(prefix))
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if os.IsNotExist(err) && p == root {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			keys = append(keys, filepath.ToSlash(rel))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan string)
	)
	for range 8 {
		wg.Go(func() {
			for k := range next {
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(k)))
				if err == nil {
					_, err = client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: bytes.NewReader(b)})
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("put %s: %w", k, err))
					mu.Unlock()
				}
			}
		})
	}
	for _, k := range keys {
		next <- k
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	return len(keys), time.Since(started)
}

// pinRenditions pins the rendered documents of the catalog uploaded to
// bucket (versioned) to the S3 versions they were uploaded as, in a new
// catalog revision, as the deployed indexer pins what it writes: a catalog
// indexed into a directory records no versions, and without them the api
// can neither redirect to a document nor trust one it reads. It returns
// how many renditions it pinned.
func pinRenditions(t testing.TB, cfg aws.Config, bucket string) int {
	t.Helper()
	ctx := context.Background()
	st := store.NewS3(cfg, bucket)
	n := 0
	_, err := catalog.Update(ctx, st, func(c *catalog.Catalog) error {
		n = 0
		if len(c.Documents) == 0 {
			return catalog.ErrNoChange
		}
		for i := range c.Documents {
			d := &c.Documents[i]
			for _, r := range d.Renditions() {
				info, err := st.Head(ctx, r.Key)
				if err != nil {
					return fmt.Errorf("head %s: %w", r.Key, err)
				}
				r.VersionID, r.ETag = info.VersionID, info.ETag
				n++
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, catalog.ErrNoChange) {
		t.Fatalf("pin the rendered documents of %s: %v", bucket, err)
	}
	return n
}

// coldTarget is one build's catalog of one bucket in the emulator.
type coldTarget struct {
	spec    bucketSpec
	build   scaleBuild
	env     map[string]string
	version string // a version document to ask for: /skills/v1/<name>/versions/<v>.json
	samples []coldRun
}

// coldRun is one cold start of the api and the answers it gave.
type coldRun struct {
	first   time.Duration // process start to the first index response, as received (before this test decodes it)
	status  int           // of the index GET without Accept-Encoding; 0 for a function error
	failure string        // the invocation's error, when there was no response
	hwm     int64         // VmHWM of the bootstrap after the requests, bytes
	// Only the first run follows redirects and asks for more.
	identity, gzip     int64 // bytes of the index as a client receives it, -1 when it does not
	gzipStatus         int
	follow             time.Duration // the redirect's GET, when there was one
	versionDoc, allDoc int           // statuses of a version document and pages/all.json
	// Timed routes (first run only), asked after the index, a version
	// document and pages/all.json (so the entries are loaded): the first
	// timed answer (a search's builds the revision's search index) and the
	// median of warmAsks more.
	routes map[string]routeTiming
}

// routeTiming is one route's first and warm answers on a started function.
type routeTiming struct {
	status      int
	first, warm time.Duration
}

// warmAsks is how many warm answers a timed route's median is of.
const warmAsks = 5

// timeRoute asks for target once, then warmAsks times, timing each to the
// response received.
func (f *function) timeRoute(ctx context.Context, target string) routeTiming {
	ask := func() (int, time.Duration) {
		start := time.Now()
		r, err := f.ask(ctx, target, nil)
		if err != nil {
			return 0, 0
		}
		return r.status, r.received.Sub(start)
	}
	var rt routeTiming
	rt.status, rt.first = ask()
	var warm []time.Duration
	for range warmAsks {
		if _, d := ask(); d > 0 {
			warm = append(warm, d)
		}
	}
	if len(warm) > 0 {
		rt.warm = median(warm)
	}
	return rt
}

// gatewayResponse is the api's answer to one API Gateway event.
type gatewayResponse struct {
	status  int
	headers map[string]string
	body    []byte
	// received is when the runtime API handed the response over: what
	// follows (decoding the envelope here) is this test's cost, not the
	// function's, and grows with the body.
	received time.Time
}

// ask invokes the api with a GET of target and decodes the response.
func (f *function) ask(ctx context.Context, target string, header map[string]string) (gatewayResponse, error) {
	raw, err := json.Marshal(gatewayEvent(call{method: http.MethodGet, target: target, header: header}, "scale", time.Now()))
	if err != nil {
		return gatewayResponse{}, err
	}
	payload, err := f.invoke(ctx, raw)
	if err != nil {
		return gatewayResponse{}, err
	}
	received := time.Now()
	var r events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(payload, &r); err != nil {
		return gatewayResponse{}, fmt.Errorf("no API Gateway response: %w: %s", err, clip(payload))
	}
	if r.StatusCode == 0 {
		return gatewayResponse{}, fmt.Errorf("no API Gateway response: %s", clip(payload))
	}
	out := gatewayResponse{status: r.StatusCode, headers: r.Headers, body: []byte(r.Body), received: received}
	if r.IsBase64Encoded {
		if out.body, err = base64.StdEncoding.DecodeString(r.Body); err != nil {
			return out, fmt.Errorf("base64 body: %w", err)
		}
	}
	return out, nil
}

// rawClient receives bodies as sent: no transparent gzip decoding.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 2 * time.Minute}

// received is the size of what a client gets for r: the body, or for a
// redirect the body at its Location (one redirect, as the issue allows).
func received(r gatewayResponse) (int64, time.Duration, error) {
	switch r.status {
	case http.StatusOK:
		return int64(len(r.body)), 0, nil
	case http.StatusFound:
		started := time.Now()
		resp, err := rawClient.Get(r.headers["Location"])
		if err != nil {
			return -1, 0, err
		}
		defer func() { _ = resp.Body.Close() }()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("the redirect's target answered %d", resp.StatusCode)
		}
		return n, time.Since(started), err
	}
	return -1, 0, fmt.Errorf("HTTP %d", r.status)
}

// coldStartOnce starts the api over tg's bucket, asks for the RFC index as
// plain curl does (no Accept-Encoding) and, when detail is set, for its
// gzip encoding, a version document and pages/all.json, then reads the
// bootstrap's peak RSS and stops it.
func coldStartOnce(t *testing.T, tg *coldTarget, detail bool) coldRun {
	t.Helper()
	var f *function
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if f, err = launch(t, rieExecutable(t), "api", tg.build.api, tg.env); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		t.Fatalf("start the %s api: %v", tg.build.version, err)
	}
	defer f.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := coldRun{identity: -1, gzip: -1}
	r, err := f.ask(ctx, rfcIndexPath, nil)
	run.first = time.Since(f.started)
	if !r.received.IsZero() {
		run.first = r.received.Sub(f.started)
	}
	if err != nil {
		run.failure = err.Error()
	}
	run.status = r.status
	if detail {
		var rerr error
		if run.identity, run.follow, rerr = received(r); rerr != nil {
			t.Logf("%s %s: the index without Accept-Encoding reaches no client: %v", tg.build.version, tg.spec, rerr)
		}
		if gz, err := f.ask(ctx, rfcIndexPath, map[string]string{"Accept-Encoding": "gzip"}); err == nil {
			run.gzipStatus = gz.status
			if gz.headers["Content-Encoding"] == "gzip" || gz.status == http.StatusFound {
				run.gzip, _, _ = received(gz)
			}
		} else {
			t.Logf("%s %s: the gzip index: %v", tg.build.version, tg.spec, err)
		}
		if tg.version != "" {
			if v, err := f.ask(ctx, tg.version, nil); err == nil {
				run.versionDoc = v.status
			}
		}
		if a, err := f.ask(ctx, allPagePath, nil); err == nil {
			run.allDoc = a.status
		}
		if tg.version != "" {
			run.routes = map[string]routeTiming{
				"a version document": f.timeRoute(ctx, tg.version),
				"a search":           f.timeRoute(ctx, searchQuery),
			}
		}
	}
	run.hwm = bootstrapHWM(t, f)
	if detail && (run.failure != "" || run.status != http.StatusOK && run.status != http.StatusFound) {
		t.Logf("%s %s: the index GET gave %d %s; the function's output:\n%s", tg.build.version, tg.spec, run.status, run.failure, tail(f.out.String(), 1500))
	}
	return run
}

// bootstrapHWM is the peak resident set (VmHWM) of the function process
// aws-lambda-rie runs, or -1 when it cannot be read.
func bootstrapHWM(t testing.TB, f *function) int64 {
	t.Helper()
	for _, pid := range childPIDs(f.cmd.Process.Pid) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil || strings.TrimSpace(string(comm)) != "bootstrap" {
			continue
		}
		if kb, err := procStatusKB(pid, "VmHWM"); err == nil {
			return kb << 10
		}
	}
	t.Logf("no bootstrap process under aws-lambda-rie %d", f.cmd.Process.Pid)
	return -1
}

// procStatusKB reads a "Name:  N kB" field of /proc/<pid>/status.
func procStatusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// median returns the median of ds (the upper one of an even count).
func median[T int64 | time.Duration](ds []T) T {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// testScaleColdStart uploads each build's catalog of every bucket, and of
// an empty one, to buckets of their own in the emulator, then starts the
// build's api under aws-lambda-rie coldRuns times over each, the runs of
// all targets interleaved, and records: process start to the first RFC
// index response (median), that response's status, what a client without
// Accept-Encoding and one with gzip receive (following a redirect), and the
// bootstrap's peak RSS. Issue 11's bars are ratios to the empty catalog's
// cold start of the same build: at most 16x at 50,000 skills, 5x at 10,000.
func testScaleColdStart(t *testing.T) {
	s := settings(t)
	cfg := awstest.Config(t)
	client := awstest.S3(cfg)
	keys := newAPIKeys(t, cfg)
	namespace := metricNamespace(t)
	var targets []*coldTarget
	for _, spec := range append([]bucketSpec{{}}, s.specs()...) {
		b := bucketFor(t, spec)
		for _, bd := range s.builds {
			ib := b.indexed[bd.version]
			if ib.err != nil {
				scale.figures.note("api cold start to the first index response (median of 5)", spec, bd.version, "no catalog")
				continue
			}
			bucket := awstest.VersionedBucket(t, cfg)
			n, took := uploadIndexed(t, client, bucket, ib.dir)
			pinned := pinRenditions(t, cfg, bucket)
			t.Logf("bucket %s, %s: %d objects uploaded in %v, %d rendered documents pinned to their S3 versions",
				spec, bd.version, n, took.Round(time.Millisecond), pinned)
			tg := &coldTarget{spec: spec, build: bd, env: templateEnv(t, apiID, map[string]string{
				"SKILLDROP_BUCKET":            bucket,
				"SKILLDROP_METRIC_NAMESPACE":  namespace,
				"SKILLDROP_API_KEY_PARAMETER": keys.parameter,
			})}
			if b.gen != nil {
				tg.version = "/skills/v1/" + b.publicSkill(t).Name + "/versions/" + catalogtest.Version + ".json"
			}
			targets = append(targets, tg)
		}
	}
	for run := range coldRuns {
		for _, tg := range targets {
			tg.samples = append(tg.samples, coldStartOnce(t, tg, run == 0))
		}
	}
	empty := map[string]time.Duration{}
	for _, tg := range targets {
		var firsts []time.Duration
		var hwms []int64
		for _, r := range tg.samples {
			firsts = append(firsts, r.first)
			hwms = append(hwms, r.hwm)
		}
		first, d := median(firsts), tg.samples[0]
		v := tg.build.version
		if tg.spec.n == 0 {
			empty[v] = first
		}
		t.Logf("%s %s: first index response median %v (min %v, max %v), status %d %s; peak RSS median %.0f MiB; "+
			"as received: %d bytes plain, %d gzip (status %d), redirect followed in %v; version document %d, pages/all.json %d",
			v, tg.spec, first.Round(100*time.Microsecond), slices.Min(firsts).Round(100*time.Microsecond), slices.Max(firsts).Round(100*time.Microsecond),
			d.status, d.failure, mib(median(hwms)), d.identity, d.gzip, d.gzipStatus, d.follow.Round(time.Millisecond), d.versionDoc, d.allDoc)
		scale.figures.set("api cold start to the first index response (median of 5)", tg.spec, v, millis(first))
		scale.figures.set("api cold start to the first index response (min of 5)", tg.spec, v, millis(slices.Min(firsts)))
		if e := empty[v]; e > 0 && tg.spec.n > 0 {
			scale.figures.set("api cold start, ratio to the empty catalog's", tg.spec, v, figure{v: float64(first) / float64(e), unit: "x"})
		}
		scale.figures.set("api peak RSS (VmHWM, median)", tg.spec, v, megabytes(median(hwms)))
		status := strconv.Itoa(d.status)
		if d.failure != "" {
			status = "error: " + clipText(d.failure, 80)
		}
		scale.figures.note("api index GET without Accept-Encoding: status", tg.spec, v, status)
		if d.identity >= 0 {
			scale.figures.set("RFC index.json raw, as received through the api", tg.spec, v, megabytes(d.identity))
		}
		if d.gzip >= 0 {
			scale.figures.set("RFC index.json gzip, as received through the api", tg.spec, v, megabytes(d.gzip))
		}
		for _, name := range slices.Sorted(maps.Keys(d.routes)) {
			rt := d.routes[name]
			t.Logf("%s %s: %s: status %d, first %v, warm median %v", v, tg.spec, name, rt.status, rt.first.Round(10*time.Microsecond), rt.warm.Round(10*time.Microsecond))
			if rt.status != http.StatusOK {
				scale.figures.note("api "+name+", first timed", tg.spec, v, strconv.Itoa(rt.status))
				continue
			}
			scale.figures.set("api "+name+", first timed", tg.spec, v, millis(rt.first))
			scale.figures.set("api "+name+", warm (median of 5)", tg.spec, v, millis(rt.warm))
		}
	}
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
