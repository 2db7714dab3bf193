package indexer

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// apply is the catalog update function: it applies p to c, deciding name
// conflicts, version immutability and takeovers against c itself. It is a
// function of c and p alone (no I/O: histories it needs are in c), so it
// can run again on a fresher catalog after a lost race. It returns
// catalog.ErrNoChange when c would be written back unchanged.
func apply(c *catalog.Catalog, p *plan) (*decisions, error) {
	if !basisOf(c).equal(p.basis) {
		return nil, errReprepare
	}
	d := &decisions{}
	// The config in force before this round, for rejudge to tell what a
	// new one changes (rejudgeAll: it no longer parses, judge everything).
	var before *skillsconfig.Config
	rejudgeAll := false
	newConfig := p.config != nil && !p.config.refresh
	if newConfig {
		var err error
		if before, err = configInForce(c); err != nil {
			rejudgeAll = true
		}
	}
	if c.Revision == 0 && c.ScanEngine == "" {
		// A new catalog: every version it will hold is scanned now.
		c.ScanEngine = scan.Engine()
	}
	if ch := p.config; ch != nil {
		switch {
		case ch.refresh:
			if c.Config.ETag != ch.state.ETag {
				c.Config.ETag, d.changed = ch.state.ETag, true
			}
		default:
			if msg := conflicts(c, ch.cfg); msg != "" {
				// The prepared plan found no conflict against an older catalog.
				return nil, errReprepare
			}
			st := ch.state
			st.AppliedAt = p.now
			c.Config, d.changed = &st, true
		}
	}
	if !reflect.DeepEqual(c.Bucket, p.bucket) {
		c.Bucket, d.changed = p.bucket, true
	}
	withdrawn := map[target]bool{}
	withdraw := func(e *catalog.Entry) {
		if e.Withdrawn {
			return
		}
		e.Withdrawn, e.WithdrawnAt, d.changed = true, ptr(p.now), true
		withdrawn[targetOf(e)] = true
		d.withdrawn = append(d.withdrawn, changeOf(e, e.LatestVersion()))
	}
	// The entries hold the settings of the config in force unless this
	// round changes it or the deployment's default, or re-indexes everything.
	settled := p.config == nil && !p.establish
	if p.defaultVis != "" && p.defaultVis.OrPublic() != c.DefaultVisibility.OrPublic() {
		c.DefaultVisibility, d.changed, settled = p.defaultVis, true, false
	}
	occ := newOccupancy(c, p.cfg, settled)
	// Config-owned entries the config in force no longer defines go first:
	// a new config withdraws the entries of the old one it drops.
	for _, e := range occ.bySource[catalog.ConfigSource] {
		if !defines(p.cfg, targetOf(e)) {
			withdraw(e)
		}
	}
	// Withdrawals before claims, so a key replaced by another in one batch
	// (skills/x.md deleted, skills/x.zip added) is a takeover, not a conflict.
	for _, a := range p.absent {
		if a.config != nil {
			if e := a.config.entry(c); e != nil && e.Source == catalog.ConfigSource {
				withdraw(e)
			}
			continue
		}
		// A key an event named, found gone, is written even where it
		// withdraws nothing: a round that read it before it was deleted
		// then loses its race and reads it again (prepared.recheckable).
		// A full re-index finds the sources of withdrawn entries gone
		// every time; the deletions' own events are written.
		if !p.establish {
			d.changed = true
		}
		for _, e := range occ.bySource[a.source] {
			withdraw(e)
		}
		if occ.dropContender(a.source) {
			d.changed = true
		}
	}
	if err := d.applyRevocations(c, p.cfg, p); err != nil {
		return nil, err
	}
	for _, cl := range orderClaims(c, p.claims) {
		if err := d.claim(c, cl, p, occ); err != nil {
			return nil, err
		}
	}
	d.rejections = append(d.rejections, p.rejects...)
	if err := d.withdrawBlocked(c, occ, p); err != nil {
		return nil, err
	}
	// A new config judges the versions already scanned again, older ones
	// included.
	if newConfig {
		if err := d.rejudge(c, before, p.cfg, rejudgeAll, p); err != nil {
			return nil, err
		}
	}
	if applySettings(c, p.cfg, settled) {
		d.changed = true
	}
	if holds, etags := recordSources(c, p); holds || (etags && (p.establish || p.writeSources)) {
		d.changed = true
	}
	for t := range withdrawn {
		if e := t.entry(c); e != nil && e.Withdrawn && !p.candidates[t] {
			d.orphans = append(d.orphans, t)
		}
	}
	slices.SortFunc(d.orphans, func(a, b target) int { return strings.Compare(a.String(), b.String()) })
	d.published = lastOfEach(d.published)
	if !d.changed && (!p.establish || c.Revision > 0) {
		return d, catalog.ErrNoChange
	}
	return d, nil
}

// claim decides one claim against c.
func (d *decisions) claim(c *catalog.Catalog, cl *claim, p *plan, occ *occupancy) error {
	reject := func(code, format string, args ...any) {
		d.rejections = append(d.rejections, rejection{
			Key: cl.rejectKey(), Code: code, Name: cl.Name, Digest: cl.version.Digest,
			Message: claimant(cl) + ": " + fmt.Sprintf(format, args...),
		})
	}
	contend := func(e *catalog.Entry) {
		if cl.source != catalog.ConfigSource && occ.contend(e, cl.source) {
			d.changed = true
		}
	}
	if e := holder(c, cl.target, cl.source); e != nil {
		contend(e)
		reject(CodeNameConflict, "%s is already published from %s; it stays until that is deleted", cl.target, e.Source)
		return nil
	}
	if cl.Kind == catalog.KindSkill && cl.Listing != "" && refersTo(p.cfg, cl.Listing, cl.Name) {
		reject(CodeNameConflict, "listing %s already includes the top-level skill %s by name (agent-skills.yaml)", cl.Listing, cl.Name)
		return nil
	}
	path := servedPath(cl.target, cl.source, cl.external, cl.version.Format, p.cfg)
	if other, ok := occ.pathHolder(path, cl.target); ok {
		if o := other.entry(c); o != nil {
			contend(o)
		}
		reject(CodePathConflict, "%s is already served at %s", other, path)
		return nil
	}
	// Before an entry is made for it: a revoked upload of a name not yet
	// published must leave no entry behind, which would hold the name.
	if r := p.cfg.Revokes(cl.Name, cl.version.Label, cl.version.Digest); r != nil {
		reject(CodeRevoked, "version %q (%s) is revoked in agent-skills.yaml (%s): %s", cl.version.Label, cl.version.Digest, r.Field, r.Reason)
		return nil
	}
	e := cl.entry(c)
	if e == nil {
		e = catalog.NewEntry(cl.Kind, cl.Listing, cl.Name)
		cl.collection(c)[cl.id()] = e
	}
	if err := e.LoadHistory(); err != nil {
		return err
	}
	if v := e.Version(cl.version.Label); v != nil {
		back := false // a version the scan had withdrawn, back in service
		if !v.Digest.Equal(cl.version.Digest) {
			reject(CodeVersionExists, "version %q of %s is already published with digest %s; versions are immutable, publish a new label",
				v.Label, cl.target, v.Digest)
			return nil
		}
		judged := cl.version.Scan
		if v.Scan != nil && judged != nil && scan.CompareEngines(judged.Engine, v.Scan.Engine) < 0 {
			// A newer rule pack scanned these bytes: its findings, judged
			// under the policy and allows in force, stand.
			pol := p.cfg.Policy()
			res := judgeRecorded(v, pol, p.cfg.Touches(e.Kind, e.Listing, e.Name).Allows(v.Digest))
			if res.Verdict == scan.Block {
				d.rejections = append(d.rejections, rejection{Key: cl.rejectKey(), Code: CodeScanBlocked, Name: cl.Name,
					Digest: v.Digest, blocking: res.Blocking(pol), scan: &res, Message: res.BlockedMessage(pol, v.Digest.String())})
				if !res.Equal(v.Scan) {
					v.Scan, d.changed = &res, true
				}
				if v.Gone == nil {
					d.scanWithdraw(c, e, v, pol, p.now)
				}
				return nil
			}
			judged = &res
		}
		if !v.Scan.Equal(judged) && judged != nil {
			// Judged again (a new policy, an allow, a rule pack): a claim
			// is never blocked, so bytes the scan withdrew are back.
			v.Scan = judged
			if v.Gone != nil && v.Gone.Code == catalog.GoneScanBlocked {
				code := v.Gone.Code
				if c.SetGone(e, v, nil) {
					back = true
					d.restored = append(d.restored, restoredChange{Change: changeOf(e, e.Version(cl.version.Label)), code: code})
				}
				v = e.Version(cl.version.Label)
			}
			d.changed = true
		}
		if !e.Withdrawn && e.Source == cl.source && e.Latest == v.Label && e.ExternalURL == cl.external {
			if back {
				// Back in service as it was: a publication (its allows
				// used are audited), not an unchanged key.
				d.published = append(d.published, changeOf(e, v))
				return nil
			}
			d.unchanged = append(d.unchanged, cl.rejectKey())
			return nil
		}
		// The same bytes again after a withdrawal or another version: the
		// bucket's current bytes are what is served, so this label is latest
		// again. Publishing it again is a publish: it moves to the end of the
		// history with this publish time, so that "newest first by publish
		// time" still starts with the latest (a rollback reads as one).
		if i := slices.IndexFunc(e.Versions, func(x catalog.Version) bool { return x.Label == v.Label }); i != len(e.Versions)-1 {
			again := *v
			again.PublishedAt = p.now
			e.Versions = append(slices.Delete(e.Versions, i, i+1), again)
		}
		e.Latest = cl.version.Label
	} else {
		v := cl.version
		v.PublishedAt = p.now
		e.Versions = append(e.Versions, v)
		e.Latest = v.Label
		d.grew = append(d.grew, cl)
		lowerScanEngine(c, v.Scan)
	}
	e.SetVersions(e.Versions)
	e.Withdrawn, e.WithdrawnAt = false, nil
	e.Source, e.ExternalURL = cl.source, cl.external
	occ.dropContender(cl.source)
	occ.serve(cl.target, path)
	d.changed = true
	d.published = append(d.published, changeOf(e, e.LatestVersion()))
	return nil
}

func claimant(cl *claim) string {
	if cl.source == catalog.ConfigSource {
		return fmt.Sprintf("agent-skills.yaml %s (%s)", cl.field, cl.Name)
	}
	return cl.source
}

// orderClaims orders the claims of one batch: the current owner of a name
// first (a redelivery must not lose to a newcomer), then config entries (a
// config accepted in this batch was checked against the live entries),
// then recorded contenders in the order they claimed, then the others by
// the time their object was written and by key.
func orderClaims(c *catalog.Catalog, claims []*claim) []*claim {
	rank := func(cl *claim) (int, int) {
		e := cl.entry(c)
		switch {
		case e != nil && !e.Withdrawn && e.Source == cl.source:
			return 0, 0
		case cl.source == catalog.ConfigSource:
			return 1, 0
		case e != nil && slices.Contains(e.Contenders, cl.source):
			return 2, slices.Index(e.Contenders, cl.source)
		}
		return 3, 0
	}
	out := slices.Clone(claims)
	slices.SortStableFunc(out, func(a, b *claim) int {
		ra, ia := rank(a)
		rb, ib := rank(b)
		if ra != rb {
			return ra - rb
		}
		if ia != ib {
			return ia - ib
		}
		if c := a.modified.Compare(b.modified); c != 0 {
			return c
		}
		if c := strings.Compare(a.source, b.source); c != 0 {
			return c
		}
		return strings.Compare(a.id(), b.id())
	})
	return out
}

// applySettings makes every entry's settings those of cfg: visibility
// (the entry's, else the default in force, skillsconfig.DefaultIn: the
// config's default_visibility or the deployment's default the catalog
// records, whichever is stricter, else public) and audiences (a
// listing's own skills take their listing's unless they name their own;
// audiences make an entry authenticated), description and served path,
// listing membership, and the listings
// themselves (the config's, plus those live listing drops create). It is
// total and idempotent, so a re-index yields the same settings as
// incremental indexing, whatever order events came in. With settled (the
// config in force is the one the entries were last set by), an entry this
// write does not change keeps its settings unexamined. It reports whether
// anything changed.
func applySettings(c *catalog.Catalog, cfg *skillsconfig.Config, settled bool) bool {
	listings := map[string]*catalog.Listing{}
	member := map[string][]string{} // top-level skill → the listings including it
	if cfg != nil {
		for _, l := range cfg.Listings {
			refs := slices.Clone(l.Refs)
			slices.Sort(refs)
			listings[l.Name] = &catalog.Listing{Name: l.Name, Skills: refs, Audiences: l.Audiences}
			for _, name := range refs {
				member[name] = append(member[name], l.Name)
			}
		}
	}
	changed := false
	for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
		for _, e := range m {
			if e.Kind == catalog.KindSkill && e.Listing != "" && e.Live() && listings[e.Listing] == nil {
				listings[e.Listing] = &catalog.Listing{Name: e.Listing}
			}
			if settled && !e.Changed() {
				continue // its settings are those the config in force gave it
			}
			vis, desc := cfg.Visibility(e.Kind, e.Listing, e.Name, c.DefaultVisibility), ""
			if ce := cfg.Touches(e.Kind, e.Listing, e.Name); ce != nil {
				desc = ce.Description
			}
			aud := cfg.EffectiveAudiences(e.Kind, e.Listing, e.Name)
			var in []string
			if e.Kind == catalog.KindSkill && e.Listing == "" {
				in = member[e.Name]
				slices.Sort(in)
			}
			path := entryPath(e, cfg)
			if e.Visibility != vis || !e.Audiences.Equal(aud) || e.Description != desc || e.Path != path || !slices.Equal(e.Listings, in) {
				e.Visibility, e.Audiences, e.Description, e.Path, e.Listings = vis, slices.Clone(aud), desc, path, slices.Clone(in)
				changed = true
			}
		}
	}
	if !maps.EqualFunc(c.Listings, listings, func(a, b *catalog.Listing) bool { return reflect.DeepEqual(a, b) }) {
		c.Listings, changed = listings, true
	}
	return changed
}

// recordSources records what the round read as the catalog's sources:
// each key present with its ETag (held when its publication waits), an
// absent one dropped. It reports whether a hold began or ended, the one
// change of sources worth a catalog write of its own in an incremental
// round, and whether any key's state changed: a new ETag alone (identical
// bytes uploaded again, a rejected upload) rides along with the next write,
// and until then a reconcile reads that key again; a full re-index writes
// it (apply), so the pass after it (serve's watcher, the schedule) reads
// nothing it has judged already.
func recordSources(c *catalog.Catalog, p *plan) (holds, etags bool) {
	held := map[string]bool{}
	for _, k := range p.held {
		held[k] = true
	}
	for key, obs := range p.seen {
		if key == skillsconfig.Key {
			continue // the config's state is the catalog's Config and Bucket
		}
		old, had := c.Sources[key]
		switch {
		case !obs.present:
			// A tombstone, also for a key never recorded (uploaded and
			// deleted before any round published it): a round that read
			// it before the deletion finds it here after losing its race.
			if !had || old.Present() {
				c.Sources[key] = catalog.Source{Gone: p.now.Unix()}
			}
			holds, etags = holds || old.Held, etags || had && old.Present()
		default:
			now := catalog.Source{ETag: obs.etag, Held: held[key]}
			c.Sources[key] = now
			holds = holds || now.Held != old.Held
			etags = etags || !had || !old.Present() || now.ETag != old.ETag
		}
	}
	for key, src := range c.Sources {
		if !src.Present() && p.now.Sub(time.Unix(src.Gone, 0)) > catalog.GoneFor {
			delete(c.Sources, key)
		}
	}
	return holds, etags
}

// allEntries returns every skill and sub-agent, in a stable order.
func allEntries(c *catalog.Catalog) []*catalog.Entry {
	return append(c.SortedSkills(), c.SortedSubagents()...)
}

// lastOfEach keeps the last change of each version (a version a lifted
// revocation restores and its key's claim makes latest is one
// publication), in order.
func lastOfEach(chs []Change) []Change {
	type version struct {
		kind                   catalog.Kind
		listing, name, version string
	}
	last := map[version]int{}
	for i, ch := range chs {
		last[version{ch.Kind, ch.Listing, ch.Name, ch.Version}] = i
	}
	if len(last) == len(chs) {
		return chs
	}
	out := make([]Change, 0, len(last))
	for i, ch := range chs {
		if last[version{ch.Kind, ch.Listing, ch.Name, ch.Version}] == i {
			out = append(out, ch)
		}
	}
	return out
}

// lowerScanEngine keeps c.ScanEngine the oldest engine any version was
// scanned by: a version an older build publishes (a downgrade, or a
// Lambda not yet upgraded) is rescanned once a newer build runs.
func lowerScanEngine(c *catalog.Catalog, s *scan.Result) {
	if s != nil && c.ScanEngine != "" && scan.CompareEngines(s.Engine, c.ScanEngine) < 0 {
		c.ScanEngine = s.Engine
	}
}

func changeOf(e *catalog.Entry, v *catalog.Version) Change {
	ch := Change{Kind: e.Kind, Listing: e.Listing, Name: e.Name, Source: e.Source}
	if v != nil {
		ch.Version, ch.Digest, ch.Scan = v.Label, v.Digest, v.Scan
	}
	return ch
}
