// Package tlstest runs TLS test servers on loopback that count the TCP
// connections they accept, so a test can show that a client never
// connected, without waiting for a while and hoping.
package tlstest

import (
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
)

// Server is an httptest TLS server on 127.0.0.1 that counts connections.
type Server struct {
	*httptest.Server
	ln *countingListener
}

// New starts a Server for h, closed when the test ends.
func New(t testing.TB, h http.Handler) *Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	ln := newCountingListener(srv.Listener)
	srv.Listener = ln
	// Connections' marks close without a handshake: not worth a log line.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &Server{Server: srv, ln: ln}
}

// AddrPort is the server's address.
func (s *Server) AddrPort() netip.AddrPort {
	return netip.MustParseAddrPort(s.Listener.Addr().String())
}

// Roots is a pool that trusts the server's certificate.
func (s *Server) Roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.Certificate())
	return p
}

// Connections is the number of connections accepted so far. A listener
// accepts in arrival order, so it connects once itself and waits for that
// connection to be accepted: every connection made before the call has
// been counted by then.
func (s *Server) Connections(t testing.TB) int {
	t.Helper()
	c, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatalf("tlstest: mark connection: %v", err)
	}
	defer func() { _ = c.Close() }()
	return s.ln.countUpTo(c.LocalAddr().String())
}

// ClosedPort is a loopback address where nothing listens (one that was
// listening a moment ago).
func ClosedPort(t testing.TB) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort(ln.Addr().String())
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return ap
}

// countingListener records the remote address of every connection it
// accepts, in order; the marks are Connections' own.
type countingListener struct {
	net.Listener
	mu       sync.Mutex
	accepted sync.Cond // signalled on every accept; L is &mu
	remotes  []string
	marks    map[string]bool
}

func newCountingListener(ln net.Listener) *countingListener {
	l := &countingListener{Listener: ln, marks: map[string]bool{}}
	l.accepted.L = &l.mu
	return l
}

// countUpTo waits until the connection from mark is accepted and returns
// the number of other connections accepted before it, marks excluded.
func (l *countingListener) countUpTo(mark string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.marks[mark] = true
	for {
		n := 0
		for _, r := range l.remotes {
			if r == mark {
				return n
			}
			if !l.marks[r] {
				n++
			}
		}
		l.accepted.Wait()
	}
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	l.mu.Lock()
	l.remotes = append(l.remotes, c.RemoteAddr().String())
	l.mu.Unlock()
	l.accepted.Broadcast()
	return c, nil
}
