package indexer

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// target names one catalog entry: a top-level skill, a listing-only skill
// or a sub-agent.
type target struct {
	Kind    catalog.Kind
	Listing string
	Name    string
}

func targetOf(e *catalog.Entry) target {
	return target{Kind: e.Kind, Listing: e.Listing, Name: e.Name}
}

// id is the entry's key in its collection.
func (t target) id() string {
	if t.Kind == catalog.KindSubagent {
		return t.Name
	}
	return catalog.ID(t.Listing, t.Name)
}

func (t target) String() string {
	if t.Kind == catalog.KindSubagent {
		return "sub-agent " + t.Name
	}
	if t.Listing != "" {
		return fmt.Sprintf("skill %s (listing %s)", t.Name, t.Listing)
	}
	return "skill " + t.Name
}

func (t target) collection(c *catalog.Catalog) map[string]*catalog.Entry {
	if t.Kind == catalog.KindSubagent {
		return c.Subagents
	}
	return c.Skills
}

func (t target) entry(c *catalog.Catalog) *catalog.Entry { return t.collection(c)[t.id()] }

// claim is a validated artifact that wants to be the latest version of its
// target. Its bytes (if re-hosted) are already in their blob.
type claim struct {
	target
	// source owns the name if the claim wins: the bucket key it was dropped
	// as, or catalog.ConfigSource.
	source string
	// external is the URL an external config entry is served from verbatim.
	external string
	version  catalog.Version
	// modified is when the source object was last written: among new
	// claimants of a name the oldest wins, so a re-index from scratch
	// keeps the owner incremental indexing chose.
	modified time.Time
	// field locates a config entry in agent-skills.yaml, for messages.
	field string
}

// rejectKey is the bucket key a rejection of the claim is recorded under.
func (c *claim) rejectKey() string {
	if c.source == catalog.ConfigSource && c.version.SourceKey != "" && !strings.Contains(c.version.SourceKey, "://") {
		return c.version.SourceKey // the files/ key holding the bytes
	}
	return c.source
}

// absence says that a source has no bytes any more: what it owns is withdrawn.
type absence struct {
	source string
	// config is set for a config entry whose bytes are gone (its files/
	// key was deleted); a dropped key withdraws whatever it owns.
	config *target
}

// rejection is one refused key, config or config entry.
type rejection struct {
	Key, Code, Message, Name string
	Digest                   digest.Digest
	ETag                     string
}

// configChange is a new agent-skills.yaml to put in force, or its removal.
type configChange struct {
	remove bool
	state  catalog.ConfigState
	cfg    *skillsconfig.Config
}

// plan is everything an invocation decided outside the catalog update: the
// catalog update function (apply) turns it into catalog changes against
// whatever catalog it is handed.
type plan struct {
	// basis is the digest of the config in force when the plan was
	// prepared (zero: none). Validation caps and config entries depend on
	// it, so apply refuses to run against a catalog with another config.
	basis  digest.Digest
	config *configChange
	// cfg is the config in force once the plan is applied (nil: none).
	cfg     *skillsconfig.Config
	absent  []absence
	claims  []*claim
	rejects []rejection
	// candidates holds the targets whose every possible claimant was
	// prepared, so a withdrawal of one of them is taken over in this round.
	candidates map[target]bool
	now        time.Time
	// establish writes a catalog that does not exist yet even when nothing
	// is published: a full re-index has seen the whole bucket, and readers
	// must not take "empty" from a missing catalog.
	establish bool
}

// decisions are what one run of apply decided. apply may run several times
// (lost races), so they are collected afresh on every run.
type decisions struct {
	published  []Change
	withdrawn  []Change
	unchanged  []string
	rejections []rejection
	// orphans are targets withdrawn in this run whose claimants were not
	// prepared: the next round reads them so one can take over.
	orphans []target
}

// errReprepare makes Reconcile prepare its plan again: the catalog's config
// changed since the plan was prepared against it.
var errReprepare = errors.New("indexer: the config changed while preparing; preparing again")

// The rejection codes the catalog update decides. Validation codes come
// from pkg/artifact, pkg/archive and pkg/skillmd unchanged.
const (
	// CodeNameConflict: another live source already publishes the name.
	CodeNameConflict = "name_conflict"
	// CodeVersionExists: the version label is published with other bytes.
	CodeVersionExists = "version_exists"
	// CodePathConflict: another live entry is already served at the path.
	CodePathConflict = "path_conflict"
	// CodeMissingFile: a config entry's path: names a files/ key that does not exist.
	CodeMissingFile = "missing_file"
	// CodeFetchFailed: an external URL could not be fetched (timeout, status, size).
	CodeFetchFailed = "fetch_failed"
	// CodeInvalidConfig: agent-skills.yaml was rejected whole.
	CodeInvalidConfig = skillsconfig.CodeInvalidConfig
)

// configDigest is the digest of the config in force in c (zero: none).
func configDigest(c *catalog.Catalog) digest.Digest {
	if c.Config == nil {
		return digest.Digest{}
	}
	return c.Config.Digest
}

func sameDigest(a, b digest.Digest) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Equal(b)
}

// apply is the catalog update function: it applies p to c, deciding name
// conflicts, version immutability and takeovers against c itself. It is a
// pure function of c and p (no I/O), so it can run again on a fresher
// catalog after a lost race. It returns catalog.ErrNoChange when c would be
// written back unchanged.
func apply(c *catalog.Catalog, p *plan) (*decisions, error) {
	if !sameDigest(configDigest(c), p.basis) {
		return nil, errReprepare
	}
	before, err := canonical(c)
	if err != nil {
		return nil, err
	}
	d := &decisions{}
	if ch := p.config; ch != nil {
		if ch.remove {
			c.Config = nil
		} else {
			if msg := conflicts(c, ch.cfg); msg != "" {
				// The prepared plan found no conflict against an older catalog.
				return nil, errReprepare
			}
			st := ch.state
			c.Config = &st
		}
	}
	withdrawn := map[target]bool{}
	withdraw := func(e *catalog.Entry) {
		if e.Withdrawn {
			return
		}
		e.Withdrawn, e.WithdrawnAt = true, ptr(p.now)
		t := targetOf(e)
		withdrawn[t] = true
		d.withdrawn = append(d.withdrawn, changeOf(e, e.LatestVersion()))
	}
	idx := newIndex(c, p.cfg)
	// Config-owned entries the config in force no longer defines go first:
	// deleting or editing the config withdraws its own entries.
	for _, e := range idx.bySource[catalog.ConfigSource] {
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
		for _, e := range idx.bySource[a.source] {
			withdraw(e)
		}
		idx.dropContender(a.source)
	}
	for _, cl := range orderClaims(c, p.claims) {
		d.claim(c, cl, p, idx)
	}
	d.rejections = append(d.rejections, p.rejects...)
	applySettings(c, p.cfg)
	for t := range withdrawn {
		if e := t.entry(c); e != nil && e.Withdrawn && !p.candidates[t] {
			d.orphans = append(d.orphans, t)
		}
	}
	slices.SortFunc(d.orphans, func(a, b target) int { return strings.Compare(a.String(), b.String()) })
	after, err := canonical(c)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(before, after) && (!p.establish || c.Revision > 0) {
		return d, catalog.ErrNoChange
	}
	return d, nil
}

// claim decides one claim against c.
func (d *decisions) claim(c *catalog.Catalog, cl *claim, p *plan, idx *index) {
	reject := func(code, format string, args ...any) {
		d.rejections = append(d.rejections, rejection{
			Key: cl.rejectKey(), Code: code, Name: cl.Name, Digest: cl.version.Digest,
			Message: claimant(cl) + ": " + fmt.Sprintf(format, args...),
		})
	}
	e := cl.entry(c)
	if e != nil && !e.Withdrawn && e.Source != cl.source {
		if cl.source != catalog.ConfigSource {
			idx.contend(e, cl.source)
		}
		reject(CodeNameConflict, "%s is already published from %s; it stays until that is deleted", cl.target, e.Source)
		return
	}
	if cl.Kind == catalog.KindSkill && cl.Listing != "" && refersTo(p.cfg, cl.Listing, cl.Name) {
		reject(CodeNameConflict, "listing %s already includes the top-level skill %s by name (agent-skills.yaml)", cl.Listing, cl.Name)
		return
	}
	path := servedPath(cl.target, cl.source, cl.external, cl.version.Format, p.cfg)
	if other, taken := idx.paths[path]; path != "" && taken && other != cl.target {
		if o := other.entry(c); o != nil && cl.source != catalog.ConfigSource {
			idx.contend(o, cl.source)
		}
		reject(CodePathConflict, "%s is already served at %s", other, path)
		return
	}
	if e == nil {
		e = catalog.NewEntry(cl.Kind, cl.Listing, cl.Name)
		cl.collection(c)[cl.id()] = e
	}
	if v := e.Version(cl.version.Label); v != nil {
		if !v.Digest.Equal(cl.version.Digest) {
			reject(CodeVersionExists, "version %q of %s is already published with digest %s; versions are immutable, publish a new label",
				v.Label, cl.target, v.Digest)
			return
		}
		if !e.Withdrawn && e.Source == cl.source && e.Latest == v.Label && e.ExternalURL == cl.external {
			d.unchanged = append(d.unchanged, cl.rejectKey())
			return
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
	}
	e.Withdrawn, e.WithdrawnAt = false, nil
	e.Source, e.ExternalURL = cl.source, cl.external
	idx.dropContender(cl.source)
	idx.serve(cl.target, path)
	d.published = append(d.published, changeOf(e, e.LatestVersion()))
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

// index holds apply's lookups, so that a run over a large catalog (a full
// re-index) stays linear in its size.
type index struct {
	// bySource holds the entries not withdrawn, by source.
	bySource map[string][]*catalog.Entry
	// contended holds the entries with contenders (or that got some).
	contended []*catalog.Entry
	// paths maps the served path of every live entry to it, and pathOf back.
	paths  map[string]target
	pathOf map[target]string
}

func newIndex(c *catalog.Catalog, cfg *skillsconfig.Config) *index {
	idx := &index{bySource: map[string][]*catalog.Entry{}, paths: map[string]target{}, pathOf: map[target]string{}}
	for _, e := range allEntries(c) {
		if !e.Withdrawn {
			idx.bySource[e.Source] = append(idx.bySource[e.Source], e)
		}
		if len(e.Contenders) > 0 {
			idx.contended = append(idx.contended, e)
		}
		if e.Live() {
			idx.serve(targetOf(e), entryPath(e, cfg))
		}
	}
	return idx
}

// contend records source as a contender of e.
func (idx *index) contend(e *catalog.Entry, source string) {
	if len(e.Contenders) == 0 {
		idx.contended = append(idx.contended, e)
	}
	e.Contenders = appendOnce(e.Contenders, source)
}

// dropContender removes source from every entry's contenders.
func (idx *index) dropContender(source string) {
	for _, e := range idx.contended {
		e.Contenders = slices.DeleteFunc(e.Contenders, func(k string) bool { return k == source })
	}
}

// serve records that t is served at path ("": nowhere), instead of where it was.
func (idx *index) serve(t target, path string) {
	if old, ok := idx.pathOf[t]; ok {
		delete(idx.paths, old)
		delete(idx.pathOf, t)
	}
	if path != "" {
		idx.paths[path] = t
		idx.pathOf[t] = path
	}
}

func entryPath(e *catalog.Entry, cfg *skillsconfig.Config) string {
	var f artifact.Format
	if v := e.LatestVersion(); v != nil {
		f = v.Format
	}
	return servedPath(targetOf(e), e.Source, e.ExternalURL, f, cfg)
}

// servedPath is the origin-root-absolute path an entry is served at: the
// config's url when it sets one, else the dropped key's own path (a
// listing's below its prefix), else for a config entry a path made of its
// name. Sub-agents and external entries have none.
func servedPath(t target, source, external string, f artifact.Format, cfg *skillsconfig.Config) string {
	if t.Kind == catalog.KindSubagent || external != "" {
		return ""
	}
	if ce := cfg.Touches(t.Kind, t.Listing, t.Name); ce != nil && ce.Path != "" {
		return ce.Path
	}
	if source == catalog.ConfigSource {
		return configPath(t, f)
	}
	if rest, ok := strings.CutPrefix(source, artifact.ListingPrefix(t.Listing)); ok && t.Listing != "" {
		return skillsconfig.ListingPrefix(t.Listing) + rest
	}
	return "/" + source
}

// configPath is where a config-defined skill without a url is served.
func configPath(t target, f artifact.Format) string {
	base := "/"
	if t.Listing != "" {
		base = skillsconfig.ListingPrefix(t.Listing)
	}
	return base + artifact.SkillKey("", t.Name, f)
}

// applySettings makes every entry's settings those of cfg: visibility,
// description and served path, listing membership, and the listings
// themselves (the config's, plus those live listing drops create). It is
// total and idempotent, so a re-index yields the same settings as
// incremental indexing, whatever order events came in.
func applySettings(c *catalog.Catalog, cfg *skillsconfig.Config) {
	for _, e := range allEntries(c) {
		e.Visibility, e.Description, e.Listings = catalog.Public, "", nil
		if ce := cfg.Touches(e.Kind, e.Listing, e.Name); ce != nil {
			if ce.Visibility != "" {
				e.Visibility = ce.Visibility
			}
			e.Description = ce.Description
		}
		e.Path = entryPath(e, cfg)
	}
	c.Listings = map[string]*catalog.Listing{}
	if cfg != nil {
		for _, l := range cfg.Listings {
			refs := slices.Clone(l.Refs)
			slices.Sort(refs)
			c.Listings[l.Name] = &catalog.Listing{Name: l.Name, Skills: refs}
			for _, name := range refs {
				if e := c.Skills[name]; e != nil {
					e.Listings = append(e.Listings, l.Name)
				}
			}
		}
	}
	for _, e := range c.Skills {
		if e.Listing != "" && e.Live() && c.Listings[e.Listing] == nil {
			c.Listings[e.Listing] = &catalog.Listing{Name: e.Listing}
		}
		slices.Sort(e.Listings)
	}
}

// conflicts checks a new config against the live entries of c and returns
// why it cannot be put in force ("" when it can): it would define a name a
// dropped key publishes, include by name a skill a listing already
// publishes on its own, or serve two live entries at one path.
func conflicts(c *catalog.Catalog, cfg *skillsconfig.Config) string {
	for _, ce := range definingEntries(cfg) {
		t := target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name}
		if e := t.entry(c); e != nil && !e.Withdrawn && e.Source != catalog.ConfigSource {
			return fmt.Sprintf("%s defines %s, which %s already publishes", ce.Field, t, e.Source)
		}
	}
	for _, l := range cfg.Listings {
		for _, name := range l.Refs {
			t := target{Kind: catalog.KindSkill, Listing: l.Name, Name: name}
			if e := t.entry(c); e != nil && !e.Withdrawn {
				return fmt.Sprintf("listings.%s includes the top-level skill %s by name, but %s publishes %s in that listing",
					l.Name, name, e.Source, name)
			}
		}
	}
	served := map[string]target{}
	check := func(t target, p string) string {
		if p == "" {
			return ""
		}
		if o, dup := served[p]; dup && o != t {
			return fmt.Sprintf("%s and %s would both be served at %s", o, t, p)
		}
		served[p] = t
		return ""
	}
	for _, e := range c.SortedSkills() {
		if !e.Live() || (e.Source == catalog.ConfigSource && !defines(cfg, targetOf(e))) {
			continue
		}
		if msg := check(targetOf(e), entryPath(e, cfg)); msg != "" {
			return msg
		}
	}
	for _, ce := range definingEntries(cfg) {
		t := target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name}
		if ce.ExternalURL != "" {
			continue
		}
		if msg := check(t, servedPath(t, catalog.ConfigSource, "", formatHint(ce), cfg)); msg != "" {
			return msg
		}
	}
	return ""
}

// formatHint is the format a config entry's bytes are expected in, from its
// type and its path's extension; the bytes themselves decide in the end.
func formatHint(ce *skillsconfig.Entry) artifact.Format {
	if ce.Type != artifact.TypeArchive {
		return artifact.FormatMarkdown
	}
	if f, _ := artifact.FormatOf(ce.FilePath); f == artifact.FormatTarGz {
		return f
	}
	return artifact.FormatZip
}

// definingEntries returns the entries of cfg that bring bytes of their own.
func definingEntries(cfg *skillsconfig.Config) []*skillsconfig.Entry {
	var out []*skillsconfig.Entry
	for _, e := range allConfigEntries(cfg) {
		if e.Defines() {
			out = append(out, e)
		}
	}
	return out
}

// allConfigEntries returns every entry of cfg (not listing references).
func allConfigEntries(cfg *skillsconfig.Config) []*skillsconfig.Entry {
	if cfg == nil {
		return nil
	}
	var out []*skillsconfig.Entry
	for i := range cfg.Skills {
		out = append(out, &cfg.Skills[i])
	}
	for i := range cfg.Subagents {
		out = append(out, &cfg.Subagents[i])
	}
	for i := range cfg.Listings {
		for j := range cfg.Listings[i].Entries {
			out = append(out, &cfg.Listings[i].Entries[j])
		}
	}
	return out
}

// defines reports whether cfg defines the bytes of t itself.
func defines(cfg *skillsconfig.Config, t target) bool {
	ce := cfg.Touches(t.Kind, t.Listing, t.Name)
	return ce != nil && ce.Defines()
}

// refersTo reports whether cfg includes the top-level skill name in listing by name.
func refersTo(cfg *skillsconfig.Config, listing, name string) bool {
	if cfg == nil {
		return false
	}
	for _, l := range cfg.Listings {
		if l.Name == listing && slices.Contains(l.Refs, name) {
			return true
		}
	}
	return false
}

// allEntries returns every skill and sub-agent, in a stable order.
func allEntries(c *catalog.Catalog) []*catalog.Entry {
	return append(c.SortedSkills(), c.SortedSubagents()...)
}

func changeOf(e *catalog.Entry, v *catalog.Version) Change {
	ch := Change{Kind: e.Kind, Listing: e.Listing, Name: e.Name, Source: e.Source}
	if v != nil {
		ch.Version, ch.Digest = v.Label, v.Digest
	}
	return ch
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func ptr[T any](v T) *T { return &v }

// canonical encodes everything of c that apply may change, to tell a real
// change from a no-op.
func canonical(c *catalog.Catalog) ([]byte, error) {
	rev, at := c.Revision, c.UpdatedAt
	c.Revision, c.UpdatedAt = 0, time.Time{}
	b, err := catalog.Encode(c, 0)
	c.Revision, c.UpdatedAt = rev, at
	if err != nil {
		return nil, fmt.Errorf("encode catalog: %w", err)
	}
	return b, nil
}
