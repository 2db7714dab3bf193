package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/tlstest"
)

const limit = 1 << 20

var doc = []byte("---\nname: x\ndescription: X.\n---\nBody.\n")

// hosts is a Resolver over a fixed table; other names do not exist.
type hosts map[string][]netip.Addr

func (h hosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := h[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func serveDoc(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(doc) }

func urlOf(ap netip.AddrPort, path string) string { return "https://" + ap.String() + path }

// TestRefusedAddressesSeeNoConnection: an inside address is refused however
// the URL reaches it, before a connection is made. The client trusts the
// inside server's certificate, so only the address policy stands between
// them.
func TestRefusedAddressesSeeNoConnection(t *testing.T) {
	inside := tlstest.New(t, http.HandlerFunc(serveDoc))
	port := strconv.Itoa(int(inside.AddrPort().Port()))
	loop := netip.MustParseAddr("127.0.0.1")
	outside := tlstest.New(t, http.RedirectHandler(urlOf(inside.AddrPort(), "/x.md"), http.StatusFound))
	c := New(Options{
		RootCAs:       inside.Roots(),
		AllowForTests: []netip.AddrPort{outside.AddrPort()},
		Resolver: hosts{
			"example.com":        {loop},
			"mapped.example.com": {netip.MustParseAddr("::ffff:127.0.0.1")},
			"mixed.example.com":  {netip.MustParseAddr("10.0.0.1"), loop},
		},
	})
	tests := []struct{ name, url string }{
		{"by IP", urlOf(inside.AddrPort(), "/x.md")},
		{"by IPv4-mapped IPv6", "https://[::ffff:127.0.0.1]:" + port + "/x.md"},
		{"by a name that resolves to it (DNS rebinding)", "https://example.com:" + port + "/x.md"},
		{"by a name that resolves to its IPv4-mapped form", "https://mapped.example.com:" + port + "/x.md"},
		{"by a name whose every address is inside", "https://mixed.example.com:" + port + "/x.md"},
		{"by an https redirect from an allowed server", urlOf(outside.AddrPort(), "/")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := c.Get(context.Background(), tt.url, limit)
			var ce *ConnectError
			if !errors.As(err, &ce) || !errors.Is(err, errRefusedAddress) {
				t.Fatalf("got %q, %v; want a ConnectError for a refused address", b, err)
			}
			if n := inside.Connections(t); n != 0 {
				t.Fatalf("the inside server accepted %d connections", n)
			}
		})
	}
	if n := outside.Connections(t); n != 1 {
		t.Fatalf("the allowed server accepted %d connections, want 1 (the redirect)", n)
	}
}

// TestOneTextForEveryConnectionFailure: the message says the same whether
// the address was refused or tried, the port open or closed, the name
// unknown, the certificate untrusted or the server silent.
func TestOneTextForEveryConnectionFailure(t *testing.T) {
	open := tlstest.New(t, http.HandlerFunc(serveDoc))
	silent := tlstest.New(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	closed := tlstest.ClosedPort(t)
	closedAllowed := tlstest.ClosedPort(t)
	trusting := func(allow ...netip.AddrPort) *Client {
		return New(Options{RootCAs: open.Roots(), AllowForTests: allow, Resolver: hosts{}, Timeout: 200 * time.Millisecond})
	}
	tests := []struct {
		name string
		c    *Client
		url  string
	}{
		{"an open inside port", trusting(), urlOf(open.AddrPort(), "/x.md")},
		{"a closed inside port", trusting(), urlOf(closed, "/x.md")},
		{"a refused connection", trusting(closedAllowed), urlOf(closedAllowed, "/x.md")},
		{"an unknown name", trusting(), "https://nowhere.example.com/x.md"},
		{"an untrusted certificate", New(Options{AllowForTests: []netip.AddrPort{open.AddrPort()}}), urlOf(open.AddrPort(), "/x.md")},
		{"no answer within the timeout", trusting(silent.AddrPort()), urlOf(silent.AddrPort(), "/x.md")},
	}
	var want string
	for _, tt := range tests {
		_, err := tt.c.Get(context.Background(), tt.url, limit)
		var ce *ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: got %v, want a ConnectError", tt.name, err)
		}
		got := strings.ReplaceAll(err.Error(), tt.url, "URL")
		if want == "" {
			want = got
		}
		if got != want {
			t.Errorf("%s: %q, want the same text as the others: %q", tt.name, got, want)
		}
	}
	if n := open.Connections(t); n != 1 {
		t.Fatalf("the open server accepted %d connections, want 1 (the untrusted-certificate case)", n)
	}
}

// TestNoProxyFromTheEnvironment: HTTPS_PROXY names a listener the address
// policy would let through; it still sees no connection.
func TestNoProxyFromTheEnvironment(t *testing.T) {
	proxy := tlstest.New(t, http.NotFoundHandler())
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"} {
		t.Setenv(k, "http://"+proxy.AddrPort().String())
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	c := New(Options{AllowForTests: []netip.AddrPort{proxy.AddrPort()}, Resolver: hosts{}})
	if _, err := c.Get(context.Background(), "https://skills.example.com/x.md", limit); err == nil {
		t.Fatal("fetched an unknown name")
	}
	if n := proxy.Connections(t); n != 0 {
		t.Fatalf("the proxy accepted %d connections", n)
	}
}

// TestAllowedAddress: through the test seam, the rest of the contract:
// the body of a 200, nothing else, https redirects only and a few of them,
// the size cap.
func TestAllowedAddress(t *testing.T) {
	var plainHits atomic.Int64
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		serveDoc(w, r)
	}))
	t.Cleanup(plain.Close)
	srv := tlstest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/x.md":
			serveDoc(w, r)
		case p == "/big.md":
			_, _ = w.Write(bytes.Repeat([]byte("x"), 200))
		case p == "/to-http.md":
			http.Redirect(w, r, plain.URL+"/x.md", http.StatusFound)
		case strings.HasPrefix(p, "/hop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/hop/"))
			if n == 0 {
				serveDoc(w, r)
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	}))
	c := New(Options{RootCAs: srv.Roots(), AllowForTests: []netip.AddrPort{srv.AddrPort()}})
	tests := []struct {
		name  string
		url   string
		limit int64
		err   string // "": the document
	}{
		{"a 200", srv.URL + "/x.md", limit, ""},
		{"a 404", srv.URL + "/missing.md", limit, "status 404, want 200"},
		{"more bytes than the limit", srv.URL + "/big.md", 100, ErrTooLarge.Error() + ": 200 bytes > 100 bytes"},
		{"exactly the limit", srv.URL + "/x.md", int64(len(doc)), ""},
		{"https redirects, up to the maximum", fmt.Sprintf("%s/hop/%d", srv.URL, MaxRedirects), limit, ""},
		{"one redirect too many", fmt.Sprintf("%s/hop/%d", srv.URL, MaxRedirects+1), limit, "more than 5 redirects"},
		{"a redirect to plain http", srv.URL + "/to-http.md", limit, "only https is fetched"},
		{"a plain http URL", plain.URL + "/x.md", limit, "only https is fetched"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := c.Get(context.Background(), tt.url, tt.limit)
			if tt.err == "" {
				if err != nil || !bytes.Equal(b, doc) {
					t.Fatalf("got %q, %v; want the document", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("got %q, %v; want an error saying %q", b, err, tt.err)
			}
		})
	}
	if n := plainHits.Load(); n != 0 {
		t.Fatalf("the plain http server was asked %d times", n)
	}
}
