package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/signing"
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

func newLiveBucket(t *testing.T, opts ...func(*indexer.Config)) *liveBucket {
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cfg := indexer.Config{Store: st}
	for _, o := range opts {
		o(&cfg)
	}
	ix, err := indexer.New(cfg)
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

// TestGoneOnEveryRoute: every route that serves a version taken out of
// service (revoked, or withdrawn by the scan under a stricter policy)
// answers 410 with the reason in a JSON body: its version documents, its
// bytes at the path and under /api/v1/, its Sigstore bundle beside either,
// while the entry's identity and list of versions, like its catalog page,
// read as missing once no version is in service. The feeds' counts leave
// the gone version out; MCP answers
// a gone skill's files as it answers an unknown resource; a hidden entry's
// bundle stays 404 without a key.
func TestGoneOnEveryRoute(t *testing.T) {
	key, err := signing.Generate()
	if err != nil {
		t.Fatal(err)
	}
	x := newLiveBucket(t, func(c *indexer.Config) {
		c.Signer, c.Origins = key, []*url.URL{{Scheme: "https", Host: "skills.example.com"}}
	})
	v1 := []byte(skilltest.SkillMD("deploy", "1.0", "Deploys."))
	v2 := []byte(skilltest.SkillMD("deploy", "1.1", "Deploys, faster."))
	kit := skilltest.Zip(t, map[string]string{"SKILL.md": skilltest.SkillMD("kit", "1", "Kit."), "ref/guide.md": "A guide."})
	agent := []byte(skilltest.AgentMD("reviewer", "1", "Reviews."))
	faq := []byte(skilltest.SkillMD("faq", "1", "FAQ."))
	secret := []byte(skilltest.SkillMD("secret", "1", "Hidden."))
	pathy := []byte(skilltest.SkillMD("pathy", "1.0", "Sets a path.") + "\necho 'export PATH=$HOME/bin:$PATH' >> ~/.bashrc\n")
	x.drop("skills/deploy.md", v1)
	x.drop("skills/deploy.md", v2)
	x.drop("skills/kit.zip", kit)
	x.drop("subagents/reviewer.md", agent)
	x.drop("listings/partner-a/skills/faq.md", faq)
	x.drop("skills/secret.md", secret)
	x.drop("skills/pathy.md", pathy) // warn under the default policy: published
	if w := x.get("/skills/pathy.md.sigstore.json"); w.Code != http.StatusOK {
		t.Fatalf("pathy's bundle before the policy changed: %d %s", w.Code, w.Body)
	}
	revoke := func(name, version string, b []byte) string {
		return "  - name: " + name + "\n    version: \"" + version + "\"\n    digest: " + digest.Of(b).String() + "\n    reason: " + name + " was compromised\n"
	}
	x.drop("agent-skills.yaml", []byte("version: 1\nscan:\n  block: medium\nskills:\n  - name: secret\n    visibility: authenticated\nrevoke:\n"+
		revoke("deploy", "1.1", v2)+revoke("kit", "1", kit)+revoke("reviewer", "1", agent)+revoke("faq", "1", faq)+revoke("secret", "1", secret)))

	const scanReason = "blocked by the content scan"
	for _, tc := range []struct{ path, reason string }{
		// One version of two revoked: its documents, bytes and bundle.
		{"/skills/v1/deploy/versions/1.1.json", "deploy was compromised"},
		{"/api/v1/skills/deploy/1.1", "deploy was compromised"},
		{"/api/v1/skills/deploy/1.1/SKILL.md", "deploy was compromised"},
		{"/api/v1/skills/deploy/1.1/SKILL.md.sigstore.json", "deploy was compromised"},
		// An archive with no version in service: everything of it.
		{"/skills/kit.zip", "kit was compromised"},
		{"/skills/kit.zip.sigstore.json", "kit was compromised"},
		{"/skills/v1/kit/versions/1.json", "kit was compromised"},
		{"/api/v1/skills/kit/1", "kit was compromised"},
		{"/api/v1/skills/kit/latest", "kit was compromised"},
		{"/api/v1/skills/kit/1/archive.zip", "kit was compromised"},
		{"/api/v1/skills/kit/1/archive.zip.sigstore.json", "kit was compromised"},
		// A sub-agent.
		{"/subagents/v1/reviewer/versions/1.json", "reviewer was compromised"},
		{"/api/v1/subagents/reviewer/1", "reviewer was compromised"},
		{"/api/v1/subagents/reviewer/1/agent.md", "reviewer was compromised"},
		{"/api/v1/subagents/reviewer/1/agent.md.sigstore.json", "reviewer was compromised"},
		// A listing's own skill, at its listing path.
		{"/.well-known/agent-skills/partner-a/skills/faq.md", "faq was compromised"},
		{"/.well-known/agent-skills/partner-a/skills/faq.md.sigstore.json", "faq was compromised"},
		// Withdrawn by the scan once medium findings block.
		{"/skills/pathy.md", scanReason},
		{"/skills/pathy.md.sigstore.json", scanReason},
		{"/skills/v1/pathy/versions/1.0.json", scanReason},
		{"/api/v1/skills/pathy/1.0", scanReason},
		{"/api/v1/skills/pathy/1.0/SKILL.md", scanReason},
		{"/api/v1/skills/pathy/1.0/SKILL.md.sigstore.json", scanReason},
	} {
		w := x.get(tc.path)
		if w.Code != http.StatusGone || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") ||
			errorCode(t, w) != "gone" || !strings.Contains(w.Body.String(), tc.reason) {
			t.Errorf("GET %s: %d %s %s, want 410 naming %q", tc.path, w.Code, w.Header().Get("Content-Type"), w.Body, tc.reason)
		}
		if w := x.h.do(http.MethodHead, tc.path); w.Code != http.StatusGone {
			t.Errorf("HEAD %s: %d", tc.path, w.Code)
		}
	}
	// An entry with no version in service has no identity or list of
	// versions, as it has no page.
	for _, p := range []string{"/skills/v1/kit/index.json", "/api/v1/skills/kit", "/subagents/v1/reviewer/index.json", "/api/v1/subagents/reviewer"} {
		if w := x.get(p); w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d %s", p, w.Code, w.Body)
		}
	}
	// The version in service is served as before, bundle and all.
	for _, p := range []string{"/skills/deploy.md", "/skills/deploy.md.sigstore.json", "/api/v1/skills/deploy/1.0/SKILL.md.sigstore.json"} {
		if w := x.get(p); w.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", p, w.Code, w.Body)
		}
	}
	// Hidden stays missing: the gone secret's routes are 404 without a key, 410 with one.
	for _, p := range []string{"/skills/secret.md", "/skills/secret.md.sigstore.json", "/api/v1/skills/secret/1", "/api/v1/skills/secret/1/SKILL.md.sigstore.json"} {
		if w := x.get(p); w.Code != http.StatusNotFound {
			t.Errorf("GET %s without a key: %d %s", p, w.Code, w.Body)
		}
		if w := x.get(p, bearer(goodKey)); w.Code != http.StatusGone || !strings.Contains(w.Body.String(), "secret was compromised") {
			t.Errorf("GET %s with a key: %d %s", p, w.Code, w.Body)
		}
	}
	// The feeds count only versions in service.
	if w := x.get("/skills/v1/pages/all.json"); !strings.Contains(w.Body.String(), `"versionRange":{"min":"1.0","max":"1.0","count":1}`) ||
		strings.Contains(w.Body.String(), `"kit"`) {
		t.Errorf("the native page tells of gone versions: %s", w.Body)
	}
	if w := x.get("/api/v1/skills?q=deploy"); !strings.Contains(w.Body.String(), `"versionCount":1,`) {
		t.Errorf("search counts a gone version: %s", w.Body)
	}
	// MCP: a gone skill's files are unknown resources, as a name never published is.
	read := func(uri string) string {
		w := x.h.post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`"}}`, mcpHeaders...)
		if w.Code != http.StatusOK {
			t.Fatalf("resources/read %s: %d %s", uri, w.Code, w.Body)
		}
		return strings.ReplaceAll(w.Body.String(), uri, "URI")
	}
	unknown := read("skill://no-such-skill/SKILL.md")
	if !strings.Contains(unknown, `"error"`) {
		t.Fatalf("an unknown resource: %s", unknown)
	}
	for _, uri := range []string{"skill://kit/SKILL.md", "skill://kit/ref/guide.md", "skill://pathy/SKILL.md", "skill://partner-a.listing/faq/SKILL.md"} {
		if got := read(uri); got != unknown {
			t.Errorf("resources/read %s: %s, want the unknown resource's %s", uri, got, unknown)
		}
	}
	if got := read("skill://deploy/SKILL.md"); !strings.Contains(got, "Deploys.") || strings.Contains(got, "faster") {
		t.Errorf("resources/read of deploy serves another than the version in service: %s", got)
	}
	w := x.h.post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, mcpHeaders...)
	if strings.Contains(w.Body.String(), "skill://kit/") || strings.Contains(w.Body.String(), "skill://pathy/") || !strings.Contains(w.Body.String(), "skill://deploy/SKILL.md") {
		t.Errorf("resources/list: %s", w.Body)
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
