package tlstest

import (
	"net"
	"net/http"
	"testing"
)

func TestConnectionsCountsWhatConnectedBeforeAndNotItsOwnMarks(t *testing.T) {
	s := New(t, http.NotFoundHandler())
	if n := s.Connections(t); n != 0 {
		t.Fatalf("%d connections before any, want 0", n)
	}
	for range 2 {
		c, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
	if n := s.Connections(t); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
	// An HTTPS request through the server's own client is one more.
	resp, err := s.Client().Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if n := s.Connections(t); n != 3 {
		t.Fatalf("%d connections, want 3", n)
	}
	if !s.AddrPort().Addr().IsLoopback() {
		t.Fatalf("listening on %s, want loopback", s.AddrPort())
	}
}
