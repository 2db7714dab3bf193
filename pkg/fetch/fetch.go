// Package fetch reads an external artifact over https for a service that
// must not be turned against its own network.
//
// A Client promises: it connects only to global unicast addresses, checked
// on every resolved address at dial time (after unmapping IPv4-in-IPv6), so
// a name that resolves inward, a rebinding DNS answer and every redirect hop
// are refused before a packet is sent; it never uses a proxy from the
// environment; it follows https redirects only, at most MaxRedirects; it
// bounds each fetch in time and size and accepts only a 200. Every failure
// below HTTP has one text (ConnectError), so the message cannot tell an open
// port from a closed one or an inside address from an outside one.
package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/bytesize"
)

// DefaultTimeout bounds one fetch when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// MaxRedirects is the most redirects one fetch follows.
const MaxRedirects = 5

// ErrTooLarge reports a body larger than the limit Get was given.
var ErrTooLarge = errors.New("more bytes than the limit")

// errRedirect marks a redirect the policy refuses; its text stays specific
// because it is decided before any connection to the redirect's target.
var errRedirect = errors.New("redirect refused")

// Resolver resolves a host name to its addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configures a Client. The zero value is the production client.
type Options struct {
	Timeout  time.Duration  // bounds one fetch, redirects included (zero: DefaultTimeout)
	RootCAs  *x509.CertPool // nil: the system's roots
	Resolver Resolver       // nil: net.DefaultResolver
	// AllowForTests lets these exact addresses (IP and port) through the
	// address policy, so tests can fetch from a local TLS server. New panics
	// when it is set outside a test binary.
	AllowForTests []netip.AddrPort
}

// Client fetches external artifacts. It is safe for concurrent use.
type Client struct {
	http    *http.Client
	timeout time.Duration
}

// New returns a Client for opts.
func New(opts Options) *Client {
	if len(opts.AllowForTests) > 0 && !testing.Testing() {
		panic("fetch: Options.AllowForTests is set outside a test binary")
	}
	d := &dialer{resolver: opts.Resolver, allow: opts.AllowForTests}
	if d.resolver == nil {
		d.resolver = net.DefaultResolver
	}
	c := &Client{
		http: &http.Client{
			Transport: &http.Transport{
				Proxy:                  nil, // never the environment's: a proxy would dial for us
				DialContext:            d.DialContext,
				TLSClientConfig:        &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12},
				ForceAttemptHTTP2:      true,
				MaxResponseHeaderBytes: 64 << 10,
			},
			CheckRedirect: redirects,
		},
		timeout: opts.Timeout,
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	return c
}

// redirects is the redirect policy: the caller asked for https, so a hop to
// anything else is refused before it is requested (a 302 to http:// would
// hand the bytes to anyone on the path); https hops are followed (release
// downloads commonly redirect to a CDN), a few at most.
func redirects(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "https" {
		return fmt.Errorf("%w: redirected to %s: only https is fetched", errRedirect, req.URL.Redacted())
	}
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w: more than %d redirects", errRedirect, MaxRedirects)
	}
	return nil
}

// ConnectError is every failure below HTTP: a refused address, a name that
// does not resolve, a refused or reset connection, a TLS failure, a timeout,
// a body cut short. Its text is the same whatever the cause; Unwrap gives
// the cause, for logs only.
type ConnectError struct {
	URL string // redacted
	err error
}

func (e *ConnectError) Error() string {
	return "fetch " + e.URL + ": no answer from a public https server (unreachable, refused, not a public address, or TLS failed)"
}

func (e *ConnectError) Unwrap() error { return e.err }

// Get reads rawURL: https only, within the timeout, a 200 of at most limit
// bytes.
func (c *Client) Get(ctx context.Context, rawURL string, limit int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	name := u.Redacted()
	if u.Scheme != "https" {
		return nil, fmt.Errorf("fetch %s: only https is fetched", name)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", name, err)
	}
	resp, err := c.http.Do(req)
	if errors.Is(err, errRedirect) {
		return nil, fmt.Errorf("fetch %s: %w", name, err)
	}
	if err != nil {
		return nil, &ConnectError{URL: name, err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: status %d, want 200", name, resp.StatusCode)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("fetch %s: %w: %s", name, ErrTooLarge, bytesize.Exceeds(resp.ContentLength, limit))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, &ConnectError{URL: name, err: err}
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("fetch %s: %w (%s)", name, ErrTooLarge, bytesize.Format(limit))
	}
	return b, nil
}
