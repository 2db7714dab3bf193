package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// classCatalog serves n skills (a SKILL.md and a reference each), one in
// seven public and the others spread over six audiences, with a named key
// for each of the 63 non-empty combinations of them: with anonymous, 64
// classes of caller that each see a different set. It returns the harness
// and the bearer keys, the key of every audience last.
func classCatalog(b *testing.B, n int) (*harness, []string) {
	st := store.NewMemory()
	bk := newBucket(b, st)
	const audiences = 6
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		vis := catalog.Authenticated
		if i%(audiences+1) == audiences {
			vis = catalog.Public
		}
		e := servedSkill(bk, name, vis, map[string][]byte{"references/guide.md": []byte("# Guide for " + name + "\n")})
		if vis == catalog.Authenticated {
			e.Audiences = audience.NewSet(fmt.Sprintf("aud-%d", i%(audiences+1)))
		}
	}
	bk.publish()
	var doc strings.Builder
	keys := make([]string, 0, 1<<audiences-1)
	doc.WriteString(`{"keys":[`)
	for j := 1; j < 1<<audiences; j++ {
		var names []string
		for a := range audiences {
			if j&(1<<a) != 0 {
				names = append(names, fmt.Sprintf(`"aud-%d"`, a))
			}
		}
		key := fmt.Sprintf("class-key-%02d-0123456789abcdef", j)
		if j > 1 {
			doc.WriteString(",")
		}
		fmt.Fprintf(&doc, `{"id":"k%02d","sha256":"%s","audiences":[%s]}`, j, apikey.Hash(key), strings.Join(names, ","))
		keys = append(keys, key)
	}
	doc.WriteString("]}")
	set, err := apikey.Parse(doc.String())
	if err != nil {
		b.Fatal(err)
	}
	h := newHarness(b, st, func(c *Config) {
		c.Keys, c.Logger, c.Auditor = set, obs.NewLogger(io.Discard, slog.LevelInfo), nil
	})
	return h, keys
}

// heapAlloc is the live heap after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkClassMemory is the heap a 2,000-skill catalog's warm answers
// keep, of MCP resources/list and of the RFC index, when one class of
// caller has asked and when 64 have (anonymous and 63 keys of different
// audiences): heap-B is the live heap the warmed answers add, over the
// catalog read and the server built.
func BenchmarkClassMemory(b *testing.B) {
	for _, tc := range []struct {
		surface string
		classes int
	}{{"mcp", 1}, {"mcp", 64}, {"index", 1}, {"index", 64}} {
		classes := tc.classes
		b.Run(fmt.Sprintf("%s/classes=%d", tc.surface, classes), func(b *testing.B) {
			var total uint64
			for range b.N {
				b.StopTimer()
				h, keys := classCatalog(b, 2000)
				callers := []string{keys[len(keys)-1]}
				if classes == 64 {
					callers = append([]string{""}, keys...)
				}
				// The catalog is read (by a HEAD of the index) before the baseline.
				serveOK(b, h.srv, httptest.NewRequest(http.MethodHead, "/.well-known/agent-skills/index.json", nil), 0)
				base := heapAlloc()
				b.StartTimer()
				for _, key := range callers {
					list := mcpRequest("resources/list", "")()
					index := httptest.NewRequest(http.MethodGet, "/.well-known/agent-skills/index.json", nil)
					if key != "" {
						list.Header.Set("Authorization", "Bearer "+key)
						index.Header.Set("Authorization", "Bearer "+key)
					}
					if tc.surface == "mcp" {
						serveOK(b, h.srv, list, 1000)
					} else {
						serveOK(b, h.srv, index, 1000)
					}
				}
				b.StopTimer()
				total += heapAlloc() - base
				runtime.KeepAlive(h)
				b.StartTimer()
			}
			b.ReportMetric(float64(total)/float64(b.N), "heap-B")
		})
	}
}
