package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/internal/syncbuf"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// clock is a deterministic clock: every reading is one second after the last.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// env is an indexer over a local directory store, with a metrics recorder
// and the audit log in a buffer.
type env struct {
	t       testing.TB
	st      store.Store
	ix      *Indexer
	metrics *obs.Recorder
	logs    *syncbuf.Buffer
}

func newEnv(t testing.TB, mod ...func(*Config)) *env {
	t.Helper()
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return newEnvOn(t, st, mod...)
}

func newEnvOn(t testing.TB, st store.Store, mod ...func(*Config)) *env {
	t.Helper()
	e := &env{t: t, st: st, metrics: &obs.Recorder{}, logs: &syncbuf.Buffer{}}
	logger := obs.NewLogger(e.logs, slog.LevelDebug)
	cfg := Config{
		Store:   st,
		Metrics: e.metrics,
		Auditor: obs.NewAuditor(logger),
		Logger:  logger,
		Now:     (&clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}).Now,
	}
	for _, m := range mod {
		m(&cfg)
	}
	ix, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.ix = ix
	return e
}

func (e *env) put(key string, body []byte) {
	e.t.Helper()
	if _, err := e.st.Put(context.Background(), key, body, store.PutOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) del(key string) {
	e.t.Helper()
	if err := e.st.Delete(context.Background(), key); err != nil {
		e.t.Fatal(err)
	}
}

// drop puts key and reconciles it, as an upload with its event.
func (e *env) drop(key string, body []byte) *Result {
	e.t.Helper()
	e.put(key, body)
	return e.reconcile(key)
}

// remove deletes key and reconciles it.
func (e *env) remove(key string) *Result {
	e.t.Helper()
	e.del(key)
	return e.reconcile(key)
}

func (e *env) reconcile(keys ...string) *Result {
	e.t.Helper()
	res, err := e.ix.Reconcile(context.Background(), keys...)
	if err != nil {
		e.t.Fatalf("reconcile %v: %v", keys, err)
	}
	return res
}

func (e *env) reindex() *Result {
	e.t.Helper()
	res, err := e.ix.Reindex(context.Background())
	if err != nil {
		e.t.Fatalf("reindex: %v", err)
	}
	return res
}

func (e *env) catalog() *catalog.Catalog {
	e.t.Helper()
	c, _, err := catalog.Load(context.Background(), e.st)
	if errors.Is(err, store.ErrNotFound) {
		return catalog.New()
	}
	if err == nil {
		err = c.LoadHistories()
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) status() *catalog.Status {
	e.t.Helper()
	s, _, err := catalog.LoadStatus(context.Background(), e.st)
	if errors.Is(err, store.ErrNotFound) {
		return catalog.NewStatus()
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) skill(name string) *catalog.Entry { return e.catalog().Skills[name] }

// live returns the live entry or fails.
func (e *env) live(kind catalog.Kind, id string) *catalog.Entry {
	e.t.Helper()
	c := e.catalog()
	m := c.Skills
	if kind == catalog.KindSubagent {
		m = c.Subagents
	}
	en := m[id]
	if en == nil || !en.Live() {
		e.t.Fatalf("%s %s is not live; catalog: %s", kind, id, dump(c))
	}
	return en
}

// audits returns the agent_skill.rejected events logged, as maps.
func (e *env) audits() []map[string]any {
	var out []map[string]any
	for line := range strings.SplitSeq(e.logs.String(), "\n") {
		if !strings.Contains(line, obs.EventRejected) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			e.t.Fatalf("audit line %q: %v", line, err)
		}
		if m["event"] == obs.EventRejected {
			out = append(out, m)
		}
	}
	return out
}

// rejectionCodes returns the codes a result rejected, sorted.
func rejectionCodes(res *Result) []string {
	var out []string
	for _, r := range res.Rejected {
		out = append(out, r.Code)
	}
	slices.Sort(out)
	return out
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}

// skillDoc is a SKILL.md; version "" leaves the label to the content digest.
func skillDoc(name, version, description string) []byte {
	return []byte(skilltest.SkillMD(name, version, description))
}

// agentDoc is an agent.md.
func agentDoc(name, version string) []byte {
	return []byte(skilltest.AgentMD(name, version, "The "+name+" sub-agent."))
}

// consistent checks the invariant every catalog write keeps: every version
// it names that is re-hosted has its blob, holding exactly its bytes, and
// so has each of its files.
func consistent(t testing.TB, st store.Store) {
	t.Helper()
	ctx := context.Background()
	c, _, err := catalog.Load(ctx, st)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err == nil {
		err = c.LoadHistories()
	}
	if err != nil {
		t.Fatalf("catalog unreadable: %v", err)
	}
	for _, e := range allEntries(c) {
		for _, v := range e.Versions {
			if strings.Contains(v.SourceKey, "://") {
				continue // external: not re-hosted
			}
			b, _, err := store.ReadAll(ctx, st, catalog.BlobKey(v.Digest), 0)
			if err != nil {
				t.Fatalf("%s %s version %s: blob: %v", e.Kind, e.ID(), v.Label, err)
			}
			if !v.Digest.Verify(b) {
				t.Fatalf("%s %s version %s: blob does not hash to %s", e.Kind, e.ID(), v.Label, v.Digest)
			}
			for _, f := range v.Files {
				b, _, err := store.ReadAll(ctx, st, catalog.BlobKey(f.Digest), 0)
				if err != nil || !f.Digest.Verify(b) || int64(len(b)) != f.Size {
					t.Fatalf("%s %s version %s: file %s: blob of %d bytes (want %d), error %v", e.Kind, e.ID(), v.Label, f.Path, len(b), f.Size, err)
				}
			}
		}
	}
}

// rejectedAs counts what the env recorded of rejections with code: audit
// events, and UploadRejected datapoints with Reason=code.
func (e *env) rejectedAs(code string) (audits, datapoints int) {
	e.t.Helper()
	for _, a := range e.audits() {
		if a["code"] == code {
			audits++
		}
	}
	for _, s := range e.metrics.Samples() {
		if s.Name == obs.UploadRejected && s.Dimension == obs.DimensionReason && s.Value == code {
			datapoints += s.N
		}
	}
	return audits, datapoints
}

// callerOf is the caller the tests mean by auth: a key of every audience,
// or none.
func callerOf(auth bool) audience.Caller {
	if auth {
		return audience.Unrestricted
	}
	return audience.Anonymous
}
