package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// audienceCatalog serves n skills, every tenth authenticated; with
// audiences, those are spread over three audiences and the caller's key
// is a named one of partner-a, else (today's) a bare hash of every
// audience. It returns the server and the request of a warm index GET.
func audienceCatalog(b *testing.B, n int, audiences bool) (*Server, *http.Request) {
	st := store.NewMemory()
	bk := newBucket(b, st)
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		vis := catalog.Public
		if i%10 == 0 {
			vis = catalog.Authenticated
		}
		e := bk.skill(name, "", vis, artifact.FormatMarkdown, skillMD(name))
		if audiences && vis == catalog.Authenticated {
			e.Audiences = audience.NewSet([]string{"partner-a", "partner-b", "partner-c"}[i/10%3])
		}
	}
	bk.publish()
	keys, err := apikey.ParseSet(apikey.Hash(goodKey))
	if audiences {
		keys, err = apikey.Parse(`{"keys":[{"id":"partner-a","sha256":"` + apikey.Hash(goodKey) + `","audiences":["partner-a"]},` +
			`{"id":"partner-b","sha256":"` + apikey.Hash(otherKey) + `","audiences":["partner-b"]}]}`)
	}
	if err != nil {
		b.Fatal(err)
	}
	// Logs are discarded: the harness's growing buffer is not what is measured.
	h := newHarness(b, st, func(c *Config) {
		c.Keys, c.Logger, c.Auditor = keys, obs.NewLogger(io.Discard, slog.LevelInfo), nil
	})
	req := httptest.NewRequest(http.MethodGet, "/.well-known/agent-skills/index.json", nil)
	req.Header.Set("Authorization", "Bearer "+goodKey)
	return h.srv, req
}

// BenchmarkIndexWithAudiences compares a warm GET of the RFC index with a
// key of one audience, in a catalog whose authenticated skills are spread
// over three audiences, with today's: the same GET with a key of every
// audience in a catalog of no audiences, alternately in the same run.
// Target: ratio <= 1.2 at 1,000 and 10,000 skills.
func BenchmarkIndexWithAudiences(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			withAud, reqAud := audienceCatalog(b, n, true)
			today, reqToday := audienceCatalog(b, n, false)
			get := func(srv *Server, req *http.Request) func() {
				return func() {
					w := &discardWriter{h: http.Header{}}
					srv.ServeHTTP(w, req)
					if w.code != http.StatusOK || w.n < 50*n {
						b.Fatalf("status %d, %d bytes", w.code, w.n)
					}
				}
			}
			pair(b, get(withAud, reqAud), get(today, reqToday))
		})
	}
}
