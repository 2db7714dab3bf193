package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func version(label string, hour int) Version {
	return Version{
		Label: label, Digest: digest.Of([]byte(label)), Type: artifact.TypeSkillMD, Format: artifact.FormatMarkdown,
		Size: int64(len(label)), SourceKey: "skills/x.md", PublishedAt: time.Date(2026, 1, 1, hour, 0, 0, 0, time.UTC),
		Description: "v" + label, Frontmatter: json.RawMessage(`{"name":"x","description":"v` + label + `"}`),
		Files: []File{{Path: "SKILL.md", Digest: digest.Of([]byte(label)), Size: int64(len(label)), MediaType: "text/markdown"}},
		Scan: &scan.Result{Verdict: scan.Warn, Engine: "skilldrop-scan/test", Findings: []scan.Finding{{Rule: "persistence.shell-rc",
			Category: scan.CategoryPersistence, Severity: scan.SeverityMedium, File: "SKILL.md", Line: 3, Message: "appends"}},
			Allowed: []scan.Allowed{{Rule: "secret.aws-access-key", Reason: "a canary"}}},
	}
}

// sample is a catalog with every part set: several histories, a listing,
// a sub-agent, sources, a config, a bucket observation and a document.
func sample() *Catalog {
	c := New()
	c.Revision, c.UpdatedAt = 7, time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	add := func(kind Kind, listing, name string, labels ...string) *Entry {
		e := NewEntry(kind, listing, name)
		e.Source = "skills/" + name + ".md"
		e.Path = "/skills/" + name + ".md"
		var vs []Version
		for i, l := range labels {
			vs = append(vs, version(l, i))
		}
		e.Latest = labels[len(labels)-1]
		e.SetVersions(vs)
		if kind == KindSubagent {
			c.Subagents[name] = e
		} else {
			c.Skills[e.ID()] = e
		}
		return e
	}
	add(KindSkill, "", "alpha", "1.0", "1.1", "2.0")
	add(KindSkill, "", "beta", "1")
	add(KindSkill, "partner", "gamma", "0.1", "0.2").Visibility = Authenticated
	w := add(KindSkill, "", "gone", "3")
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	w.Withdrawn, w.WithdrawnAt, w.Contenders = true, &at, []string{"skills/gone.zip"}
	w.Versions[0].Bundle = &Bundle{BlobRef: BlobRef{Digest: digest.Of([]byte("bundle")), Size: 6}, Key: "k1"}
	w.SetVersions(w.Versions)
	add(KindSubagent, "", "reviewer", "1", "2")
	c.Listings["partner"] = &Listing{Name: "partner", Skills: []string{"beta"}}
	c.Config = &ConfigState{Digest: digest.Of([]byte("version: 1\n")), ETag: `"cfg"`, AppliedAt: at, YAML: "version: 1\n# ünïcode \"quoted\"\n"}
	c.Bucket = &BucketConfig{State: ConfigInvalid, ETag: `"bad"`, Since: at}
	c.Sources = map[string]Source{"skills/alpha.md": {ETag: `"a"`}, "skills/held.md": {ETag: `"h"`, Held: true}}
	c.Documents = []Document{{Origin: "https://x.example", Path: "/.well-known/agent-skills/index.json",
		Identity: Rendition{Key: "rendered/sha256/00", VersionID: "v1", Digest: digest.Of([]byte("doc")), Size: 3}}}
	c.Signing = &Signing{
		Keys:     []SigningKey{{ID: "k1", PEM: BlobRef{Digest: digest.Of([]byte("pem")), Size: 3}, Since: at}},
		Catalogs: []SignedCatalog{{Origin: "https://x.example", Revision: 7, Rendition: Rendition{Key: "rendered/sha256/01", Digest: digest.Of([]byte("ai")), Size: 2}}},
	}
	return c
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	c := sample()
	b, err := Encode(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.LoadHistories(); err != nil {
		t.Fatal(err)
	}
	if got.Revision != 7 || !got.UpdatedAt.Equal(c.UpdatedAt) || got.StoredSize() != int64(len(b)) {
		t.Errorf("head: revision %d, updated %v, size %d", got.Revision, got.UpdatedAt, got.StoredSize())
	}
	for id, want := range c.Skills {
		compareEntries(t, got.Skills[id], want)
	}
	compareEntries(t, got.Subagents["reviewer"], c.Subagents["reviewer"])
	for name, v := range map[string]any{
		"listings": [2]any{got.Listings, c.Listings}, "config": [2]any{got.Config, c.Config},
		"bucket": [2]any{got.Bucket, c.Bucket}, "sources": [2]any{got.Sources, c.Sources},
		"documents": [2]any{got.Documents, c.Documents}, "signing": [2]any{got.Signing, c.Signing},
	} {
		pair := v.([2]any)
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s: got %+v, want %+v", name, pair[0], pair[1])
		}
	}
	// Encoding what was decoded gives the same bytes.
	again, err := Encode(got, 0)
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("re-encoding a decoded catalog changed it (%v)", err)
	}
}

func compareEntries(t *testing.T, got, want *Entry) {
	t.Helper()
	if got == nil {
		t.Fatalf("entry %s missing", want.ID())
	}
	g, w := *got, *want
	// A head read stays undecoded until asked for: compare what it holds.
	g.Head, w.Head = got.head(), want.head()
	g.history, w.history, g.loaded, w.loaded, g.read, w.read, g.lazy, w.lazy = nil, nil, false, false, nil, nil, nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("entry %s:\n got %+v\nwant %+v", want.ID(), g, w)
	}
}

// TestUnloadedHistoriesAreCopied: an update that loads one entry's history
// writes the others' lines back byte for byte, and their versions survive.
func TestUnloadedHistoriesAreCopied(t *testing.T) {
	b, err := Encode(sample(), 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	beta := c.Skills["beta"]
	if beta.HasHistory() || beta.LatestVersion() == nil || beta.LatestVersion().Label != "1" || beta.VersionCount() != 1 {
		t.Fatalf("undecoded entry: history %v, latest %+v, count %d", beta.HasHistory(), beta.LatestVersion(), beta.VersionCount())
	}
	alpha := c.Skills["alpha"]
	if alpha.Version("1.0") != nil {
		t.Error("an older version is known before its history is loaded")
	}
	if err := alpha.LoadHistory(); err != nil {
		t.Fatal(err)
	}
	alpha.SetVersions(append(alpha.Versions, version("3.0", 9)))
	alpha.Latest = "3.0"
	alpha.SetVersions(alpha.Versions)
	out, err := Encode(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.LoadHistories(); err != nil {
		t.Fatal(err)
	}
	if got := labels(back.Skills["alpha"].Versions); got != "1.0 1.1 2.0 3.0" {
		t.Errorf("alpha's history = %s", got)
	}
	if got := labels(back.Subagents["reviewer"].Versions); got != "1 2" {
		t.Errorf("reviewer's history = %s", got)
	}
	if h := back.Skills["alpha"].head(); h == nil || h.Label != "3.0" || back.Skills["alpha"].Count != 4 || back.Skills["alpha"].First != "1.0" {
		t.Errorf("alpha's summary = head %+v, count %d, first %s", h, back.Skills["alpha"].Count, back.Skills["alpha"].First)
	}
}

func labels(vs []Version) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Label)
	}
	return strings.Join(out, " ")
}

func TestEncodeRefusesAFullCatalog(t *testing.T) {
	c := sample()
	b, err := Encode(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Encode(c, int64(len(b))-1)
	var full *FullError
	if !errors.As(err, &full) || !errors.Is(err, ErrFull) || full.Size != int64(len(b)) || full.Limit != int64(len(b))-1 {
		t.Errorf("Encode over the limit = %v, want a FullError of %d > %d", err, len(b), len(b)-1)
	}
	if _, err := Encode(c, int64(len(b))); err != nil {
		t.Errorf("Encode at exactly the limit: %v", err)
	}
}

func TestDecodeRefusesCorruption(t *testing.T) {
	b, err := Encode(sample(), 0)
	if err != nil {
		t.Fatal(err)
	}
	headEnd := bytes.IndexByte(b, '\n') + 1
	cases := map[string][]byte{
		"truncated":            b[:len(b)-1],
		"extra bytes":          append(bytes.Clone(b), 'x'),
		"newer schema":         bytes.Replace(b, []byte(`{"schema":2`), []byte(`{"schema":3`), 1),
		"entry count":          bytes.Replace(b, []byte(`"skills":4`), []byte(`"skills":5`), 1),
		"garbled entry":        append(append(bytes.Clone(b[:headEnd]), '!'), b[headEnd+1:]...),
		"not json":             []byte("hello\nworld\n"),
		"schema 1 too new too": []byte(`{"schema": 9}`),
	}
	for name, in := range cases {
		if _, err := Decode(in); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := Decode(cases["newer schema"]); !errors.Is(err, ErrSchema) {
		t.Errorf("newer schema: %v, want ErrSchema", err)
	}
}

// TestDecodeSchema1: a catalog written by the previous release (one
// indented document, histories inline, possibly with the latest version
// not last) reads as the same catalog.
func TestDecodeSchema1(t *testing.T) {
	v1, v2 := version("1", 1), version("2", 2)
	legacy := map[string]any{
		"schema": 1, "revision": 3, "updatedAt": "2026-01-01T00:00:00Z",
		"skills": map[string]any{"x": map[string]any{
			"name": "x", "kind": "skill", "source": "skills/x.md", "path": "/skills/x.md", "visibility": "public",
			"versions": []Version{v2, v1}, "latest": "2",
		}},
		"subagents": map[string]any{},
		"listings":  map[string]any{"l": map[string]any{"name": "l", "skills": []string{"x"}}},
		"config":    map[string]any{"digest": digest.Of([]byte("c")), "appliedAt": "2026-01-01T00:00:00Z", "yaml": "version: 1\n"},
	}
	b, err := json.MarshalIndent(legacy, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	x := c.Skills["x"]
	if x == nil || labels(x.Versions) != "1 2" || x.LatestVersion().Label != "2" || x.VersionCount() != 2 {
		t.Fatalf("legacy entry = %+v", x)
	}
	if c.Revision != 3 || c.Config == nil || c.Config.YAML != "version: 1\n" || c.Listings["l"] == nil {
		t.Errorf("legacy catalog = %+v", c)
	}
	// Through the request path's reader too.
	st := store.NewMemory()
	if _, err := st.Put(t.Context(), Key, b, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHead(t.Context(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.View(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	e := v.Skill("x", audience.Anonymous)
	hist, err := v.History(t.Context(), e)
	if err != nil || labels(hist) != "1 2" {
		t.Errorf("legacy history through the reader = %s, %v", labels(hist), err)
	}
}

// rangeCounter records the reads a store serves.
type rangeCounter struct {
	store.Store
	reads []string
}

func (r *rangeCounter) Get(ctx context.Context, key string, opts store.GetOptions) (*store.Object, error) {
	r.reads = append(r.reads, fmt.Sprintf("%d+%d", opts.Offset, opts.Length))
	return r.Store.Get(ctx, key, opts)
}

// TestReaderReadsWhatItNeeds: the head alone answers the head's questions;
// the view reads the entries; a history is one read of its own line; a
// catalog replaced meanwhile is ErrChanged, never a mix of revisions.
func TestReaderReadsWhatItNeeds(t *testing.T) {
	dir, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dir.Close() })
	st := &rangeCounter{Store: dir}
	ctx := t.Context()
	c := sample()
	b, err := Encode(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Put(ctx, Key, b, store.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ReadHead(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if h.Revision != 7 || h.ETag != info.ETag || len(h.Documents) != 1 || h.Listings["partner"] == nil || len(st.reads) != 1 ||
		!reflect.DeepEqual(h.Signing, c.Signing) {
		t.Fatalf("head = %+v after reads %v", h, st.reads)
	}
	if _, err := ReadHead(ctx, st, info.ETag); !errors.Is(err, store.ErrNotModified) {
		t.Errorf("ReadHead of an unchanged catalog = %v, want ErrNotModified", err)
	}
	v, err := h.View(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if names := len(v.Skills(audience.Unrestricted)); names != 2 || v.Skill("gone", audience.Unrestricted) != nil || v.Subagent("reviewer", audience.Anonymous) == nil {
		t.Errorf("view: %d top-level skills, want alpha and beta", names)
	}
	if ms, ok := v.Listing("partner", audience.Unrestricted); !ok || len(ms) != 2 {
		t.Errorf("listing partner = %v", ms)
	}
	reads := len(st.reads)
	alpha := v.Skill("alpha", audience.Anonymous)
	hist, err := v.History(ctx, alpha)
	if err != nil || labels(hist) != "1.0 1.1 2.0" {
		t.Fatalf("alpha's history = %s, %v", labels(hist), err)
	}
	if len(st.reads) != reads+1 {
		t.Errorf("a history took reads %v", st.reads[reads:])
	}
	if hist, err := v.History(ctx, v.Skill("beta", audience.Anonymous)); err != nil || labels(hist) != "1" || len(st.reads) != reads+1 {
		t.Errorf("a one-version history = %s, %v, after reads %v (want none)", labels(hist), err, st.reads[reads:])
	}
	ver, err := v.Version(ctx, alpha, "1.1")
	if err != nil || ver == nil || ver.Description != "v1.1" {
		t.Errorf("alpha 1.1 = %+v, %v", ver, err)
	}
	if _, err := st.Put(ctx, Key, b, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.History(ctx, alpha); !errors.Is(err, ErrChanged) {
		t.Errorf("a history read after the catalog was replaced = %v, want ErrChanged", err)
	}
	if _, err := h.View(ctx, st); !errors.Is(err, ErrChanged) {
		t.Errorf("entries read after the catalog was replaced = %v, want ErrChanged", err)
	}
}

// TestReadHeadBeyondTheProbe: a head larger than the first read (many
// listings) is read in full.
func TestReadHeadBeyondTheProbe(t *testing.T) {
	c := sample()
	for i := range 3000 {
		name := fmt.Sprintf("listing-%04d", i)
		c.Listings[name] = &Listing{Name: name, Skills: []string{"alpha", "beta"}}
	}
	b, err := Encode(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.IndexByte(b, '\n') < headProbe {
		t.Fatalf("the head is %d bytes, not beyond the probe", bytes.IndexByte(b, '\n'))
	}
	st := store.NewMemory()
	if _, err := st.Put(t.Context(), Key, b, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHead(t.Context(), st, "")
	if err != nil || len(h.Listings) != 3001 {
		t.Fatalf("ReadHead = %v listings, %v", len(h.Listings), err)
	}
	if _, err := h.View(t.Context(), st); err != nil {
		t.Fatal(err)
	}
}
