package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func init() {
	register(&command{
		name:    "withdraw",
		summary: "withdraw a published skill or sub-agent: delete the key it is published from, and report what the catalog then holds",
		args:    "(--bucket NAME [--region R] [--profile P] [--wait D] | --dir DIR [--signing-key FILE]) [--listing L] [--subagent] [--json] [--log-level L] NAME",
		about: `Looks NAME up in the target's catalog (a listing's own skill with --listing, a sub-agent with --subagent),
deletes the key it is published from (skills/NAME.md, skills/NAME.zip, …; the other files of a skills/NAME/
folder are left, and ignored), and, as publish does, waits for the indexer (--dir: indexes at once, signing with
--signing-key, which a signed directory needs before anything is deleted) and reports
what the catalog then holds:
  withdrawn <kind> <id> <key>      withdrawn from every surface (its versions stay in the catalog, served nowhere)
  replaced <kind> <id> <key>       another key that claimed the name publishes it now: withdraw again
  deleted <kind> <id> <key>        deleted, and not indexed within --wait (or --wait 0: not waited for)
  removed <kind> <id> <key> <state> NAME was not published, but this key claimed it: deleted, one line a key, state
                                   held (waiting for a valid agent-skills.yaml, which would publish it), rejected or
                                   unindexed; it is never published
An entry defined in agent-skills.yaml has no key of its own: remove its entry there instead. With --json, one
JSON document: {"result", "kind", "name", "listing", "key", "source", "message", "removed": [{"key", "state", "code"}]}.

exit status: 0 withdrawn or removed (or deleted with --wait 0), 1 not published (and no key claims NAME), defined in agent-skills.yaml, replaced,
or failed, 2 on usage errors (a signed --dir without --signing-key), 4 deleted but not indexed within --wait`,
		run: runWithdraw,
	})
}

// withdrawal is the outcome of a withdraw; it is also its JSON shape.
type withdrawal struct {
	Result  string `json:"result"` // withdrawn, replaced or deleted
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Listing string `json:"listing,omitempty"`
	// Key is the key deleted; Source the key that publishes the name now
	// (replaced).
	Key     string `json:"key"`
	Source  string `json:"source,omitempty"`
	Message string `json:"message,omitempty"`
	// Removed are the keys deleted when the name was not published: held,
	// rejected or not yet indexed uploads that claimed it (removed).
	Removed []removedKey `json:"removed,omitempty"`
}

// resultRemoved is withdraw's result when the name was not published but
// keys that claimed it were there, and were deleted.
const resultRemoved = "removed"

// removedKey is one key withdraw deleted although nothing was published
// from it, and what the catalog said of it: held (waiting for a valid
// config), rejected (with the code), or unindexed.
type removedKey struct {
	Key   string `json:"key"`
	State string `json:"state"`
	Code  string `json:"code,omitempty"`
}

// removeUnpublished deletes the keys in the target that claim name (of
// kind, in listing) when the catalog publishes none of them: an upload
// held until a valid config is in force, a rejected one, one not indexed
// yet. Without this, withdraw said "not published" and a held upload went
// live once the config was fixed. With --dir each deletion is indexed at
// once; a bucket's indexer learns of it on its event, and a key deleted
// is never published whenever that is. ok is false (with the exit status)
// when withdraw must stop.
func removeUnpublished(ctx context.Context, st store.Store, ix *indexer.Indexer, tg *target, c *catalog.Catalog, kind catalog.Kind,
	listing, name string, stderr io.Writer) (removed []removedKey, code int, ok bool) {
	akind := artifact.KindSkill
	if kind == catalog.KindSubagent {
		akind = artifact.KindSubagent
	}
	infos, err := st.List(ctx, artifact.NamePrefix(akind, listing, name))
	if err != nil {
		printf(stderr, "skilldrop withdraw: list %s: %v\n", tg.String(), err)
		return nil, exitFailure, false
	}
	status, err := loadStatus(ctx, st)
	if err != nil {
		printf(stderr, "skilldrop withdraw: %v\n", err)
		return nil, exitFailure, false
	}
	for _, info := range infos {
		k, err := artifact.ParseKey(info.Key)
		if err != nil || k.Kind != akind || k.Name != name || k.Listing != listing {
			continue
		}
		r := removedKey{Key: info.Key, State: "unindexed"}
		switch rej := lastRejection(status, info.Key); {
		case c.Sources[info.Key].Held:
			r.State = indexer.FateHeld
		case rej != nil:
			r.State, r.Code = indexer.FateRejected, rej.Code
		}
		if err := st.Delete(ctx, info.Key); err != nil && !errors.Is(err, store.ErrNotFound) {
			printf(stderr, "skilldrop withdraw: delete %s from %s: %v\n", info.Key, tg.String(), err)
			return removed, exitFailure, false
		}
		removed = append(removed, r)
		if tg.dir != "" {
			if _, err := ix.Reconcile(ctx, info.Key); err != nil {
				printf(stderr, "skilldrop withdraw: deleted %s; then index it: %v\n", info.Key, err)
				return removed, exitFailure, false
			}
		}
	}
	return removed, exitOK, true
}

func runWithdraw(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["withdraw"].flagSet(stderr)
	var tg target
	tg.flags(fs)
	listing := fs.String("listing", "", "the skill is a listing's own (listings/L/skills/…)")
	subagent := fs.Bool("subagent", false, "NAME is a sub-agent")
	asJSON := fs.Bool("json", false, "print one JSON document instead of a line")
	waitFlagged := waitFlag(fs, "withdraw it")
	signingKey := signingKeyFlag(fs)
	level := logLevelFlag(fs, "WARN")
	operands, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(operands) != 1 {
		printf(stderr, "skilldrop withdraw: want one NAME, got %d\n", len(operands))
		fs.Usage()
		return exitUsage
	}
	name := operands[0]
	lv, err := level()
	wait, werr := waitFlagged()
	switch {
	case err != nil || werr != nil:
		printf(stderr, "skilldrop withdraw: %v\n", errors.Join(err, werr))
		return exitUsage
	case *subagent && *listing != "":
		printf(stderr, "skilldrop withdraw: sub-agents are not published in listings\n")
		return exitUsage
	}
	if err := tg.check(); err != nil {
		printf(stderr, "%s: %v\n", fs.Name(), err)
		return exitUsage
	}
	signer, code, ok := dirSigner(fs.Name(), &tg, signingKey, stderr)
	if !ok {
		return code
	}
	lvl, _ := obs.ParseLevel(lv)
	logger := obs.NewLogger(stderr, lvl)
	tg.log = logger
	st, closeStore, code, ok := tg.openFor(ctx, fs.Name(), stderr)
	if !ok {
		return code
	}
	defer closeStore()
	ix, err := indexer.New(indexer.Config{Store: st, KeepOrigins: true, Logger: logger, Auditor: obs.NewAuditor(logger), ConfigSettle: tg.configSettle(), Signer: signer})
	if err != nil {
		printf(stderr, "skilldrop withdraw: %v\n", err)
		return exitFailure
	}
	if code, ok := refuseUnsigned(ctx, "skilldrop withdraw", &tg, ix, st, "deleted", stderr); !ok {
		return code
	}

	c, _, err := catalog.Load(ctx, st)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		printf(stderr, "skilldrop withdraw: %v\n", err)
		return exitFailure
	}
	if c == nil {
		c = catalog.New()
	}
	kind := catalog.KindSkill
	if *subagent {
		kind = catalog.KindSubagent
	}
	w := withdrawal{Kind: string(kind), Name: name, Listing: *listing}
	out := &resultWriter{w: stdout}
	report := func(status int) int {
		if *asJSON {
			out.json(w)
			return finish(out, stderr, status)
		}
		id := catalog.ID(w.Listing, w.Name)
		for _, r := range w.Removed {
			out.printf("%s %s %s %s %s\n", w.Result, w.Kind, printable(id), printable(r.Key), r.State)
		}
		if w.Result != "" && w.Result != resultRemoved {
			key := w.Key
			if w.Result == "replaced" {
				key = w.Source
			}
			out.printf("%s %s %s %s\n", w.Result, w.Kind, printable(id), printable(key))
		}
		if w.Message != "" {
			printf(stderr, "skilldrop withdraw: %s\n", oneLine(w.Message))
		}
		return finish(out, stderr, status)
	}
	coll := c.Skills
	id := catalog.ID(*listing, name)
	if *subagent {
		coll, id = c.Subagents, name
	}
	e := coll[id]
	if e == nil || !e.LiveAsRead() {
		removed, code, ok := removeUnpublished(ctx, st, ix, &tg, c, kind, *listing, name, stderr)
		if !ok {
			return code
		}
		if len(removed) > 0 {
			w.Result, w.Key, w.Removed = resultRemoved, removed[0].Key, removed
			w.Message = fmt.Sprintf("%s %s was not published; deleted what claimed the name, so that it is never published "+
				"(a held upload would be once a valid %s is in force)", kind, printable(id), skillsconfig.Key)
			return report(exitOK)
		}
		w.Message = fmt.Sprintf("%s %s is not published in %s", kind, printable(id), tg.String())
		if s := suggestLive(coll, name); s != "" {
			w.Message += fmt.Sprintf(" (did you mean %s?)", printable(s))
		}
		return report(exitFailure)
	}
	if e.Source == catalog.ConfigSource {
		w.Message = fmt.Sprintf("%s %s is defined in %s, not dropped: remove its entry there to withdraw it", kind, printable(id), skillsconfig.Key)
		return report(exitFailure)
	}
	w.Key = e.Source
	if err := st.Delete(ctx, w.Key); err != nil && !errors.Is(err, store.ErrNotFound) {
		printf(stderr, "skilldrop withdraw: delete %s from %s: %v\n", w.Key, tg.String(), err)
		return exitFailure
	}
	if d := path.Dir(w.Key); path.Base(w.Key) == "SKILL.md" || path.Base(w.Key) == "agent.md" {
		printf(stderr, "note: only %s was deleted; the rest of %s/ is left as it was (the bucket ignores it)\n", printable(w.Key), printable(d))
	}
	switch {
	case tg.dir != "":
		if _, err := ix.Reconcile(ctx, w.Key); err != nil {
			printf(stderr, "skilldrop withdraw: deleted %s; then index it: %v\n", w.Key, err)
			return exitFailure
		}
	case wait == 0:
		w.Result, w.Message = "deleted", "not waited for (--wait 0): the indexer withdraws it on the deletion's event; `skilldrop status` shows it"
		return report(exitOK)
	}
	var now *catalog.Entry
	if err := awaitCatalog(ctx, st, wait, func(c *catalog.Catalog, _ *catalog.Status) bool {
		m := c.Skills
		if *subagent {
			m = c.Subagents
		}
		now = m[id]
		return now == nil || now.Withdrawn || now.Source != w.Key
	}); err != nil {
		printf(stderr, "skilldrop withdraw: deleted %s; then %v\n", w.Key, err)
		return exitFailure
	}
	switch {
	case now == nil || now.Withdrawn:
		w.Result = "withdrawn"
		return report(exitOK)
	case now.Source != w.Key:
		w.Result, w.Source = "replaced", now.Source
		w.Message = fmt.Sprintf("%s claimed the name too and publishes it now; withdraw again to withdraw that", printable(now.Source))
		return report(exitFailure)
	}
	w.Result = "deleted"
	w.Message = fmt.Sprintf("not withdrawn within %s: is the indexer deployed, and the bucket's notifications reaching its queue? "+
		"`skilldrop status` shows what became of it", wait)
	return report(exitPending)
}

// suggestLive is the live entry's name nearest to name, when near.
func suggestLive(coll map[string]*catalog.Entry, name string) string {
	names := map[string]bool{}
	for _, e := range coll {
		if e.LiveAsRead() {
			names[e.Name] = true
		}
	}
	return skillsconfig.ClosestName(name, names)
}
