package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/publish"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func init() {
	register(&command{
		name:    "publish",
		summary: "validate a skill folder, archive, SKILL.md or agent.md with the indexer's rules and upload it as one object",
		args:    "(--bucket NAME | --dir DIR) [--listing NAME] [--subagent] PATH",
		run:     runPublish,
	})
}

// runPublish packs (a folder), validates against the target's catalog and
// config, and uploads one object. With --dir it also indexes the key, as
// there is no event to do it; a bucket's indexer Lambda indexes the upload
// on its event. It prints "published <key> <name> <version> <digest>"
// ("unchanged …" when the catalog already serves these bytes as the
// latest version from that key) or "rejected <path> <code>: <message>",
// and exits 1 on a rejection.
func runPublish(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["publish"].flagSet(stderr)
	var tg target
	tg.flags(fs)
	listing := fs.String("listing", "", "publish a skill only in this listing (listings/NAME/skills/…)")
	subagent := fs.Bool("subagent", false, "read a <name>.md file as a sub-agent (agent.md)")
	operands, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(operands) != 1 {
		printf(stderr, "skilldrop publish: want one PATH, got %d\n", len(operands))
		fs.Usage()
		return exitUsage
	}
	path := operands[0]
	st, closeStore, code, ok := tg.openFor(ctx, fs.Name(), stderr)
	if !ok {
		return code
	}
	defer closeStore()
	out := &resultWriter{w: stdout}
	up, err := publish.Prepare(path, publish.Options{Subagent: *subagent, Listing: *listing})
	if errors.Is(err, publish.ErrOptions) {
		printf(stderr, "skilldrop publish: %v\n", err)
		return exitUsage
	}
	if err != nil {
		out.printf("rejected %s %s\n", printable(path), oneLine(rejection(err)))
		return finish(out, stderr, exitFailure)
	}
	logger := obs.NewLogger(stderr, slog.LevelWarn)
	ix, err := indexer.New(indexer.Config{Store: st, Logger: logger, Auditor: obs.NewAuditor(logger)})
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
		out.printf("rejected %s %s\n", printable(path), oneLine(rejection(err)))
		return finish(out, stderr, exitFailure)
	}
	if len(up.LeftOut) > 0 {
		quoted := make([]string, len(up.LeftOut))
		for i, f := range up.LeftOut {
			quoted[i] = printable(f)
		}
		printf(stderr, "warning %s: left out of the archive (dot-files are never published; they often hold credentials): %s\n",
			printable(path), strings.Join(quoted, ", "))
	}
	for _, w := range a.Warnings {
		printf(stderr, "warning %s: %s\n", printable(path), oneLine(w))
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
			out.printf("rejected %s %s: %s\n", printable(path), r.Code, oneLine(r.Message))
			return finish(out, stderr, exitFailure)
		}
		unchanged = slices.Contains(res.Unchanged, up.Key) // what indexing did, not what Check foresaw
	}
	verb := "published"
	if unchanged {
		// Uploaded all the same: the bucket may hold other bytes at the
		// key that the catalog has not caught up with.
		verb = "unchanged"
	}
	out.printf("%s %s %s %s %s\n", verb, up.Key, a.Name, printable(a.Version), a.Digest)
	return finish(out, stderr, exitOK)
}

// finish returns status, or a failure when the result lines could not be written.
func finish(out *resultWriter, stderr io.Writer, status int) int {
	if out.err != nil {
		printf(stderr, "skilldrop: write results: %v\n", out.err)
		return exitFailure
	}
	return status
}
