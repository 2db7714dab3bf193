//go:build e2e && scale

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
)

// How `skilldrop serve` is measured.
const (
	serveStarts   = 3                // starts of each build, the median reported (one when a start takes a minute)
	serveSettle   = 3 * time.Second  // after the last start-up re-index, before the idle CPU is sampled
	serveIdle     = 10 * time.Second // the idle CPU's sample
	copyIns       = 10               // files copied in, the median reported
	startDeadline = 3 * time.Minute  // for the first 200: a build that needs longer is a finding, not measured further
	serveDeadline = 5 * time.Minute  // for the start-up re-indexes to end
	copyDeadline  = time.Minute      // for a copied-in file to show
)

// startupIndexes is how many times each build's serve logs "indexed"
// before it only watches: base's Watch re-indexes the whole directory once
// more right after the re-index before the first request (issue 12).
var startupIndexes = map[string]int{"base": 2, "head": 1}

// userHZ is the unit of /proc/<pid>/stat's CPU times on Linux.
const userHZ = 100

// serveProc is one `skilldrop serve` of a build over a directory.
type serveProc struct {
	build   scaleBuild
	url     string // http://127.0.0.1:<port>
	cmd     *exec.Cmd
	out     *syncbuf.Buffer
	started time.Time
	exited  chan struct{}
	once    sync.Once
}

// startServe starts the build's serve over dir on a free loopback port; it
// does not wait for it to answer. The caller stops it (TestMain stops those
// kept for later tests).
func startServe(t testing.TB, bd scaleBuild, dir string) *serveProc {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", awstest.FreePort(t))
	p := &serveProc{build: bd, url: "http://" + addr, out: &syncbuf.Buffer{}, exited: make(chan struct{})}
	// INFO: the "indexed" lines say when the start-up re-indexes are done.
	p.cmd = exec.Command(bd.cli, "serve", "--dir", dir, "--addr", addr, "--log-level", "INFO")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start the %s serve: %v", bd.version, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p
}

// serveClient asks for bodies as they are (no transparent gzip) and waits
// as long as a start-up re-index of 50,000 skills may take.
var serveClient = &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}, Timeout: serveDeadline}

// get sends a GET of path with header and returns the status, the body
// and the ETag.
func (p *serveProc) get(path string, header map[string]string) (int, []byte, string, error) {
	req, err := http.NewRequest(http.MethodGet, p.url+path, nil)
	if err != nil {
		return 0, nil, "", err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := serveClient.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header.Get("ETag"), err
}

// waitOK polls path until it answers 200 and returns the time from the
// process's start.
func (p *serveProc) waitOK(path string) (time.Duration, error) {
	deadline := time.Now().Add(startDeadline)
	for {
		status, _, _, err := p.get(path, nil)
		if err == nil && status == http.StatusOK {
			return time.Since(p.started), nil
		}
		select {
		case <-p.exited:
			return 0, fmt.Errorf("exited before answering %s: %s", path, tail(p.out.String(), 1500))
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			last := strconv.Itoa(status)
			if err != nil {
				last = err.Error()
			}
			return 0, fmt.Errorf("no 200 for %s within %v (last: %s)", path, startDeadline, last)
		}
	}
}

// settle waits until the build's start-up re-indexes have logged, then
// serveSettle more.
func (p *serveProc) settle() error {
	want := startupIndexes[p.build.version]
	deadline := time.Now().Add(serveDeadline)
	for strings.Count(p.out.String(), `"msg":"indexed"`) < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("fewer than %d start-up re-indexes within %v", want, serveDeadline)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(serveSettle)
	return nil
}

// pause and resume stop and continue the process (SIGSTOP, SIGCONT), so
// that one build's serve takes no CPU while the other's is measured.
func (p *serveProc) pause()  { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }
func (p *serveProc) resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

// stop ends serve as Ctrl-C does, then kills it if it has not exited
// within 10 s; it is idempotent.
func (p *serveProc) stop() {
	p.once.Do(func() {
		p.resume()
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// cpu is the CPU time the process has used (user + system), from
// /proc/<pid>/stat.
func (p *serveProc) cpu(t testing.TB) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name, which is in parentheses: state is
	// field 3, utime 14 and stime 15.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		t.Fatalf("unreadable /proc/%d/stat: %q", p.cmd.Process.Pid, b)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/stat: %v", p.cmd.Process.Pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// copyIn writes a new skill into dir's skills/ as cp would and returns the
// time from the write to the index listing it, polled with If-None-Match.
func (p *serveProc) copyIn(t testing.TB, dir, name string) time.Duration {
	t.Helper()
	status, _, etag, err := p.get(rfcIndexPath, nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("the %s serve's index: %d %v", p.build.version, status, err)
	}
	body := skilltest.SkillMD(name, "1.0.0", "A skill copied into the served directory.")
	if err := os.WriteFile(filepath.Join(dir, "skills", name+".md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	want := []byte(`"name":"` + name + `"`)
	for time.Since(written) < copyDeadline {
		status, b, tag, err := p.get(rfcIndexPath, map[string]string{"If-None-Match": etag})
		switch {
		case err != nil:
			t.Fatalf("the %s serve's index: %v", p.build.version, err)
		case status == http.StatusOK && strings.Contains(string(b), string(want)):
			return time.Since(written)
		case status == http.StatusOK:
			etag = tag
		case status != http.StatusNotModified:
			t.Fatalf("the %s serve's index answered %d", p.build.version, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the %s serve did not list %s within %v", p.build.version, name, copyDeadline)
	return 0
}

// servedBucket is a build's serve over its copy of a bucket, kept (paused)
// from TestScale/serve for BenchmarkScale.
type servedBucket struct {
	build   scaleBuild
	dir     string
	proc    *serveProc // settled and paused; nil until then
	starts  []time.Duration
	failure string // why there is no proc
}

// servedKey names a servedBucket.
type servedKey struct {
	spec    bucketSpec
	version string
}

// servedFor returns the build's servedBucket of spec, created (not
// started) the first time.
func servedFor(t testing.TB, spec bucketSpec, bd scaleBuild) *servedBucket {
	t.Helper()
	scale.mu.Lock()
	sb := scale.served[servedKey{spec, bd.version}]
	scale.mu.Unlock()
	if sb != nil {
		return sb
	}
	sb = &servedBucket{build: bd, dir: copyOf(t, spec, bd.version, "serve")}
	scale.mu.Lock()
	defer scale.mu.Unlock()
	if scale.served == nil {
		scale.served = map[servedKey]*servedBucket{}
	}
	scale.served[servedKey{spec, bd.version}] = sb
	return sb
}

// start starts serve once more and returns it with the time to its first
// 200, or records why it could not.
func (sb *servedBucket) start(t testing.TB) (*serveProc, time.Duration, bool) {
	t.Helper()
	p := startServe(t, sb.build, sb.dir)
	d, err := p.waitOK(rfcIndexPath)
	if err != nil {
		p.stop()
		sb.failure = err.Error()
		return nil, 0, false
	}
	sb.starts = append(sb.starts, d)
	return p, d, true
}

// keep settles p and keeps it, paused, as the bucket's serve.
func (sb *servedBucket) keep(p *serveProc) bool {
	if err := p.settle(); err != nil {
		p.stop()
		sb.failure = err.Error()
		return false
	}
	sb.proc = p
	return true
}

// ready returns the bucket's settled serve, starting it if no test has;
// nil when the build could not serve the bucket.
func (sb *servedBucket) ready(t testing.TB) *serveProc {
	t.Helper()
	if sb.proc == nil && sb.failure == "" {
		if p, _, ok := sb.start(t); ok && sb.keep(p) {
			p.pause()
		}
	}
	return sb.proc
}

// stopServed stops every serve kept for later tests.
func stopServed() {
	scale.mu.Lock()
	defer scale.mu.Unlock()
	for _, sb := range scale.served {
		if sb.proc != nil {
			sb.proc.stop()
		}
	}
}

// testScaleServe measures `skilldrop serve` over each build's indexed copy
// of every bucket with default descriptions: start to the first 200 of the
// RFC index (median of serveStarts, the builds' starts interleaved; a
// start that takes a minute is not repeated, one with no 200 within
// startDeadline is the finding), the documents' sizes as served, the CPU
// of one core it uses over serveIdle once its start-up re-indexes are done,
// and the time from a file copied into skills/ to the index listing it
// (median of copyIns, interleaved). The other build's serve is paused
// (SIGSTOP) while one is measured.
func testScaleServe(t *testing.T) {
	s := settings(t)
	const startRow = "serve start to the first 200 (median of up to 3)"
	for _, spec := range s.specs() {
		if spec.long {
			continue
		}
		served := map[string]*servedBucket{}
		for _, bd := range s.builds {
			served[bd.version] = servedFor(t, spec, bd)
		}
		for run := range serveStarts {
			for _, bd := range s.builds {
				sb := served[bd.version]
				if sb.proc != nil || sb.failure != "" {
					continue
				}
				p, d, ok := sb.start(t)
				if !ok {
					continue
				}
				if run < serveStarts-1 && d < time.Minute {
					p.stop()
					continue
				}
				if !sb.keep(p) {
					continue
				}
				c0 := p.cpu(t)
				time.Sleep(serveIdle)
				idle := float64(p.cpu(t)-c0) / float64(serveIdle) * 100
				scale.figures.set("serve idle, CPU of one core over 10 s", spec, bd.version, percent(idle))
				p.pause()
			}
		}
		for _, bd := range s.builds {
			v, sb := bd.version, served[bd.version]
			t.Logf("%s %s: serve start to the first 200 %v", v, spec, sb.starts)
			if len(sb.starts) > 0 {
				scale.figures.set(startRow, spec, v, seconds(median(sb.starts)))
			}
			if sb.failure != "" {
				t.Logf("%s %s: serve: %s", v, spec, sb.failure)
				scale.figures.note(startRow, spec, v, clipText(sb.failure, 60))
				continue
			}
			p := sb.proc
			p.resume()
			for _, d := range []struct {
				row, path string
				header    map[string]string
			}{
				{"RFC index.json raw, via serve", rfcIndexPath, nil},
				{"RFC index.json gzip, via serve", rfcIndexPath, map[string]string{"Accept-Encoding": "gzip"}},
				{"skills/v1/pages/all.json raw, via serve", allPagePath, nil},
			} {
				status, b, _, err := p.get(d.path, d.header)
				if err != nil || status != http.StatusOK {
					scale.figures.note(d.row, spec, v, fmt.Sprintf("HTTP %d %v", status, err))
					continue
				}
				scale.figures.set(d.row, spec, v, megabytes(int64(len(b))))
			}
			p.pause()
		}
		copied := map[string][]time.Duration{}
		for i := range copyIns {
			for _, bd := range s.builds {
				p := served[bd.version].proc
				if p == nil {
					continue
				}
				p.resume()
				copied[bd.version] = append(copied[bd.version], p.copyIn(t, served[bd.version].dir, fmt.Sprintf("copied-in-%02d", i)))
				p.pause()
			}
		}
		for v, ds := range copied {
			t.Logf("%s %s: copied in to listed, median %v (min %v, max %v)", v, spec, median(ds), slices.Min(ds), slices.Max(ds))
			scale.figures.set("serve: file copied in to visible in the index (median of 10)", spec, v, seconds(median(ds)))
		}
	}
}
