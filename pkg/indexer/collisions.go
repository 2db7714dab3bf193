package indexer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// The collision rules, in one place. One name has one source: a live entry
// keeps its name against any other claimant (name_conflict) until it is
// withdrawn, and a listing that includes a top-level skill by name cannot
// also publish a skill of that name of its own. One served path has one
// entry (path_conflict). apply decides claims by them, conflicts decides a
// new config by them against the catalog, and mayCollide applies them to
// a listing of drops for olderDrops.

// holder returns the live entry that keeps t's name from source, or nil.
func holder(c *catalog.Catalog, t target, source string) *catalog.Entry {
	// An entry with no version holds nothing: one a revoked upload left
	// behind (before that was fixed) must not lock its name out for good.
	if e := t.entry(c); e != nil && !e.Withdrawn && e.Source != source && (e.Count > 0 || e.Latest != "") {
		return e
	}
	return nil
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

// occupancy holds who is served where, and who owns what, so that apply
// over a large catalog (a full re-index) stays linear in its size.
type occupancy struct {
	// bySource holds the entries not withdrawn, by source.
	bySource map[string][]*catalog.Entry
	// contended holds the entries with contenders (or that got some).
	contended []*catalog.Entry
	// paths maps the served path of every live entry to it, and pathOf back.
	paths  map[string]target
	pathOf map[target]string
}

// newOccupancy is who holds what in c under cfg. With settled, c's entries
// hold the paths cfg gives them (applySettings ran with it at the last
// write: the config did not change since) and are taken as they are.
func newOccupancy(c *catalog.Catalog, cfg *skillsconfig.Config, settled bool) *occupancy {
	n := len(c.Skills) + len(c.Subagents)
	o := &occupancy{bySource: make(map[string][]*catalog.Entry, n), paths: make(map[string]target, n), pathOf: make(map[target]string, n)}
	for _, m := range []map[string]*catalog.Entry{c.Skills, c.Subagents} {
		for _, e := range m {
			if !e.Withdrawn {
				o.bySource[e.Source] = append(o.bySource[e.Source], e)
			}
			if len(e.Contenders) > 0 {
				o.contended = append(o.contended, e)
			}
			if e.LiveAsRead() {
				path := e.Path
				if !settled {
					path = entryPath(e, cfg)
				}
				o.serve(targetOf(e), path)
			}
		}
	}
	for _, es := range o.bySource {
		slices.SortFunc(es, func(a, b *catalog.Entry) int { return strings.Compare(a.ID(), b.ID()) })
	}
	return o
}

// pathHolder returns the entry other than t served at path.
func (o *occupancy) pathHolder(path string, t target) (target, bool) {
	other, taken := o.paths[path]
	return other, path != "" && taken && other != t
}

// contend records source as a contender of e; it reports a change.
func (o *occupancy) contend(e *catalog.Entry, source string) bool {
	if slices.Contains(e.Contenders, source) {
		return false
	}
	if len(e.Contenders) == 0 {
		o.contended = append(o.contended, e)
	}
	e.Contenders = append(e.Contenders, source)
	return true
}

// dropContender removes source from every entry's contenders; it reports a change.
func (o *occupancy) dropContender(source string) bool {
	changed := false
	for _, e := range o.contended {
		if n := len(e.Contenders); n > 0 {
			e.Contenders = slices.DeleteFunc(e.Contenders, func(k string) bool { return k == source })
			changed = changed || len(e.Contenders) != n
		}
	}
	return changed
}

// serve records that t is served at path ("": nowhere), instead of where it was.
func (o *occupancy) serve(t target, path string) {
	if old, ok := o.pathOf[t]; ok {
		delete(o.paths, old)
		delete(o.pathOf, t)
	}
	if path != "" {
		o.paths[path] = t
		o.pathOf[t] = path
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
		return routes.ListingPrefix(t.Listing) + rest
	}
	return "/" + source
}

// configPath is where a config-defined skill without a url is served.
func configPath(t target, f artifact.Format) string {
	base := "/"
	if t.Listing != "" {
		base = routes.ListingPrefix(t.Listing)
	}
	return base + artifact.SkillKey("", t.Name, f)
}

// taken is what a config claims: the names it defines or includes by name
// in a listing, and the paths its entries take.
type taken struct {
	defines map[target]*skillsconfig.Entry
	moves   map[target]bool   // entries of dropped names the config serves at a url of its own
	refs    map[target]string // listing reference → the listing's field
	paths   map[string]target
}

// claimsOf returns what cfg takes.
func claimsOf(cfg *skillsconfig.Config) taken {
	tk := taken{defines: map[target]*skillsconfig.Entry{}, moves: map[target]bool{}, refs: map[target]string{}, paths: map[string]target{}}
	for _, ce := range allConfigEntries(cfg) {
		t := target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name}
		if ce.Defines() {
			tk.defines[t] = ce
			if ce.ExternalURL == "" {
				tk.paths[servedPath(t, catalog.ConfigSource, "", formatHint(ce), cfg)] = t
			}
		} else if ce.Path != "" {
			tk.moves[t], tk.paths[ce.Path] = true, t
		}
	}
	if cfg != nil {
		for _, l := range cfg.Listings {
			for _, name := range l.Refs {
				tk.refs[target{Kind: catalog.KindSkill, Listing: l.Name, Name: name}] = "listings." + l.Name
			}
		}
	}
	return tk
}

// conflicts checks a new config against the live entries of c and returns
// why it cannot be put in force ("" when it can): it would define a name a
// dropped key publishes, include by name a skill a listing already
// publishes on its own, or serve two live entries at one path.
func conflicts(c *catalog.Catalog, cfg *skillsconfig.Config) string {
	tk := claimsOf(cfg)
	for _, ce := range definingEntries(cfg) {
		t := target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name}
		if e := holder(c, t, catalog.ConfigSource); e != nil {
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
		if !e.Live() || (e.Source == catalog.ConfigSource && tk.defines[targetOf(e)] == nil) {
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
