package main

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func init() {
	register(&command{
		name:    "status",
		summary: "print the published skills and sub-agents with their latest versions, and the recent rejections",
		args:    "(--bucket NAME [--region R] [--profile P] | --dir DIR) [--all] [--versions] [--rejections N] [--json]",
		about: `Reads catalog/catalog.json and catalog/status.json; writes nothing. Each rejection is marked with what
became of it since: open (still the last word on its key), fixed (a later version was published from the key,
a revoked or scan_blocked version of its bytes is back in service, or a later agent-skills.yaml put in force), deleted (the key is gone) or superseded (a later rejection of the key).
Keys and messages are printed with every character that could act on a terminal escaped; --json keeps the exact
values (such characters as \uXXXX escapes). The JSON shape is in the README.

Each entry shows when its latest version was published (--versions: every version, newest first). A public
entry whose bytes an authenticated entry holds too (a hidden skill moved into a listing or renamed: visibility
follows the name, not the bytes) is flagged "same bytes as hidden …" ("… withdrawn hidden …" once that entry
is withdrawn: the public one serves what was hidden); entries of agent-skills.yaml that name
nothing published (a misspelt name, whose settings apply to nothing) are listed under the config.

exit status: 0 (also when nothing was indexed yet), 1 when the catalog cannot be read, 2 on usage errors`,
		run: runStatus,
	})
}

// The states of a rejection in status.
const (
	stateOpen       = "open"
	stateFixed      = "fixed"
	stateDeleted    = "deleted"
	stateSuperseded = "superseded"
)

// statusDoc is the JSON shape of `status --json` (README: "status --json").
type statusDoc struct {
	Target     string            `json:"target"`
	Catalog    *catalogSummary   `json:"catalog"` // null: nothing was indexed yet
	Skills     []entrySummary    `json:"skills"`
	Subagents  []entrySummary    `json:"subagents"`
	Rejections []rejectionStatus `json:"rejections"`
	Warnings   []keyWarning      `json:"warnings"`
	Jobs       []catalog.Job     `json:"jobs"`
	// Verify is the last `reindex --verify` (null: none yet).
	Verify *catalog.Verify `json:"verify"`
	// Gone are the versions taken out of service (revoked, or withdrawn by
	// the content scan), oldest first.
	Gone []catalog.GoneVersion `json:"gone"`
}

type catalogSummary struct {
	Revision  int64     `json:"revision"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Size is the catalog object's size, Limit the most its readers accept.
	Size   int64          `json:"size"`
	Limit  int64          `json:"limit"`
	Config *configSummary `json:"config"` // null: no agent-skills.yaml in force
	// BucketConfig is set while the bucket's agent-skills.yaml is not the
	// one in force (deleted, unreadable or invalid): Held are the keys whose
	// publication waits for a valid one.
	BucketConfig *catalog.BucketConfig `json:"bucketConfig"`
	Held         []string              `json:"held"`
	// Signing is the key the catalog is signed with (null: unsigned).
	Signing *signingSummary `json:"signing"`
	// DefaultVisibility is what an entry that sets no visibility gets.
	DefaultVisibility defaultSummary `json:"defaultVisibility"`
}

// defaultSummary is the default visibility in force and where it comes
// from (skillsconfig.DefaultIn): "deployment", "config" or "built-in";
// Warning says that the config asks for a looser default, which does not apply.
type defaultSummary struct {
	Visibility string `json:"visibility"`
	From       string `json:"from"`
	Warning    string `json:"warning,omitempty"`
}

// defaultOf is c's default visibility in force: the deployment's default
// it records, and its config in force's default_visibility.
func defaultOf(c *catalog.Catalog) defaultSummary {
	var cfg *skillsconfig.Config
	if c.Config != nil {
		cfg, _ = skillsconfig.ParseInForce([]byte(c.Config.YAML)) // the indexer parsed it to put it in force
	}
	vis, from, ignored := cfg.DefaultIn(c.DefaultVisibility)
	d := defaultSummary{Visibility: string(vis), From: from}
	if ignored {
		d.Warning = "agent-skills.yaml says default_visibility: public, which does not apply: the deployment's default " +
			"(DefaultVisibility) is authenticated, a floor a config may tighten but not loosen; an entry that should be public says " +
			"visibility: public itself"
	}
	return d
}

// signingSummary is the current signing key: its fingerprint, its PEM (""
// when the stored PEM does not match its pin, which Problem then says),
// the keys that signed before, and the origins with a signed AI Catalog.
type signingSummary struct {
	KeyID     string          `json:"keyId"`
	PublicKey string          `json:"publicKey"`
	Since     time.Time       `json:"since"`
	Problem   string          `json:"problem,omitempty"`
	Previous  []string        `json:"previous,omitempty"`
	Catalogs  []signedCatalog `json:"catalogs"`
}

type signedCatalog struct {
	Origin string `json:"origin"`
	// Revision is the public revision it names (what verify reports), not
	// the catalog revision, which counts hidden writes too.
	Revision int64 `json:"revision"`
}

type configSummary struct {
	Digest    digest.Digest `json:"digest"`
	AppliedAt time.Time     `json:"appliedAt"`
}

type entrySummary struct {
	ID      string `json:"id"` // the name, or <listing>/<name> for a listing's own skill
	Name    string `json:"name"`
	Listing string `json:"listing,omitempty"`
	Latest  string `json:"latest"`
	// Digest is the latest version's.
	Digest digest.Digest `json:"digest,omitzero"`
	// PublishedAt is when the latest version was published.
	PublishedAt time.Time `json:"publishedAt,omitzero"`
	Type        string    `json:"type"`
	Visibility  string    `json:"visibility"`
	Audiences   []string  `json:"audiences,omitempty"`
	Versions    int       `json:"versions"`
	Source      string    `json:"source"`
	Withdrawn   bool      `json:"withdrawn"`
	ExternalURL string    `json:"externalUrl,omitempty"`
	Listings    []string  `json:"listings,omitempty"`
	Contenders  []string  `json:"contenders,omitempty"`
	// Scan is the latest version's content scan (absent: never scanned).
	Scan *scan.Result `json:"scan,omitempty"`
	// Served is false for an entry none of whose versions is in service.
	Served bool `json:"served"`
	// HiddenElsewhere are the authenticated entries holding bytes this
	// public one serves (catalog.HiddenElsewhere).
	HiddenElsewhere []catalog.Overlap `json:"hiddenElsewhere,omitempty"`
	// History is every version, newest first (--versions).
	History []versionSummary `json:"history,omitempty"`
}

type versionSummary struct {
	Version     string        `json:"version"`
	Digest      digest.Digest `json:"digest"`
	PublishedAt time.Time     `json:"publishedAt"`
	Source      string        `json:"source,omitempty"`
	// Scan is the version's content scan (absent: never scanned), and Gone
	// why it was taken out of service (absent: in service).
	Scan *scan.Result  `json:"scan,omitempty"`
	Gone *catalog.Gone `json:"gone,omitempty"`
}

type rejectionStatus struct {
	Time    time.Time `json:"time"`
	Key     string    `json:"key"`
	Name    string    `json:"name,omitempty"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
	State   string    `json:"state"`
	// Digest is the refused bytes' (absent when they could not be hashed),
	// Findings those that block scan_blocked bytes.
	Digest   digest.Digest  `json:"digest,omitzero"`
	Findings []scan.Blocker `json:"findings,omitempty"`
}

type keyWarning struct {
	Key     string `json:"key"`
	Message string `json:"message"`
}

// runStatus reads the catalog and the status document of the target and
// prints them. A target with no catalog yet is not an error.
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["status"].flagSet(stderr)
	var tg target
	tg.flags(fs)
	all := fs.Bool("all", false, "also list withdrawn skills and sub-agents")
	versions := fs.Bool("versions", false, "list every version of each entry with its publish time, newest first")
	limit := fs.Int("rejections", 20, "how many recent rejections to print (0: none)")
	asJSON := fs.Bool("json", false, "print one JSON document instead of tables")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *limit < 0 {
		printf(stderr, "skilldrop status: --rejections %d: want 0 or more\n", *limit)
		return exitUsage
	}
	st, closeStore, code, ok := tg.openFor(ctx, fs.Name(), stderr)
	if !ok {
		return code
	}
	defer closeStore()
	out := &resultWriter{w: stdout}
	strays, err := indexer.StrayConfigs(ctx, st)
	if err != nil {
		printf(stderr, "skilldrop status: look for configs under another name: %v\n", err)
	}
	c, info, err := catalog.Load(ctx, st)
	if errors.Is(err, store.ErrNotFound) {
		doc := statusDoc{Target: tg.String(), Skills: []entrySummary{}, Subagents: []entrySummary{}, Rejections: []rejectionStatus{},
			Warnings: []keyWarning{}, Jobs: []catalog.Job{}, Gone: []catalog.GoneVersion{}}
		addStrays(&doc, strays)
		if *asJSON {
			out.json(doc)
		} else {
			if _, herr := st.Head(ctx, catalog.Key); errors.Is(herr, store.ErrDeleted) {
				// Not a new target: the indexer refuses to start over (README: A deleted catalog is not a fresh start).
				out.printf("%s: its catalog was deleted, and nothing is published until it is restored (%v)\n", tg.String(), herr)
			} else {
				out.printf("%s has no catalog yet: nothing was indexed (run `skilldrop reindex`)\n", tg.String())
			}
			for _, w := range doc.Warnings {
				out.printf("warning %s: %s\n", printable(w.Key), oneLine(w.Message))
			}
		}
		return finish(out, stderr, exitOK)
	}
	if err != nil {
		printf(stderr, "skilldrop status: %v\n", err)
		return exitFailure
	}
	s, _, err := catalog.LoadStatus(ctx, st)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s = catalog.NewStatus()
	case err != nil:
		printf(stderr, "skilldrop status: %v\n", err)
		return exitFailure
	}
	rs := s.Rejections
	if len(rs) > *limit {
		rs = rs[:*limit]
	}
	if *versions {
		if err := c.LoadHistories(); err != nil {
			printf(stderr, "skilldrop status: %v\n", err)
			return exitFailure
		}
	}
	doc := summarize(tg.String(), c, s, *all)
	doc.Catalog.Size = info.Size
	doc.Catalog.Signing = signingOf(ctx, st, c.Signing)
	doc.Rejections = judge(ctx, st, c, s.Rejections, rs, stderr)
	addStrays(&doc, strays)
	if *asJSON {
		out.json(doc)
	} else {
		renderStatus(out, doc, *limit)
	}
	return finish(out, stderr, exitOK)
}

// addStrays adds a warning for each stray config the bucket holds now
// (indexer.StrayConfigs) that the status document does not warn of yet
// (the indexer records them on a re-index or reconcile).
func addStrays(doc *statusDoc, strays []string) {
	for _, key := range strays {
		w := keyWarning{Key: key, Message: skillsconfig.StrayMessage()}
		if !slices.Contains(doc.Warnings, w) {
			doc.Warnings = append(doc.Warnings, w)
		}
	}
}

// summarize turns the catalog and status document into the status shape
// (rejections aside).
func summarize(where string, c *catalog.Catalog, s *catalog.Status, all bool) statusDoc {
	shared := catalog.HiddenElsewhere(c)
	doc := statusDoc{
		Target: where,
		Catalog: &catalogSummary{Revision: c.Revision, UpdatedAt: c.UpdatedAt.UTC(), Limit: catalog.MaxBytes,
			BucketConfig: c.Bucket, Held: []string{}, DefaultVisibility: defaultOf(c)},
		Skills: entries(c.SortedSkills(), all, shared), Subagents: entries(c.SortedSubagents(), all, shared),
		Warnings: []keyWarning{}, Jobs: s.Jobs, Verify: s.Verify, Gone: slices.Clone(c.Gone),
	}
	if doc.Gone == nil {
		doc.Gone = []catalog.GoneVersion{}
	}
	if doc.Jobs == nil {
		doc.Jobs = []catalog.Job{}
	}
	for _, key := range slices.Sorted(maps.Keys(c.Sources)) {
		if c.Sources[key].Held {
			doc.Catalog.Held = append(doc.Catalog.Held, key)
		}
	}
	if c.Config != nil {
		doc.Catalog.Config = &configSummary{Digest: c.Config.Digest, AppliedAt: c.Config.AppliedAt.UTC()}
	}
	for _, key := range slices.Sorted(maps.Keys(s.Warnings)) {
		for _, w := range s.Warnings[key] {
			doc.Warnings = append(doc.Warnings, keyWarning{Key: key, Message: w})
		}
	}
	return doc
}

// signingOf summarizes the catalog's signing state, reading the current
// key's PEM from its blob (checked against its pin).
func signingOf(ctx context.Context, st store.Store, sg *catalog.Signing) *signingSummary {
	k := sg.CurrentKey()
	if k == nil {
		return nil
	}
	out := &signingSummary{KeyID: k.ID, Since: k.Since.UTC(), Catalogs: []signedCatalog{}}
	for _, p := range sg.Keys[:len(sg.Keys)-1] {
		out.Previous = append(out.Previous, p.ID)
	}
	for _, sc := range sg.Catalogs {
		out.Catalogs = append(out.Catalogs, signedCatalog{Origin: sc.Origin, Revision: sc.Named()})
	}
	b, _, err := store.ReadAll(ctx, st, catalog.BlobKey(k.PEM.Digest), k.PEM.Size+1)
	switch {
	case err != nil:
		out.Problem = "the key's blob cannot be read: " + err.Error()
	case int64(len(b)) != k.PEM.Size || !k.PEM.Digest.Verify(b):
		out.Problem = "the key's blob " + catalog.BlobKey(k.PEM.Digest) + " does not hold the pinned key: the API answers 503 for it"
	default:
		out.PublicKey = string(b)
	}
	return out
}

func entries(list []*catalog.Entry, all bool, shared map[*catalog.Entry][]catalog.Overlap) []entrySummary {
	out := []entrySummary{}
	for _, e := range list {
		if !all && !e.Live() {
			continue
		}
		sum := entrySummary{
			ID: e.ID(), Name: e.Name, Listing: e.Listing, Latest: e.Latest, Visibility: string(e.Visibility),
			Audiences: e.Audiences, Versions: e.VersionCount(), Source: e.Source, Withdrawn: e.Withdrawn, ExternalURL: e.ExternalURL,
			Listings: e.Listings, Contenders: e.Contenders, Served: e.Served(), HiddenElsewhere: shared[e],
		}
		if v := e.LatestVersion(); v != nil {
			sum.Type, sum.Digest, sum.PublishedAt, sum.Scan = string(v.Type), v.Digest, v.PublishedAt.UTC(), v.Scan
		}
		if e.HasHistory() {
			for i := len(e.Versions) - 1; i >= 0; i-- {
				v := e.Versions[i]
				sum.History = append(sum.History, versionSummary{Version: v.Label, Digest: v.Digest, PublishedAt: v.PublishedAt.UTC(),
					Source: v.SourceKey, Scan: v.Scan, Gone: v.Gone})
			}
		}
		out = append(out, sum)
	}
	return out
}

// judge marks each shown rejection with what became of it: superseded by a
// later rejection of the same key (and name), fixed by a later publish from
// the key (or a later config put in force), deleted when the key is gone
// (one HEAD per key, at most a few at once), else open. all is every
// rejection recorded, newest first; shown the ones to mark.
func judge(ctx context.Context, st store.Store, c *catalog.Catalog, all, shown []catalog.Rejection, stderr io.Writer) []rejectionStatus {
	out := make([]rejectionStatus, len(shown))
	var heads []int
	for i, r := range shown {
		out[i] = rejectionStatus{Time: r.Time.UTC(), Key: r.Key, Name: r.Name, Code: r.Code, Message: r.Message, State: stateOpen,
			Digest: r.Digest, Findings: r.Findings}
		switch {
		case supersededAt(all, i):
			out[i].State = stateSuperseded
		case !r.Closed.IsZero() || fixedSince(c, r):
			out[i].State = stateFixed
		case isConfigRejection(r):
			// Open while the bucket's config is still the one refused: a
			// missing one is the refusal itself, not a key deleted since.
		default:
			heads = append(heads, i)
		}
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed error
		sem    = make(chan struct{}, 8)
	)
	for _, i := range heads {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, err := st.Head(ctx, out[i].Key)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, store.ErrNotFound):
				out[i].State = stateDeleted
			case err != nil && failed == nil:
				failed = err
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		printf(stderr, "warning: cannot tell which rejected keys were deleted since: %v\n", failed)
	}
	return out
}

// supersededAt reports whether a rejection newer than all[i] (all is newest
// first) was recorded for the same key and name.
func supersededAt(all []catalog.Rejection, i int) bool {
	for _, r := range all[:i] {
		if r.Key == all[i].Key && r.Name == all[i].Name {
			return true
		}
	}
	return false
}

// fixedSince reports whether the catalog shows a publish from r's key after
// r: an entry whose latest version was read from the key (or, for an entry
// of agent-skills.yaml, that entry) and published later; for the config
// itself, a config applied later. The latest version is enough: an entry
// has one source at a time, so a later publish from the key is either the
// latest or followed by more from the same key.
func fixedSince(c *catalog.Catalog, r catalog.Rejection) bool {
	if isConfigRejection(r) {
		// A later config put in force fixed it, and so did the bucket's
		// holding the config in force again (the one refused was
		// replaced, or the one in force put back).
		return c.Config != nil && (c.Config.AppliedAt.After(r.Time) || c.Bucket == nil)
	}
	for _, list := range [][]*catalog.Entry{c.SortedSkills(), c.SortedSubagents()} {
		for _, e := range list {
			if r.Name != "" && e.Name != r.Name {
				continue
			}
			if v := e.LatestVersion(); v != nil && (v.SourceKey == r.Key || e.Source == r.Key) && v.PublishedAt.After(r.Time) {
				return true
			}
		}
	}
	return false
}

// isConfigRejection reports whether r refused agent-skills.yaml as a whole
// (deleted, unreadable or invalid), not one of its entries.
func isConfigRejection(r catalog.Rejection) bool { return r.Key == artifact.ConfigKey && r.Name == "" }

// renderStatus writes the status document as tables, every key, name and
// message escaped for the terminal.
func renderStatus(out *resultWriter, doc statusDoc, limit int) {
	out.printf("%s: catalog revision %d, updated %s\n", printable(doc.Target), doc.Catalog.Revision, doc.Catalog.UpdatedAt.Format(time.RFC3339))
	cat := doc.Catalog
	out.printf("catalog: %s of its %s limit (%d%%)\n", bytesize.Format(cat.Size), bytesize.Format(cat.Limit), 100*cat.Size/max(cat.Limit, 1))
	if cfg := cat.Config; cfg != nil {
		out.printf("config: %s %s, in force since %s\n", artifact.ConfigKey, cfg.Digest, cfg.AppliedAt.Format(time.RFC3339))
	}
	from := map[string]string{
		skillsconfig.FromDeployment: "the deployment's DefaultVisibility",
		skillsconfig.FromConfig:     artifact.ConfigKey + "'s default_visibility",
		skillsconfig.FromBuiltIn:    "the built-in default: neither the deployment nor " + artifact.ConfigKey + " sets one",
	}
	out.printf("default visibility: %s (from %s)\n", cat.DefaultVisibility.Visibility, from[cat.DefaultVisibility.From])
	if w := cat.DefaultVisibility.Warning; w != "" {
		out.printf("warning: %s\n", w)
	}
	var unmatched []string
	for _, w := range doc.Warnings {
		if w.Key == artifact.ConfigKey {
			unmatched = append(unmatched, w.Message)
		}
	}
	if len(unmatched) > 0 {
		out.printf("config: %d %s (entries that name nothing published, whose settings, visibility included, allows and revocations, apply to nothing; allows of no rule; gates that do not do what they read):\n",
			len(unmatched), plural(len(unmatched), "warning", "warnings"))
		for _, m := range unmatched {
			out.printf("  %s\n", oneLine(m))
		}
	}
	if b := cat.BucketConfig; b != nil {
		out.printf("the bucket's %s is %s since %s: the config in force stays, and new publications are held until a valid one is uploaded\n",
			artifact.ConfigKey, b.State, b.Since.UTC().Format(time.RFC3339))
	}
	if len(cat.Held) > 0 {
		out.printf("\nheld (published once a valid %s is in force): %d\n", artifact.ConfigKey, len(cat.Held))
		for _, k := range cat.Held {
			out.printf("  %s\n", printable(k))
		}
	}
	if sg := cat.Signing; sg != nil {
		out.printf("signing key: %s, since %s", sg.KeyID, sg.Since.Format(time.RFC3339))
		if len(sg.Previous) > 0 {
			if n := len(sg.Previous); n == 1 {
				out.printf(" (1 earlier key still verifies older bundles)")
			} else {
				out.printf(" (%d earlier keys still verify older bundles)", n)
			}
		}
		out.printf("\n")
		for _, c := range sg.Catalogs {
			out.printf("  AI Catalog signed for %s at public revision %d\n", printable(c.Origin), c.Revision)
		}
		if sg.Problem != "" {
			out.printf("  %s\n", oneLine(sg.Problem))
		} else {
			out.printf("%s", sg.PublicKey)
		}
	}
	for _, j := range doc.Jobs {
		state := "running"
		if j.Finished != nil {
			state = "finished " + j.Finished.UTC().Format(time.RFC3339)
		}
		out.printf("%s %s, started %s: %d of %d keys reconciled, %s\n", j.Kind, j.ID, j.Started.UTC().Format(time.RFC3339), j.Done, j.Keys, state)
	}
	table := func(title string, list []entrySummary) {
		if len(list) == 0 {
			out.printf("\n%s: none\n", title)
			return
		}
		out.printf("\n%s\n", title)
		tw := tabwriter.NewWriter(&writerOf{out}, 0, 4, 2, ' ', 0)
		_, _ = io.WriteString(tw, "  NAME\tLATEST\tPUBLISHED\tTYPE\tVISIBILITY\tVERSIONS\tSCAN\tSOURCE\tNOTE\n")
		var findings []string
		for _, e := range list {
			var notes []string
			for _, o := range e.HiddenElsewhere {
				hidden := "hidden " + string(o.Kind) + " " + printable(o.ID)
				if o.Withdrawn {
					hidden = "withdrawn hidden " + string(o.Kind) + " " + printable(o.ID) // it hides nothing now
				}
				what := "same bytes as " + hidden
				if o.File != "" {
					what = "shares " + printable(o.File) + " with " + hidden
				}
				notes = append(notes, what)
			}
			if e.Withdrawn {
				notes = append(notes, "withdrawn")
			} else if !e.Served {
				notes = append(notes, "no version in service")
			}
			if len(e.Audiences) > 0 {
				notes = append(notes, "audiences "+strings.Join(e.Audiences, ","))
			}
			if e.ExternalURL != "" {
				notes = append(notes, "external "+printable(e.ExternalURL))
			}
			if len(e.Listings) > 0 {
				notes = append(notes, "listings "+strings.Join(quoteAll(e.Listings), ","))
			}
			if len(e.Contenders) > 0 {
				notes = append(notes, "contenders "+strings.Join(quoteAll(e.Contenders), ","))
			}
			_, _ = io.WriteString(tw, "  "+strings.Join([]string{printable(e.ID), printable(e.Latest), timeOrDash(e.PublishedAt), e.Type, e.Visibility,
				strconv.Itoa(e.Versions), verdictOf(e.Scan), printable(e.Source), strings.Join(notes, "; ")}, "\t")+"\n")
			// Each version is a row of the same table, in its columns: the
			// label under LATEST, its time under PUBLISHED, its verdict
			// under SCAN, its key under SOURCE and its digest under NOTE.
			for _, v := range e.History {
				note := v.Digest.String()
				if v.Gone != nil {
					note += " (" + v.Gone.Code + ")"
				}
				_, _ = io.WriteString(tw, "  "+strings.Join([]string{"", printable(v.Version), timeOrDash(v.PublishedAt), "", "", "", verdictOf(v.Scan),
					printable(v.Source), note}, "\t")+"\n")
			}
			if len(e.History) == 0 {
				findings = append(findings, scanLines(e.ID, e.Latest, e.Digest, e.Scan)...)
			}
			for _, v := range e.History {
				findings = append(findings, scanLines(e.ID, v.Version, v.Digest, v.Scan)...)
			}
		}
		_ = tw.Flush()
		if len(findings) > 0 {
			of := "the latest versions"
			if slices.ContainsFunc(list, func(e entrySummary) bool { return len(e.History) > 0 }) {
				of = "every version" // --versions
			}
			out.printf("\n%s: scan findings of %s\n", title, of)
			for _, f := range findings {
				out.printf("  %s\n", f)
			}
		}
	}
	table("skills", doc.Skills)
	table("sub-agents", doc.Subagents)
	if limit > 0 {
		if len(doc.Rejections) == 0 {
			out.printf("\nrecent rejections: none\n")
		} else {
			out.printf("\nrecent rejections (newest first)\n")
			tw := tabwriter.NewWriter(&writerOf{out}, 0, 4, 2, ' ', 0)
			_, _ = io.WriteString(tw, "  TIME\tSTATE\tKEY\tCODE\tMESSAGE\n")
			for _, r := range doc.Rejections {
				_, _ = io.WriteString(tw, "  "+strings.Join([]string{r.Time.Format(time.RFC3339), r.State, printable(r.Key), r.Code, oneLine(r.Message)}, "\t")+"\n")
			}
			_ = tw.Flush()
		}
	}
	if len(doc.Gone) > 0 {
		out.printf("\nversions out of service (oldest first)\n")
		for _, g := range doc.Gone {
			out.printf("  %s %s %s %s %s: %s\n", g.At.UTC().Format(time.RFC3339), printable(g.ID()), printable(g.Version), g.Digest, g.Code,
				oneLine(printable(g.Reason)))
		}
	}
	renderBlobVerify(out, doc.Verify)
	if len(doc.Warnings) > len(unmatched) {
		out.printf("\nwarnings\n")
		for _, w := range doc.Warnings {
			if w.Key != artifact.ConfigKey { // said under the config
				out.printf("  %s: %s\n", printable(w.Key), oneLine(w.Message))
			}
		}
	}
}

// verdictOf is a scan's verdict for the SCAN column ("-": never scanned).
func verdictOf(res *scan.Result) string {
	if res == nil {
		return "-"
	}
	return string(res.Verdict)
}

// scanLines are the findings and allows of one version's scan, each line
// naming the version by its label and digest.
func scanLines(id, version string, d digest.Digest, res *scan.Result) []string {
	if res == nil {
		return nil
	}
	head := printable(id) + " " + printable(version) + " " + d.String() + ": "
	var out []string
	for _, f := range res.Findings {
		out = append(out, head+findingLine(f))
	}
	for _, a := range res.Allowed {
		out = append(out, head+a.Rule+" allowed: "+oneLine(printable(a.Reason)))
	}
	return out
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// writerOf lets a tabwriter write through a resultWriter.
type writerOf struct{ r *resultWriter }

func (w *writerOf) Write(p []byte) (int, error) {
	w.r.printf("%s", p)
	if w.r.err != nil {
		return 0, w.r.err
	}
	return len(p), nil
}
