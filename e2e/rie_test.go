//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/internal/samtemplate"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
)

// Where `make e2e` puts what the tests run.
const (
	envRIE   = "SKILLDROP_E2E_RIE"   // the aws-lambda-rie executable
	envBuild = "SKILLDROP_E2E_BUILD" // <dir>/<GOARCH>/<function>/bootstrap
)

// deployArch is the architecture template.yaml deploys (Architectures: [arm64]).
const deployArch = "arm64"

// Logical ids of the functions in template.yaml.
const (
	indexerID = "IndexerFunction"
	apiID     = "ApiFunction"
)

// invokePath is the Lambda Invoke API path aws-lambda-rie serves.
const invokePath = "/2015-03-31/functions/function/invocations"

// bootstrap returns the path of function's bootstrap built for arch.
func bootstrap(t testing.TB, arch, function string) string {
	t.Helper()
	dir := os.Getenv(envBuild)
	if dir == "" {
		t.Fatalf("%s is not set: run the end-to-end tests with `make e2e`, which builds the binaries and aws-lambda-rie", envBuild)
	}
	p := filepath.Join(dir, arch, function, "bootstrap")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the %s bootstrap for %s: %v (run `make e2e`)", function, arch, err)
	}
	return p
}

// rieExecutable returns the path of aws-lambda-rie.
func rieExecutable(t testing.TB) string {
	t.Helper()
	p := os.Getenv(envRIE)
	if p == "" {
		t.Fatalf("%s is not set: run the end-to-end tests with `make e2e`, which builds the binaries and aws-lambda-rie", envRIE)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("aws-lambda-rie: %v (run `make e2e`)", err)
	}
	return p
}

// function is one Lambda binary running under aws-lambda-rie, both of whose
// addresses (the Invoke API and the runtime API) are loopback ports of its own.
type function struct {
	name      string
	invokeURL string
	cmd       *exec.Cmd
	out       *syncbuf.Buffer // aws-lambda-rie's output, which carries the function's
	exited    chan struct{}
	started   time.Time // when the process was started
	ready     time.Time // when both its addresses first accepted a connection
	stopOnce  sync.Once
}

// start runs bootstrap under aws-lambda-rie with exactly env (nothing of the
// test's own environment leaks in), waits until it accepts invocations, and
// stops it when the test ends; its output goes to the test log if the test
// failed.
func start(t testing.TB, name, bootstrap string, env map[string]string) *function {
	t.Helper()
	rie := rieExecutable(t)
	for attempt := 1; ; attempt++ {
		f, err := launch(t, rie, name, bootstrap, env)
		if err == nil {
			t.Cleanup(func() {
				f.stop()
				if t.Failed() {
					t.Logf("output of %s (aws-lambda-rie and the function):\n%s", name, f.out)
				}
			})
			return f
		}
		// A port taken by someone else between FreePort and the listen is worth another pair.
		if attempt < 3 && strings.Contains(err.Error(), "address already in use") {
			continue
		}
		t.Fatalf("start %s under aws-lambda-rie: %v", name, err)
	}
}

func launch(t testing.TB, rie, name, bootstrap string, env map[string]string) (*function, error) {
	ports := awstest.FreePorts(t, 2)
	invokeAddr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	runtimeAddr := fmt.Sprintf("127.0.0.1:%d", ports[1])
	f := &function{
		name:      name,
		invokeURL: "http://" + invokeAddr + invokePath,
		out:       &syncbuf.Buffer{},
		exited:    make(chan struct{}),
	}
	f.cmd = exec.Command(rie,
		"--runtime-interface-emulator-address", invokeAddr,
		"--runtime-api-address", runtimeAddr,
		bootstrap)
	f.cmd.Dir = filepath.Dir(bootstrap) // as /var/task holds the bootstrap in Lambda
	f.cmd.Env = envList(env)
	f.cmd.Stdout = f.out
	f.cmd.Stderr = f.out
	f.started = time.Now()
	if err := f.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = f.cmd.Wait(); close(f.exited) }()
	// Both addresses must accept before the first invocation: aws-lambda-rie
	// starts the bootstrap on it, and its runtime API listens from a
	// goroutine of its own, which may come after the Invoke API (the
	// bootstrap's first call then met "connection refused").
	deadline := time.Now().Add(10 * time.Second)
	for _, addr := range []string{invokeAddr, runtimeAddr} {
		for {
			c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
			if err == nil {
				_ = c.Close()
				break
			}
			select {
			case <-f.exited:
				return nil, fmt.Errorf("aws-lambda-rie exited before listening on %s:\n%s", addr, f.out)
			case <-time.After(2 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				f.stop()
				return nil, fmt.Errorf("aws-lambda-rie did not listen on %s within 10s:\n%s", addr, f.out)
			}
		}
	}
	f.ready = time.Now()
	return f, nil
}

// stop ends aws-lambda-rie and the function. SIGTERM makes aws-lambda-rie
// kill the runtime process (which it starts in a process group of its own)
// and exit; only if it does not, the runtime's pid and then its own are
// killed. It is idempotent.
func (f *function) stop() {
	f.stopOnce.Do(func() {
		_ = f.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-f.exited:
			return
		case <-time.After(5 * time.Second):
		}
		// Read while aws-lambda-rie is alive: its children's pids are still theirs.
		for _, pid := range childPIDs(f.cmd.Process.Pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = f.cmd.Process.Kill()
		<-f.exited
	})
}

// childPIDs lists the children of pid (Linux /proc).
func childPIDs(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// lambdaError is the payload of a function error (aws-lambda-rie answers 200
// and sends it as the response, with no X-Amz-Function-Error header).
type lambdaError struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType"`
}

// invoke sends payload through the Invoke API and returns the function's
// response payload; a function error is an error.
func (f *function) invoke(ctx context.Context, payload []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.invokeURL, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: %w", f.name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: read the response: %w", f.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("invoke %s: HTTP %d: %s", f.name, resp.StatusCode, clip(body))
	}
	var le lambdaError
	if json.Unmarshal(body, &le) == nil && le.ErrorType != "" {
		return nil, fmt.Errorf("invoke %s: function error %s: %s", f.name, le.ErrorType, le.ErrorMessage)
	}
	return body, nil
}

// mustInvoke is invoke with a deadline, failing the test on error.
func (f *function) mustInvoke(t testing.TB, payload []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := f.invoke(ctx, payload)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// initDuration is the runtime's init phase as aws-lambda-rie reports it
// (bootstrap exec to its first request for an event), or 0 before one.
func (f *function) initDuration() time.Duration {
	m := initReport.FindStringSubmatch(f.out.String())
	if m == nil {
		return 0
	}
	ms, _ := strconv.ParseFloat(m[1], 64)
	return time.Duration(ms * float64(time.Millisecond))
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// awsEnv is what Lambda (or here the emulator) gives every function besides
// template.yaml's variables: region, credentials and, here, the endpoint of
// the AWS emulator, all from the test's own environment.
func awsEnv(t testing.TB) map[string]string {
	t.Helper()
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	if endpoint == "" {
		t.Fatal("AWS_ENDPOINT_URL is not set: the end-to-end tests run against an AWS emulator (`make e2e` starts one)")
	}
	get := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	return map[string]string{
		"AWS_ENDPOINT_URL":          endpoint,
		"AWS_REGION":                get("AWS_REGION", "us-east-1"),
		"AWS_ACCESS_KEY_ID":         get("AWS_ACCESS_KEY_ID", "test"),
		"AWS_SECRET_ACCESS_KEY":     get("AWS_SECRET_ACCESS_KEY", "test"),
		"AWS_EC2_METADATA_DISABLED": "true",
	}
}

// templateEnv is the environment template.yaml gives the function with
// logicalID: Globals' variables, then the function's own, with !Ref
// parameters at their defaults, then set (which must name every variable
// the test cannot resolve, such as the bucket's !Sub). It also carries the
// function's name, memory size and timeout as Lambda sets them, and awsEnv.
func templateEnv(t testing.TB, logicalID string, set map[string]string) map[string]string {
	t.Helper()
	doc := readTemplate(t)
	params := lookup(doc, "Parameters")
	fn := lookup(doc, "Resources", logicalID, "Properties")
	if fn == nil {
		t.Fatalf("template.yaml has no Resources.%s.Properties", logicalID)
	}
	env := awsEnv(t)
	env["AWS_LAMBDA_FUNCTION_NAME"] = logicalID
	unresolved := map[string]string{}
	for _, vars := range []*yaml.Node{
		lookup(doc, "Globals", "Function", "Environment", "Variables"),
		lookup(fn, "Environment", "Variables"),
	} {
		if vars == nil {
			continue
		}
		for i := 0; i+1 < len(vars.Content); i += 2 {
			name, val := vars.Content[i].Value, vars.Content[i+1]
			delete(unresolved, name)
			switch {
			case val.Kind == yaml.ScalarNode && val.Tag == "!Ref":
				def := lookup(params, val.Value, "Default")
				if def == nil {
					unresolved[name] = "!Ref " + val.Value + " (no default)"
					continue
				}
				env[name] = def.Value
			case val.Kind == yaml.ScalarNode && !strings.HasPrefix(val.Tag, "!"):
				env[name] = val.Value
			default:
				unresolved[name] = val.Tag + " " + val.Value
			}
		}
	}
	for k, v := range set {
		delete(unresolved, k)
		env[k] = v
	}
	if len(unresolved) > 0 {
		t.Fatalf("template.yaml sets variables of %s the test cannot resolve: %v", logicalID, unresolved)
	}
	// Lambda's own variables, which aws-lambda-rie reads too.
	for key, prop := range map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "MemorySize", "AWS_LAMBDA_FUNCTION_TIMEOUT": "Timeout"} {
		n := lookup(fn, prop)
		if n == nil {
			n = lookup(doc, "Globals", "Function", prop)
		}
		if n == nil {
			t.Fatalf("template.yaml sets no %s for %s", prop, logicalID)
		}
		if n.Tag == "!Ref" {
			n = lookup(params, n.Value, "Default")
		}
		env[key] = n.Value
	}
	return env
}

func readTemplate(t testing.TB) *yaml.Node {
	t.Helper()
	tpl, err := samtemplate.Load()
	if err != nil {
		t.Fatal(err)
	}
	return tpl.Root
}

// lookup follows mapping keys from n; nil when one is missing.
func lookup(n *yaml.Node, keys ...string) *yaml.Node { return samtemplate.Get(n, keys...) }

// jsonLines decodes the JSON lines of s (the functions' slog output) and
// skips everything else (aws-lambda-rie's own lines).
func jsonLines(s string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}
