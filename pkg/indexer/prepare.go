package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// sourcePrefixes are where operators drop what the indexer reads: the keys
// a full re-index lists (never blobs/ or catalog/, which can be large and
// are the indexer's own).
var sourcePrefixes = []string{"skills/", "listings/", "subagents/", "files/", skillsconfig.Key}

// observation is the state a key was read in.
type observation struct {
	present bool
	etag    string
}

// prepared is a plan and what preparing it saw.
type prepared struct {
	plan *plan
	// seen holds every key read, to check afterwards that none changed
	// while the round ran.
	seen map[string]observation
	// warnings replace the status warnings of their keys (nil clears them).
	warnings map[string][]string
	ignored  []string
	config   string // Result.Config
	errs     []error

	mu sync.Mutex // guards the above while reads run in parallel
}

func (pr *prepared) observe(key string, o observation) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.seen[key] = o
}

func (pr *prepared) warn(key string, w []string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.warnings[key] = w
}

func (pr *prepared) fail(err error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.errs = append(pr.errs, err)
}

func (pr *prepared) ignore(key string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.ignored = append(pr.ignored, key)
}

// unholdable reports whether err is the store refusing key itself (a ".."
// or dot element, a backslash in a local directory). No object can exist
// under such a key, so the key is ignored with a log line: an event naming
// it must never fail the invocation, which Lambda would retry forever.
func (ix *Indexer) unholdable(ctx context.Context, key string, err error, pr *prepared) bool {
	if !errors.Is(err, store.ErrInvalidKey) {
		return false
	}
	ix.log.WarnContext(ctx, "ignoring a key the store cannot hold", "key", key, "error", err.Error())
	pr.ignore(key)
	return true
}

func (pr *prepared) reject(r rejection) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.plan.rejects = append(pr.plan.rejects, r)
}

func (pr *prepared) addClaim(c *claim) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.plan.claims = append(pr.plan.claims, c)
}

func (pr *prepared) addAbsence(a absence) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.plan.absent = append(pr.plan.absent, a)
}

// keyQueue is a set of keys in first-seen order, drained in batches.
type keyQueue struct {
	seen map[string]bool
	keys []string
}

func (q *keyQueue) add(keys ...string) {
	if q.seen == nil {
		q.seen = map[string]bool{}
	}
	for _, k := range keys {
		if !q.seen[k] {
			q.seen[k] = true
			q.keys = append(q.keys, k)
		}
	}
}

func (q *keyQueue) drain() []string {
	out := q.keys
	q.keys = nil
	return out
}

// prepare reads the keys (all source keys when full) and the config, and
// decides everything that needs I/O: validation, blob writes, external
// fetches. It fails only when the config cannot be read or the bucket
// cannot be listed; a key that cannot be read is left out of the plan and
// reported in errs, so the other keys still publish.
func (ix *Indexer) prepare(ctx context.Context, keys []string, orphans []target, full bool) (*prepared, error) {
	snap, _, err := catalog.Load(ctx, ix.store)
	switch {
	case errors.Is(err, store.ErrNotFound):
		snap = catalog.New()
	case err != nil:
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	inForce, err := configInForce(snap)
	if err != nil {
		return nil, err
	}
	return ix.prepareOn(ctx, snap, inForce, keys, orphans, full, false)
}

// prepareOn prepares against snap, whose config in force is inForce. With
// hold it leaves agent-skills.yaml unread and inForce in force, as if the
// config had not changed.
func (ix *Indexer) prepareOn(ctx context.Context, snap *catalog.Catalog, inForce *skillsconfig.Config,
	keys []string, orphans []target, full, hold bool) (*prepared, error) {
	pr := &prepared{
		plan: &plan{
			basis:      configDigest(snap),
			cfg:        inForce,
			candidates: map[target]bool{},
			now:        ix.now().UTC(),
		},
		seen:     map[string]observation{},
		warnings: map[string][]string{},
	}
	var q keyQueue
	q.add(keys...)
	cfgTargets := map[target]bool{}
	if !hold && (full || slices.Contains(keys, skillsconfig.Key)) {
		touched, err := ix.prepareConfig(ctx, snap, inForce, full, pr)
		if err != nil {
			return nil, err
		}
		for _, t := range touched {
			if err := ix.addCandidates(ctx, t, &q, cfgTargets, pr); err != nil {
				return nil, err
			}
		}
	}
	cfg := pr.plan.cfg
	if full {
		pr.plan.establish = true
		infos, err := ix.listSources(ctx)
		if err != nil {
			return nil, err
		}
		for _, info := range infos {
			q.add(info.Key)
		}
		for _, e := range allEntries(snap) {
			if e.Source != catalog.ConfigSource {
				q.add(e.Source)
			}
			q.add(e.Contenders...)
		}
		for _, ce := range definingEntries(cfg) {
			cfgTargets[target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name}] = true
		}
	}
	for _, t := range orphans {
		if err := ix.addCandidates(ctx, t, &q, cfgTargets, pr); err != nil {
			return nil, err
		}
	}
	owned := map[string][]*catalog.Entry{} // the snapshot's entries by source
	for _, e := range allEntries(snap) {
		owned[e.Source] = append(owned[e.Source], e)
	}
	done := map[string]bool{skillsconfig.Key: true}
	cfgDone := map[target]bool{}
	for {
		// Config entries first: one whose bytes are gone brings the other
		// claimants of its name into this round, as a deleted key does.
		var targets []target
		for _, t := range sortedTargets(cfgTargets) {
			if !cfgDone[t] {
				cfgDone[t] = true
				targets = append(targets, t)
			}
		}
		ix.parallel(len(targets), func(i int) { ix.prepareConfigEntry(ctx, targets[i], snap, pr) })
		batch := q.drain()
		if len(batch) == 0 && len(targets) == 0 {
			break
		}
		var drops []artifact.Key
		var heads []string
		for _, key := range batch {
			if done[key] {
				continue
			}
			done[key] = true
			if hidden(key) {
				ix.log.DebugContext(ctx, "ignoring a hidden key", "key", key)
				pr.ignored = append(pr.ignored, key)
				continue
			}
			k, err := artifact.ParseKey(key)
			if err != nil {
				heads = append(heads, key) // an invalid key is reported only while it exists
				continue
			}
			switch k.Kind {
			case artifact.KindSkill, artifact.KindSubagent:
				drops = append(drops, k)
			case artifact.KindFile:
				named := false
				for _, ce := range allConfigEntries(cfg) {
					if ce.FilePath == key {
						cfgTargets[target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name}] = true
						named = true
					}
				}
				if !named {
					pr.ignored = append(pr.ignored, key)
				}
			case artifact.KindBeside:
				heads = append(heads, key)
			case artifact.KindConfig:
			case artifact.KindIgnored:
				if code, _, warning := contractMiss(key); code != "" || warning != "" {
					heads = append(heads, key)
					continue
				}
				pr.ignored = append(pr.ignored, key)
			default:
				pr.ignored = append(pr.ignored, key)
			}
		}
		ix.parallel(len(drops), func(i int) { ix.prepareDrop(ctx, drops[i], pr) })
		ix.parallel(len(heads), func(i int) { ix.prepareHead(ctx, heads[i], pr) })
		// A withdrawn owner's other claimants take over in the same
		// round: read them too.
		for _, a := range pr.plan.absent {
			if a.config != nil {
				if err := ix.addCandidates(ctx, *a.config, &q, cfgTargets, pr); err != nil {
					return nil, err
				}
				continue
			}
			// Withdrawn ones too: a takeover a failed read prevented is
			// retried with the invocation.
			for _, e := range owned[a.source] {
				if err := ix.addCandidates(ctx, targetOf(e), &q, cfgTargets, pr); err != nil {
					return nil, err
				}
			}
		}
	}
	return pr, nil
}

// configInForce parses the config the catalog records as in force.
func configInForce(c *catalog.Catalog) (*skillsconfig.Config, error) {
	if c.Config == nil {
		return nil, nil
	}
	cfg, err := skillsconfig.Parse([]byte(c.Config.YAML))
	if err != nil {
		// It was valid when it was put in force: only a stricter parser
		// gets here, and guessing would withdraw the config's entries.
		return nil, fmt.Errorf("the config in force (%s) no longer parses: %w", c.Config.Digest, err)
	}
	return cfg, nil
}

// prepareConfig reads agent-skills.yaml and decides whether it goes into
// force, is removed, or is rejected. It returns the targets a change
// touches: every entry and listing reference of the old and the new config.
// In a full re-index (full) the drops written before the config count as
// published, as they were when incremental indexing saw it (olderDrops).
func (ix *Indexer) prepareConfig(ctx context.Context, snap *catalog.Catalog, inForce *skillsconfig.Config, full bool, pr *prepared) ([]target, error) {
	data, info, err := store.ReadAll(ctx, ix.store, skillsconfig.Key, skillsconfig.MaxBytes)
	switch {
	case errors.Is(err, store.ErrNotFound):
		pr.seen[skillsconfig.Key] = observation{}
		if snap.Config == nil {
			return nil, nil
		}
		pr.plan.config = &configChange{remove: true}
		pr.plan.cfg = nil
		pr.config = ConfigRemoved
		return configTargets(inForce), nil
	case errors.Is(err, store.ErrTooLarge):
		pr.seen[skillsconfig.Key] = observation{present: true, etag: info.ETag}
		pr.config = ConfigRejected
		pr.plan.rejects = append(pr.plan.rejects, rejection{
			Key: skillsconfig.Key, Code: CodeInvalidConfig, ETag: info.ETag,
			Message: fmt.Sprintf("the config is %d bytes, at most %d allowed; the previous config stays in force", info.Size, skillsconfig.MaxBytes),
		})
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", skillsconfig.Key, err)
	}
	pr.seen[skillsconfig.Key] = observation{present: true, etag: info.ETag}
	d := digest.Of(data)
	if snap.Config != nil && d.Equal(snap.Config.Digest) {
		// A redelivery, or the retry of an invocation that put this config
		// in force but failed to read something it touches: re-evaluate
		// all of that (no-ops when it all landed).
		return configTargets(inForce), nil
	}
	cfg, err := skillsconfig.Parse(data)
	msg := ""
	if err != nil {
		msg = configMessage(err)
	} else if c := conflicts(snap, cfg); c != "" {
		msg = c
	} else if full {
		if msg, err = ix.olderDrops(ctx, snap, inForce, cfg, info.LastModified); err != nil {
			return nil, err
		}
	}
	if msg != "" {
		pr.config = ConfigRejected
		pr.plan.rejects = append(pr.plan.rejects, rejection{
			Key: skillsconfig.Key, Code: CodeInvalidConfig, Digest: d,
			Message: msg + "; the previous config stays in force",
		})
		return nil, nil
	}
	pr.plan.config = &configChange{
		cfg:   cfg,
		state: catalog.ConfigState{Digest: d, ETag: info.ETag, AppliedAt: pr.plan.now, YAML: string(data)},
	}
	pr.plan.cfg = cfg
	pr.config = ConfigApplied
	return append(configTargets(inForce), configTargets(cfg)...), nil
}

// olderDrops decides a new config in a full re-index as incremental
// indexing in write order decided it: the drops written before it (or in
// the same instant: ties go to the drop, whose event a same-second config
// found indexed) were published when it arrived, so it must not collide
// with them, exactly as conflicts checks it against the live entries. It
// returns why the config cannot be put in force ("" when it can).
//
// Without this, a re-index from an empty catalog (a rebuilt or restored
// bucket) would put the config in force and reject the older drop, the
// opposite of what incremental indexing did. As between two drops
// (orderClaims), the older object wins.
func (ix *Indexer) olderDrops(ctx context.Context, snap *catalog.Catalog, inForce, cfg *skillsconfig.Config, written time.Time) (string, error) {
	infos, err := ix.listSources(ctx)
	if err != nil {
		return "", err
	}
	if !mayCollide(cfg, infos, written) {
		return "", nil
	}
	// The bucket as if the config had not changed: each drop validated with
	// the caps of the config in force before this one, as its event was.
	before, err := ix.prepareOn(ctx, snap, inForce, nil, nil, true, true)
	if err != nil {
		return "", err
	}
	if err := errors.Join(before.errs...); err != nil {
		// Deciding on part of the bucket could put in force a config that
		// incremental indexing rejected; the invocation is retried instead.
		return "", fmt.Errorf("read the drops written before %s: %w", skillsconfig.Key, err)
	}
	p := *before.plan
	p.claims = slices.DeleteFunc(slices.Clone(p.claims), func(cl *claim) bool {
		return cl.source != catalog.ConfigSource && cl.modified.After(written)
	})
	then, err := cloneCatalog(snap)
	if err != nil {
		return "", err
	}
	if _, err := apply(then, &p); err != nil && !errors.Is(err, catalog.ErrNoChange) {
		return "", fmt.Errorf("publish the drops written before %s: %w", skillsconfig.Key, err)
	}
	return conflicts(then, cfg), nil
}

// mayCollide reports whether a drop written no later than written could
// collide with cfg: a key claiming a name cfg defines or includes by name,
// a name whose url cfg sets, or a key served at a path an entry of cfg
// takes. It reads nothing, and over-approximates (the drop may be invalid
// or lose its name to another), so that olderDrops reads the bucket a
// second time only when the answer may depend on it.
func mayCollide(cfg *skillsconfig.Config, infos []store.Info, written time.Time) bool {
	names := map[target]bool{}
	paths := map[string]bool{}
	for _, ce := range allConfigEntries(cfg) {
		t := target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name}
		switch {
		case ce.Path != "":
			names[t], paths[ce.Path] = true, true
		case ce.Defines():
			names[t] = true
			if p := servedPath(t, catalog.ConfigSource, ce.ExternalURL, formatHint(ce), cfg); p != "" {
				paths[p] = true
			}
		}
	}
	for _, l := range cfg.Listings {
		for _, name := range l.Refs {
			names[target{Kind: catalog.KindSkill, Listing: l.Name, Name: name}] = true
		}
	}
	for _, info := range infos {
		// To the second: a listing may time objects more finely than the
		// read that timed the config (S3 answers a GET with an HTTP date).
		if info.LastModified.Truncate(time.Second).After(written) {
			continue
		}
		k, err := artifact.ParseKey(info.Key)
		if err != nil || (k.Kind != artifact.KindSkill && k.Kind != artifact.KindSubagent) {
			continue
		}
		t := targetOfKey(k)
		if names[t] || paths[servedPath(t, info.Key, "", "", cfg)] {
			return true
		}
	}
	return false
}

// cloneCatalog returns a deep copy of c.
func cloneCatalog(c *catalog.Catalog) (*catalog.Catalog, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode catalog: %w", err)
	}
	cp, err := catalog.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("copy catalog: %w", err)
	}
	return cp, nil
}

func configMessage(err error) string {
	var e *skillsconfig.Error
	if errors.As(err, &e) {
		if e.Field == "" {
			return e.Msg
		}
		return e.Field + ": " + e.Msg
	}
	return err.Error()
}

// configTargets returns every target cfg names: its entries, and for each
// listing reference the listing-only skill of that name it would exclude.
func configTargets(cfg *skillsconfig.Config) []target {
	var out []target
	for _, ce := range allConfigEntries(cfg) {
		out = append(out, target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name})
	}
	if cfg != nil {
		for _, l := range cfg.Listings {
			for _, name := range l.Refs {
				out = append(out, target{Kind: catalog.KindSkill, Listing: l.Name, Name: name})
			}
		}
	}
	return out
}

// addCandidates queues every key that could claim t (found by listing the
// name's prefix) and t's config entry, and marks t as fully prepared.
func (ix *Indexer) addCandidates(ctx context.Context, t target, q *keyQueue, cfgTargets map[target]bool, pr *prepared) error {
	if pr.plan.candidates[t] {
		return nil
	}
	pr.plan.candidates[t] = true
	prefix := "skills/" + t.Name
	switch {
	case t.Kind == catalog.KindSubagent:
		prefix = "subagents/" + t.Name
	case t.Listing != "":
		prefix = "listings/" + t.Listing + "/skills/" + t.Name
	}
	infos, err := ix.store.List(ctx, prefix)
	if err != nil {
		return fmt.Errorf("list claimants of %s: %w", t, err)
	}
	for _, info := range infos {
		if k, err := artifact.ParseKey(info.Key); err == nil && targetOfKey(k) == t &&
			(k.Kind == artifact.KindSkill || k.Kind == artifact.KindSubagent) {
			q.add(info.Key)
		}
	}
	if defines(pr.plan.cfg, t) {
		cfgTargets[t] = true
	}
	return nil
}

// prepareDrop reads a dropped skill or sub-agent and validates it with the
// caps the config sets for its name; a valid one is copied to its blob and
// becomes a claim.
func (ix *Indexer) prepareDrop(ctx context.Context, k artifact.Key, pr *prepared) {
	t := targetOfKey(k)
	lim := ix.limitsFor(pr.plan.cfg.Touches(t.Kind, t.Listing, t.Name))
	data, info, err := store.ReadAll(ctx, ix.store, k.Key, lim.MaxArtifactBytes)
	switch {
	case ix.unholdable(ctx, k.Key, err, pr):
		return
	case errors.Is(err, store.ErrNotFound):
		pr.observe(k.Key, observation{})
		pr.addAbsence(absence{source: k.Key})
		pr.warn(k.Key, nil)
		return
	case errors.Is(err, store.ErrTooLarge):
		pr.observe(k.Key, observation{present: true, etag: info.ETag})
		pr.reject(rejection{Key: k.Key, Code: archive.CodeTooLarge, Name: t.Name, ETag: info.ETag,
			Message: fmt.Sprintf("%s is larger than max_artifact_bytes (%d)", k.Key, lim.MaxArtifactBytes)})
		return
	case err != nil:
		pr.fail(fmt.Errorf("read %s: %w", k.Key, err))
		return
	}
	pr.observe(k.Key, observation{present: true, etag: info.ETag})
	v, err := validateDrop(k, data, lim)
	if err != nil {
		code, msg := rejectionOf(err, k.Key)
		pr.reject(rejection{Key: k.Key, Code: code, Message: msg, Name: t.Name, Digest: digest.Of(data)})
		return
	}
	if err := ix.putBlob(ctx, v.Digest, data, v.Format); err != nil {
		pr.fail(err)
		return
	}
	if err := ix.putFiles(ctx, v.files); err != nil {
		pr.fail(err)
		return
	}
	v.SourceKey = k.Key
	pr.warn(k.Key, v.warnings)
	pr.addClaim(&claim{target: t, source: k.Key, version: v.Version, modified: info.LastModified})
}

// prepareHead handles keys that are only reported while they exist: files
// beside a SKILL.md or in no skill folder (a warning), and keys the contract
// cannot accept (a rejection: an invalid implied name, or none of its forms).
func (ix *Indexer) prepareHead(ctx context.Context, key string, pr *prepared) {
	info, err := ix.store.Head(ctx, key)
	switch {
	case ix.unholdable(ctx, key, err, pr):
		return
	case errors.Is(err, store.ErrNotFound):
		pr.observe(key, observation{})
		pr.warn(key, nil)
		return
	case err != nil:
		pr.fail(fmt.Errorf("head %s: %w", key, err))
		return
	}
	pr.observe(key, observation{present: true, etag: info.ETag})
	k, err := artifact.ParseKey(key)
	if err != nil {
		code, msg := rejectionOf(err, key)
		pr.reject(rejection{Key: key, Code: code, Message: msg, ETag: info.ETag})
		return
	}
	if k.Kind == artifact.KindBeside {
		pr.warn(key, []string{besideWarning(k)})
		return
	}
	code, msg, warning := contractMiss(key)
	if code != "" {
		pr.reject(rejection{Key: key, Code: code, Message: msg, ETag: info.ETag})
		return
	}
	pr.warn(key, []string{warning})
}

// prepareConfigEntry prepares the bytes of a config entry that defines
// its own: an inline body, a files/ key, or an external URL.
func (ix *Indexer) prepareConfigEntry(ctx context.Context, t target, snap *catalog.Catalog, pr *prepared) {
	ce := pr.plan.cfg.Touches(t.Kind, t.Listing, t.Name)
	if ce == nil || !ce.Defines() {
		return
	}
	lim := ix.limitsFor(ce)
	cl := &claim{target: t, source: catalog.ConfigSource, field: ce.Field}
	rejectAs := func(key, code, msg string, d digest.Digest) {
		pr.reject(rejection{Key: key, Code: code, Name: t.Name, Digest: d,
			Message: fmt.Sprintf("agent-skills.yaml %s (%s): %s", ce.Field, ce.Name, msg)})
	}
	var data []byte
	switch {
	case ce.Body != "":
		data = []byte(ce.Body)
	case ce.FilePath != "":
		b, info, err := store.ReadAll(ctx, ix.store, ce.FilePath, lim.MaxArtifactBytes)
		switch {
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalidKey):
			// A path the store cannot hold (a dot element in a local
			// directory) can hold no bytes either.
			pr.observe(ce.FilePath, observation{})
			pr.addAbsence(absence{source: catalog.ConfigSource, config: &t})
			rejectAs(ce.FilePath, CodeMissingFile, ce.FilePath+" does not exist", digest.Digest{})
			return
		case errors.Is(err, store.ErrTooLarge):
			pr.observe(ce.FilePath, observation{present: true, etag: info.ETag})
			pr.reject(rejection{Key: ce.FilePath, Code: archive.CodeTooLarge, Name: t.Name, ETag: info.ETag,
				Message: fmt.Sprintf("agent-skills.yaml %s (%s): %s is larger than max_artifact_bytes (%d)", ce.Field, ce.Name, ce.FilePath, lim.MaxArtifactBytes)})
			return
		case err != nil:
			pr.fail(fmt.Errorf("read %s: %w", ce.FilePath, err))
			return
		}
		pr.observe(ce.FilePath, observation{present: true, etag: info.ETag})
		data = b
	case !ce.Digest.IsZero():
		// A pinned external entry is never fetched: the operator vouches
		// for the digest, and the description comes from the config.
		cl.external = ce.ExternalURL
		cl.version = catalog.Version{
			Label: "sha256-" + ce.Digest.Short(), Digest: ce.Digest, Type: ce.Type,
			Format: externalFormat(ce, nil), SourceKey: ce.ExternalURL, Description: ce.Description,
		}
		pr.warn(ce.ExternalURL, excludeExternal(&cl.version, nil))
		pr.addClaim(cl)
		return
	default:
		cl.external = ce.ExternalURL
		if e := t.entry(snap); e != nil {
			for _, v := range e.Versions {
				if v.SourceKey == ce.ExternalURL {
					// Fetched once already: an external URL is read when
					// the entry or its URL is new, not on every re-index.
					cl.version = v
					pr.addClaim(cl)
					return
				}
			}
		}
		b, err := ix.fetch(ctx, ce.ExternalURL, lim.MaxArtifactBytes)
		if err != nil {
			rejectAs(skillsconfig.Key, CodeFetchFailed, err.Error(), digest.Digest{})
			return
		}
		data = b
	}
	v, err := validateEntry(ce, data, lim)
	if err != nil {
		key := skillsconfig.Key
		if ce.FilePath != "" {
			key = ce.FilePath
		}
		code, msg := rejectionOf(err, key)
		if ce.ExternalURL != "" {
			code, msg = rejectionOf(err, ce.ExternalURL)
		}
		rejectAs(key, code, msg, digest.Of(data))
		return
	}
	switch {
	case ce.ExternalURL != "":
		v.SourceKey = ce.ExternalURL // not re-hosted: no blob
		pr.warn(ce.ExternalURL, excludeExternal(&v.Version, v.warnings))
	case ce.FilePath != "":
		v.SourceKey = ce.FilePath
		pr.warn(ce.FilePath, v.warnings)
	default:
		v.SourceKey = skillsconfig.Key
		pr.warn(skillsconfig.Key+" "+ce.Field, v.warnings)
	}
	if ce.ExternalURL == "" {
		if err := ix.putBlob(ctx, v.Digest, data, v.Format); err != nil {
			pr.fail(err)
			return
		}
		if err := ix.putFiles(ctx, v.files); err != nil {
			pr.fail(err)
			return
		}
	}
	cl.version = v.Version
	pr.addClaim(cl)
}

// externalFormat is the format of an external entry: the bytes' own when
// fetched, else the URL's extension (archives) or markdown.
func externalFormat(ce *skillsconfig.Entry, data []byte) artifact.Format {
	if ce.Type != artifact.TypeArchive {
		return artifact.FormatMarkdown
	}
	switch archive.Sniff(data) {
	case archive.FormatTarGz:
		return artifact.FormatTarGz
	case archive.FormatZip:
		return artifact.FormatZip
	}
	u := ce.ExternalURL
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if strings.HasSuffix(u, ".tar.gz") || strings.HasSuffix(u, ".tgz") {
		return artifact.FormatTarGz
	}
	return artifact.FormatZip
}

// maxFetchRedirects bounds the redirects one fetch follows.
const maxFetchRedirects = 5

// fetchRedirects is the redirect policy of external fetches. The config
// requires https, so a redirect to anything else is refused before it is
// requested: following a 302 to http:// would publish bytes anyone on the
// path could have changed. https redirects are followed (release downloads
// and raw links commonly redirect to a CDN), a few at most.
func fetchRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "https" {
		return fmt.Errorf("redirected to %s: only https is fetched", req.URL.Redacted())
	}
	if len(via) > maxFetchRedirects {
		return fmt.Errorf("more than %d redirects", maxFetchRedirects)
	}
	return nil
}

// fetch reads an external URL once: https only, redirects as
// fetchRedirects allows, bounded in time and size, and the final answer
// must be 200.
func (ix *Indexer) fetch(ctx context.Context, url string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, ix.fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if req.URL.Scheme != "https" {
		return nil, fmt.Errorf("fetch %s: only https is fetched", url)
	}
	resp, err := ix.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: status %d, want 200", url, resp.StatusCode)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("fetch %s: %d bytes, more than max_artifact_bytes (%d)", url, resp.ContentLength, limit)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("fetch %s: more than max_artifact_bytes (%d)", url, limit)
	}
	return b, nil
}

// putBlob writes validated bytes to their content-addressed key, create-only:
// a blob that already exists holds these very bytes. It asks first, so a
// redelivery or re-index does not upload (up to 4 MiB) again.
func (ix *Indexer) putBlob(ctx context.Context, d digest.Digest, data []byte, f artifact.Format) error {
	if _, err := ix.store.Head(ctx, catalog.BlobKey(d)); err == nil {
		return nil
	}
	_, err := ix.store.Put(ctx, catalog.BlobKey(d), data, store.PutOptions{IfNoneMatch: "*", ContentType: f.ContentType()})
	if err != nil && !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("write blob %s: %w", d, err)
	}
	return nil
}

// limitsFor returns the service caps with a config entry's own on top:
// max_artifact_bytes may only lower the service cap, the others replace it.
func (ix *Indexer) limitsFor(ce *skillsconfig.Entry) archive.Limits {
	lim := ix.limits
	if ce == nil {
		return lim
	}
	c := ce.Caps
	if c.MaxArtifactBytes > 0 && c.MaxArtifactBytes < lim.MaxArtifactBytes {
		lim.MaxArtifactBytes = c.MaxArtifactBytes
	}
	if c.MaxEntries > 0 {
		lim.MaxEntries = c.MaxEntries
	}
	if c.MaxExpandedBytes > 0 {
		lim.MaxExpandedBytes = c.MaxExpandedBytes
	}
	if c.MaxDecompressionRatio > 0 {
		lim.MaxRatio = c.MaxDecompressionRatio
	}
	if c.MaxClockSkewSecs > 0 {
		lim.MaxClockSkewSecs = c.MaxClockSkewSecs
	}
	return lim
}

// listSources lists every key operators drop (sourcePrefixes).
func (ix *Indexer) listSources(ctx context.Context) ([]store.Info, error) {
	var out []store.Info
	for _, p := range sourcePrefixes {
		infos, err := ix.store.List(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", p, err)
		}
		for _, info := range infos {
			if p == skillsconfig.Key && info.Key != p {
				continue // agent-skills.yaml.bak and the like
			}
			out = append(out, info)
		}
	}
	return out, nil
}

// parallel runs fn(0..n-1) on at most ix.workers goroutines.
func (ix *Indexer) parallel(n int, fn func(i int)) {
	if n == 0 {
		return
	}
	sem := make(chan struct{}, ix.workers)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

func sortedTargets(set map[target]bool) []target {
	out := make([]target, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b target) int { return strings.Compare(string(a.Kind)+"/"+a.id(), string(b.Kind)+"/"+b.id()) })
	return out
}
