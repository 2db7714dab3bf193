package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestArtifactsOnlyWhereConfigMayPutThem plants a published artifact at a
// path of every route of the URL table, as a config entry that slipped past
// the check would be, and asks for each. The server must hand out the
// artifact exactly where agent-skills.yaml may serve one (routes.Reserved
// says ""), and answer with its own route, or nothing, everywhere else: no
// route the server answers can be shadowed by a config entry, and no path
// config may use is taken by a route. A surface the router does not wire
// would show as a 500 here.
func TestArtifactsOnlyWhereConfigMayPutThem(t *testing.T) {
	const listing = "partner-a"
	st := store.NewMemory()
	b := newBucket(t, st)
	b.listing(listing)
	type plant struct{ path, owner, name string }
	var plants []plant
	seen := map[string]bool{}
	for i, r := range routes.All() {
		for j, below := range []string{"x.md", "skills/x/SKILL.md"} {
			p := r.Example(listing, below)
			if seen[p] {
				continue
			}
			seen[p] = true
			owner := ""
			if strings.Contains(r.Pattern, "{listing}") {
				owner = listing
			}
			name := fmt.Sprintf("planted-%02d-%d", i, j)
			b.entry(name, owner, p, catalog.Public, artifact.FormatMarkdown, skillMD(name))
			plants = append(plants, plant{p, owner, name})
		}
	}
	b.publish()
	h := newHarness(t, st)
	for _, pl := range plants {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			w := h.do(method, pl.path)
			served := w.Code == http.StatusOK && w.Header().Get("ETag") == `"`+b.cat.Skills[catalog.ID(pl.owner, pl.name)].Versions[0].Digest.String()+`"`
			free := routes.Reserved(pl.path, pl.owner) == ""
			switch {
			case w.Code >= 500:
				t.Errorf("%s %s: %d %s", method, pl.path, w.Code, w.Body)
			case served && !free:
				t.Errorf("%s %s: the planted artifact shadows the route %q", method, pl.path, routes.Lookup(pl.path).Pattern)
			case !served && free:
				t.Errorf("%s %s: %d, the artifact config may put there is not served", method, pl.path, w.Code)
			}
		}
	}
}
