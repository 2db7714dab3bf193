package indexer

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/feeddoc"
	"github.com/skilldrop/skilldrop/pkg/manifest"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// testMinStored is the threshold the tests render documents into the
// bucket from, so that a few hundred skills are enough.
const testMinStored = 64 << 10

// bigBucket drops n skills with long descriptions, every tenth hidden.
func bigBucket(t *testing.T, e *env, n int) {
	t.Helper()
	var hidden strings.Builder
	hidden.WriteString("version: 1\nskills:\n")
	for i := range n {
		name := fmt.Sprintf("skill-%04d", i)
		e.put("skills/"+name+".md", skillDoc(name, "1", strings.Repeat(fmt.Sprintf("Skill %d does one careful thing. ", i), 8)))
		if i%10 == 0 {
			fmt.Fprintf(&hidden, "  - name: %s\n    visibility: authenticated\n", name)
		}
	}
	e.put("agent-skills.yaml", []byte(hidden.String()))
	e.reindex()
}

// TestLargeDocumentsAreRenderedIntoTheBucket: with an origin configured,
// the RFC index and the page of everything are rendered into the bucket
// for each auth class, pinned in the catalog, byte for byte what the
// request path renders; small ones are not; a publish renders them anew.
func TestLargeDocumentsAreRenderedIntoTheBucket(t *testing.T) {
	origin, _ := url.Parse("https://skills.example.com")
	e := newEnv(t, func(c *Config) { c.Origins, c.MinStoredDocument = []*url.URL{origin}, testMinStored })
	bigBucket(t, e, 500) // the page of every skill is below the threshold for anonymous callers, above it with a key
	c := e.catalog()
	v := catalog.Compile(c, "")
	for _, auth := range []bool{false, true} {
		d := c.Document("https://skills.example.com", routes.RFCIndex, callerOf(auth))
		if d == nil {
			t.Fatalf("no stored RFC index (authenticated %v); documents %s", auth, dump(c.Documents))
		}
		want := feeddoc.Render(discovery.TopLevel(v, callerOf(auth), origin), feeddoc.StoredLevel)
		got, _, err := store.ReadAll(context.Background(), e.st, d.Identity.Key, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Body) || !d.Identity.Digest.Equal(want.Digest) || d.Identity.Size != int64(len(want.Body)) {
			t.Fatalf("stored index (authenticated %v) differs from the rendered one", auth)
		}
		if gz, _, err := store.ReadAll(context.Background(), e.st, d.Gzip.Key, 0); err != nil || !digest.Of(gz).Equal(d.Gzip.Digest) {
			t.Fatalf("gzip rendition: %v", err)
		}
		if hidden := bytes.Contains(got, []byte(`"skill-0010"`)); hidden != auth {
			t.Fatalf("the authenticated skill is in the index for authenticated=%v: %v", auth, hidden)
		}
		page := feeddoc.Render((&manifest.Feed{View: v, Caller: callerOf(auth)}).Page(catalog.KindSkill, manifest.Range{}), feeddoc.StoredLevel)
		if stored := c.Document("", routes.AllPage(routes.SkillFeed), callerOf(auth)) != nil; stored != (len(page.Body) >= testMinStored) {
			t.Fatalf("page of every skill (authenticated %v, %d bytes): stored %v", auth, len(page.Body), stored)
		}
	}
	if c.Document("", routes.AllPage(routes.SubagentFeed), audience.Anonymous) != nil {
		t.Error("a page of no sub-agents, far below the threshold, was stored")
	}
	before := c.Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous).Identity
	e.drop("skills/newest.md", skillDoc("newest", "1", "One more."))
	after := e.catalog().Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous).Identity
	if after.Key == before.Key || after.Digest.Equal(before.Digest) {
		t.Fatal("a publish did not render the index anew")
	}
}

// TestAStoredDocumentFoundTamperedIsWrittenAgain: an object at a
// document's key that someone changed is never pinned: the next render
// writes the known bytes again.
func TestAStoredDocumentFoundTamperedIsWrittenAgain(t *testing.T) {
	origin, _ := url.Parse("https://skills.example.com")
	e := newEnv(t, func(c *Config) { c.Origins, c.MinStoredDocument = []*url.URL{origin}, testMinStored })
	bigBucket(t, e, 300)
	d := e.catalog().Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous)
	// Someone overwrites the document, and a later publish would have
	// rendered the very same bytes (a change that leaves the index as is).
	e.put(d.Identity.Key, []byte("tampered"))
	ctx := context.Background()
	c, _, err := catalog.Load(ctx, e.st)
	if err != nil {
		t.Fatal(err)
	}
	c.Documents, c.DocumentOrigins = nil, nil // as if first rendered now: nothing pinned to trust
	if _, err := e.ix.renderDocuments(ctx, c, true); err != nil {
		t.Fatal(err)
	}
	got, _, err := store.ReadAll(ctx, e.st, d.Identity.Key, 0)
	if err != nil || !digest.Of(got).Equal(d.Identity.Digest) {
		t.Fatalf("the tampered object was pinned, not written again (%v)", err)
	}
}

// TestWithoutOriginsNothingIsRendered: the local directory (`serve`) and
// a deployment without origins render on the request path.
func TestWithoutOriginsNothingIsRendered(t *testing.T) {
	e := newEnv(t)
	bigBucket(t, e, 300)
	if docs := e.catalog().Documents; len(docs) != 0 {
		t.Fatalf("documents %s", dump(docs))
	}
	infos, err := e.st.List(context.Background(), RenderedPrefix)
	if err != nil || len(infos) != 0 {
		t.Fatalf("rendered objects %v (%v)", infos, err)
	}
}

// TestTheReconcileRepairsAndCollectsDocuments: a stored document whose key
// someone wrote since (so the pinned version is no longer current, and
// would expire) is written again by the reconcile; objects no revision pins
// are deleted once old enough.
func TestTheReconcileRepairsAndCollectsDocuments(t *testing.T) {
	origin, _ := url.Parse("https://skills.example.com")
	e := newEnv(t, func(c *Config) { c.Origins, c.MinStoredDocument = []*url.URL{origin}, testMinStored })
	bigBucket(t, e, 300)
	old := e.catalog().Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous).Identity
	e.drop("skills/newest.md", skillDoc("newest", "1", "One more."))
	// The old index is no longer pinned; the clock of the env moves one
	// second per reading, so age it past collectAge.
	e.ix.now = func() time.Time { return time.Now().Add(2 * collectAge) }
	cur := e.catalog().Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous).Identity
	e.put(cur.Key, []byte("tampered"))
	if _, err := e.ix.ReconcileBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Head(context.Background(), old.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the unpinned old index survived the reconcile: %v", err)
	}
	got, _, err := store.ReadAll(context.Background(), e.st, cur.Key, 0)
	if err != nil || !digest.Of(got).Equal(cur.Digest) {
		t.Errorf("the overwritten document was not written again (%v)", err)
	}
}

// TestTheReconcileRepairsVersionsTheBucketCannotServe: a catalog pinning
// versions its bucket does not have (copied from a versioned bucket into
// one without) gets its documents written again by the reconcile, pinned
// to what the bucket holds, so the API serves them from the bucket again.
func TestTheReconcileRepairsVersionsTheBucketCannotServe(t *testing.T) {
	origin, _ := url.Parse("https://skills.example.com")
	e := newEnv(t, func(c *Config) { c.Origins, c.MinStoredDocument = []*url.URL{origin}, testMinStored })
	bigBucket(t, e, 300)
	const foreign = "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"
	if _, err := catalog.Update(context.Background(), e.st, func(c *catalog.Catalog) error {
		for i := range c.Documents {
			for _, r := range c.Documents[i].Renditions() {
				r.VersionID = foreign
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ix.ReconcileBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := storedDocsAreRendered(t, e) // each rendition read at its pinned version
	if len(c.Documents) == 0 {
		t.Fatal("the reconcile dropped the stored documents")
	}
}

// TestAWorkstationKeepsTheDeploymentsOrigins: an indexer without origins
// of its own but KeepOrigins (the CLI's re-index and publish) renders for
// the origins the catalog records, so it never drops the documents the
// deployment serves; one without either drops them.
func TestAWorkstationKeepsTheDeploymentsOrigins(t *testing.T) {
	origin, _ := url.Parse("https://skills.example.com")
	e := newEnv(t, func(c *Config) { c.Origins, c.MinStoredDocument = []*url.URL{origin}, testMinStored })
	bigBucket(t, e, 300)
	workstation, err := New(Config{Store: e.st, KeepOrigins: true, MinStoredDocument: testMinStored})
	if err != nil {
		t.Fatal(err)
	}
	e.put("skills/from-a-laptop.md", skillDoc("from-a-laptop", "1", "Published from a workstation."))
	if _, err := workstation.Reconcile(context.Background(), "skills/from-a-laptop.md"); err != nil {
		t.Fatal(err)
	}
	c := e.catalog()
	d := c.Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous)
	if d == nil || len(c.DocumentOrigins) != 1 {
		t.Fatalf("the workstation dropped the deployment's documents: %s", dump(c.DocumentOrigins))
	}
	got, _, err := store.ReadAll(context.Background(), e.st, d.Identity.Key, 0)
	if err != nil || !bytes.Contains(got, []byte(`"from-a-laptop"`)) {
		t.Fatalf("the stored index does not list the workstation's publish (%v)", err)
	}
}

// storedDocsAreRendered checks every document the catalog pins: its bytes
// are what the request path renders from the catalog's view, its gzip
// rendition reads back as them, and its layout describes both.
func storedDocsAreRendered(t *testing.T, e *env) *catalog.Catalog {
	t.Helper()
	ctx := context.Background()
	c := e.catalog()
	v := catalog.Compile(c, "")
	origin, _ := url.Parse("https://skills.example.com")
	for _, d := range c.Documents {
		var want any
		switch {
		case d.Path == routes.RFCIndex:
			want = discovery.TopLevel(v, d.Class().Caller(), origin)
		case d.Path == routes.AllPage(routes.SkillFeed):
			want = (&manifest.Feed{View: v, Caller: d.Class().Caller()}).Page(catalog.KindSkill, manifest.Range{})
		case d.Path == routes.AllPage(routes.SubagentFeed):
			want = (&manifest.Feed{View: v, Caller: d.Class().Caller()}).Page(catalog.KindSubagent, manifest.Range{})
		default:
			l := strings.TrimSuffix(strings.TrimPrefix(d.Path, routes.ListingIndex("")), "/index.json")
			want, _ = discovery.Listing(v, l, d.Class().Caller(), origin)
		}
		body, err := e.ix.readRendition(ctx, &d.Identity)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, feeddoc.Render(want, feeddoc.StoredLevel).Body) {
			t.Fatalf("stored %s (authenticated %v) is not what the request path renders", d.Path, d.Authenticated)
		}
		gz, err := e.ix.readRendition(ctx, d.Gzip)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("the gzip rendition of %s does not read back as the document (%v)", d.Path, err)
		}
		if _, err := e.ix.splice(ctx, &d, nil, nil, nil); err != nil {
			t.Fatalf("the layout of %s does not describe it: %v", d.Path, err)
		}
	}
	return c
}

// TestAPublishSplicesTheStoredDocuments: publishes, new versions,
// withdrawals and visibility changes each leave every stored document what
// the request path renders, and each splices the pinned documents: the
// chunks holding nothing that changed keep their bytes.
func TestAPublishSplicesTheStoredDocuments(t *testing.T) {
	origin, _ := url.Parse("https://skills.example.com")
	e := newEnv(t, func(c *Config) { c.Origins, c.MinStoredDocument = []*url.URL{origin}, 32<<10 })
	bigBucket(t, e, 1200)
	before := storedDocsAreRendered(t, e)
	if len(before.Documents) < 4 {
		t.Fatalf("%d stored documents; want the index and the page, for both auth classes", len(before.Documents))
	}
	hidden := "version: 1\nskills:\n"
	for i := range 1200 {
		if i%10 == 0 || i == 7 {
			hidden += fmt.Sprintf("  - name: skill-%04d\n    visibility: authenticated\n", i)
		}
	}
	steps := []struct {
		name string
		do   func()
		// kept: no stored document lists what changed (the sub-agents'
		// page is too small to be stored), so every pin stays.
		kept bool
	}{
		{"a new skill among the others", func() { e.drop("skills/skill-0600a.md", skillDoc("skill-0600a", "1", "New among them.")) }, false},
		{"a new skill before every other", func() { e.drop("skills/aaa-first.md", skillDoc("aaa-first", "1", "First of all.")) }, false},
		{"a new version", func() { e.drop("skills/skill-0300.md", skillDoc("skill-0300", "2", "Second version.")) }, false},
		{"a withdrawal", func() { e.remove("skills/skill-0900.md") }, false},
		{"a skill made authenticated", func() { e.drop("agent-skills.yaml", []byte(hidden)) }, false},
		{"a sub-agent", func() { e.drop("subagents/helper.md", agentDoc("helper", "1")) }, true},
		{"the last skill withdrawn", func() { e.remove("skills/skill-1199.md") }, false},
	}
	for _, s := range steps {
		prev := e.catalog()
		spliced := strings.Count(e.logs.String(), `"msg":"stored document spliced"`)
		s.do()
		if again := strings.Count(e.logs.String(), `"msg":"stored document spliced"`); (again > spliced) == s.kept {
			t.Errorf("%s: %d stored documents spliced", s.name, again-spliced)
		}
		if s.kept && !reflect.DeepEqual(e.catalog().Documents, prev.Documents) {
			t.Errorf("%s: the stored documents were written again", s.name)
		}
		c := storedDocsAreRendered(t, e)
		d := c.Document("https://skills.example.com", routes.RFCIndex, audience.Unrestricted)
		p := prev.Document("https://skills.example.com", routes.RFCIndex, audience.Unrestricted)
		if d == nil || p == nil || d.Layout == nil || p.Layout == nil {
			t.Fatalf("%s: no layout", s.name)
		}
		var was, now feeddoc.Layout
		for _, x := range []struct {
			r *catalog.Rendition
			l *feeddoc.Layout
		}{{p.Layout, &was}, {d.Layout, &now}} {
			b, err := e.ix.readRendition(context.Background(), x.r)
			if err != nil || json.Unmarshal(b, x.l) != nil {
				t.Fatalf("%s: layout: %v", s.name, err)
			}
		}
		kept := 0
		for _, ch := range now.Chunks {
			if slices.Contains(was.Chunks, ch) {
				kept++
			}
		}
		if len(now.Chunks) < 2 || kept < len(now.Chunks)-2 {
			t.Errorf("%s: %d of %d chunks of the index kept; a splice keeps all but the changed ones", s.name, kept, len(now.Chunks))
		}
	}
	// A pinned rendition someone overwrote is not spliced from: the next
	// publish builds the document whole, and it is still right.
	d := e.catalog().Document("https://skills.example.com", routes.RFCIndex, audience.Anonymous)
	e.put(d.Identity.Key, []byte("tampered"))
	e.drop("skills/after-tampering.md", skillDoc("after-tampering", "1", "Published after."))
	storedDocsAreRendered(t, e)
	if !strings.Contains(e.logs.String(), "cannot be spliced") {
		t.Error("the tampered document was spliced from")
	}
	// Nor is a catalog that pins versions this bucket cannot serve (one
	// copied from a versioned bucket): store.ErrNoSuchVersion.
	if _, err := catalog.Update(context.Background(), e.st, func(c *catalog.Catalog) error {
		for i := range c.Documents {
			for _, r := range c.Documents[i].Renditions() {
				r.VersionID = "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	unserved := strings.Count(e.logs.String(), store.ErrNoSuchVersion.Error())
	e.drop("skills/after-copying.md", skillDoc("after-copying", "1", "Published after a copy."))
	storedDocsAreRendered(t, e)
	if strings.Count(e.logs.String(), store.ErrNoSuchVersion.Error()) == unserved {
		t.Error("a document whose pinned version is not in the bucket was spliced from")
	}
}
