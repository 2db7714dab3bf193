package indexer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// secretKind is one kind of entry a config can hide: a top-level skill, a
// listing's own skill, a sub-agent.
type secretKind struct {
	name string
	key  string
	body func(version string) []byte
	// hide and show are agent-skills.yaml documents making the entry
	// authenticated, and leaving it public.
	hide, show string
	// seen reports whether a caller sees the entry in the compiled view.
	seen func(v *catalog.View, authenticated bool) bool
}

var secretKinds = []secretKind{
	{
		name: "skill", key: "skills/secret-x.md",
		body: func(v string) []byte { return skillDoc("secret-x", v, "A secret.") },
		hide: "version: 1\nskills:\n  - name: secret-x\n    visibility: authenticated\n",
		show: "version: 1\nskills:\n  - name: secret-x\n    description: Public.\n",
		seen: func(v *catalog.View, auth bool) bool {
			e := v.Skill("secret-x", callerOf(auth))
			return e != nil && v.ByPath("/skills/secret-x.md", callerOf(auth)) != nil
		},
	},
	{
		name: "listing skill", key: "listings/partner/skills/secret-x.md",
		body: func(v string) []byte { return skillDoc("secret-x", v, "A partner's secret.") },
		hide: "version: 1\nlistings:\n  partner:\n    skills:\n      - name: secret-x\n        visibility: authenticated\n",
		show: "version: 1\nlistings:\n  partner:\n    skills:\n      - name: secret-x\n        description: Public.\n",
		seen: func(v *catalog.View, auth bool) bool {
			members, _ := v.Listing("partner", callerOf(auth))
			return slices.ContainsFunc(members, func(e *catalog.Entry) bool { return e.Name == "secret-x" }) ||
				v.ByPath("/.well-known/agent-skills/partner/skills/secret-x.md", callerOf(auth)) != nil
		},
	},
	{
		name: "sub-agent", key: "subagents/secret-x.md",
		body: func(v string) []byte { return agentDoc("secret-x", v) },
		hide: "version: 1\nsubagents:\n  - name: secret-x\n    visibility: authenticated\n",
		show: "version: 1\nsubagents:\n  - name: secret-x\n    description: Public.\n",
		seen: func(v *catalog.View, auth bool) bool { return v.Subagent("secret-x", callerOf(auth)) != nil },
	},
}

// anonymousSees reports whether an anonymous caller sees the entry.
func (k secretKind) anonymousSees(e *env) bool {
	return k.seen(catalog.Compile(e.catalog(), ""), false)
}

// keySees reports whether a key holder sees the entry.
func (k secretKind) keySees(e *env) bool { return k.seen(catalog.Compile(e.catalog(), ""), true) }

// TestVisibilityFailsClosed writes agent-skills.yaml (hiding the entry)
// and the entry in either order, with a create, an overwrite or a delete
// of each, and delivers only one of the two events, late (both writes have
// landed), through the handler in a queue batch: whatever event comes, an anonymous caller never sees what the
// bucket's config hides, and a deleted config relaxes nothing.
func TestVisibilityFailsClosed(t *testing.T) {
	type step struct {
		key  string
		body []byte // nil deletes
	}
	for _, k := range secretKinds {
		cases := []struct {
			name string
			// before is published (each with its event) first.
			before []step
			writes func() []step
			// wantKey: a key holder sees the entry afterwards (published,
			// or kept); false: not published yet (held, or no event).
			wantKey map[string]bool // by delivered event: "drop" or "config"
		}{
			{
				name:   "create both, config first",
				writes: func() []step { return []step{{skillsconfig.Key, []byte(k.hide)}, {k.key, k.body("1")}} },
				// The drop's event applies the bucket's config first; the
				// config's reads every claimant of the names it touches.
				wantKey: map[string]bool{"drop": true, "config": true},
			},
			{
				name:    "create both, drop first",
				writes:  func() []step { return []step{{k.key, k.body("1")}, {skillsconfig.Key, []byte(k.hide)}} },
				wantKey: map[string]bool{"drop": true, "config": true},
			},
			{
				name:    "overwrite both, config first",
				before:  []step{{skillsconfig.Key, []byte(k.show)}, {k.key, k.body("1")}},
				writes:  func() []step { return []step{{skillsconfig.Key, []byte(k.hide)}, {k.key, k.body("2")}} },
				wantKey: map[string]bool{"drop": true, "config": true},
			},
			{
				name:    "overwrite both, drop first",
				before:  []step{{skillsconfig.Key, []byte(k.show)}, {k.key, k.body("1")}},
				writes:  func() []step { return []step{{k.key, k.body("2")}, {skillsconfig.Key, []byte(k.hide)}} },
				wantKey: map[string]bool{"drop": true, "config": true},
			},
			{
				// The config is deleted and the entry overwritten: the
				// overwrite is held (config_missing), the entry stays
				// hidden at its old version.
				name:    "delete the config, overwrite the drop",
				before:  []step{{skillsconfig.Key, []byte(k.hide)}, {k.key, k.body("1")}},
				writes:  func() []step { return []step{{skillsconfig.Key, nil}, {k.key, k.body("2")}} },
				wantKey: map[string]bool{"drop": true, "config": true},
			},
			{
				name:    "overwrite the config, delete the drop",
				before:  []step{{skillsconfig.Key, []byte(k.hide)}, {k.key, k.body("1")}},
				writes:  func() []step { return []step{{skillsconfig.Key, []byte(k.hide + "# edited\n")}, {k.key, nil}} },
				wantKey: map[string]bool{"drop": false, "config": true}, // the config's event does not know of the deletion
			},
			{
				name:    "delete both",
				before:  []step{{skillsconfig.Key, []byte(k.hide)}, {k.key, k.body("1")}},
				writes:  func() []step { return []step{{skillsconfig.Key, nil}, {k.key, nil}} },
				wantKey: map[string]bool{"drop": false, "config": true},
			},
		}
		for _, c := range cases {
			for _, deliver := range []string{"drop", "config"} {
				t.Run(fmt.Sprintf("%s/%s/only the %s's event", k.name, c.name, deliver), func(t *testing.T) {
					e := newEnv(t)
					for _, s := range c.before {
						e.drop(s.key, s.body)
					}
					for _, s := range c.writes() {
						if s.body == nil {
							e.del(s.key)
						} else {
							e.put(s.key, s.body)
						}
					}
					key := k.key
					if deliver == "config" {
						key = skillsconfig.Key
					}
					// The one event, as the queue hands it to the function.
					event := "ObjectCreated:Put"
					if s, _ := e.st.Head(context.Background(), key); s.ETag == "" {
						event = "ObjectRemoved:Delete"
					}
					res, err := e.ix.Handle(context.Background(), sqsBatch(t, map[string][]byte{"m1": motoRecord("", key, event)}))
					if err != nil || res.Batch == nil || len(res.Batch.BatchItemFailures) != 0 {
						t.Fatalf("handle the %s's event: %v %s", deliver, err, dump(res))
					}
					if k.anonymousSees(e) {
						t.Fatalf("an anonymous caller sees secret-x; catalog %s", dump(e.catalog()))
					}
					if got := k.keySees(e); got != c.wantKey[deliver] {
						t.Fatalf("a key holder sees secret-x: %v, want %v; catalog %s", got, c.wantKey[deliver], dump(e.catalog()))
					}
					// Whatever was lost, a reconcile brings the catalog to
					// the bucket, and still hides the entry.
					if _, err := e.ix.ReconcileBucket(context.Background()); err != nil {
						t.Fatal(err)
					}
					if k.anonymousSees(e) {
						t.Fatalf("after a reconcile an anonymous caller sees secret-x; catalog %s", dump(e.catalog()))
					}
				})
			}
		}
	}
}

// TestAnInvalidConfigHoldsTheDropItWasMeantToHide: a config that would
// hide a skill is uploaded with a typo, then the skill: the skill is held,
// not published, and the status says so; the fixed config publishes it,
// hidden.
func TestAnInvalidConfigHoldsTheDropItWasMeantToHide(t *testing.T) {
	for _, k := range secretKinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.drop("skills/other.md", skillDoc("other", "1", "Published before."))
			typo := strings.Replace(k.hide, "visibility:", "visibilty:", 1)
			res := e.drop(skillsconfig.Key, []byte(typo))
			if res.Config != ConfigRejected || !slices.Equal(rejectionCodes(res), []string{CodeInvalidConfig}) {
				t.Fatalf("result %s", dump(res))
			}
			res = e.drop(k.key, k.body("1"))
			if len(res.Published) != 0 || !slices.Equal(res.Held, []string{k.key}) {
				t.Fatalf("the drop was not held: %s", dump(res))
			}
			if k.keySees(e) || k.anonymousSees(e) {
				t.Fatal("a held drop is served")
			}
			if !e.catalog().Sources[k.key].Held {
				t.Fatalf("the catalog does not record the hold: %s", dump(e.catalog().Sources))
			}
			// A deletion goes through while publications are held.
			if res := e.remove("skills/other.md"); len(res.Withdrawn) != 1 {
				t.Fatalf("a withdrawal was held: %s", dump(res))
			}
			// The fixed config is applied, and the held drop published under it.
			res = e.config(k.hide)
			if res.Config != ConfigApplied || len(res.Published) != 1 {
				t.Fatalf("the fixed config did not publish the held drop: %s", dump(res))
			}
			if !k.keySees(e) || k.anonymousSees(e) {
				t.Fatalf("after the fix: key holder %v, anonymous %v; want only the key holder", k.keySees(e), k.anonymousSees(e))
			}
			if e.catalog().Sources[k.key].Held || e.catalog().Bucket != nil {
				t.Fatal("the hold outlived the fix")
			}
		})
	}
}

// TestDeletingARefusedConfigKeepsTheHold: a first config that is refused
// holds the drop it was meant to hide; deleting it (never in force) does
// not publish that drop: it stays held, as config_missing, until a valid
// config arrives.
func TestDeletingARefusedConfigKeepsTheHold(t *testing.T) {
	for _, k := range secretKinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.drop(skillsconfig.Key, []byte(strings.Replace(k.hide, "visibility:", "visibilty:", 1)))
			if res := e.drop(k.key, k.body("1")); !slices.Equal(res.Held, []string{k.key}) {
				t.Fatalf("the drop was not held: %s", dump(res))
			}
			res := e.remove(skillsconfig.Key)
			if res.Config != ConfigRejected || !slices.Equal(rejectionCodes(res), []string{CodeConfigMissing}) {
				t.Fatalf("deleting the refused config: %s", dump(res))
			}
			if k.keySees(e) || k.anonymousSees(e) || !e.catalog().Sources[k.key].Held {
				t.Fatalf("the drop the refused config was meant to hide was published when it was deleted: %s", dump(res))
			}
			if res := e.reconcile(k.key); len(res.Published) != 0 {
				t.Fatalf("a later round published the held drop: %s", dump(res))
			}
			res = e.config(k.hide)
			if res.Config != ConfigApplied || !k.keySees(e) || k.anonymousSees(e) {
				t.Fatalf("the valid config: key holder %v, anonymous %v; %s", k.keySees(e), k.anonymousSees(e), dump(res))
			}
		})
	}
}

// TestALostConfigEventIsRepairedByTheReconcile: the config's event never
// comes; the next reconcile (the schedule) applies it, reading only what
// differs.
func TestALostConfigEventIsRepairedByTheReconcile(t *testing.T) {
	e := newEnv(t)
	for i := range 20 {
		e.drop(fmt.Sprintf("skills/u%02d.md", i), skillDoc(fmt.Sprintf("u%02d", i), "1", "Fine."))
	}
	e.drop("skills/secret-x.md", skillDoc("secret-x", "1", "Secret."))
	e.put(skillsconfig.Key, []byte(secretKinds[0].hide)) // its event is lost
	if !secretKinds[0].anonymousSees(e) {
		t.Fatal("no event, yet the config was applied")
	}
	reads := &readCounter{Store: e.st}
	e.ix.store = reads
	res, err := e.ix.ReconcileBucket(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Config != ConfigApplied || secretKinds[0].anonymousSees(e) {
		t.Fatalf("the reconcile did not apply the config: %s", dump(res))
	}
	// It read the config, the catalog and what the config names, and
	// neither read nor asked about the 20 other skills: its cost is a
	// listing and what changed, not a request per key.
	if got := reads.gets(); slices.ContainsFunc(got, func(k string) bool { return strings.HasPrefix(k, "skills/u") }) {
		t.Errorf("the reconcile read or asked about unchanged keys: %v", got)
	}
	// A second reconcile finds nothing to do and writes nothing.
	rev := e.catalog().Revision
	if _, err := e.ix.ReconcileBucket(context.Background()); err != nil || e.catalog().Revision != rev {
		t.Fatalf("a reconcile of an unchanged bucket wrote the catalog (%v)", err)
	}
}

// readCounter records the keys read.
type readCounter struct {
	store.Store
	keys []string
}

func (r *readCounter) Get(ctx context.Context, key string, o store.GetOptions) (*store.Object, error) {
	r.keys = append(r.keys, key)
	return r.Store.Get(ctx, key, o)
}

func (r *readCounter) Head(ctx context.Context, key string) (store.Info, error) {
	r.keys = append(r.keys, key)
	return r.Store.Head(ctx, key)
}

// gets are the keys read or asked about, in order.
func (r *readCounter) gets() []string { return r.keys }

// deniedStore answers every read of one key as access denied.
type deniedStore struct {
	store.Store
	key string
}

func (d *deniedStore) Get(ctx context.Context, key string, o store.GetOptions) (*store.Object, error) {
	if key == d.key {
		return nil, fmt.Errorf("get %s: %w", key, store.ErrAccessDenied)
	}
	return d.Store.Get(ctx, key, o)
}

func (d *deniedStore) Head(ctx context.Context, key string) (store.Info, error) {
	if key == d.key {
		return store.Info{}, fmt.Errorf("head %s: %w", key, store.ErrAccessDenied)
	}
	return d.Store.Head(ctx, key)
}

// TestAnUnreadableConfigHolds: agent-skills.yaml that cannot be read (403)
// keeps the config in force and holds publications, as config_unreadable;
// a transient failure to read it publishes nothing and fails the call.
func TestAnUnreadableConfigHolds(t *testing.T) {
	e := newEnv(t)
	e.config(secretKinds[0].hide)
	e.st = &deniedStore{Store: e.st, key: skillsconfig.Key}
	e.ix.store = e.st
	res := e.drop("skills/secret-x.md", skillDoc("secret-x", "1", "Secret."))
	if !slices.Equal(rejectionCodes(res), []string{CodeConfigUnreadable}) || !slices.Equal(res.Held, []string{"skills/secret-x.md"}) {
		t.Fatalf("result %s", dump(res))
	}
	if c := e.catalog(); c.Config == nil || c.Bucket == nil || c.Bucket.State != catalog.ConfigUnreadable {
		t.Fatalf("config state %s", dump(c.Bucket))
	}
	// The same again is not news: no second audit event or datapoint.
	e.drop("skills/secret-x.md", skillDoc("secret-x", "1", "Secret."))
	if n := len(e.audits()); n != 1 {
		t.Fatalf("%d audit events, want 1", n)
	}
	if audits, datapoints := e.rejectedAs(CodeConfigUnreadable); audits != 1 || datapoints != 1 {
		t.Fatalf("config_unreadable: %d audit events, %d UploadRejected datapoints; want one of each", audits, datapoints)
	}

	t.Run("a transient failure publishes nothing", func(t *testing.T) {
		e := newEnv(t)
		e.put("skills/x.md", skillDoc("x", "1", "X."))
		fs := &faultStore{Store: e.st, n: 2, once: true} // operation 1 reads the catalog, 2 HEADs the config
		e.ix.store = fs
		if _, err := e.ix.Reconcile(context.Background(), "skills/x.md"); !errors.Is(err, errInjected) {
			t.Fatalf("err = %v, want the injected failure", err)
		}
		if e.catalog().Revision != 0 {
			t.Fatal("a round that could not read the config published")
		}
	})
}

// TestAHeldUploadDeletedIsNoLongerHeld: an upload held while the config is
// invalid, then deleted, is no longer listed as held after a full
// re-index, as after a reconcile.
func TestAHeldUploadDeletedIsNoLongerHeld(t *testing.T) {
	for _, run := range []string{"reindex", "reconcile"} {
		t.Run(run, func(t *testing.T) {
			e := newEnv(t)
			e.config(secretKinds[0].hide)
			e.put(skillsconfig.Key, []byte(strings.Replace(secretKinds[0].hide, "visibility:", "visibilty:", 1)))
			e.put("skills/zz.md", skillDoc("zz", "1", "Held."))
			e.reindex()
			if !e.catalog().Sources["skills/zz.md"].Held {
				t.Fatal("the upload was not held")
			}
			e.del("skills/zz.md")
			if run == "reindex" {
				e.reindex()
			} else if _, err := e.ix.ReconcileBucket(context.Background()); err != nil {
				t.Fatal(err)
			}
			if src := e.catalog().Sources["skills/zz.md"]; src.Held || src.ETag != "" {
				t.Fatalf("the deleted upload is still recorded: %+v", src)
			}
		})
	}
}
