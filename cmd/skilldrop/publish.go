package main

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/publish"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func init() {
	register(&command{
		name:    "publish",
		summary: "validate a skill folder, archive, SKILL.md or sub-agent with the indexer's rules and upload it as one object",
		args:    "(--bucket NAME [--region R] [--profile P] | --dir DIR) [--listing NAME] [--subagent] [--json] [--log-level L] FILE-or-FOLDER",
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

Prints "published <key> <name> <version> <digest>", "unchanged …" when the catalog already serves these bytes
from that key, or "rejected <path> <code>: <message>"; with --json, one JSON document (its shape is in the README).
With --dir the upload is indexed at once (catalog/, blobs/ and .skilldrop/ are written into DIR); a bucket's
indexer Lambda indexes it on its event.

exit status: 0 published or unchanged, 1 rejected or failed, 2 on usage errors (a bad flag, a path that does not
exist, no region for --bucket)`,
		run: runPublish,
	})
}

// publication is the outcome of a publish; it is also the JSON shape of
// `publish --json` (README: "publish --json").
type publication struct {
	Result   string        `json:"result"` // published, unchanged or rejected
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
	if code, ok := checkPathsExist("skilldrop publish", operands, stderr); !ok {
		return code
	}
	up, err := publish.Prepare(path, publish.Options{Subagent: *subagent, Listing: *listing})
	if errors.Is(err, publish.ErrOptions) {
		printf(stderr, "skilldrop publish: %v\n", err)
		return exitUsage
	}
	out := &resultWriter{w: stdout}
	report := func(p publication, status int) int {
		if *asJSON {
			out.json(p)
			return finish(out, stderr, status)
		}
		warnLeftOut(stderr, path, p.LeftOut)
		for _, w := range p.Warnings {
			printf(stderr, "warning %s: %s\n", printable(path), oneLine(w))
		}
		if p.Result == "rejected" {
			out.printf("rejected %s %s: %s\n", printable(path), p.Code, oneLine(p.Message))
		} else {
			out.printf("%s %s %s %s %s\n", p.Result, printable(p.Key), p.Name, printable(p.Version), p.Digest)
		}
		return finish(out, stderr, status)
	}
	if err != nil {
		r := rejected(path, err)
		return report(publication{Result: "rejected", Path: path, Code: r.Code, Message: r.Message}, exitFailure)
	}
	lvl, _ := obs.ParseLevel(lv)
	logger := obs.NewLogger(stderr, lvl)
	tg.log = logger
	st, closeStore, code, ok := tg.openFor(ctx, fs.Name(), stderr)
	if !ok {
		return code
	}
	defer closeStore()
	ix, err := indexer.New(indexer.Config{Store: st, KeepOrigins: true, Logger: logger, Auditor: obs.NewAuditor(logger), ConfigSettle: tg.configSettle()})
	if err != nil {
		printf(stderr, "skilldrop publish: %v\n", err)
		return exitFailure
	}
	a, unchanged, err := ix.Check(ctx, up.Key, up.Body)
	if err != nil {
		if _, ok := artifact.AsError(err); !ok {
			printf(stderr, "skilldrop publish: %v\n", err) // the catalog could not be read
			return exitFailure
		}
		r := rejected(path, err)
		return report(publication{Result: "rejected", Path: path, Key: up.Key, Code: r.Code, Message: r.Message, LeftOut: up.LeftOut}, exitFailure)
	}
	p := publication{
		Result: "published", Path: path, Key: up.Key, Name: a.Name, Type: string(a.Type), Version: a.Version,
		Digest: a.Digest, Size: a.Size, Warnings: a.Warnings, LeftOut: up.LeftOut,
	}
	if len(up.Ignored) > 0 {
		p.Warnings = append(p.Warnings, "only its agent.md is published; ignored: "+strings.Join(quoteAll(up.Ignored), ", "))
	}
	if _, err := st.Put(ctx, up.Key, up.Body, store.PutOptions{ContentType: up.ContentType}); err != nil {
		printf(stderr, "skilldrop publish: upload %s to %s: %v\n", up.Key, tg.String(), err)
		return exitFailure
	}
	if tg.dir != "" {
		res, err := ix.Reconcile(ctx, up.Key)
		if err != nil {
			printf(stderr, "skilldrop publish: index %s: %v\n", up.Key, err)
			return exitFailure
		}
		for _, r := range res.Rejected {
			return report(publication{Result: "rejected", Path: path, Key: up.Key, Code: r.Code, Message: r.Message, LeftOut: up.LeftOut}, exitFailure)
		}
		unchanged = slices.Contains(res.Unchanged, up.Key) // what indexing did, not what Check foresaw
	}
	if unchanged {
		// Uploaded all the same: the bucket may hold other bytes at the
		// key that the catalog has not caught up with.
		p.Result = "unchanged"
	}
	return report(p, exitOK)
}
