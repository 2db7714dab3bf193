package indexer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/pkg/audience"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// incompleteConfigs are agent-skills.yaml documents that say less than a
// config hiding an entry: each validated before (as no restrictions, or an
// entry left public) and is refused now.
func incompleteConfigs(k secretKind) map[string]string {
	unset := func(value string) string {
		return strings.Replace(k.hide, "visibility: authenticated", "visibility: "+value, 1)
	}
	return map[string]string{
		"0 bytes":            "",
		"comments only":      "# nothing yet\n",
		"a document marker":  "---\n",
		"null":               "null\n",
		"an empty mapping":   "{}\n",
		"no version":         strings.TrimPrefix(k.hide, "version: 1\n"),
		"visibility ~":       unset("~"),
		`visibility ""`:      unset(`""`),
		"visibility nothing": unset(""),
	}
}

// TestAnIncompleteConfigHidesWhatTheWholeOneHid: for a skill, a listing's
// skill and a sub-agent that the config in force hides, an upload of each
// incomplete config is refused as invalid_config: the entry stays hidden,
// and a new version of it is held. As a first config, the same upload
// holds the entry it never hid.
func TestAnIncompleteConfigHidesWhatTheWholeOneHid(t *testing.T) {
	for _, k := range secretKinds {
		for name, doc := range incompleteConfigs(k) {
			t.Run(k.name+"/"+name, func(t *testing.T) {
				e := newEnv(t)
				e.drop(skillsconfig.Key, []byte(k.hide))
				e.drop(k.key, k.body("1"))
				if k.anonymousSees(e) || !k.keySees(e) {
					t.Fatal("the config in force does not hide the entry")
				}
				res := e.drop(skillsconfig.Key, []byte(doc))
				if res.Config != ConfigRejected || !slices.Equal(rejectionCodes(res), []string{CodeInvalidConfig}) {
					t.Fatalf("the incomplete config: %s", dump(res))
				}
				if k.anonymousSees(e) {
					t.Fatal("an anonymous caller sees the entry under the incomplete config")
				}
				if res := e.drop(k.key, k.body("2")); !slices.Equal(res.Held, []string{k.key}) {
					t.Fatalf("a new version under the incomplete config: %s", dump(res))
				}
				if k.anonymousSees(e) {
					t.Fatal("an anonymous caller sees the new version")
				}
			})
			t.Run(k.name+"/"+name+"/as the first config", func(t *testing.T) {
				e := newEnv(t)
				e.put(skillsconfig.Key, []byte(doc))
				res := e.drop(k.key, k.body("1"))
				if res.Config != ConfigRejected || !slices.Equal(res.Held, []string{k.key}) {
					t.Fatalf("a drop under an incomplete first config: %s", dump(res))
				}
				if k.anonymousSees(e) || k.keySees(e) {
					t.Fatal("the held entry is published")
				}
			})
		}
	}
}

// TestDefaultVisibility: default_visibility: authenticated hides every
// entry the config names without a visibility and every one it does not
// name, of each kind; an entry's own public shows it.
func TestDefaultVisibility(t *testing.T) {
	e := newEnv(t)
	e.drop(skillsconfig.Key, []byte("version: 1\ndefault_visibility: authenticated\nskills:\n  - name: open\n    visibility: public\n"+
		"  - name: described\n    description: Described.\n"))
	for _, key := range []string{"skills/open.md", "skills/described.md", "skills/unnamed.md"} {
		name := strings.TrimSuffix(strings.TrimPrefix(key, "skills/"), ".md")
		e.drop(key, skillDoc(name, "1", "A skill."))
	}
	e.drop("listings/partner/skills/listed.md", skillDoc("listed", "1", "A listed skill."))
	e.drop("subagents/agent.md", agentDoc("agent", "1"))
	c := e.catalog()
	want := map[string]catalog.Visibility{"open": catalog.Public, "described": catalog.Authenticated, "unnamed": catalog.Authenticated,
		"partner/listed": catalog.Authenticated}
	for id, vis := range want {
		if got := c.Skills[id].Visibility; got != vis {
			t.Errorf("skill %s: %s, want %s", id, got, vis)
		}
	}
	if got := c.Subagents["agent"].Visibility; got != catalog.Authenticated {
		t.Errorf("sub-agent: %s", got)
	}
	// Without it, the same bucket is public but for what the config hides.
	e.drop(skillsconfig.Key, []byte("version: 1\nskills:\n  - name: described\n    description: Described.\n"))
	if got := e.skill("unnamed").Visibility; got != catalog.Public {
		t.Errorf("without default_visibility: %s", got)
	}
}

// TestTheDeploymentsDefault: the indexer's DefaultVisibility (the
// template's parameter) hides a bucket without any config; the catalog
// records it, so an indexer configured without one (a workstation's
// re-index) keeps it; default_visibility: public in the config does not
// loosen it (the deployment's default is a floor), though an entry's own
// visibility: public does; the deployment set back to public makes the
// entries public, and a config's default_visibility: authenticated then
// tightens it.
func TestTheDeploymentsDefault(t *testing.T) {
	dir := t.TempDir()
	open := func(vis catalog.Visibility) *env {
		st, err := store.NewDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return newEnvOn(t, st, func(c *Config) { c.DefaultVisibility = vis })
	}
	deployed := open(catalog.Authenticated)
	deployed.drop("skills/a.md", skillDoc("a", "1", "A."))
	deployed.drop("subagents/b.md", agentDoc("b", "1"))
	c := deployed.catalog()
	if c.DefaultVisibility != catalog.Authenticated || c.Skills["a"].Visibility != catalog.Authenticated ||
		c.Subagents["b"].Visibility != catalog.Authenticated {
		t.Fatalf("under the deployment's default: catalog default %q, a %s, b %s", c.DefaultVisibility, c.Skills["a"].Visibility, c.Subagents["b"].Visibility)
	}
	workstation := open("")
	workstation.reindex()
	workstation.drop("skills/c.md", skillDoc("c", "1", "C."))
	if c := workstation.catalog(); c.Skills["a"].Visibility != catalog.Authenticated || c.Skills["c"].Visibility != catalog.Authenticated {
		t.Fatalf("an indexer without a default changed the deployment's: a %s, c %s", c.Skills["a"].Visibility, c.Skills["c"].Visibility)
	}
	// The deployment's default is a floor: a config may not loosen it,
	// though an entry may say public itself.
	deployed.drop(skillsconfig.Key, []byte("version: 1\ndefault_visibility: public\nsubagents:\n  - name: b\n    visibility: public\n"))
	if c := deployed.catalog(); c.Skills["a"].Visibility != catalog.Authenticated || c.Subagents["b"].Visibility != catalog.Public {
		t.Fatalf("default_visibility: public under an authenticated deployment: a %s (want authenticated), b %s (its entry says public)",
			c.Skills["a"].Visibility, c.Subagents["b"].Visibility)
	}
	deployed.drop(skillsconfig.Key, []byte("version: 1\n"))
	if got := deployed.skill("a").Visibility; got != catalog.Authenticated {
		t.Fatalf("a config without default_visibility: %s", got)
	}
	public := open(catalog.Public)
	public.reconcile("skills/a.md")
	if c := public.catalog(); c.Skills["a"].Visibility != catalog.Public || c.DefaultVisibility != catalog.Public {
		t.Fatalf("the deployment set back to public: a %s, catalog default %q", c.Skills["a"].Visibility, c.DefaultVisibility)
	}
	// A config may tighten a public deployment's default.
	public.drop(skillsconfig.Key, []byte("version: 1\ndefault_visibility: authenticated\n"))
	if got := public.skill("a").Visibility; got != catalog.Authenticated {
		t.Fatalf("default_visibility: authenticated under a public deployment: %s", got)
	}
	if _, err := New(Config{Store: public.st, DefaultVisibility: "internal"}); err == nil {
		t.Error("New accepted an unknown default visibility")
	}
}

// TestUnmatchedConfigEntriesAreReported: an entry naming no published skill
// (a misspelt name) is a warning on agent-skills.yaml in the status
// document, with the published name it likely means, and an audit event,
// once; it goes when a skill of that name is published or the entry is fixed.
func TestUnmatchedConfigEntriesAreReported(t *testing.T) {
	e := newEnv(t)
	e.drop("skills/k8s-rollback.md", skillDoc("k8s-rollback", "1", "Roll back."))
	e.drop(skillsconfig.Key, []byte("version: 1\nskills:\n  - name: k8s-rolback\n    visibility: authenticated\n"))
	if got := e.skill("k8s-rollback").Visibility; got != catalog.Public {
		t.Fatalf("visibility %s", got)
	}
	const want = `skills[0]: "k8s-rolback" names no published skill (did you mean "k8s-rollback"?)`
	warned := func() []string { return e.status().Warnings[skillsconfig.Key] }
	if w := warned(); len(w) != 1 || !strings.Contains(w[0], want) {
		t.Fatalf("status warnings of %s: %q, want %q", skillsconfig.Key, w, want)
	}
	events := func() []map[string]any {
		var out []map[string]any
		for line := range strings.SplitSeq(e.logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["event"] == obs.EventConfigUnmatched {
				out = append(out, m)
			}
		}
		return out
	}
	ev := events()
	if len(ev) != 1 || ev[0]["field"] != "skills[0]" || ev[0]["name"] != "k8s-rolback" || ev[0]["did_you_mean"] != "k8s-rollback" ||
		ev[0]["level"] != "AUDIT" {
		t.Fatalf("audit events: %v", ev)
	}
	e.drop("skills/other.md", skillDoc("other", "1", "Other."))
	e.reindex()
	if len(events()) != 1 || len(warned()) != 1 {
		t.Fatalf("a finding already recorded was audited again: %v", events())
	}
	e.drop("skills/k8s-rolback.md", skillDoc("k8s-rolback", "1", "The name as the config spells it."))
	if w := warned(); len(w) != 0 {
		t.Fatalf("warnings once the name is published: %q", w)
	}
	e.remove("skills/k8s-rolback.md")
	if w := warned(); len(w) != 1 {
		t.Fatalf("warnings once it is withdrawn again: %q", w)
	}
	e.drop(skillsconfig.Key, []byte("version: 1\nskills:\n  - name: k8s-rollback\n    visibility: authenticated\n"))
	if w := warned(); len(w) != 0 || e.skill("k8s-rollback").Visibility != catalog.Authenticated {
		t.Fatalf("the fixed config: warnings %q, visibility %s", w, e.skill("k8s-rollback").Visibility)
	}
}

// TestAConfigIsReadOnceItSettles: with a settle time, a config written
// just now is not read until it has been left alone that long, and a
// round that cannot wait publishes nothing (serve's watcher runs another);
// one left alone long enough is read at once.
func TestAConfigIsReadOnceItSettles(t *testing.T) {
	dir := t.TempDir()
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := newEnvOn(t, st, func(c *Config) { c.ConfigSettle = time.Hour })
	e.put("skills/secret.md", skillDoc("secret", "1", "A secret."))
	e.put(skillsconfig.Key, []byte("version: 1\nskills:\n  - name: secret\n    visibility: authenticated\n"))
	// An hour is longer than a round waits: it gives up at once.
	if _, err := e.ix.Reconcile(context.Background(), "skills/secret.md", skillsconfig.Key); err == nil ||
		!strings.Contains(err.Error(), "agent-skills.yaml is still being written") {
		t.Fatalf("a round over a config written just now: %v, want it to wait for the config to settle", err)
	}
	if c := e.catalog(); c.Config != nil || c.Skills["secret"] != nil {
		t.Fatalf("a round that waited for the config published: %s", dump(c))
	}
	hourAgo := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, skillsconfig.Key), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	e.reconcile("skills/secret.md", skillsconfig.Key)
	if got := e.skill("secret").Visibility; got != catalog.Authenticated {
		t.Fatalf("the settled config: %s", got)
	}
}

// TestAListingGateOverAPublicEntryIsAWarning: under a listing with
// audiences, a skill of its own that says visibility: public is published
// with the listing's audiences all the same (fail closed), and a public
// top-level skill it includes by name stays public; status says both.
func TestAListingGateOverAPublicEntryIsAWarning(t *testing.T) {
	e := newEnv(t)
	e.drop("skills/open-runbook.md", skillDoc("open-runbook", "1", "Open."))
	e.drop("listings/partner-a/skills/partner-notes.md", skillDoc("partner-notes", "1", "Notes."))
	e.drop(skillsconfig.Key, []byte(`version: 1
listings:
  partner-a:
    audiences: [partner-a]
    skills:
      - name: open-runbook
      - name: partner-notes
        visibility: public
`))
	if own := e.catalog().Skills[catalog.ID("partner-a", "partner-notes")]; own.Visibility != catalog.Authenticated || !own.Audiences.Equal(audience.NewSet("partner-a")) {
		t.Errorf("the listing's own skill is %s %v, want authenticated for partner-a (fail closed)", own.Visibility, own.Audiences)
	}
	if top := e.skill("open-runbook"); top.Visibility != catalog.Public {
		t.Errorf("the top-level skill is %s, want public (its own)", top.Visibility)
	}
	w := strings.Join(e.status().Warnings[skillsconfig.Key], "\n")
	for _, want := range []string{
		`listings.partner-a.skills[1]: visibility: public does not apply: listing partner-a has audiences (partner-a)`,
		`listings.partner-a.skills[0]: "open-runbook" is a public top-level skill: listing partner-a's audiences (partner-a) do not hide it`,
	} {
		if !strings.Contains(w, want) {
			t.Errorf("status warnings of %s:\n%s\nwant %q", skillsconfig.Key, w, want)
		}
	}
	e.drop(skillsconfig.Key, []byte(`version: 1
skills:
  - name: open-runbook
    audiences: [partner-a]
listings:
  partner-a:
    audiences: [partner-a]
    skills:
      - name: open-runbook
`))
	if w := e.status().Warnings[skillsconfig.Key]; len(w) != 0 {
		t.Errorf("warnings once the config says what it does: %q", w)
	}
}

// TestUnmatchedAllowsAndRevocationsAreReported: an allow whose digest is
// no version of its skill, and a revocation naming no skill, no such
// version, or the version with another digest, are warnings on
// agent-skills.yaml in the status document and config_unmatched audit
// events, as unmatched names are; a revocation and an allow that match
// are not, and the warnings go once they are fixed.
func TestUnmatchedAllowsAndRevocationsAreReported(t *testing.T) {
	e := newEnv(t)
	v1 := skillDoc("deploy", "1.0", "Deploys.")
	v2 := skillDoc("deploy", "1.1", "Deploys, faster.")
	e.drop("skills/deploy.md", v1)
	e.drop("skills/deploy.md", v2)
	d1, d2 := digest.Of(v1).String(), digest.Of(v2).String()
	other := digest.Of([]byte("other bytes")).String()
	revoke := func(name, version, d string) string {
		return "  - name: " + name + "\n    version: \"" + version + "\"\n    digest: " + d + "\n    reason: r\n"
	}
	e.drop(skillsconfig.Key, []byte("version: 1\nskills:\n  - name: deploy\n    allow:\n"+
		"      - digest: "+d2+"\n        rules: [persistence.shell-rc]\n        reason: matches\n"+
		"      - digest: "+other+"\n        rules: [persistence.shell-rc]\n        reason: a digest copied wrong\n"+
		"revoke:\n"+revoke("deploy", "1.0", d1)+revoke("deplyo", "1.0", d1)+revoke("deploy", "2.0", d1)+revoke("deploy", "1.1", d1)))
	if got := e.skill("deploy").Latest; got != "1.1" {
		t.Fatalf("latest %s, want 1.1 (1.0 revoked)", got)
	}
	warned := func() map[string]string {
		out := map[string]string{}
		for _, w := range e.status().Warnings[skillsconfig.Key] {
			field, _, _ := strings.Cut(w, ":")
			out[field] = w
		}
		return out
	}
	want := map[string]string{
		"skills[0].allow[1]": "skills[0].allow[1]: " + other + ` is the digest of no published version of skill "deploy" (its versions: "1.0" ` + d1 + `, "1.1" ` + d2 + "); the allow applies to nothing",
		"revoke[1]":          `revoke[1]: "deplyo" names no published skill or sub-agent (did you mean "deploy"?); the revocation takes nothing out of service`,
		"revoke[2]":          `revoke[2]: "deploy" has no published version "2.0" (its versions: `,
		"revoke[3]":          `revoke[3]: version "1.1" of "deploy" has digest ` + d2 + ", not " + d1 + " (a revocation names the exact bytes); the revocation takes nothing out of service",
	}
	got := warned()
	for field, w := range want {
		if !strings.Contains(got[field], w) {
			t.Errorf("%s: %q\nwant it to contain %q", field, got[field], w)
		}
	}
	for field := range got {
		if _, ok := want[field]; !ok {
			t.Errorf("%s reported: %s", field, got[field])
		}
	}
	var audited []string
	for line := range strings.SplitSeq(e.logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["event"] == obs.EventConfigUnmatched {
			audited = append(audited, fmt.Sprint(m["field"]))
		}
	}
	if slices.Sort(audited); strings.Join(audited, ",") != "revoke[1],revoke[2],revoke[3],skills[0].allow[1]" {
		t.Errorf("audited %v", audited)
	}
	e.drop(skillsconfig.Key, []byte("version: 1\nrevoke:\n"+revoke("deploy", "1.1", d2)))
	if got := warned(); len(got) != 0 {
		t.Errorf("warnings of the fixed config: %q", got)
	}
}
