package indexer

import (
	"context"
	"net/url"
	"slices"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/discovery"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// served renders what every surface serves from a catalog, for anonymous
// and authenticated callers: the RFC index, every listing's index, the
// sub-agents and the path table.
func served(t testing.TB, c *catalog.Catalog) string {
	t.Helper()
	v := catalog.Compile(c, "")
	base, _ := url.Parse("https://skills.example.com")
	type agent struct {
		Name, Version, Digest, Description string
		Visibility                         catalog.Visibility
	}
	out := map[string]any{}
	for _, auth := range []bool{false, true} {
		who := map[bool]string{false: "anonymous", true: "authenticated"}[auth]
		out[who+"/index"] = discovery.TopLevel(v, callerOf(auth), base)
		for name := range c.Listings {
			idx, ok := discovery.Listing(v, name, callerOf(auth), base)
			out[who+"/listing/"+name] = map[string]any{"ok": ok, "index": idx}
		}
		var agents []agent
		for _, a := range v.Subagents(callerOf(auth)) {
			l := a.LatestVersion()
			agents = append(agents, agent{a.Name, l.Label, l.Digest.String(), a.EffectiveDescription(), a.Visibility})
		}
		out[who+"/subagents"] = agents
	}
	paths := map[string]string{}
	for _, e := range c.SortedSkills() {
		if e.Live() && e.Path != "" {
			if got := v.ByPath(e.Path, audience.Unrestricted); got != nil {
				paths[e.Path] = got.ID() + "@" + got.Latest
			}
		}
	}
	out["paths"] = paths
	return dump(out)
}

// buildHistory indexes a bucket incrementally through a mix of every kind
// of change, and returns the env.
func buildHistory(t *testing.T, mk envMaker) *env {
	e := mk(t)
	e.drop("skills/alpha.md", skillDoc("alpha", "1", "Alpha one."))
	e.drop("skills/alpha.md", skillDoc("alpha", "2", "Alpha two."))
	e.drop("skills/beta/SKILL.md", skillDoc("beta", "1", "Beta."))
	e.drop("skills/beta/notes.txt", []byte("ignored with a warning"))
	// The owner's key sorts first: S3 times objects to the second, and a
	// re-index from scratch breaks a tie between claimants by key.
	e.drop("skills/gamma.md", skillDoc("gamma", "1", "Gamma."))
	e.drop("skills/gamma.zip", skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("gamma", "9", "Gamma contender.")), "a.txt": "a"}))
	e.drop("skills/delta.tgz", skilltest.TarGz(t, map[string]string{"SKILL.md": string(skillDoc("delta", "", "Delta."))}))
	e.drop("skills/gone.md", skillDoc("gone", "1", "Gone."))
	e.remove("skills/gone.md")
	e.drop("skills/bad.md", skillDoc("other", "1", "Mismatch."))
	e.drop("listings/partner-a/skills/solo.md", skillDoc("solo", "1", "Solo in a."))
	e.drop("subagents/reviewer.md", agentDoc("reviewer", "1"))
	e.drop("subagents/writer/agent.md", agentDoc("writer", "2"))
	e.drop("files/from-file.md", skillDoc("from-file", "1", "From a file."))
	e.config(`version: 1
skills:
  - name: alpha
    visibility: authenticated
    description: Alpha, described by the config.
  - name: beta
    url: /docs/beta.md
  - name: from-file
    type: skill-md
    path: files/from-file.md
  - name: inline
    body: |
` + indent(skillDoc("inline", "5", "Inline.")) + `subagents:
  - name: writer
    visibility: authenticated
listings:
  partner-a:
    skills:
      - name: alpha
      - name: beta
  partner-c:
    skills:
      - name: gamma
`)
	e.drop("files/from-file.md", skillDoc("from-file", "2", "From a file, again."))
	e.drop("skills/alpha.md", skillDoc("alpha", "3", "Alpha three."))
	return e
}

func testReindexEqualsIncremental(t *testing.T, mk envMaker) {
	e := buildHistory(t, mk)
	before := e.catalog()
	want := served(t, before)
	t.Run("a re-index of the same bucket changes nothing", func(t *testing.T) {
		res := e.reindex()
		after := e.catalog()
		// It may write once, to record the state of keys an incremental
		// round read without a write of its own (a rejected upload, a file
		// beside a SKILL.md: they ride along with a later write); nothing
		// else.
		rejected := map[string]bool{}
		for _, r := range res.Rejected {
			rejected[r.Key] = true
		}
		for key, src := range after.Sources {
			if old, ok := before.Sources[key]; ok && old != src && !rejected[key] {
				t.Errorf("the re-index changed the recorded state of %s (%+v → %+v), not a rejected key", key, old, src)
			}
		}
		if again := e.reindex(); e.catalog().Revision != after.Revision {
			t.Fatalf("a second re-index wrote the catalog (revision %d → %d); result %s", after.Revision, e.catalog().Revision, dump(again))
		}
		if got := served(t, after); got != want {
			t.Fatalf("served after re-index:\n%s\nincremental:\n%s", got, want)
		}
		if len(res.Published) != 0 || len(res.Withdrawn) != 0 {
			t.Fatalf("result %s", dump(res))
		}
		for _, r := range res.Rejected {
			if !r.Repeated {
				t.Fatalf("the re-index recorded %s again", dump(r))
			}
		}
	})
	t.Run("a re-index from scratch serves the same", func(t *testing.T) {
		fresh := mk(t)
		ctx := context.Background()
		infos, err := e.ix.listSources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Objects keep their write order, as in the bucket itself.
		slices.SortFunc(infos, func(a, b store.Info) int { return a.LastModified.Compare(b.LastModified) })
		for _, info := range infos {
			b, _, err := store.ReadAll(ctx, e.st, info.Key, 0)
			if err != nil {
				t.Fatal(err)
			}
			fresh.put(info.Key, b)
		}
		fresh.reindex()
		if got := served(t, fresh.catalog()); got != want {
			t.Fatalf("served after a re-index from scratch:\n%s\nincremental:\n%s", got, want)
		}
		consistent(t, fresh.st)
	})
	t.Run("a re-index after missed events catches up and keeps the history", func(t *testing.T) {
		e.del("skills/beta/SKILL.md")
		e.put("skills/alpha.md", skillDoc("alpha", "4", "Alpha four."))
		e.put("subagents/new.md", agentDoc("new", "1"))
		e.reindex()
		c := e.catalog()
		if c.Skills["beta"].Live() || c.Subagents["new"] == nil || !c.Subagents["new"].Live() {
			t.Fatalf("catalog %s", dump(c))
		}
		if got := labels(c.Skills["alpha"]); !slices.Equal(got, []string{"1", "2", "3", "4"}) {
			t.Fatalf("alpha history %v", got)
		}
		// And it equals what the events would have produced.
		inc := buildHistory(t, mk)
		inc.remove("skills/beta/SKILL.md")
		inc.drop("skills/alpha.md", skillDoc("alpha", "4", "Alpha four."))
		inc.drop("subagents/new.md", agentDoc("new", "1"))
		if got, want := served(t, c), served(t, inc.catalog()); got != want {
			t.Fatalf("re-indexed:\n%s\nincremental:\n%s", got, want)
		}
	})
}
