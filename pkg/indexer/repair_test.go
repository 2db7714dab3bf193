package indexer

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// verifySuite is every behaviour of Verify, run over a local directory
// (TestVerifyLocal) and, in the emulator tier, over S3.
var verifySuite = []struct {
	name string
	run  func(*testing.T, envMaker)
}{
	{"BrokenArtifactBlobIsRepairedFromItsSource", testBrokenArtifactBlobIsRepaired},
	{"ChangedOrMissingSourceIsUnrecoverable", testChangedOrMissingSourceIsUnrecoverable},
	{"OlderVersionsAreVerified", testOlderVersionsAreVerified},
	{"FileBlobsOfAnArchiveAreRepaired", testFileBlobsOfAnArchiveAreRepaired},
	{"ConfigEntriesAreRepairedFromTheConfigInForce", testConfigEntriesAreRepaired},
	{"AGoodBlobIsNeverWritten", testAGoodBlobIsNeverWritten},
	{"ARepairLosesToAConcurrentWrite", testARepairLosesToAConcurrentWrite},
	{"AnUnreadableSourceIsAFailureNotUnrecoverable", testAnUnreadableSourceFails},
	{"TheRequestPathServesARepairedBlob", testTheRequestPathServesARepairedBlob},
	{"TheOutcomeIsInTheStatusDocument", testTheOutcomeIsInTheStatusDocument},
	{"WithdrawnEntriesAreSkipped", testWithdrawnEntriesAreSkipped},
}

func TestVerifyLocal(t *testing.T) {
	for _, s := range verifySuite {
		t.Run(s.name, func(t *testing.T) { s.run(t, newEnv) })
	}
}

// spyStore records the writes under blobs/ and can act just before one
// (a concurrent writer).
type spyStore struct {
	store.Store
	mu        sync.Mutex
	blobPuts  []string
	beforePut func(key string, opts store.PutOptions)
	getErr    func(key string) error
}

func (s *spyStore) Put(ctx context.Context, key string, body []byte, opts store.PutOptions) (store.Info, error) {
	if strings.HasPrefix(key, catalog.BlobPrefix) {
		s.mu.Lock()
		s.blobPuts = append(s.blobPuts, key)
		before := s.beforePut
		s.mu.Unlock()
		if before != nil {
			before(key, opts)
		}
	}
	return s.Store.Put(ctx, key, body, opts)
}

func (s *spyStore) Get(ctx context.Context, key string, opts store.GetOptions) (*store.Object, error) {
	if s.getErr != nil {
		if err := s.getErr(key); err != nil {
			return nil, err
		}
	}
	return s.Store.Get(ctx, key, opts)
}

func (s *spyStore) puts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.blobPuts)
}

// spied is e with its indexer over a spyStore of e's store.
func spied(t *testing.T, e *env) (*env, *spyStore) {
	t.Helper()
	sp := &spyStore{Store: e.st}
	return newEnvOn(t, sp), sp
}

func (e *env) verify() *VerifyResult {
	e.t.Helper()
	res, err := e.ix.Verify(context.Background(), VerifyOptions{})
	if err != nil {
		e.t.Fatalf("verify: %v", err)
	}
	return res
}

// blob is what the store holds at d's blob ("" and false when nothing).
func (e *env) blob(d digest.Digest) (string, bool) {
	e.t.Helper()
	b, _, err := store.ReadAll(context.Background(), e.st, catalog.BlobKey(d), 0)
	if errors.Is(err, store.ErrNotFound) {
		return "", false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b), true
}

// counts is the result's counts, as "blobs/verified/repaired/unrecoverable/failed/skipped".
func counts(r *VerifyResult) [6]int {
	return [6]int{r.Blobs, r.Verified, r.Repaired, r.Unrecoverable, r.Failed, r.Skipped}
}

func problemCodes(r *VerifyResult) []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.State+" "+p.Code+" "+p.Entry+" "+p.Version+" "+p.File)
	}
	return out
}

// testBrokenArtifactBlobIsRepaired: a blob overwritten with other bytes of
// the same size, with bytes of another size, and deleted, is rewritten
// from its source, which still validates to the pinned digest.
func testBrokenArtifactBlobIsRepaired(t *testing.T, mk envMaker) {
	for _, tc := range []struct {
		name   string
		damage func(e *env, d digest.Digest, good string)
		was    string
	}{
		{"same size, other bytes", func(e *env, d digest.Digest, good string) {
			e.put(catalog.BlobKey(d), []byte(strings.Replace(good, "Does", "Doez", 1)))
		}, BlobOtherBytes},
		{"longer", func(e *env, d digest.Digest, good string) { e.put(catalog.BlobKey(d), []byte(good+"\nmore")) }, BlobOtherSize},
		{"shorter", func(e *env, d digest.Digest, good string) { e.put(catalog.BlobKey(d), []byte(good[:10])) }, BlobOtherSize},
		{"deleted", func(e *env, d digest.Digest, _ string) { e.del(catalog.BlobKey(d)) }, BlobMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mk(t)
			doc := skilltest.SkillMD("deploy", "1.0", "Does deploys.")
			e.drop("skills/deploy.md", []byte(doc))
			e.drop("subagents/reviewer.md", agentDoc("reviewer", "1"))
			v := e.live(catalog.KindSkill, "deploy").LatestVersion()
			tc.damage(e, v.Digest, doc)

			res := e.verify()
			// deploy's artifact and its SKILL.md are one blob; the sub-agent's is the other.
			if counts(res) != [6]int{2, 1, 1, 0, 0, 0} {
				t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
			}
			r := res.Repairs[0]
			if r.Entry != "deploy" || r.Version != "1.0" || r.File != "" || r.Was != tc.was || r.From != "skills/deploy.md" || r.Others != 1 {
				t.Fatalf("repair %+v", r)
			}
			if got, ok := e.blob(v.Digest); !ok || got != doc {
				t.Fatalf("blob after the repair: %q (present %v)", got, ok)
			}
			if res := e.verify(); counts(res) != [6]int{2, 2, 0, 0, 0, 0} {
				t.Fatalf("a second verify: %v", counts(res))
			}
			consistent(t, e.st)
		})
	}
}

// testChangedOrMissingSourceIsUnrecoverable: a broken blob whose source
// now holds other bytes (not yet indexed), or invalid bytes, or is gone, is
// reported with why, and nothing is written.
func testChangedOrMissingSourceIsUnrecoverable(t *testing.T, mk envMaker) {
	for _, tc := range []struct {
		name, code string
		source     func(e *env)
	}{
		{"changed", CodeSourceChanged, func(e *env) { e.put("skills/deploy.md", skillDoc("deploy", "2.0", "Does deploys.")) }},
		{"invalid now", CodeSourceInvalid, func(e *env) { e.put("skills/deploy.md", []byte("no frontmatter\n")) }},
		{"gone", CodeSourceMissing, func(e *env) { e.del("skills/deploy.md") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mk(t)
			e.drop("skills/deploy.md", skillDoc("deploy", "1.0", "Does deploys."))
			v := e.live(catalog.KindSkill, "deploy").LatestVersion()
			tc.source(e)
			tampered := "tampered"
			e.put(catalog.BlobKey(v.Digest), []byte(tampered))
			sp, spy := spied(t, e)

			res := sp.verify()
			if counts(res) != [6]int{1, 0, 0, 1, 0, 0} {
				t.Fatalf("counts %v", counts(res))
			}
			p := res.Problems[0]
			if p.State != catalog.BlobUnrecoverable || p.Code != tc.code || p.Entry != "deploy" || p.Version != "1.0" || !p.Digest.Equal(v.Digest) || p.Message == "" {
				t.Fatalf("problem %+v", p)
			}
			if puts := spy.puts(); len(puts) != 0 {
				t.Fatalf("wrote %v for an unrecoverable blob", puts)
			}
			if got, _ := e.blob(v.Digest); got != tampered {
				t.Fatalf("blob %q", got)
			}
		})
	}
}

// testOlderVersionsAreVerified: an older version's blob counts too (it is
// served under /api/v1/): repaired where its source key still holds it,
// unrecoverable where the key moved on to newer bytes.
func testOlderVersionsAreVerified(t *testing.T, mk envMaker) {
	e := mk(t)
	v1 := skillDoc("deploy", "1", "Does deploys.")
	e.drop("skills/deploy.md", v1)
	e.remove("skills/deploy.md")
	v2 := skilltest.Zip(t, map[string]string{"SKILL.md": skilltest.SkillMD("deploy", "2", "Does deploys.")})
	e.drop("skills/deploy.zip", v2)
	e.drop("skills/deploy.md", v1) // a contender now (name_conflict), holding version 1's bytes
	e.drop("skills/lint.md", skillDoc("lint", "1", "Lints."))
	e.drop("skills/lint.md", skillDoc("lint", "2", "Lints more."))
	en, lint := e.live(catalog.KindSkill, "deploy"), e.live(catalog.KindSkill, "lint")
	if len(en.Versions) != 2 || en.Versions[0].SourceKey != "skills/deploy.md" || en.Latest != "2" || len(lint.Versions) != 2 {
		t.Fatalf("deploy: %s\nlint: %s", dump(en.Versions), dump(lint.Versions))
	}
	e.del(catalog.BlobKey(en.Versions[0].Digest))
	e.put(catalog.BlobKey(lint.Versions[0].Digest), []byte("tampered"))

	res := e.verify()
	if res.Repaired != 1 || res.Unrecoverable != 1 || res.Failed != 0 {
		t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
	}
	if r := res.Repairs[0]; r.Entry != "deploy" || r.Version != "1" || r.Was != BlobMissing || r.From != "skills/deploy.md" {
		t.Fatalf("repair %+v", r)
	}
	if got, _ := e.blob(en.Versions[0].Digest); got != string(v1) {
		t.Fatalf("version 1's blob: %q", got)
	}
	if p := res.Problems[0]; p.Entry != "lint" || p.Version != "1" || p.Code != CodeSourceChanged {
		t.Fatalf("problem %+v", p)
	}
}

// testFileBlobsOfAnArchiveAreRepaired: a file's own blob is rewritten with
// the file's bytes from validating the artifact: the version's artifact
// blob while it is intact, else the source; never when neither holds the
// pinned bytes.
func testFileBlobsOfAnArchiveAreRepaired(t *testing.T, mk envMaker) {
	files := map[string]string{"SKILL.md": skilltest.SkillMD("pdf", "1", "Fills PDFs."), "scripts/fill.py": "print(1)\n"}
	script := digest.Of([]byte(files["scripts/fill.py"]))
	setup := func(t *testing.T) (*env, *catalog.Version) {
		e := mk(t)
		e.drop("skills/pdf.zip", skilltest.Zip(t, files))
		return e, e.live(catalog.KindSkill, "pdf").LatestVersion()
	}

	t.Run("from the intact artifact blob", func(t *testing.T) {
		e, v := setup(t)
		e.put(catalog.BlobKey(script), []byte("print(2)\n"))
		e.del("skills/pdf.zip") // not reconciled: the artifact blob suffices
		res := e.verify()
		if counts(res) != [6]int{3, 2, 1, 0, 0, 0} {
			t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
		}
		if r := res.Repairs[0]; r.File != "scripts/fill.py" || r.Was != BlobOtherBytes || !strings.HasPrefix(r.From, catalog.BlobKey(v.Digest)) {
			t.Fatalf("repair %+v", r)
		}
		if got, _ := e.blob(script); got != files["scripts/fill.py"] {
			t.Fatalf("file blob %q", got)
		}
	})
	t.Run("from the source", func(t *testing.T) {
		e, v := setup(t)
		e.del(catalog.BlobKey(script))
		e.put(catalog.BlobKey(v.Digest), []byte("not a zip"))
		res := e.verify()
		if counts(res) != [6]int{3, 1, 2, 0, 0, 0} {
			t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
		}
		// Blobs are verified concurrently: the file's is rewritten from the
		// source, or from the artifact blob once that was repaired from it.
		i := slices.IndexFunc(res.Repairs, func(r Repair) bool { return r.File == "scripts/fill.py" })
		if i < 0 {
			t.Fatalf("repairs %+v: the file blob was not repaired", res.Repairs)
		}
		if r := res.Repairs[i]; r.Was != BlobMissing || r.From != "skills/pdf.zip (scripts/fill.py)" && !strings.HasPrefix(r.From, catalog.BlobKey(v.Digest)) {
			t.Fatalf("repair %+v", r)
		}
		if got, _ := e.blob(script); got != files["scripts/fill.py"] {
			t.Fatalf("file blob %q", got)
		}
		consistent(t, e.st)
	})
	t.Run("unrecoverable when the source changed", func(t *testing.T) {
		e, v := setup(t)
		changed := map[string]string{"SKILL.md": files["SKILL.md"], "scripts/fill.py": "print(3)\n"}
		e.put("skills/pdf.zip", skilltest.Zip(t, changed)) // the same label: it would be refused, and is not indexed
		e.del(catalog.BlobKey(script))
		e.put(catalog.BlobKey(v.Digest), []byte("not a zip"))
		sp, spy := spied(t, e)
		res := sp.verify()
		if counts(res) != [6]int{3, 1, 0, 2, 0, 0} {
			t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
		}
		want := []string{"unrecoverable source_changed pdf 1 ", "unrecoverable source_changed pdf 1 scripts/fill.py"}
		if got := problemCodes(res); !slices.Equal(got, want) {
			t.Fatalf("problems %q, want %q", got, want)
		}
		if puts := spy.puts(); len(puts) != 0 {
			t.Fatalf("wrote %v", puts)
		}
	})
}

// testConfigEntriesAreRepaired: an inline body is re-derived from the
// config in force and a files/ entry read from its key, each validated as
// the entry; a version whose bytes the config no longer gives the entry is
// unrecoverable. External entries have no blob and are skipped.
func testConfigEntriesAreRepaired(t *testing.T, mk envMaker) {
	e := mk(t)
	inline := skillDoc("inline", "1", "Inline skill.")
	fromFile := skillDoc("from-file", "1", "From files/.")
	e.put("files/from-file.md", fromFile)
	external := "  - name: ext\n    type: skill-md\n    description: External.\n    url: https://cdn.example.com/ext.md\n" +
		"    digest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
	e.config("version: 1\nskills:\n  - name: inline\n    body: |\n" + indent(inline) +
		"  - name: from-file\n    type: skill-md\n    path: files/from-file.md\n" + external)
	in, ff := e.live(catalog.KindSkill, "inline").LatestVersion(), e.live(catalog.KindSkill, "from-file").LatestVersion()
	e.put(catalog.BlobKey(in.Digest), []byte("tampered"))
	e.del(catalog.BlobKey(ff.Digest))

	res := e.verify()
	if counts(res) != [6]int{2, 0, 2, 0, 0, 1} {
		t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
	}
	if r := res.Repairs; r[0].Entry != "from-file" || r[0].From != "files/from-file.md" || r[1].Entry != "inline" || !strings.HasPrefix(r[1].From, "agent-skills.yaml skills[0]") {
		t.Fatalf("repairs %+v", r)
	}
	consistent(t, e.st)

	// inline's version 1 came from the body; the config now takes it from files/.
	e.put("files/inline.md", skillDoc("inline", "2", "Inline skill, moved."))
	e.config("version: 1\nskills:\n  - name: inline\n    type: skill-md\n    path: files/inline.md\n" +
		"  - name: from-file\n    type: skill-md\n    path: files/from-file.md\n" + external)
	if en := e.live(catalog.KindSkill, "inline"); en.Latest != "2" || len(en.Versions) != 2 {
		t.Fatalf("inline: %s", dump(en))
	}
	e.put(catalog.BlobKey(in.Digest), []byte("tampered"))
	res = e.verify()
	if got := problemCodes(res); !slices.Equal(got, []string{"unrecoverable source_missing inline 1 "}) {
		t.Fatalf("problems %q", got)
	}
}

// testAGoodBlobIsNeverWritten: a verify of intact blobs writes nothing
// under blobs/, and a repair writes the one broken blob, once.
func testAGoodBlobIsNeverWritten(t *testing.T, mk envMaker) {
	base := mk(t)
	base.drop("skills/deploy.md", skillDoc("deploy", "1", "Does deploys."))
	base.drop("skills/pdf.zip", skilltest.Zip(t, map[string]string{"SKILL.md": skilltest.SkillMD("pdf", "1", "PDFs."), "a.txt": "a", "b/c.txt": "c"}))
	base.drop("listings/partner-a/skills/faq.md", skillDoc("faq", "1", "FAQ."))
	base.drop("subagents/reviewer/agent.md", agentDoc("reviewer", "1"))
	e, spy := spied(t, base)
	var progress []int
	res, err := e.ix.Verify(context.Background(), VerifyOptions{Progress: func(done, total int) {
		if total != 7 {
			t.Errorf("progress total %d, want 7", total)
		}
		progress = append(progress, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	// deploy (1), pdf (artifact + 3 files), faq (1), reviewer (1).
	if counts(res) != [6]int{7, 7, 0, 0, 0, 0} {
		t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
	}
	if !slices.Equal(progress, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("progress %v", progress)
	}
	if puts := spy.puts(); len(puts) != 0 {
		t.Fatalf("wrote %v over intact blobs", puts)
	}
	faq := base.live(catalog.KindSkill, "partner-a/faq").LatestVersion()
	base.put(catalog.BlobKey(faq.Digest), []byte("tampered"))
	if res := e.verify(); counts(res) != [6]int{7, 6, 1, 0, 0, 0} {
		t.Fatalf("counts %v", counts(res))
	}
	if puts := spy.puts(); !slices.Equal(puts, []string{catalog.BlobKey(faq.Digest)}) {
		t.Fatalf("wrote %v, want only the broken blob", puts)
	}
}

// testARepairLosesToAConcurrentWrite: the blob changes between the check
// and the repair (another verify repaired it, or something wrote it
// again): the conditional write fails, is reported as precondition_failed
// (not as a repair), and what the other writer wrote stays.
func testARepairLosesToAConcurrentWrite(t *testing.T, mk envMaker) {
	doc := skillDoc("deploy", "1", "Does deploys.")
	for _, tc := range []struct {
		name        string
		damage      func(e *env, key string)
		concurrent  []byte
		wantOptions store.PutOptions
	}{
		{"another repair of a tampered blob", func(e *env, key string) { e.put(key, []byte("tampered")) }, doc, store.PutOptions{IfMatch: "set"}},
		{"another write over a tampered blob", func(e *env, key string) { e.put(key, []byte("tampered")) }, []byte("other bytes"), store.PutOptions{IfMatch: "set"}},
		{"another repair of a missing blob", func(e *env, key string) { e.del(key) }, doc, store.PutOptions{IfNoneMatch: "*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := mk(t)
			base.drop("skills/deploy.md", doc)
			key := catalog.BlobKey(digest.Of(doc))
			tc.damage(base, key)
			e, spy := spied(t, base)
			var seen []store.PutOptions
			spy.beforePut = func(k string, opts store.PutOptions) {
				seen = append(seen, opts)
				if _, err := base.st.Put(context.Background(), k, tc.concurrent, store.PutOptions{}); err != nil {
					t.Error(err)
				}
			}
			res := e.verify()
			if counts(res) != [6]int{1, 0, 0, 0, 1, 0} || res.Problems[0].Code != CodePreconditionFailed || res.Problems[0].State != catalog.BlobFailed {
				t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
			}
			if len(seen) != 1 || (tc.wantOptions.IfMatch != "") != (seen[0].IfMatch != "") || seen[0].IfNoneMatch != tc.wantOptions.IfNoneMatch {
				t.Fatalf("put options %+v", seen)
			}
			if got, _ := base.blob(digest.Of(doc)); got != string(tc.concurrent) {
				t.Fatalf("blob %q: the other writer's bytes were overwritten", got)
			}
		})
	}
}

// testAnUnreadableSourceFails: a blob or a source that cannot be read is a
// failure to run again, not an unrecoverable blob.
func testAnUnreadableSourceFails(t *testing.T, mk envMaker) {
	base := mk(t)
	doc := skillDoc("deploy", "1", "Does deploys.")
	base.drop("skills/deploy.md", doc)
	key := catalog.BlobKey(digest.Of(doc))
	for _, tc := range []struct{ name, unreadable string }{{"source", "skills/deploy.md"}, {"blob", key}} {
		t.Run(tc.name, func(t *testing.T) {
			base.put(key, []byte("tampered"))
			e, spy := spied(t, base)
			spy.getErr = func(k string) error {
				if k == tc.unreadable {
					return store.ErrAccessDenied
				}
				return nil
			}
			res := e.verify()
			if got := problemCodes(res); !slices.Equal(got, []string{"failed read_failed deploy 1 "}) || res.Failed != 1 {
				t.Fatalf("problems %q, counts %v", got, counts(res))
			}
			if len(spy.puts()) != 0 {
				t.Fatalf("wrote %v", spy.puts())
			}
		})
	}
}

// testTheRequestPathServesARepairedBlob: the handler that answered 503 for
// a tampered blob answers 200 with the pinned bytes once verify repaired
// it, at the artifact's path and at an older version's /api/v1/ path.
func testTheRequestPathServesARepairedBlob(t *testing.T, mk envMaker) {
	e := mk(t)
	v1, v2 := skillDoc("deploy", "1", "Does deploys."), skillDoc("deploy", "2", "Does deploys better.")
	e.drop("skills/deploy/SKILL.md", v1)
	e.remove("skills/deploy/SKILL.md")
	e.drop("skills/deploy.md", v2)
	e.put("skills/deploy/SKILL.md", v1) // version 1's bytes, at its source key
	srv, err := server.New(server.Config{Store: e.st, PublicBaseURL: "https://skills.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w.Code, w.Body.String()
	}
	paths := map[string][]byte{"/skills/deploy.md": v2, "/api/v1/skills/deploy/1/SKILL.md": v1}
	for p, want := range paths {
		if code, body := get(p); code != http.StatusOK || body != string(want) {
			t.Fatalf("GET %s before: %d %q", p, code, body)
		}
	}
	e.put(catalog.BlobKey(digest.Of(v2)), bytes.ToUpper(v2))
	e.del(catalog.BlobKey(digest.Of(v1)))
	for p := range paths {
		if code, _ := get(p); code != http.StatusServiceUnavailable {
			t.Fatalf("GET %s of a tampered blob: %d", p, code)
		}
	}
	if res := e.verify(); res.Repaired != 2 || res.Unrecoverable+res.Failed != 0 {
		t.Fatalf("counts %v, problems %v", counts(res), problemCodes(res))
	}
	for p, want := range paths {
		if code, body := get(p); code != http.StatusOK || body != string(want) {
			t.Fatalf("GET %s after the repair: %d %q", p, code, body)
		}
	}
}

// testTheOutcomeIsInTheStatusDocument: the counts and the problems, named
// by entry, version and file, are recorded in the status document.
func testTheOutcomeIsInTheStatusDocument(t *testing.T, mk envMaker) {
	e := mk(t)
	e.drop("skills/deploy.md", skillDoc("deploy", "1", "Does deploys."))
	e.drop("skills/pdf.zip", skilltest.Zip(t, map[string]string{"SKILL.md": skilltest.SkillMD("pdf", "1", "PDFs."), "a.txt": "a"}))
	pdf := e.live(catalog.KindSkill, "pdf").LatestVersion()
	e.del("skills/pdf.zip") // lost event: still live, its source gone
	e.put(catalog.BlobKey(pdf.Digest), []byte("tampered"))
	e.put(catalog.BlobKey(digest.Of([]byte("a"))), []byte("b"))
	deploy := e.live(catalog.KindSkill, "deploy").LatestVersion()
	e.del(catalog.BlobKey(deploy.Digest))

	res := e.verify()
	st := e.status().Verify
	if st == nil {
		t.Fatal("no verify record in the status document")
	}
	if got := [6]int{st.Blobs, st.Verified, st.Repaired, st.Unrecoverable, st.Failed, st.Skipped}; got != [6]int{4, 1, 1, 2, 0, 0} || got != counts(res) {
		t.Fatalf("recorded %v, result %v", got, counts(res))
	}
	want := []string{"unrecoverable source_missing pdf 1 ", "unrecoverable source_missing pdf 1 a.txt"}
	var got []string
	for _, p := range st.Problems {
		got = append(got, p.State+" "+p.Code+" "+p.Entry+" "+p.Version+" "+p.File)
	}
	if !slices.Equal(got, want) || st.Started.IsZero() || st.Finished.Before(st.Started) {
		t.Fatalf("recorded problems %q (want %q), started %v, finished %v", got, want, st.Started, st.Finished)
	}
}

// testWithdrawnEntriesAreSkipped: a withdrawn entry's blobs are served
// nowhere (its source is gone, so none could be repaired either): they are
// counted as skipped, not read.
func testWithdrawnEntriesAreSkipped(t *testing.T, mk envMaker) {
	base := mk(t)
	doc := skillDoc("deploy", "1", "Does deploys.")
	base.drop("skills/deploy.md", doc)
	base.remove("skills/deploy.md")
	base.put(catalog.BlobKey(digest.Of(doc)), []byte("tampered"))
	e, spy := spied(t, base)
	var reads atomic.Int32
	spy.getErr = func(k string) error {
		if strings.HasPrefix(k, catalog.BlobPrefix) {
			reads.Add(1)
		}
		return nil
	}
	if res := e.verify(); counts(res) != [6]int{0, 0, 0, 0, 0, 1} || reads.Load() != 0 {
		t.Fatalf("counts %v, %d blobs read", counts(res), reads.Load())
	}
}

// TestRewriteRefusesWhatIsNotPinned: the last guard before a write under
// blobs/: bytes that do not hash to the pinned digest and size, or an
// overwrite without an ETag to make it conditional on, are never written.
func TestRewriteRefusesWhatIsNotPinned(t *testing.T) {
	e := newEnv(t)
	sp, spy := spied(t, e)
	good := []byte("pinned bytes")
	b := &pinnedBlob{digest: digest.Of(good), size: int64(len(good))}
	for _, tc := range []struct {
		name, was, etag string
		data            []byte
	}{
		{"other bytes", BlobOtherBytes, `"etag"`, []byte("pinned bytez")},
		{"a prefix", BlobMissing, "", good[:5]},
		{"no ETag to overwrite on", BlobOtherBytes, "", good},
	} {
		if err := sp.ix.rewrite(context.Background(), b, tc.was, tc.etag, repairSource{data: tc.data}); err == nil {
			t.Errorf("%s: written", tc.name)
		}
	}
	if puts := spy.puts(); len(puts) != 0 {
		t.Fatalf("wrote %v", puts)
	}
}

// TestAStoppedVerifyRecordsNothing: a verify stopped part of the way
// (Ctrl-C) reports the stop and leaves no record whose counts would cover
// only some of the blobs.
func TestAStoppedVerifyRecordsNothing(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"a", "b", "c"} {
		e.drop("skills/"+name+".md", skillDoc(name, "1", "Does "+name+"."))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := e.ix.Verify(ctx, VerifyOptions{Progress: func(int, int) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if v := e.status().Verify; v != nil {
		t.Fatalf("recorded %+v", v)
	}
}
