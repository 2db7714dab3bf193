package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// bucket writes a published state straight through a store, the way the
// indexer leaves it: validated bytes under blobs/sha256/, the catalog at
// catalog/catalog.json. It lets these tests run before and without the
// indexer.
type bucket struct {
	t   testing.TB
	st  store.Store
	cat *catalog.Catalog
	at  time.Time
}

func newBucket(t testing.TB, st store.Store) *bucket {
	return &bucket{t: t, st: st, cat: catalog.New(), at: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)}
}

// skill publishes body as the latest version of a skill: top-level when
// listing is "", else only in that listing. format decides type and path.
func (b *bucket) skill(name, listing string, vis catalog.Visibility, format artifact.Format, body []byte) *catalog.Entry {
	b.t.Helper()
	file := name + ".md"
	switch format {
	case artifact.FormatZip:
		file = name + ".zip"
	case artifact.FormatTarGz:
		file = name + ".tar.gz"
	}
	path := "/skills/" + file
	if listing != "" {
		path = "/.well-known/agent-skills/" + listing + "/skills/" + file
	}
	return b.entry(name, listing, path, vis, format, body)
}

func (b *bucket) entry(name, listing, path string, vis catalog.Visibility, format artifact.Format, body []byte) *catalog.Entry {
	b.t.Helper()
	typ := artifact.TypeSkillMD
	if format != artifact.FormatMarkdown {
		typ = artifact.TypeArchive
	}
	d := b.blob(body)
	id := catalog.ID(listing, name)
	e := b.cat.Skills[id]
	if e == nil {
		e = &catalog.Entry{Name: name, Kind: catalog.KindSkill, Listing: listing, Source: strings.TrimPrefix(path, "/")}
		b.cat.Skills[id] = e
	}
	e.Path, e.Visibility = path, vis
	b.at = b.at.Add(time.Minute)
	label := "1.0." + string(rune('0'+len(e.Versions)))
	e.Versions = append(e.Versions, catalog.Version{
		Label: label, Digest: d, Type: typ, Format: format, Size: int64(len(body)),
		SourceKey: e.Source, PublishedAt: b.at, Description: name + " does a thing",
	})
	e.Latest = label
	return e
}

// external publishes a skill whose bytes live elsewhere.
func (b *bucket) external(name, u string, body []byte) *catalog.Entry {
	e := &catalog.Entry{Name: name, Kind: catalog.KindSkill, Source: catalog.ConfigSource, ExternalURL: u, Visibility: catalog.Public, Latest: "1"}
	e.Versions = []catalog.Version{{Label: "1", Digest: digest.Of(body), Type: artifact.TypeSkillMD, Format: artifact.FormatMarkdown, Size: int64(len(body)), PublishedAt: b.at, Description: "external"}}
	b.cat.Skills[name] = e
	return e
}

func (b *bucket) blob(body []byte) digest.Digest {
	b.t.Helper()
	d := digest.Of(body)
	if _, err := b.st.Put(context.Background(), catalog.BlobKey(d), body, store.PutOptions{}); err != nil {
		b.t.Fatal(err)
	}
	return d
}

func (b *bucket) listing(name string, include ...string) {
	b.cat.Listings[name] = &catalog.Listing{Name: name, Skills: include}
}

// publish writes the catalog as the next revision.
func (b *bucket) publish() {
	b.t.Helper()
	b.cat.Schema = catalog.SchemaVersion
	b.cat.Revision++
	b.cat.UpdatedAt = b.at
	raw, err := catalog.Encode(b.cat, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.st.Put(context.Background(), catalog.Key, raw, store.PutOptions{ContentType: "application/json"}); err != nil {
		b.t.Fatal(err)
	}
}

func skillMD(name string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + name + " does a thing\n---\n# " + name + "\n\nSteps…\n")
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// The standard catalog most tests serve.
var (
	zipBody = append([]byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"), bytes.Repeat([]byte{0xff, 0x00, 0x80}, 700)...)
	tgzBody = gzipped(append(skillMD("bundle-tgz"), bytes.Repeat([]byte("tar padding "), 300)...))
)

const (
	goodKey  = "sk-test-good-key-0123456789"
	otherKey = "sk-test-other-key-9876543210"
)

func standardBucket(t testing.TB, st store.Store) *bucket {
	b := newBucket(t, st)
	b.skill("deploy-via-pr", "", catalog.Public, artifact.FormatMarkdown, skillMD("deploy-via-pr"))
	b.entry("secret-rotation", "", "/skills/secret-rotation/SKILL.md", catalog.Authenticated, artifact.FormatMarkdown, skillMD("secret-rotation"))
	b.skill("bundle-zip", "", catalog.Public, artifact.FormatZip, zipBody)
	b.skill("bundle-tgz", "", catalog.Public, artifact.FormatTarGz, tgzBody)
	b.external("elsewhere", "https://cdn.example.org/skills/elsewhere.md?sig=a&b=c", skillMD("elsewhere"))
	gone := b.skill("gone", "", catalog.Public, artifact.FormatMarkdown, skillMD("gone"))
	gone.Withdrawn = true
	b.skill("partner-only", "partner-a", catalog.Public, artifact.FormatMarkdown, skillMD("partner-only"))
	b.skill("partner-secret", "partner-a", catalog.Authenticated, artifact.FormatMarkdown, skillMD("partner-secret"))
	b.skill("hidden-only", "hidden", catalog.Authenticated, artifact.FormatMarkdown, skillMD("hidden-only"))
	b.listing("partner-a", "deploy-via-pr", "secret-rotation", "gone")
	b.listing("hidden")
	b.cat.Subagents["reviewer"] = &catalog.Entry{Name: "reviewer", Kind: catalog.KindSubagent, Visibility: catalog.Public, Latest: "1",
		Versions: []catalog.Version{{Label: "1", Digest: b.blob([]byte("agent")), Type: artifact.TypeAgentMD, Format: artifact.FormatMarkdown, Size: 5}}}
	b.publish()
	return b
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 9, 9, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// logLines decodes the JSON log lines written to logs so far.
func logLines(t testing.TB, logs *syncbuf.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// harness is a Server over a store with a recorder, a log buffer and a clock.
type harness struct {
	t       testing.TB
	srv     *Server
	st      store.Store
	metrics *obs.Recorder
	logs    *syncbuf.Buffer
	clock   *fakeClock
}

func newHarness(t testing.TB, st store.Store, mut ...func(*Config)) *harness {
	t.Helper()
	keys, err := apikey.ParseSet(apikey.Hash(goodKey) + "," + apikey.Hash(otherKey))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, st: st, metrics: &obs.Recorder{}, logs: &syncbuf.Buffer{}, clock: newClock()}
	logger := obs.NewLogger(h.logs, slog.LevelDebug)
	cfg := Config{
		Store: st, Keys: keys, Metrics: h.metrics, Logger: logger, Auditor: obs.NewAuditor(logger),
		PublicBaseURL: "https://skills.example.com", Now: h.clock.Now,
	}
	for _, m := range mut {
		m(&cfg)
	}
	if h.srv, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	return h
}

// do serves one request; headers are "Name: value" strings.
func (h *harness) do(method, target string, headers ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.serve(httptest.NewRequest(method, target, nil), headers...)
}

func (h *harness) serve(r *http.Request, headers ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ":")
		if strings.EqualFold(strings.TrimSpace(k), "Host") {
			r.Host = strings.TrimSpace(v)
			continue
		}
		r.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, r)
	return w
}

func bearer(key string) string { return "Authorization: Bearer " + key }

// errorCode decodes a JSON error body.
func errorCode(t testing.TB, w *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("error content type %q, want application/json", ct)
	}
	var body errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body %q: %v", w.Body.String(), err)
	}
	return body.Error.Code
}

func readAll(t testing.TB, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return readAll(t, r)
}
