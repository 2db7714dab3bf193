package indexer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// dirEnv is an env over a local directory whose objects' LastModified
// (file mtimes) the test sets.
type dirEnv struct {
	*env
	root string
}

func newDirEnv(t *testing.T) *dirEnv {
	t.Helper()
	root := t.TempDir()
	st, err := store.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &dirEnv{env: newEnvOn(t, st), root: root}
}

// write puts key as if written at the instant at.
func (e *dirEnv) write(key string, body []byte, at time.Time) {
	e.t.Helper()
	e.put(key, body)
	if err := os.Chtimes(filepath.Join(e.root, filepath.FromSlash(key)), at, at); err != nil {
		e.t.Fatal(err)
	}
}

// rebuild copies every source object of e, with its LastModified, into a
// fresh directory and re-indexes that from an empty catalog, as after a
// restored bucket.
func (e *dirEnv) rebuild(t *testing.T) *dirEnv {
	t.Helper()
	ctx := context.Background()
	infos, err := e.ix.listSources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh := newDirEnv(t)
	for _, info := range infos {
		b, _, err := store.ReadAll(ctx, e.st, info.Key, 0)
		if err != nil {
			t.Fatal(err)
		}
		fresh.write(info.Key, b, info.LastModified)
	}
	fresh.reindex()
	return fresh
}

// rejectionsOf lists the status document's rejections as key, code and
// message, sorted: what an operator reads, without the times.
func rejectionsOf(st *catalog.Status) []string {
	var out []string
	for _, r := range st.Rejections {
		out = append(out, r.Key+" "+r.Code+": "+r.Message)
	}
	slices.Sort(out)
	return out
}

func rejectionCodesOf(st *catalog.Status) []string {
	var out []string
	for _, r := range st.Rejections {
		out = append(out, r.Code)
	}
	slices.Sort(out)
	return out
}

// TestConfigDropCollisionOlderObjectWins: when agent-skills.yaml and a
// dropped skill collide (one name, or one served path), the object written
// first wins, and a re-index of the same bucket from an empty catalog
// serves what incremental indexing in write order produced. A drop older
// than the config (or written in the same instant) rejects the config
// whole; a newer one is rejected itself.
func TestConfigDropCollisionOlderObjectWins(t *testing.T) {
	const secret = "skills/internal-rotate-secret/SKILL.md"
	kinds := []struct {
		name   string
		before map[string][]byte // written first, each with its event
		drop   string
		body   []byte
		config string
		// code is the rejection of a drop newer than the config.
		code string
	}{
		{
			name:   "the config defines a name a drop publishes",
			drop:   secret,
			body:   skillDoc("internal-rotate-secret", "3", "Rotate a credential."),
			config: "version: 1\nskills:\n  - name: internal-rotate-secret\n    body: |\n" + indent(skillDoc("internal-rotate-secret", "9", "The config's own.")),
			code:   CodeNameConflict,
		},
		{
			name:   "a config entry's url is a drop's served path",
			before: map[string][]byte{"files/evil.md": skillDoc("evil", "1", "Evil.")},
			drop:   secret,
			body:   skillDoc("internal-rotate-secret", "3", "Rotate a credential."),
			config: "version: 1\nskills:\n  - name: evil\n    type: skill-md\n    path: files/evil.md\n    url: /" + secret + "\n",
			code:   CodePathConflict,
		},
		{
			name:   "the config includes by name a skill a listing drop publishes",
			drop:   "listings/partner-a/skills/shared.md",
			body:   skillDoc("shared", "1", "Only in partner-a."),
			config: "version: 1\nlistings:\n  partner-a:\n    skills:\n      - name: shared\n",
			code:   CodeNameConflict,
		},
		{
			name:   "an override moves an older drop onto the drop's path",
			before: map[string][]byte{"skills/x.md": skillDoc("x", "1", "X.")},
			drop:   "skills/y.md",
			body:   skillDoc("y", "1", "Y."),
			config: "version: 1\nskills:\n  - name: x\n    url: /skills/y.md\n",
			code:   CodePathConflict,
		},
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	orders := []struct {
		name      string
		dropFirst bool
		gap       time.Duration // between the first and the second write
		// dropWins: the config is rejected whole; else the drop is.
		dropWins bool
	}{
		{"the drop is older", true, time.Second, true},
		{"the config is older", false, time.Second, false},
		{"written in the same instant, the drop's event first", true, 0, true},
	}
	for _, k := range kinds {
		for _, o := range orders {
			t.Run(k.name+"/"+o.name, func(t *testing.T) {
				inc := newDirEnv(t)
				for key, body := range k.before {
					inc.write(key, body, t0)
					inc.reconcile(key)
				}
				first, second := t0.Add(time.Second), t0.Add(time.Second+o.gap)
				writeDrop := func(at time.Time) *Result {
					inc.write(k.drop, k.body, at)
					return inc.reconcile(k.drop)
				}
				writeConfig := func(at time.Time) *Result {
					inc.write(skillsconfig.Key, []byte(k.config), at)
					return inc.reconcile(skillsconfig.Key)
				}
				var cfgRes, dropRes *Result
				if o.dropFirst {
					dropRes, cfgRes = writeDrop(first), writeConfig(second)
				} else {
					cfgRes, dropRes = writeConfig(first), writeDrop(second)
				}
				// Incremental indexing in write order: the older object wins.
				if o.dropWins {
					if cfgRes.Config != ConfigRejected || len(dropRes.Published) != 1 {
						t.Fatalf("incremental: config %s, drop %s; want the drop published and the config rejected", dump(cfgRes), dump(dropRes))
					}
				} else if cfgRes.Config != ConfigApplied || !slices.Equal(rejectionCodes(dropRes), []string{k.code}) {
					t.Fatalf("incremental: config %s, drop %s; want the config applied and the drop rejected as %s", dump(cfgRes), dump(dropRes), k.code)
				}
				want := served(t, inc.catalog())

				re := inc.rebuild(t)
				c := re.catalog()
				if (c.Config == nil) != o.dropWins {
					t.Fatalf("rebuilt: config in force %s, want it rejected: %v", dump(c.Config), o.dropWins)
				}
				if o.dropWins {
					// The rebuild rejects the config as incremental indexing
					// did, and then, as for any config not in force, holds
					// every publication until a valid one arrives: the
					// drop that incremental indexing published before the
					// config came waits, nothing is served.
					want = served(t, catalog.New())
					if c.Bucket == nil || c.Bucket.State != catalog.ConfigInvalid || !c.Sources[k.drop].Held {
						t.Fatalf("rebuilt: bucket config %s, drop %s; want the config refused and the drop held", dump(c.Bucket), dump(c.Sources[k.drop]))
					}
				}
				if got := served(t, c); got != want {
					t.Fatalf("served after a rebuild:\n%s\nincremental:\n%s", got, want)
				}
				if got, want := rejectionsOf(re.status()), rejectionsOf(inc.status()); !o.dropWins && !slices.Equal(got, want) {
					t.Fatalf("rebuilt rejections:\n%s\nincremental:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				} else if o.dropWins && !slices.Equal(rejectionCodesOf(re.status()), []string{CodeInvalidConfig}) {
					t.Fatalf("rebuilt rejections:\n%s\nwant the config's alone", strings.Join(got, "\n"))
				}
				consistent(t, re.st)
				// And a re-index of the rebuilt bucket keeps it so.
				if res := re.reindex(); res.Revision != c.Revision {
					t.Fatalf("a second re-index rewrote the rebuilt catalog: %s", dump(res))
				}
			})
		}
	}
}

// TestMayCollide pins the filter that spares a re-index a second read of
// the bucket: it must say yes whenever a drop written no later than the
// config could collide with it, and no for settings that move nothing.
func TestMayCollide(t *testing.T) {
	written := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	older, newer := written.Add(-time.Minute), written.Add(time.Minute)
	const body = "    body: |\n      ---\n      name: %s\n      description: d\n      ---\n"
	tests := []struct {
		name string
		yaml string
		key  string
		at   time.Time
		want bool
	}{
		{"an older drop of a name the config defines", "version: 1\nskills:\n  - name: x\n" + strings.ReplaceAll(body, "%s", "x"), "skills/x.md", older, true},
		{"a newer drop of a name the config defines", "version: 1\nskills:\n  - name: x\n" + strings.ReplaceAll(body, "%s", "x"), "skills/x.md", newer, false},
		{"a drop in the same second, listed to the millisecond", "version: 1\nskills:\n  - name: x\n" + strings.ReplaceAll(body, "%s", "x"), "skills/x.md", written.Add(400 * time.Millisecond), true},
		{"an older sub-agent the config defines", "version: 1\nsubagents:\n  - name: a\n" + strings.ReplaceAll(body, "%s", "a"), "subagents/a/agent.md", older, true},
		{"an older drop served at a config entry's url", "version: 1\nskills:\n  - name: n\n    url: /skills/y.md\n" + strings.ReplaceAll(body, "%s", "n"), "skills/y.md", older, true},
		{"an older listing drop of a name the listing includes", "version: 1\nlistings:\n  l:\n    skills:\n      - name: z\n", "listings/l/skills/z.md", older, true},
		{"an older drop the config moves", "version: 1\nskills:\n  - name: x\n    url: /docs/x.md\n", "skills/x.zip", older, true},
		{"an older drop served where the config moves another", "version: 1\nskills:\n  - name: x\n    url: /skills/y.md\n", "skills/y.md", older, true},
		{"an older drop the config only describes", "version: 1\nskills:\n  - name: x\n    visibility: authenticated\n    description: D.\n", "skills/x.md", older, false},
		{"an older drop of another name", "version: 1\nskills:\n  - name: x\n" + strings.ReplaceAll(body, "%s", "x"), "skills/y.md", older, false},
		{"an older top-level drop of a name a listing includes", "version: 1\nlistings:\n  l:\n    skills:\n      - name: z\n", "skills/z.md", older, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := skillsconfig.Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			infos := []store.Info{{Key: "skills/unrelated.md", LastModified: older}, {Key: tt.key, LastModified: tt.at}}
			if got := len(mayCollide(cfg, infos, written)) > 0; got != tt.want {
				t.Fatalf("mayCollide = %v, want %v", got, tt.want)
			}
		})
	}
}
