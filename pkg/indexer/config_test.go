package indexer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/fetch"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// config drops agent-skills.yaml and fails unless it was accepted.
func (e *env) config(yaml string) *Result {
	e.t.Helper()
	res := e.drop(skillsconfig.Key, []byte(yaml))
	if res.Config == ConfigRejected {
		e.t.Fatalf("config rejected: %s", dump(res.Rejected))
	}
	return res
}

// indent indents a document for a YAML block scalar of a top-level entry.
func indent(b []byte) string { return indentN(b, 6) }

func indentN(b []byte, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(string(b), "\n"), "\n", "\n"+pad) + "\n"
}

func testConfigOverridesDroppedEntries(t *testing.T, mk envMaker) {
	e := mk(t)
	e.drop("skills/x.md", skillDoc("x", "1", "From the frontmatter."))
	e.drop("subagents/reviewer.md", agentDoc("reviewer", "1"))
	res := e.config(`version: 1
skills:
  - name: x
    visibility: authenticated
    description: From the config.
    url: /docs/x.md
subagents:
  - name: reviewer
    visibility: authenticated
`)
	if res.Config != ConfigApplied {
		t.Fatalf("result %s", dump(res))
	}
	x := e.live(catalog.KindSkill, "x")
	if x.Visibility != catalog.Authenticated || x.EffectiveDescription() != "From the config." || x.Path != "/docs/x.md" {
		t.Fatalf("overrides not applied: %s", dump(x))
	}
	if len(x.Versions) != 1 {
		t.Fatalf("an override published a version: %s", dump(x))
	}
	if r := e.live(catalog.KindSubagent, "reviewer"); r.Visibility != catalog.Authenticated {
		t.Fatalf("sub-agent visibility %s", r.Visibility)
	}
	v := catalog.Compile(e.catalog(), "")
	if v.Skill("x", audience.Anonymous) != nil || v.Skill("x", audience.Unrestricted) == nil || v.ByPath("/docs/x.md", audience.Unrestricted) == nil || v.ByPath("/skills/x.md", audience.Unrestricted) != nil {
		t.Fatal("the compiled view does not follow the overrides")
	}
	// An agent.md's own visibility is a runtime hint, not access control.
	e.drop("subagents/hinted.md", []byte("---\nname: hinted\ndescription: d\nvisibility: internal\n---\nBody.\n"))
	if h := e.live(catalog.KindSubagent, "hinted"); h.Visibility != catalog.Public {
		t.Fatalf("agent.md visibility became access control: %s", h.Visibility)
	}
	// Deleting the config relaxes nothing: the config in force stays, and
	// the deletion is refused as config_missing.
	res = e.remove(skillsconfig.Key)
	if res.Config != ConfigRejected || !slices.Equal(rejectionCodes(res), []string{CodeConfigMissing}) {
		t.Fatalf("result %s", dump(res))
	}
	x = e.live(catalog.KindSkill, "x")
	if x.Visibility != catalog.Authenticated || x.EffectiveDescription() != "From the config." || x.Path != "/docs/x.md" {
		t.Fatalf("overrides relaxed after the config was deleted: %s", dump(x))
	}
	if c := e.catalog(); c.Config == nil || c.Bucket == nil || c.Bucket.State != catalog.ConfigMissing {
		t.Fatalf("config state after the deletion: %s", dump(c.Bucket))
	}
	if audits, datapoints := e.rejectedAs(CodeConfigMissing); audits != 1 || datapoints != 1 {
		t.Fatalf("config_missing: %d audit events, %d UploadRejected datapoints; want one of each", audits, datapoints)
	}
	// An empty config is how to run without one: the overrides go.
	if res := e.config("version: 1\n"); res.Config != ConfigApplied {
		t.Fatalf("result %s", dump(res))
	}
	x = e.live(catalog.KindSkill, "x")
	if x.Visibility != catalog.Public || x.EffectiveDescription() != "From the frontmatter." || x.Path != "/skills/x.md" {
		t.Fatalf("overrides kept under an empty config: %s", dump(x))
	}
	if e.catalog().Bucket != nil {
		t.Fatal("the bucket's config is still recorded as not in force")
	}
}

func testConfigEntriesOfItsOwn(t *testing.T, mk envMaker) {
	body := skillDoc("inline", "1", "Inline skill.")
	agent := agentDoc("helper", "1")
	fileSkill := skillDoc("from-file", "1", "From files/.")
	archived := skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("zipped", "3", "Archived in files/."))})
	e := mk(t)
	e.put("files/from-file.md", fileSkill)
	e.put("files/bundles/zipped.zip", archived)
	res := e.config("version: 1\nskills:\n  - name: inline\n    body: |\n" + indent(body) + `  - name: from-file
    type: skill-md
    path: files/from-file.md
  - name: zipped
    type: archive
    path: files/bundles/zipped.zip
    url: /bundles/zipped.zip
subagents:
  - name: helper
    body: |
` + indent(agent))
	if res.Config != ConfigApplied || len(res.Rejected) != 0 {
		t.Fatalf("result %s", dump(res))
	}
	tests := []struct {
		kind   catalog.Kind
		name   string
		bytes  []byte
		path   string
		format artifact.Format
		source string
	}{
		{catalog.KindSkill, "inline", body, "/skills/inline.md", artifact.FormatMarkdown, skillsconfig.Key},
		{catalog.KindSkill, "from-file", fileSkill, "/skills/from-file.md", artifact.FormatMarkdown, "files/from-file.md"},
		{catalog.KindSkill, "zipped", archived, "/bundles/zipped.zip", artifact.FormatZip, "files/bundles/zipped.zip"},
		{catalog.KindSubagent, "helper", agent, "", artifact.FormatMarkdown, skillsconfig.Key},
	}
	for _, tt := range tests {
		en := e.live(tt.kind, tt.name)
		v := en.LatestVersion()
		if en.Source != catalog.ConfigSource || en.Path != tt.path || v.Format != tt.format || !v.Digest.Verify(tt.bytes) || v.SourceKey != tt.source {
			t.Errorf("%s: entry %s", tt.name, dump(en))
		}
	}
	consistent(t, e.st)
	// An event on a files/ key re-evaluates the entries naming it.
	e.drop("files/from-file.md", skillDoc("from-file", "2", "Updated."))
	if en := e.live(catalog.KindSkill, "from-file"); en.Latest != "2" {
		t.Fatalf("files/ update not picked up: %s", dump(en))
	}
	// Its deletion withdraws the entry, and says why.
	res = e.remove("files/from-file.md")
	if en := e.skill("from-file"); en.Live() {
		t.Fatalf("entry live without its file: %s", dump(en))
	}
	if got := rejectionCodes(res); !slices.Equal(got, []string{CodeMissingFile}) {
		t.Fatalf("codes %v, want missing_file", got)
	}
	// Deleting the config keeps its entries (config_missing: the config in
	// force stays); a config without them withdraws them.
	e.remove(skillsconfig.Key)
	c := e.catalog()
	if !c.Skills["inline"].Live() || !c.Subagents["helper"].Live() {
		t.Error("the config's own entries were withdrawn when it was deleted")
	}
	e.config("version: 1\n")
	c = e.catalog()
	for _, name := range []string{"inline", "zipped"} {
		if c.Skills[name].Live() {
			t.Errorf("%s live after a config without it", name)
		}
	}
	if c.Subagents["helper"].Live() {
		t.Error("helper live after a config without it")
	}
}

func testConfigEntryMustNameItsBytes(t *testing.T, mk envMaker) {
	e := mk(t)
	res := e.config("version: 1\nskills:\n  - name: inline\n    body: |\n" + indent(skillDoc("other", "1", "Mismatch.")))
	if got := rejectionCodes(res); !slices.Equal(got, []string{"name_mismatch"}) {
		t.Fatalf("codes %v, want name_mismatch", got)
	}
	if res.Config != ConfigApplied {
		t.Fatalf("one bad entry rejected the config: %s", dump(res))
	}
}

func testInvalidConfigIsRejectedWholeAndThePreviousStays(t *testing.T, mk envMaker) {
	good := "version: 1\nskills:\n  - name: x\n    visibility: authenticated\n"
	tests := []struct {
		name string
		yaml string
	}{
		{"a YAML error", "skills: [\n"},
		{"an unknown key", "version: 1\nskills:\n  - name: x\n    colour: red\n"},
		{"a duplicate name", "version: 1\nskills:\n  - name: x\n  - name: x\n"},
		{"a reserved route", "version: 1\nskills:\n  - name: x\n    url: /manifest.json\n"},
		{"a url another live entry is served at", "version: 1\nskills:\n  - name: x\n    url: /skills/y.md\n"},
		{"an entry defining a name a drop publishes", "version: 1\nskills:\n  - name: y\n    body: |\n" + indent(skillDoc("y", "9", "Config y."))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mk(t)
			e.drop("skills/x.md", skillDoc("x", "1", "X."))
			e.drop("skills/y.md", skillDoc("y", "1", "Y."))
			e.config(good)
			before := e.catalog()
			res := e.drop(skillsconfig.Key, []byte(tt.yaml))
			if res.Config != ConfigRejected || !slices.Equal(rejectionCodes(res), []string{CodeInvalidConfig}) {
				t.Fatalf("result %s, want the config rejected", dump(res))
			}
			after := e.catalog()
			if after.Config.YAML != good || !after.Config.Digest.Equal(before.Config.Digest) {
				t.Fatalf("the previous config did not stay in force: %s", dump(after.Config))
			}
			// The one change: the catalog records the refused config, so
			// rounds hold publications without reading it again.
			if after.Bucket == nil || after.Bucket.State != catalog.ConfigInvalid || after.Revision > before.Revision+1 {
				t.Fatalf("bucket config %s, revision %d after %d", dump(after.Bucket), after.Revision, before.Revision)
			}
			if after.Skills["x"].Visibility != catalog.Authenticated || after.Skills["y"].Source != "skills/y.md" {
				t.Fatalf("entries changed: %s", dump(after.Skills))
			}
			st := e.status()
			if len(st.Rejections) != 1 || st.Rejections[0].Key != skillsconfig.Key {
				t.Fatalf("status %s", dump(st))
			}
			if len(e.audits()) != 1 {
				t.Fatalf("audit events %v", e.audits())
			}
		})
	}
}

func testConfigChangeReevaluatesWhatItTouches(t *testing.T, mk envMaker) {
	e := mk(t)
	e.config("version: 1\nskills:\n  - name: x\n    body: |\n" + indent(skillDoc("x", "1", "Config x.")))
	res := e.drop("skills/x.md", skillDoc("x", "2", "Dropped x."))
	if got := rejectionCodes(res); !slices.Equal(got, []string{CodeNameConflict}) {
		t.Fatalf("codes %v, want name_conflict while the config owns x", got)
	}
	// The config gives x up: the dropped key takes over in the same invocation.
	res = e.config("version: 1\nskills:\n  - name: x\n    description: Now only an override.\n")
	en := e.live(catalog.KindSkill, "x")
	if en.Source != "skills/x.md" || en.Latest != "2" || en.EffectiveDescription() != "Now only an override." {
		t.Fatalf("entry %s; result %s", dump(en), dump(res))
	}
	if !slices.Equal(labels(en), []string{"1", "2"}) {
		t.Fatalf("history %v, want the config's version kept", labels(en))
	}
}

func testConfigCapsApplyAtValidation(t *testing.T, mk envMaker) {
	e := mk(t)
	three := skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("x", "1", "Three files.")), "a": "a", "b": "b"})
	e.drop("skills/x.zip", three)
	// Lowering a cap re-validates the current bytes: reported, not withdrawn.
	res := e.config("version: 1\nskills:\n  - name: x\n    max_entries: 2\n")
	if got := rejectionCodes(res); !slices.Equal(got, []string{"too_many_entries"}) {
		t.Fatalf("codes %v, want too_many_entries", got)
	}
	if en := e.live(catalog.KindSkill, "x"); en.Latest != "1" {
		t.Fatalf("entry %s", dump(en))
	}
	// New uploads are held to the lowered cap.
	four := skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("x", "2", "Four files.")), "a": "a", "b": "b", "c": "c"})
	if got := rejectionCodes(e.drop("skills/x.zip", four)); !slices.Equal(got, []string{"too_many_entries"}) {
		t.Fatalf("codes %v, want too_many_entries", got)
	}
	// max_artifact_bytes lowers the size cap.
	e.config("version: 1\nskills:\n  - name: x\n    max_artifact_bytes: 100\n")
	if got := rejectionCodes(e.drop("skills/x.zip", four)); !slices.Equal(got, []string{"artifact_too_large"}) {
		t.Fatalf("codes %v, want artifact_too_large", got)
	}
}

func testListings(t *testing.T, mk envMaker) {
	e := mk(t)
	e.drop("skills/shared.md", skillDoc("shared", "1", "Top level."))
	e.drop("listings/partner-b/skills/dropped.md", skillDoc("dropped", "1", "Dropped into b."))
	res := e.config(`version: 1
listings:
  partner-a:
    skills:
      - name: shared
      - name: only-a
        url: skills/only-a.md
        body: |
` + indentN(skillDoc("only-a", "1", "Only in a."), 10))
	if res.Config != ConfigApplied {
		t.Fatalf("result %s", dump(res))
	}
	v := catalog.Compile(e.catalog(), "")
	names := func(l string) []string {
		m, _ := v.Listing(l, audience.Unrestricted)
		var out []string
		for _, en := range m {
			out = append(out, en.Name)
		}
		return out
	}
	if got := names("partner-a"); !slices.Equal(got, []string{"only-a", "shared"}) {
		t.Fatalf("partner-a holds %v", got)
	}
	if got := names("partner-b"); !slices.Equal(got, []string{"dropped"}) {
		t.Fatalf("partner-b holds %v", got)
	}
	if v.Skill("only-a", audience.Unrestricted) != nil {
		t.Fatal("a listing-only skill is in the top-level index")
	}
	if en := e.live(catalog.KindSkill, "partner-a/only-a"); en.Path != "/.well-known/agent-skills/partner-a/skills/only-a.md" {
		t.Fatalf("listing entry path %q", en.Path)
	}
	if en := e.live(catalog.KindSkill, "shared"); !slices.Equal(en.Listings, []string{"partner-a"}) {
		t.Fatalf("shared listings %v", en.Listings)
	}
	// A drop under a name a listing includes by reference is a conflict.
	res = e.drop("listings/partner-a/skills/shared.md", skillDoc("shared", "1", "Clash."))
	if got := rejectionCodes(res); !slices.Equal(got, []string{CodeNameConflict}) {
		t.Fatalf("codes %v, want name_conflict", got)
	}
}

// tlsServer serves one document at /<name> and counts requests.
func tlsServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func testExternalEntries(t *testing.T, mk envMaker) {
	doc := skillDoc("ext", "4", "Fetched.")
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ext.md":
			_, _ = w.Write(doc)
		case "/big.md":
			_, _ = w.Write(bytes.Repeat([]byte("x"), 200))
		case "/slow.md":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	})
	e := mk(t, func(c *Config) { c.Fetcher = fetcherFor(srv); c.FetchTimeout = 200 * time.Millisecond })
	e.config(fmt.Sprintf("version: 1\nskills:\n  - name: ext\n    type: skill-md\n    url: %s/ext.md\n", srv.URL))
	en := e.live(catalog.KindSkill, "ext")
	if en.ExternalURL != srv.URL+"/ext.md" || en.Path != "" || !en.LatestVersion().Digest.Verify(doc) || en.Latest != "4" {
		t.Fatalf("entry %s", dump(en))
	}
	if hits.Load() != 1 {
		t.Fatalf("%d fetches, want 1", hits.Load())
	}
	if _, err := e.st.Head(context.Background(), catalog.BlobKey(digest.Of(doc))); err == nil {
		t.Fatal("an external entry was re-hosted")
	}
	// Fetched once: a re-index does not fetch again.
	e.reindex()
	if hits.Load() != 1 {
		t.Fatalf("%d fetches after a re-index, want 1", hits.Load())
	}
	tests := []struct {
		name string
		path string
		max  string
		code string
	}{
		{"a status other than 200", "/missing.md", "", CodeFetchFailed},
		{"more bytes than the cap", "/big.md", "    max_artifact_bytes: 100\n", CodeFetchFailed},
		{"no answer within the timeout", "/slow.md", "", CodeFetchFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.config(fmt.Sprintf("version: 1\nskills:\n  - name: ext\n    type: skill-md\n    url: %s%s\n%s", srv.URL, tt.path, tt.max))
			if got := rejectionCodes(res); !slices.Equal(got, []string{tt.code}) {
				t.Fatalf("codes %v, want %s; %s", got, tt.code, dump(res))
			}
			// The previous version stays in service.
			if en := e.live(catalog.KindSkill, "ext"); en.ExternalURL != srv.URL+"/ext.md" {
				t.Fatalf("entry %s", dump(en))
			}
		})
	}
}

// testADifferentFetchFailureIsNews: a fetch_failed has no bytes to tell
// one from another, so a repeat is the same failure (same message: URL and
// cause); a config moving from a URL that answers 404 to one that answers
// 500 is news, recorded, audited and counted again.
func testADifferentFetchFailureIsNews(t *testing.T, mk envMaker) {
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken.md" {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		http.NotFound(w, r)
	})
	e := mk(t, func(c *Config) { c.Fetcher = fetcherFor(srv) })
	entry := func(path, description string) string {
		return fmt.Sprintf("version: 1\nskills:\n  - name: ext\n    type: skill-md\n    url: %s%s\n    description: %s\n", srv.URL, path, description)
	}
	steps := []struct {
		name     string
		yaml     string
		repeated bool
		status   string // in the newest rejection's message
	}{
		{"a URL that answers 404", entry("/missing.md", "One."), false, "status 404"},
		{"the same failure after an unrelated edit", entry("/missing.md", "Two."), true, "status 404"},
		{"a URL that answers 500", entry("/broken.md", "Two."), false, "status 500"},
		{"back to the 404", entry("/missing.md", "Two."), false, "status 404"},
	}
	for i, s := range steps {
		res := e.config(s.yaml)
		if len(res.Rejected) != 1 || res.Rejected[0].Code != CodeFetchFailed || res.Rejected[0].Repeated != s.repeated {
			t.Fatalf("%s: result %s, want one fetch_failed, repeated %v", s.name, dump(res), s.repeated)
		}
		st := e.status()
		if !strings.Contains(st.Rejections[0].Message, s.status) {
			t.Fatalf("%s: the newest rejection says %q, want %q", s.name, st.Rejections[0].Message, s.status)
		}
		fresh := 0
		for _, s := range steps[:i+1] {
			if !s.repeated {
				fresh++
			}
		}
		if len(st.Rejections) != fresh || len(e.audits()) != fresh || e.metrics.Total(obs.UploadRejected) != fresh {
			t.Fatalf("%s: %d recorded, %d audited, %d counted; want %d each",
				s.name, len(st.Rejections), len(e.audits()), e.metrics.Total(obs.UploadRejected), fresh)
		}
	}
}

// testExternalFetchFollowsOnlyHTTPSRedirects: the config promises https,
// so a redirect to plain http is refused before it is requested, https
// redirects are followed a bounded number of times, and the final answer's
// status decides.
func testExternalFetchFollowsOnlyHTTPSRedirects(t *testing.T, mk envMaker) {
	doc := skillDoc("ext", "1", "Fetched.")
	plain, plainHits := func() (*httptest.Server, *atomic.Int64) {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			_, _ = w.Write(doc)
		}))
		t.Cleanup(srv.Close)
		return srv, &n
	}()
	var srv *httptest.Server
	srv, _ = tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/ext.md":
			_, _ = w.Write(doc)
		case p == "/to-http.md":
			http.Redirect(w, r, plain.URL+"/ext.md", http.StatusFound)
		case p == "/to-https.md":
			http.Redirect(w, r, srv.URL+"/ext.md", http.StatusMovedPermanently)
		case p == "/to-404.md":
			http.Redirect(w, r, srv.URL+"/nothing.md", http.StatusFound)
		case strings.HasPrefix(p, "/hop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/hop/"))
			if n == 0 {
				_, _ = w.Write(doc)
				return
			}
			http.Redirect(w, r, fmt.Sprintf("%s/hop/%d", srv.URL, n-1), http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	})
	tests := []struct {
		name string
		path string
		code string // "": published
		msg  string
	}{
		{"an https redirect is followed", "/to-https.md", "", ""},
		{"a few https redirects are followed", fmt.Sprintf("/hop/%d", fetch.MaxRedirects), "", ""},
		{"a redirect to plain http is refused", "/to-http.md", CodeFetchFailed, "only https"},
		{"too many redirects", fmt.Sprintf("/hop/%d", fetch.MaxRedirects+1), CodeFetchFailed, "redirects"},
		{"the final status counts", "/to-404.md", CodeFetchFailed, "status 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mk(t, func(c *Config) { c.Fetcher = fetcherFor(srv) })
			res := e.drop(skillsconfig.Key, []byte(fmt.Sprintf("version: 1\nskills:\n  - name: ext\n    type: skill-md\n    url: %s%s\n", srv.URL, tt.path)))
			if tt.code == "" {
				if en := e.live(catalog.KindSkill, "ext"); !en.LatestVersion().Digest.Verify(doc) {
					t.Fatalf("entry %s", dump(en))
				}
				return
			}
			if got := rejectionCodes(res); !slices.Equal(got, []string{tt.code}) || !strings.Contains(res.Rejected[0].Message, tt.msg) {
				t.Fatalf("result %s, want %s mentioning %q", dump(res), tt.code, tt.msg)
			}
			if en := e.skill("ext"); en != nil && en.Live() {
				t.Fatalf("published despite the refusal: %s", dump(en))
			}
		})
	}
	if n := plainHits.Load(); n != 0 {
		t.Fatalf("the plain http server was asked %d times", n)
	}
}

func testPinnedExternalEntryIsNeverFetched(t *testing.T, mk envMaker) {
	srv, hits := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusTeapot) })
	e := mk(t, func(c *Config) { c.Fetcher = fetcherFor(srv) })
	d := digest.Of([]byte("whatever the operator vouches for"))
	e.config(fmt.Sprintf("version: 1\nskills:\n  - name: pinned\n    type: archive\n    url: %s/p.tar.gz\n    digest: %s\n    description: Pinned.\n", srv.URL, d))
	en := e.live(catalog.KindSkill, "pinned")
	v := en.LatestVersion()
	if !v.Digest.Equal(d) || v.Type != artifact.TypeArchive || v.Format != artifact.FormatTarGz || en.EffectiveDescription() != "Pinned." {
		t.Fatalf("entry %s", dump(en))
	}
	if hits.Load() != 0 {
		t.Fatalf("a pinned entry was fetched %d times", hits.Load())
	}
}

func testConfigRedeliveryWritesNothing(t *testing.T, mk envMaker) {
	e := mk(t)
	e.config("version: 1\nskills:\n  - name: x\n    visibility: authenticated\n")
	rev := e.catalog().Revision
	if res := e.reconcile(skillsconfig.Key); res.Config != "" {
		t.Fatalf("result %s", dump(res))
	}
	if e.catalog().Revision != rev {
		t.Fatal("an unchanged config was written again")
	}
}

func TestValidateAppliesTheCapsInForce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	three := skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("x", "1", "Three files.")), "a": "a", "b": "b"})
	if _, err := e.ix.Validate(ctx, "skills/x.zip", three); err != nil {
		t.Fatalf("valid under the service caps: %v", err)
	}
	e.config("version: 1\nskills:\n  - name: x\n    max_entries: 2\n")
	_, err := e.ix.Validate(ctx, "skills/x.zip", three)
	if a, ok := artifact.AsError(err); !ok || a.Code != "too_many_entries" {
		t.Fatalf("err = %v, want too_many_entries under the config's cap", err)
	}
	if _, err := e.ix.Validate(ctx, "skills/y.zip", three); err == nil {
		t.Fatal("the name rule was not applied")
	}
	if _, err := e.ix.Validate(ctx, "files/x.md", three); !errors.Is(err, ErrNotAnArtifact) {
		t.Fatalf("err = %v, want ErrNotAnArtifact", err)
	}
	if e.catalog().Revision != 1 {
		t.Fatal("Validate wrote the catalog")
	}
}

func TestValidateForeseesTheCatalogsDecision(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.drop("skills/x.md", skillDoc("x", "1", "Published."))
	tests := []struct {
		key  string
		body []byte
		code string // "" accepted
	}{
		{"skills/x.md", skillDoc("x", "2", "A new label."), ""},
		{"skills/x.md", skillDoc("x", "1", "Published."), ""},
		{"skills/x.md", skillDoc("x", "1", "Other bytes."), CodeVersionExists},
		{"skills/x/SKILL.md", skillDoc("x", "3", "Another key."), CodeNameConflict},
	}
	for _, tt := range tests {
		_, err := e.ix.Validate(ctx, tt.key, tt.body)
		a, _ := artifact.AsError(err)
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("%s: %v", tt.key, err)
		case tt.code != "" && (a == nil || a.Code != tt.code):
			t.Errorf("%s: err = %v, want %s", tt.key, err, tt.code)
		}
	}
	if e.catalog().Revision != 1 {
		t.Fatal("Validate wrote the catalog")
	}
}

// TestConfigPathTheStoreCannotHoldIsMissing: a path: a local directory
// store cannot hold (a dot element) names no bytes: the entry is refused as
// missing_file, and the invocation does not fail (a retry would fail the
// same way forever).
func TestConfigPathTheStoreCannotHoldIsMissing(t *testing.T) {
	e := newEnv(t)
	res := e.config("version: 1\nskills:\n  - name: dotted\n    type: skill-md\n    path: files/.dotted.md\n")
	if got := rejectionCodes(res); !slices.Equal(got, []string{CodeMissingFile}) {
		t.Fatalf("codes %v, want missing_file; %s", got, dump(res))
	}
	if res := e.reindex(); !slices.Equal(rejectionCodes(res), []string{CodeMissingFile}) {
		t.Fatalf("re-index: %s", dump(res))
	}
}

// TestCheckSaysWhenNothingWouldChange: Check foresees a no-op (the same
// bytes from the same key, latest) apart from a new version or another key.
func TestCheckSaysWhenNothingWouldChange(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	one := skillDoc("x", "1", "One.")
	e.drop("skills/x.md", one)
	tests := []struct {
		name      string
		key       string
		body      []byte
		unchanged bool
	}{
		{"the same bytes from the same key", "skills/x.md", one, true},
		{"a new version from the same key", "skills/x.md", skillDoc("x", "2", "Two."), false},
		{"another skill", "skills/y.md", skillDoc("y", "1", "Y."), false},
	}
	for _, tt := range tests {
		a, unchanged, err := e.ix.Check(ctx, tt.key, tt.body)
		if err != nil || a == nil || unchanged != tt.unchanged {
			t.Errorf("%s: Check = %v, %v, %v; want unchanged %v", tt.name, a, unchanged, err, tt.unchanged)
		}
	}
}
