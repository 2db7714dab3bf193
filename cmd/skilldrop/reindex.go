package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
)

func init() {
	register(&command{
		name:    "reindex",
		summary: "reconcile the catalog with every key of a bucket or directory (keeps the version history)",
		args:    "(--bucket NAME [--region R] [--profile P] [--metric-namespace NS] | --dir DIR) [--log-level L]",
		about: `Prints one line per change: "published|withdrawn <kind> <name> <version> <source>" and
"rejected <key> <code>: <message>" (" (already recorded)" for a rejection the status document held),
then a summary. Against a bucket it counts the UploadRejected metrics the indexer Lambda would.
It writes catalog/ and blobs/ into the bucket or directory, as the indexer does.

exit status: 0 when the re-index ran (rejections included), 1 when it failed (run it again: it converges),
2 on usage errors`,
		run: runReindex,
	})
}

// runReindex runs a full re-index here, against the target, and prints
// what it found: "published|withdrawn <kind> <name> <version> <source>"
// and "rejected <key> <code>: <message>" lines (with " (already recorded)"
// for a rejection the status document already held), then, when it
// succeeded, a summary. It exits 1 when the re-index failed, with the
// error on stderr and no summary (it can be run again: it converges).
func runReindex(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["reindex"].flagSet(stderr)
	var tg target
	tg.flags(fs)
	level := logLevelFlag(fs, "WARN")
	namespace := fs.String("metric-namespace", "",
		"with --bucket, the CloudWatch namespace UploadRejected is counted in, as the indexer Lambda does\n(default: $SKILLDROP_METRIC_NAMESPACE, else Skilldrop)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	lv, err := level()
	if err != nil {
		printf(stderr, "skilldrop reindex: %v\n", err)
		return exitUsage
	}
	lvl, _ := obs.ParseLevel(lv)
	st, closeStore, code, ok := tg.openFor(ctx, fs.Name(), stderr)
	if !ok {
		return code
	}
	defer closeStore()
	logger := obs.NewLogger(stderr, lvl)
	metrics, err := tg.metrics(metricNamespace(*namespace), logger)
	if err != nil {
		printf(stderr, "skilldrop reindex: --metric-namespace: %v\n", err)
		return exitUsage
	}
	ix, err := indexer.New(indexer.Config{Store: st, Logger: logger, Auditor: obs.NewAuditor(logger), Metrics: metrics, Bucket: tg.bucket})
	if err != nil {
		printf(stderr, "skilldrop reindex: %v\n", err)
		return exitFailure
	}
	res, rerr := ix.Reindex(ctx)
	out := &resultWriter{w: stdout}
	if res != nil {
		for _, c := range res.Published {
			out.printf("published %s %s %s %s\n", c.Kind, c.ID(), printable(c.Version), printable(c.Source))
		}
		for _, c := range res.Withdrawn {
			out.printf("withdrawn %s %s %s %s\n", c.Kind, c.ID(), printable(c.Version), printable(c.Source))
		}
		repeats := 0
		for _, r := range res.Rejected {
			note := ""
			if r.Repeated {
				note = " (already recorded)"
				repeats++
			}
			out.printf("rejected %s %s: %s%s\n", printable(r.Key), r.Code, oneLine(r.Message), note)
		}
		if rerr == nil {
			rejected := strconv.Itoa(len(res.Rejected)) + " rejected"
			if repeats > 0 {
				rejected += fmt.Sprintf(" (%d already recorded)", repeats)
			}
			out.printf("reindexed %s: %d published, %d withdrawn, %s, %d unchanged, catalog revision %d\n",
				tg.String(), len(res.Published), len(res.Withdrawn), rejected, len(res.Unchanged), res.Revision)
		}
	}
	if rerr != nil {
		printf(stderr, "skilldrop reindex: %v\n", rerr)
		return finish(out, stderr, exitFailure)
	}
	return finish(out, stderr, exitOK)
}
