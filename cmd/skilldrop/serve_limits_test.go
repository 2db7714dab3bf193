package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/buildinfo"
	"github.com/skilldrop/skilldrop/pkg/routes"
)

// startServe runs serve on a free port of dir until the test ends and
// returns its origin.
func startServe(t *testing.T, dir string) string {
	t.Helper()
	return startServeWith(t, dir)
}

// startServeWith is startServe with more arguments to serve.
func startServeWith(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--dir", dir, "--addr", "127.0.0.1:0"}, args...), stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	var origin string
	eventually(t, "serve prints its address", func() bool {
		if m := servingLine.FindStringSubmatch(stdout.String()); m != nil {
			origin = m[1]
			return true
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr)
		default:
		}
		return false
	})
	return origin
}

// TestServeOnATakenPortWritesNothing: serve listens before it indexes, so
// a taken port fails naming the address and --addr, and the directory is
// left as it was.
func TestServeOnATakenPortWritesNothing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{"skills/alpha.md": skillDoc("alpha")})
	code, out, errOut := runCLI("serve", "--dir", dir, "--addr", taken.Addr().String())
	if code != exitFailure || out != "" || !strings.Contains(errOut, "cannot listen on "+taken.Addr().String()+": the address is already in use") ||
		!strings.Contains(errOut, "--addr HOST:PORT") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "skills" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("serve wrote into the directory before failing: %q", names)
	}
}

// TestServeCutsOffASlowBody: a POST that declares a body and trickles it
// a byte at a time is answered 408 once the read timeout passes, instead of
// holding its connection open for as long as the client likes.
func TestServeCutsOffASlowBody(t *testing.T) {
	defer func(t httpTimeouts) { serveTimeouts = t }(serveTimeouts)
	serveTimeouts = httpTimeouts{readHeader: 200 * time.Millisecond, read: 300 * time.Millisecond, write: time.Second, idle: time.Second}
	origin := startServe(t, t.TempDir())
	conn, err := net.Dial("tcp", strings.TrimPrefix(origin, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := io.WriteString(conn, "POST "+routes.SkillCheckUpdates+" HTTP/1.1\r\nHost: "+strings.TrimPrefix(origin, "http://")+"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n["); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte every 50 ms: a body that would take 80 minutes
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	// The deadline only keeps a regression from hanging the test run.
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the slow body is still being read a minute later")
	}
	if err != nil {
		t.Fatalf("no answer to a cut-off body: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a cut-off body was answered %s, want 408", resp.Status)
	}
}

// TestServeReportsItsVersion: MCP's serverInfo carries the build's version,
// as the API function's does.
func TestServeReportsItsVersion(t *testing.T) {
	origin := startServe(t, t.TempDir())
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, origin+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var rpc struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rpc); err != nil {
		t.Fatal(err)
	}
	if rpc.Result.ServerInfo.Name != "skilldrop" || rpc.Result.ServerInfo.Version != buildinfo.Version() {
		t.Fatalf("serverInfo %+v, want skilldrop %s", rpc.Result.ServerInfo, buildinfo.Version())
	}
}

// TestServeSaysWhatItWrites: the help names what serve writes into DIR,
// and those are the names it writes.
func TestServeSaysWhatItWrites(t *testing.T) {
	_, help, _ := runCLI("help", "serve")
	dir := t.TempDir()
	skilltest.WriteFiles(t, dir, map[string]string{"skills/alpha.md": skillDoc("alpha")})
	startServe(t, dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "skills" {
			continue
		}
		if !strings.Contains(help, e.Name()+"/") {
			t.Errorf("serve wrote %s/, which its help does not name:\n%s", e.Name(), help)
		}
	}
	for _, want := range []string{"catalog", "blobs", ".skilldrop"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("serve's help names %s/, which it did not write", want)
		}
	}
}
