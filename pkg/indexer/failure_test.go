package indexer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// faultStore fails the n-th store operation (counting from 1; 0 never) and,
// unless once is set, every one after it until healed: a store that went
// away mid-run, or one transient error.
type faultStore struct {
	store.Store
	n      int64
	once   bool
	ops    atomic.Int64
	healed atomic.Bool
}

var errInjected = errors.New("injected store failure")

func (f *faultStore) fault(op, key string) error {
	i := f.ops.Add(1)
	if f.n > 0 && (i == f.n || i > f.n && !f.once) && !f.healed.Load() {
		return fmt.Errorf("%s %s (operation %d): %w", op, key, i, errInjected)
	}
	return nil
}

func (f *faultStore) Get(ctx context.Context, key string, o store.GetOptions) (*store.Object, error) {
	if err := f.fault("get", key); err != nil {
		return nil, err
	}
	return f.Store.Get(ctx, key, o)
}

func (f *faultStore) Head(ctx context.Context, key string) (store.Info, error) {
	if err := f.fault("head", key); err != nil {
		return store.Info{}, err
	}
	return f.Store.Head(ctx, key)
}

func (f *faultStore) Put(ctx context.Context, key string, b []byte, o store.PutOptions) (store.Info, error) {
	if err := f.fault("put", key); err != nil {
		return store.Info{}, err
	}
	return f.Store.Put(ctx, key, b, o)
}

func (f *faultStore) List(ctx context.Context, prefix string) ([]store.Info, error) {
	if err := f.fault("list", prefix); err != nil {
		return nil, err
	}
	return f.Store.List(ctx, prefix)
}

// scenario fills a bucket with a published state, then changes it; the
// returned keys are the change's hints.
func scenario(t testing.TB, e *env) []string {
	e.drop("skills/keep.md", skillDoc("keep", "1", "Kept."))
	e.drop("skills/old.md", skillDoc("old", "1", "Deleted in the change."))
	e.drop("skills/x.md", skillDoc("x", "1", "Owner."))
	e.drop("skills/x.zip", skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("x", "2", "Contender."))}))
	e.put("skills/keep.md", skillDoc("keep", "2", "Kept, updated."))
	e.put("skills/new.zip", skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("new", "1", "New.")), "a": "a"}))
	e.put("skills/bad.md", skillDoc("other", "1", "Mismatch."))
	e.put(skillsconfig.Key, []byte("version: 1\nskills:\n  - name: keep\n    visibility: authenticated\n  - name: inline\n    body: |\n"+indent(skillDoc("inline", "1", "Inline."))))
	e.del("skills/old.md")
	e.del("skills/x.md")
	return []string{"skills/keep.md", "skills/new.zip", "skills/bad.md", skillsconfig.Key, "skills/old.md", "skills/x.md"}
}

// TestStoreFailuresFailTheInvocationAndARetryConverges fails the store at
// every operation of an invocation in turn, from there on or just once:
// each must return an error (so Lambda retries) unless it was absorbed
// with the work complete, leave a readable catalog whose every version has
// its blob, and a retry must reach the state a clean run reaches.
func TestStoreFailuresFailTheInvocationAndARetryConverges(t *testing.T) {
	clean := newEnv(t)
	keys := scenario(t, clean)
	counter := &faultStore{Store: clean.st}
	clean.ix.store = counter
	clean.reconcile(keys...)
	want := served(t, clean.catalog())
	total := counter.ops.Load()
	if total < 20 {
		t.Fatalf("only %d store operations: the sweep would prove little", total)
	}
	for i := range 2 * total {
		n, once := i%total+1, i >= total
		name := fmt.Sprintf("failing from operation %d of %d", n, total)
		if once {
			name = fmt.Sprintf("failing operation %d of %d once", n, total)
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			keys := scenario(t, e)
			fs := &faultStore{Store: e.st, n: n, once: once}
			e.ix.store = fs
			_, err := e.ix.Reconcile(context.Background(), keys...)
			switch {
			case once && err == nil:
				// Absorbed (the blob HEAD is only a shortcut): then the
				// invocation must have done all of its work.
				if got := served(t, e.catalog()); got != want {
					t.Fatalf("a failure was absorbed but the work is incomplete:\n%s", got)
				}
			case !errors.Is(err, errInjected):
				t.Fatalf("err = %v, want the store failure", err)
			}
			consistent(t, e.st)
			fs.healed.Store(true)
			e.reconcile(keys...)
			if got := served(t, e.catalog()); got != want {
				t.Fatalf("after the retry:\n%s\nwant:\n%s", got, want)
			}
			if n := len(e.status().Rejections); n != len(clean.status().Rejections) {
				t.Fatalf("%d rejections recorded, a clean run records %d", n, len(clean.status().Rejections))
			}
		})
	}
}

// writeDuringRead changes key to newer right after the round reads it; with
// race set, another indexer also writes the catalog meanwhile (publishing
// an unrelated skill), so the round's write loses a race.
func writeDuringRead(e *env, key string, newer []byte, race bool) {
	e.t.Helper()
	duringRead(e, key, func(other *Indexer) {
		e.put(key, newer)
		if race {
			e.put("skills/bystander.md", skillDoc("bystander", "1", "Published meanwhile."))
			if _, err := other.Reconcile(context.Background(), "skills/bystander.md"); err != nil {
				e.t.Error(err)
			}
		}
	})
}

// duringRead runs meanwhile right after the round reads key, with another
// indexer of the same bucket (another invocation) to write the catalog.
func duringRead(e *env, key string, meanwhile func(other *Indexer)) {
	e.t.Helper()
	other, err := New(Config{Store: e.st, Now: e.ix.now})
	if err != nil {
		e.t.Fatal(err)
	}
	e.ix.store = &hookStore{Store: e.st, key: key, hook: func() { meanwhile(other) }}
}

// testAKeyChangedDuringTheRoundIsReadAgain: a round that read a key before
// it changed reads it again after its write when the round handling the
// change wrote first (this round lost its race to it): that round recorded
// the key's new state, or a tombstone, in the catalog this round's write
// went onto. Otherwise the change is its own event's, as the queue
// delivers it: whether this round lost no race, or lost one to a round
// about other keys.
func testAKeyChangedDuringTheRoundIsReadAgain(t *testing.T, mk envMaker) {
	t.Run("raced by the change's own round", func(t *testing.T) {
		e := mk(t)
		e.put("skills/x.md", skillDoc("x", "1", "Read first."))
		duringRead(e, "skills/x.md", func(other *Indexer) {
			e.put("skills/x.md", skillDoc("x", "2", "Written meanwhile."))
			if _, err := other.Reconcile(context.Background(), "skills/x.md"); err != nil {
				e.t.Error(err)
			}
		})
		res := e.reconcile("skills/x.md")
		if en := e.live(catalog.KindSkill, "x"); en.Latest != "2" {
			t.Fatalf("entry %s: the stale read won; result %s", dump(en), dump(res))
		}
	})
	t.Run("raced by the deletion's round", func(t *testing.T) {
		// x is new: the deletion's round withdraws nothing, but records a
		// tombstone, which tells this round to look again.
		e := mk(t)
		e.put("skills/x.md", skillDoc("x", "1", "Read, then deleted."))
		duringRead(e, "skills/x.md", func(other *Indexer) {
			e.del("skills/x.md")
			if _, err := other.Reconcile(context.Background(), "skills/x.md"); err != nil {
				e.t.Error(err)
			}
		})
		res := e.reconcile("skills/x.md")
		if en := e.skill("x"); en != nil && en.Live() {
			t.Fatalf("entry %s: a deleted upload is served; result %s", dump(en), dump(res))
		}
		if src := e.catalog().Sources["skills/x.md"]; src.Present() {
			t.Fatalf("source %+v: the deletion is not recorded", src)
		}
	})
	for _, race := range []bool{true, false} {
		name := "not raced"
		if race {
			name = "raced by a round about other keys"
		}
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			e.put("skills/x.md", skillDoc("x", "1", "Read first."))
			writeDuringRead(e, "skills/x.md", skillDoc("x", "2", "Written meanwhile."), race)
			e.reconcile("skills/x.md")
			if en := e.live(catalog.KindSkill, "x"); en.Latest != "1" {
				t.Fatalf("entry %s: the round read the key twice", dump(en))
			}
			if race {
				e.live(catalog.KindSkill, "bystander")
			}
			e.reconcile("skills/x.md") // the change's own event
			if en := e.live(catalog.KindSkill, "x"); en.Latest != "2" {
				t.Fatalf("entry %s: the change's event did not publish it", dump(en))
			}
		})
	}
	t.Run("changed back to the recorded state", func(t *testing.T) {
		// x is published at 1; 2 is uploaded and read; 1 is uploaded
		// again meanwhile. The round handling that last event would find
		// 1 as recorded and write nothing, so this round must look again.
		e := mk(t)
		one := skillDoc("x", "1", "The first.")
		e.drop("skills/x.md", one)
		e.put("skills/x.md", skillDoc("x", "2", "The second."))
		writeDuringRead(e, "skills/x.md", one, false)
		res := e.reconcile("skills/x.md")
		if en := e.live(catalog.KindSkill, "x"); en.Latest != "1" {
			t.Fatalf("entry %s: the bucket holds 1 again, the catalog serves %s; result %s", dump(en), en.Latest, dump(res))
		}
	})
}

// TestARacedRoundOlderThanTombstonesReadsEveryKeyAgain: a round that lost
// its race after half a tombstone's life may have missed one pruned since,
// so it reads every key again, as before tombstones.
func TestARacedRoundOlderThanTombstonesReadsEveryKeyAgain(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, func(c *Config) { c.Now = clk.Now })
	e.put("skills/x.md", skillDoc("x", "1", "Read first."))
	writeDuringRead(e, "skills/x.md", skillDoc("x", "2", "Written meanwhile."), true)
	hook := e.ix.store.(*hookStore).hook
	e.ix.store.(*hookStore).hook = func() {
		hook()
		clk.mu.Lock()
		clk.t = clk.t.Add(catalog.GoneFor / 2)
		clk.mu.Unlock()
	}
	e.reconcile("skills/x.md")
	if en := e.live(catalog.KindSkill, "x"); en.Latest != "2" {
		t.Fatalf("entry %s: a raced round older than a tombstone's half-life trusted the catalog", dump(en))
	}
}

// testStaleRejectionIsNotRecorded: bytes rejected by a round and replaced
// meanwhile are read again, whether or not the round lost a race: the fix
// is published and no rejection of the replaced bytes is recorded.
func testStaleRejectionIsNotRecorded(t *testing.T, mk envMaker) {
	for _, race := range []bool{false, true} {
		t.Run(fmt.Sprintf("raced %v", race), func(t *testing.T) {
			e := mk(t)
			e.put("skills/x.md", skillDoc("y", "1", "Bad, then fixed meanwhile."))
			writeDuringRead(e, "skills/x.md", skillDoc("x", "1", "Fixed."), race)
			e.reconcile("skills/x.md")
			e.live(catalog.KindSkill, "x")
			if n := len(e.status().Rejections); n != 0 {
				t.Fatalf("%d rejections recorded for bytes that were replaced during the round", n)
			}
		})
	}
}

// hookStore runs hook once, right after the first Get of key.
type hookStore struct {
	store.Store
	key  string
	hook func()
	once sync.Once
}

func (h *hookStore) Get(ctx context.Context, key string, o store.GetOptions) (*store.Object, error) {
	obj, err := h.Store.Get(ctx, key, o)
	if key == h.key {
		h.once.Do(h.hook)
	}
	return obj, err
}

func TestAConfigLandingMeanwhileIsAppliedFirst(t *testing.T) {
	e := newEnv(t)
	three := skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("x", "1", "Three files.")), "a": "a", "b": "b"})
	e.put("skills/x.zip", three)
	other, err := New(Config{Store: e.st})
	if err != nil {
		t.Fatal(err)
	}
	e.ix.store = &hookStore{Store: e.st, key: "skills/x.zip", hook: func() {
		// Another invocation puts a config in force that lowers x's cap.
		e.put(skillsconfig.Key, []byte("version: 1\nskills:\n  - name: x\n    max_entries: 2\n"))
		if _, err := other.Reconcile(context.Background(), skillsconfig.Key); err != nil {
			t.Error(err)
		}
	}}
	res := e.reconcile("skills/x.zip")
	if got := rejectionCodes(res); !slices.Equal(got, []string{"too_many_entries"}) {
		t.Fatalf("codes %v: the upload was not validated with the config in force; result %s", got, dump(res))
	}
	if en := e.skill("x"); en != nil && en.Live() {
		t.Fatalf("published under the old caps: %s", dump(en))
	}
	if !strings.Contains(e.logs.String(), "preparing again") {
		t.Fatal("the plan was not prepared again")
	}
}

// TestTombstonesArePruned: a deletion is recorded as a tombstone, which the
// first write after catalog.GoneFor drops.
func TestTombstonesArePruned(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, func(c *Config) { c.Now = clk.Now })
	e.drop("skills/x.md", skillDoc("x", "1", "Deleted later."))
	e.del("skills/x.md")
	e.reconcile("skills/x.md")
	if src, ok := e.catalog().Sources["skills/x.md"]; !ok || src.Present() {
		t.Fatalf("source %+v (recorded %v): the deletion left no tombstone", src, ok)
	}
	e.drop("skills/y.md", skillDoc("y", "1", "Within the hour."))
	if _, ok := e.catalog().Sources["skills/x.md"]; !ok {
		t.Fatal("a tombstone was dropped within its life")
	}
	clk.mu.Lock()
	clk.t = clk.t.Add(catalog.GoneFor)
	clk.mu.Unlock()
	e.drop("skills/z.md", skillDoc("z", "1", "An hour later."))
	if src, ok := e.catalog().Sources["skills/x.md"]; ok {
		t.Fatalf("source %+v: a tombstone outlived catalog.GoneFor", src)
	}
}
