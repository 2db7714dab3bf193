package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// liveBucket is a directory store the indexer publishes into, for tests of
// what the request path makes of the indexer's decisions.
type liveBucket struct {
	t  *testing.T
	st store.Store
	ix *indexer.Indexer
	h  *harness
}

func newLiveBucket(t *testing.T) *liveBucket {
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ix, err := indexer.New(indexer.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return &liveBucket{t: t, st: st, ix: ix, h: newHarness(t, st)}
}

func (x *liveBucket) drop(key string, body []byte) {
	x.t.Helper()
	if _, err := x.st.Put(context.Background(), key, body, store.PutOptions{}); err != nil {
		x.t.Fatal(err)
	}
	if _, err := x.ix.Reconcile(context.Background(), key); err != nil {
		x.t.Fatal(err)
	}
	x.h.clock.Advance(5 * time.Second) // past the catalog's revalidation interval
}

func (x *liveBucket) get(target string, headers ...string) *httptest.ResponseRecorder {
	x.t.Helper()
	return x.h.do(http.MethodGet, target, headers...)
}

// TestGoneVersions: a revoked version is in no feed or list, its bytes and
// documents answer 410 with the reason, revocations.json lists it (an
// authenticated skill's only to callers with a key); a skill whose every
// version is gone is served nowhere, its path 410.
func TestGoneVersions(t *testing.T) {
	x := newLiveBucket(t)
	v1 := []byte(skilltest.SkillMD("deploy", "1.0", "Deploys."))
	v2 := []byte(skilltest.SkillMD("deploy", "1.1", "Deploys, faster."))
	sec := []byte(skilltest.SkillMD("secret-tool", "1", "Internal."))
	x.drop("skills/deploy.md", v1)
	x.drop("skills/deploy.md", v2)
	x.drop("skills/secret-tool.md", sec)
	x.drop("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: secret-tool\n    visibility: authenticated\nrevoke:\n"+
		"  - name: deploy\n    version: \"1.1\"\n    digest: "+digest.Of(v2).String()+"\n    reason: a compromised build\n"+
		"  - name: secret-tool\n    version: \"1\"\n    digest: "+digest.Of(sec).String()+"\n    reason: leaked\n"))

	idx := decodeIndex(t, x.get("/.well-known/agent-skills/index.json").Body.Bytes())
	if len(idx.Skills) != 1 || idx.Skills[0].Version != "1.0" || idx.Skills[0].Digest != digest.Of(v1).String() {
		t.Errorf("index: %+v", idx.Skills)
	}
	for _, target := range []string{"/api/v1/skills/deploy/1.1/SKILL.md", "/skills/v1/deploy/versions/1.1.json", "/api/v1/skills/deploy/1.1"} {
		w := x.get(target)
		if w.Code != http.StatusGone || errorCode(t, w) != "gone" || !strings.Contains(w.Body.String(), "a compromised build") {
			t.Errorf("GET %s: %d %s", target, w.Code, w.Body)
		}
	}
	if w := x.get("/skills/deploy.md"); w.Code != http.StatusOK || w.Body.String() != string(v1) {
		t.Errorf("the path serves %d %q, want 1.0", w.Code, w.Body)
	}
	if w := x.get("/skills/v1/deploy/index.json"); strings.Contains(w.Body.String(), `"1.1"`) {
		t.Errorf("the identity lists the revoked version: %s", w.Body)
	}
	// Every version of secret-tool is gone: 410 with a key, 404 without.
	if w := x.get("/skills/secret-tool.md", bearer(goodKey)); w.Code != http.StatusGone || !strings.Contains(w.Body.String(), "leaked") {
		t.Errorf("with a key: %d %s", w.Code, w.Body)
	}
	if w := x.get("/skills/secret-tool.md"); w.Code != http.StatusNotFound {
		t.Errorf("without a key: %d %s", w.Code, w.Body)
	}
	list := func(headers ...string) []discovery.Revocation {
		w := x.get("/.well-known/agent-skills/revocations.json", headers...)
		if w.Code != http.StatusOK {
			t.Fatalf("revocations.json: %d %s", w.Code, w.Body)
		}
		var doc discovery.Revocations
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Revocations
	}
	anon := list()
	if len(anon) != 1 || anon[0].Name != "deploy" || anon[0].Version != "1.1" || anon[0].Reason != "a compromised build" ||
		!anon[0].Digest.Equal(digest.Of(v2)) || anon[0].RevokedAt.IsZero() {
		t.Errorf("anonymous revocations: %+v", anon)
	}
	if all := list(bearer(goodKey)); len(all) != 2 {
		t.Errorf("with a key: %+v", all)
	}
	if w := x.get("/api/v1/skills?q=secret", bearer(goodKey)); strings.Contains(w.Body.String(), "secret-tool") {
		t.Errorf("search finds a skill with no version in service: %s", w.Body)
	}
}

// TestScanTravelsWithTheVersion: native version documents and MCP skill
// entries carry the scan; the RFC index does not.
func TestScanTravelsWithTheVersion(t *testing.T) {
	x := newLiveBucket(t)
	x.drop("skills/pathy.md", []byte(skilltest.SkillMD("pathy", "1.0", "Sets a path.")+"\necho 'export PATH=$HOME/bin:$PATH' >> ~/.bashrc\n"))
	w := x.get("/skills/v1/pathy/versions/1.0.json")
	var doc struct {
		Scan struct {
			Verdict  string `json:"verdict"`
			Engine   string `json:"engine"`
			Findings []struct {
				Rule string `json:"rule"`
				Line int    `json:"line"`
			} `json:"findings"`
		} `json:"scan"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.Scan.Verdict != "warn" || len(doc.Scan.Findings) != 1 ||
		doc.Scan.Findings[0].Rule != "persistence.shell-rc" || doc.Scan.Engine == "" {
		t.Errorf("version document: %v %s", err, w.Body)
	}
	if w := x.get("/api/v1/skills/pathy/latest"); !strings.Contains(w.Body.String(), `"persistence.shell-rc"`) {
		t.Errorf("version summary: %s", w.Body)
	}
	if w := x.get("/.well-known/agent-skills/index.json"); strings.Contains(w.Body.String(), "scan") {
		t.Errorf("the RFC index carries the scan: %s", w.Body)
	}
	snap, err := x.h.srv.catalog.get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	view, err := snap.View(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	skills, _, err := mcpListed(buildMCPIndex(view).viewFor(view, audience.Anonymous), "")
	if err != nil || len(skills) != 1 || !strings.Contains(string(skills[0].json), `"_meta":{"`+MetaScan+`":{"verdict":"warn"`) {
		t.Fatalf("MCP skill entries: %v %d", err, len(skills))
	}
}
