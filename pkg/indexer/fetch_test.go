package indexer

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/tlstest"
	"github.com/skilldrop/skilldrop/pkg/fetch"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// testExternalURLCannotReachInside: an entry naming a loopback server is
// rejected by the indexer's own fetcher before it connects, and the
// rejection recorded and audited says only the generic connection text.
func testExternalURLCannotReachInside(t *testing.T, mk envMaker) {
	inside := tlstest.New(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(skillDoc("ext", "1", "Inside."))
	}))
	url := "https://" + inside.AddrPort().String() + "/x.md"
	e := mk(t)
	res := e.drop(skillsconfig.Key, fmt.Appendf(nil, "version: 1\nskills:\n  - name: ext\n    type: skill-md\n    url: %s\n", url))
	if got := rejectionCodes(res); !slices.Equal(got, []string{CodeFetchFailed}) {
		t.Fatalf("codes %v, want fetch_failed; %s", got, dump(res))
	}
	generic := (&fetch.ConnectError{URL: url}).Error()
	if msg := e.status().Rejections[0].Message; !strings.HasSuffix(msg, ": "+generic) {
		t.Fatalf("status says %q, want the generic %q", msg, generic)
	}
	if a := e.audits(); len(a) != 1 || !strings.Contains(fmt.Sprint(a[0]), generic) {
		t.Fatalf("audit events %v, want one with the generic text", a)
	}
	// The operator's log keeps the cause.
	if logs := e.logs.String(); !strings.Contains(logs, "external fetch failed") || !strings.Contains(logs, "not a public address") {
		t.Fatalf("no log line with the cause: %s", logs)
	}
	if n := inside.Connections(t); n != 0 {
		t.Fatalf("the loopback server accepted %d connections", n)
	}
}

// fetcherFor is a fetcher that trusts srv and may connect to it (on
// loopback) through the test seam; every other address is under the normal
// policy.
func fetcherFor(srv *httptest.Server) *fetch.Client {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return fetch.New(fetch.Options{
		RootCAs:       roots,
		AllowForTests: []netip.AddrPort{netip.MustParseAddrPort(srv.Listener.Addr().String())},
	})
}
