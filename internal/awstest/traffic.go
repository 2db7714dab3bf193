package awstest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Traffic is a reverse proxy in front of the emulator that counts what
// passes to and from one object (path-style requests for bucket/key): how
// a benchmark learns the bytes a function under aws-lambda-rie moved, the
// same way as for one in the test process.
type Traffic struct {
	// URL is the endpoint to give the clients that are counted.
	URL string

	path string
	mu   sync.Mutex
	c    TrafficCounts
}

// TrafficCounts are what passed for the object.
type TrafficCounts struct {
	// Reads and BytesRead: GETs answered with content (ranges included).
	Reads, BytesRead int64
	// Writes and BytesWritten: PUTs that succeeded; LostWrites: PUTs
	// refused by a condition (412, or 409 for a concurrent conditional
	// write); the bytes of both count as written.
	Writes, LostWrites, BytesWritten int64
}

// Moved is the bytes read and written.
func (c TrafficCounts) Moved() int64 { return c.BytesRead + c.BytesWritten }

// Sub is what passed between before and c.
func (c TrafficCounts) Sub(before TrafficCounts) TrafficCounts {
	return TrafficCounts{
		Reads: c.Reads - before.Reads, BytesRead: c.BytesRead - before.BytesRead,
		Writes: c.Writes - before.Writes, LostWrites: c.LostWrites - before.LostWrites, BytesWritten: c.BytesWritten - before.BytesWritten,
	}
}

// CountTraffic starts a proxy to endpoint (the emulator) counting the
// traffic of bucket/key; it stops when the test ends.
func CountTraffic(t testing.TB, endpoint, bucket, key string) *Traffic {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	tr := &Traffic{path: "/" + bucket + "/" + key}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != tr.path {
			return nil
		}
		switch resp.Request.Method {
		case http.MethodGet:
			if resp.StatusCode/100 == 2 {
				resp.Body = &countingBody{ReadCloser: resp.Body, add: func(n int64) {
					tr.mu.Lock()
					tr.c.BytesRead += n
					tr.mu.Unlock()
				}}
				tr.mu.Lock()
				tr.c.Reads++
				tr.mu.Unlock()
			}
		case http.MethodPut:
			tr.mu.Lock()
			switch {
			case resp.StatusCode/100 == 2:
				tr.c.Writes++
			case resp.StatusCode == http.StatusPreconditionFailed, resp.StatusCode == http.StatusConflict:
				tr.c.LostWrites++
			}
			tr.mu.Unlock()
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == tr.path && !strings.Contains(r.URL.RawQuery, "uploadId") {
			r.Body = &countingBody{ReadCloser: r.Body, add: func(n int64) {
				tr.mu.Lock()
				tr.c.BytesWritten += n
				tr.mu.Unlock()
			}}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tr.URL = srv.URL
	return tr
}

// Counts returns what passed so far.
func (tr *Traffic) Counts() TrafficCounts {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.c
}

type countingBody struct {
	io.ReadCloser
	add func(int64)
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.add(int64(n))
	return n, err
}
