package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/publish"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func init() {
	register(&command{
		name:    "publish",
		summary: "validate a skill folder, archive, SKILL.md or sub-agent with the indexer's rules and upload it as one object",
		args:    "(--bucket NAME [--region R] [--profile P] [--wait D] | --dir DIR [--signing-key FILE]) [--listing NAME] [--subagent] [--json] [--log-level L] FILE-or-FOLDER",
		about: `Where FILE-or-FOLDER goes:
  <name>/ holding SKILL.md    packed into one deterministic zip, skills/<name>.zip (dot-files such as .env are
                              left out, and named on stderr)
  <name>/ holding agent.md    its agent.md, subagents/<name>.md (with --subagent, or below a subagents/ directory,
                              a folder is always a sub-agent)
  <name>.md, <name>/SKILL.md  skills/<name>.md (a sub-agent's: subagents/<name>.md)
  <name>.zip|.tar.gz|.tgz     skills/<name>.<ext>
With --listing NAME a skill goes under listings/NAME/ instead. The name a file or folder name implies must equal
the frontmatter's (name_mismatch); name conflicts and version immutability are checked against the target's
catalog before anything is uploaded.

With --dir the upload is indexed at once (catalog/, blobs/ and .skilldrop/ are written into DIR); a bucket's
indexer Lambda indexes it on its event, and publish waits for that (--wait, default 2m) to report what the
catalog then holds, never what it foresaw:
  published <key> <name> <version> <digest>   the catalog serves these bytes as the entry's latest version
  unchanged <key> <name> <version> <digest>   it already did, from that key (held or not)
  held <key> <name> <version> <digest>        the indexer holds it until a valid agent-skills.yaml is in force
  rejected <path> <code>: <message>           refused (before the upload, or by the indexer)
  uploaded <key> <name> <version> <digest>    uploaded, and not indexed within --wait (or --wait 0: not waited for)
A held or uploaded line is followed by a note on stderr saying why; every other result (once the target is
read) is followed by a warning when the bucket's agent-skills.yaml is invalid, deleted or unreadable (new
publications are held). With --json, one JSON document (its shape is
in the README).

exit status: 0 published or unchanged (or uploaded with --wait 0), 1 rejected or failed, 2 on usage errors (a bad
flag, a path that does not exist, no region for --bucket, a signed --dir without --signing-key), 3 held, 4 uploaded but not indexed within --wait`,
		run: runPublish,
	})
}

// Exit statuses of publish beyond the shared ones.
const (
	exitHeld    = 3 // uploaded, and held until a valid agent-skills.yaml is in force
	exitPending = 4 // uploaded, and not indexed within --wait
)

// The results publish reports (publication.Result) beside the indexer's fates.
const (
	resultUnchanged = "unchanged"
	resultUploaded  = "uploaded"
)

// publication is the outcome of a publish; it is also the JSON shape of
// `publish --json` (README: "publish --json").
type publication struct {
	Result   string        `json:"result"` // published, unchanged, held, rejected or uploaded
	Path     string        `json:"path"`
	Key      string        `json:"key,omitempty"`
	Name     string        `json:"name,omitempty"`
	Type     string        `json:"type,omitempty"`
	Version  string        `json:"version,omitempty"`
	Digest   digest.Digest `json:"digest,omitzero"`
	Size     int64         `json:"size,omitempty"`
	Code     string        `json:"code,omitempty"`
	Message  string        `json:"message,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	// Scan is the published version's content scan as the catalog records
	// it: verdict, engine, findings (rule, file, line) and allows; for bytes
	// the scan blocks, the scan that blocks them (with Digest).
	Scan *scan.Result `json:"scan,omitempty"`
	// LeftOut are the dot-files left out of a packed folder.
	LeftOut []string `json:"leftOut,omitempty"`
}

// runPublish packs (a folder), validates against the target's catalog and
// config, and uploads one object. With --dir it also indexes the key, as
// there is no event to do it; a bucket's indexer Lambda indexes the upload
// on its event.
func runPublish(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["publish"].flagSet(stderr)
	var tg target
	tg.flags(fs)
	listing := fs.String("listing", "", "publish a skill only in this listing (listings/NAME/skills/…)")
	subagent := fs.Bool("subagent", false, "read a <name>.md file or a folder as a sub-agent (agent.md)")
	asJSON := fs.Bool("json", false, "print one JSON document instead of a line")
	waitFlagged := waitFlag(fs, "index the upload and say what it did")
	signingKey := signingKeyFlag(fs)
	level := logLevelFlag(fs, "WARN")
	operands, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(operands) != 1 {
		printf(stderr, "skilldrop publish: want one FILE-or-FOLDER, got %d\n", len(operands))
		fs.Usage()
		return exitUsage
	}
	path := operands[0]
	lv, err := level()
	if err != nil {
		printf(stderr, "skilldrop publish: %v\n", err)
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
	if code, ok := checkPathsExist("skilldrop publish", operands, stderr); !ok {
		return code
	}
	up, err := publish.Prepare(path, publish.Options{Subagent: *subagent, Listing: *listing})
	if errors.Is(err, publish.ErrOptions) {
		printf(stderr, "skilldrop publish: %v\n", err)
		return exitUsage
	}
	out := &resultWriter{w: stdout}
	var st store.Store // the target, once opened
	report := func(p publication, status int) int {
		if st != nil && p.Result != indexer.FateHeld { // a held result's note says why already
			if err := warnHold(ctx, st, &p); err != nil {
				p.Warnings = append(p.Warnings, fmt.Sprintf("could not tell whether the indexer holds new publications: %v", err))
			}
		}
		if *asJSON {
			out.json(p)
			return finish(out, stderr, status)
		}
		warnLeftOut(stderr, path, p.LeftOut)
		for _, w := range p.Warnings {
			printf(stderr, "warning %s: %s\n", printable(path), oneLine(w))
		}
		if p.Scan != nil && p.Result != indexer.FateRejected {
			// Published with findings (warn): what the feeds show with it.
			for _, f := range p.Scan.Findings {
				printf(stderr, "warning %s: scan: %s\n", printable(path), findingLine(f))
			}
		}
		if p.Result == indexer.FateRejected {
			out.printf("rejected %s %s: %s\n", printable(path), p.Code, oneLine(p.Message))
		} else {
			out.printf("%s %s %s %s %s\n", p.Result, printable(p.Key), p.Name, printable(p.Version), p.Digest)
			if p.Message != "" {
				printf(stderr, "note %s: %s\n", printable(path), oneLine(p.Message))
			}
		}
		return finish(out, stderr, status)
	}
	if err != nil {
		r := rejected(path, err)
		return report(publication{Result: indexer.FateRejected, Path: path, Code: r.Code, Message: r.Message}, exitFailure)
	}
	wait, err := waitFlagged()
	if err != nil {
		printf(stderr, "skilldrop publish: %v\n", err)
		return exitUsage
	}
	lvl, _ := obs.ParseLevel(lv)
	logger := obs.NewLogger(stderr, lvl)
	tg.log = logger
	opened, closeStore, code, ok := tg.openFor(ctx, fs.Name(), stderr)
	if !ok {
		return code
	}
	defer closeStore()
	st = opened
	ix, err := indexer.New(indexer.Config{Store: st, KeepOrigins: true, Logger: logger, Auditor: obs.NewAuditor(logger), ConfigSettle: tg.configSettle(), Signer: signer})
	if err != nil {
		printf(stderr, "skilldrop publish: %v\n", err)
		return exitFailure
	}
	if code, ok := refuseUnsigned(ctx, "skilldrop publish", &tg, ix, st, "uploaded", stderr); !ok {
		return code
	}
	a, unchanged, err := ix.Check(ctx, up.Key, up.Body)
	if err != nil {
		if _, ok := artifact.AsError(err); !ok {
			printf(stderr, "skilldrop publish: %v\n", err) // the catalog could not be read
			return exitFailure
		}
		r := rejected(path, err)
		p := publication{Result: indexer.FateRejected, Path: path, Key: up.Key, Code: r.Code, Message: r.Message, LeftOut: up.LeftOut}
		var blocked *indexer.ScanBlockedError
		if errors.As(err, &blocked) { // the bytes to allow, and what blocks them
			p.Digest, p.Scan = blocked.Digest, &blocked.Scan
		}
		return report(p, exitFailure)
	}
	p := publication{
		Result: indexer.FatePublished, Path: path, Key: up.Key, Name: a.Name, Type: string(a.Type), Version: a.Version,
		Digest: a.Digest, Size: a.Size, Warnings: a.Warnings, LeftOut: up.LeftOut,
	}
	if len(up.Ignored) > 0 {
		p.Warnings = append(p.Warnings, "only its agent.md is published; ignored: "+strings.Join(quoteAll(up.Ignored), ", "))
	}
	before, err := loadStatus(ctx, st)
	if err != nil {
		printf(stderr, "skilldrop publish: %v\n", err)
		return exitFailure
	}
	info, err := st.Put(ctx, up.Key, up.Body, store.PutOptions{ContentType: up.ContentType})
	if err != nil {
		printf(stderr, "skilldrop publish: upload %s to %s: %v\n", up.Key, tg.String(), err)
		return exitFailure
	}
	u := indexer.Upload{Key: up.Key, ETag: info.ETag, Digest: a.Digest, RejectedAt: indexer.NewestRejection(before, up.Key)}
	var fate indexer.Fate
	switch {
	case tg.dir != "":
		res, err := ix.Reconcile(ctx, up.Key)
		if err != nil {
			printf(stderr, "skilldrop publish: index %s: %v\n", up.Key, err)
			return exitFailure
		}
		// What indexing did, not what Check foresaw; a rejection the status
		// document held already (the same bytes refused the same way) is
		// in the result, not recorded again.
		unchanged = unchanged || slices.Contains(res.Unchanged, up.Key)
		for _, r := range res.Rejected {
			if r.Key != up.Key {
				continue // the config's own, say, which holds the upload
			}
			return report(publication{Result: indexer.FateRejected, Path: path, Key: up.Key, Code: r.Code, Message: r.Message, LeftOut: up.LeftOut}, exitFailure)
		}
		fate, err = awaitFate(ctx, st, u, 0)
		if err != nil {
			printf(stderr, "skilldrop publish: %v\n", err)
			return exitFailure
		}
	case unchanged:
		// The catalog already serves these bytes from the key (Check read
		// it): there is nothing for the indexer to change.
		if fate, err = awaitFate(ctx, st, u, 0); err != nil {
			printf(stderr, "skilldrop publish: %v\n", err)
			return exitFailure
		}
		fate.Result = indexer.FatePublished
	case wait == 0:
		p.Result, p.Message = resultUploaded, "not waited for (--wait 0): the indexer indexes it on its event; `skilldrop status` shows what it did"
		return report(p, exitOK)
	default:
		if fate, err = awaitFate(ctx, st, u, wait); err != nil {
			printf(stderr, "skilldrop publish: uploaded %s; then %v\n", up.Key, err)
			return exitFailure
		}
	}
	switch fate.Result {
	case indexer.FatePublished:
		if unchanged {
			p.Result = resultUnchanged
		}
		if fate.Version != "" {
			p.Version = fate.Version
		}
		p.Scan = fate.Scan
		return report(p, exitOK)
	case indexer.FateHeld:
		p.Result, p.Message = indexer.FateHeld, fate.Message
		return report(p, exitHeld)
	case indexer.FateRejected:
		return report(publication{Result: indexer.FateRejected, Path: path, Key: up.Key, Code: fate.Code, Message: fate.Message, LeftOut: up.LeftOut}, exitFailure)
	}
	p.Result = resultUploaded
	p.Message = fmt.Sprintf("not indexed within %s: is the indexer deployed, and the bucket's notifications reaching its queue? "+
		"`skilldrop status` shows what became of it", wait)
	if r := lastRejection(before, up.Key); r != nil && r.Digest.Equal(a.Digest) {
		// The indexer records a refusal it repeats once only.
		p.Message += fmt.Sprintf("; these bytes were refused at %s before (%s): %s: %s", up.Key, r.Time.UTC().Format(time.RFC3339), r.Code, r.Message)
	}
	if tg.dir != "" {
		p.Message = "indexed, but the catalog holds neither a publication nor a rejection of it; `skilldrop status` shows what it holds"
	}
	return report(p, exitPending)
}

// warnHold adds a warning to p when the target's indexer holds new
// publications, or will once it reads the bucket's agent-skills.yaml: the
// catalog records the config as invalid, missing or unreadable, or the
// bucket holds one that the catalog does not and that does not parse (say,
// uploaded just now). What publish reports stands; the next publication
// waits.
func warnHold(ctx context.Context, st store.Store, p *publication) error {
	c, _, err := catalog.Load(ctx, st)
	switch {
	case errors.Is(err, store.ErrNotFound):
		c = catalog.New()
	case err != nil:
		return err
	}
	if note := indexer.HoldNote(c); note != "" {
		p.Warnings = append(p.Warnings, note)
		return nil
	}
	doc, info, err := store.ReadAll(ctx, st, skillsconfig.Key, skillsconfig.MaxBytes)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if c.Config != nil {
			p.Warnings = append(p.Warnings, "the bucket's agent-skills.yaml was deleted: once the indexer reads the bucket it holds "+
				"every new publication until a valid one is in force")
		}
		return nil
	case errors.Is(err, store.ErrAccessDenied):
		return nil // publish may not read it; status can
	case errors.Is(err, store.ErrTooLarge):
		p.Warnings = append(p.Warnings, fmt.Sprintf("the bucket's agent-skills.yaml is larger than %d bytes: the indexer refuses it "+
			"and holds every new publication until a valid one is in force", skillsconfig.MaxBytes))
		return nil
	case err != nil:
		return fmt.Errorf("read %s: %w", skillsconfig.Key, err)
	}
	if c.Config != nil && (c.Config.ETag == info.ETag || digest.Of(doc).Equal(c.Config.Digest)) {
		return nil // the config in force
	}
	if _, err := skillsconfig.Parse(doc); err != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the bucket's agent-skills.yaml is invalid (%v): the indexer holds every new "+
			"publication until a valid one is in force; `skilldrop validate` checks a config before it is uploaded", err))
	}
	return nil
}

// pollEvery is how often a command waiting for the indexer reads the
// catalog's ETag.
const pollEvery = time.Second

// awaitFate waits for the catalog and status document to say what became
// of u (indexer.FateOf), for at most wait (at least one look).
func awaitFate(ctx context.Context, st store.Store, u indexer.Upload, wait time.Duration) (indexer.Fate, error) {
	var fate indexer.Fate
	err := awaitCatalog(ctx, st, wait, func(c *catalog.Catalog, s *catalog.Status) bool {
		fate = indexer.FateOf(c, s, u)
		return fate.Result != indexer.FatePending
	})
	return fate, err
}

// awaitCatalog reads the target's catalog and status document until done
// says they hold what is waited for, or wait has passed (at least one look;
// done is not asked while there is no catalog): each is read again only
// when its ETag changed.
func awaitCatalog(ctx context.Context, st store.Store, wait time.Duration, done func(*catalog.Catalog, *catalog.Status) bool) error {
	deadline := time.Now().Add(wait)
	var (
		c               *catalog.Catalog
		s               *catalog.Status
		catTag, statTag string
	)
	for {
		info, err := st.Head(ctx, catalog.Key)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return fmt.Errorf("read %s: %w", catalog.Key, err)
		case info.ETag != catTag:
			if c, _, err = catalog.Load(ctx, st); err != nil {
				return err
			}
			catTag = info.ETag
		}
		info, err = st.Head(ctx, catalog.StatusKey)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return fmt.Errorf("read %s: %w", catalog.StatusKey, err)
		case info.ETag != statTag:
			if s, err = loadStatus(ctx, st); err != nil {
				return err
			}
			statTag = info.ETag
		}
		if c != nil && done(c, s) {
			return nil
		}
		if !time.Now().Before(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(pollEvery, time.Until(deadline))):
		}
	}
}

// lastRejection is the newest rejection s holds for key, or nil.
func lastRejection(s *catalog.Status, key string) *catalog.Rejection {
	if s == nil {
		return nil
	}
	for i := range s.Rejections {
		if s.Rejections[i].Key == key {
			return &s.Rejections[i]
		}
	}
	return nil
}

// loadStatus reads the status document (nil when there is none yet).
func loadStatus(ctx context.Context, st store.Store) (*catalog.Status, error) {
	s, _, err := catalog.LoadStatus(ctx, st)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return s, err
}
