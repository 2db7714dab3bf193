package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func init() {
	register(&command{
		name:    "reindex",
		summary: "reconcile the catalog with every key of a bucket or directory (keeps the version history); with --verify, re-hash and repair its blobs",
		args:    "(--bucket NAME [--region R] [--profile P] [--metric-namespace NS] | --dir DIR [--signing-key FILE]) [--origin URLS] [--default-visibility V] [--verify [--json]] [--log-level L]",
		about: `Prints one line per change: "published|withdrawn <kind> <name> <version> <source>" (a published
version put back in service ends " (restored: was revoked|scan_blocked)"), "gone <kind> <name> <version>
<source> revoked|scan_blocked: <reason>" (a version taken out of service) and "rejected <key> <code>:
<message>" (" (already recorded)" for a rejection the status document held),
"held <key>: waits for a valid agent-skills.yaml" (an upload held while the bucket's config is not the
one in force), then a summary. Against a bucket it counts the UploadRejected metrics the indexer Lambda would.
It writes catalog/ and blobs/ into the bucket or directory, as the indexer does, and rendered/ with
--origin: the large feed documents pre-rendered for those origins, which the deployed api answers or
redirects to (serve answers every document itself, so a directory gains nothing from them).

With --verify it reconciles no key: it re-hashes every blob the catalog pins for a live entry (each
version's artifact and each of its files), 8 at a time, and rewrites a missing or tampered one from its
source when that still validates to the pinned digest (an overwrite conditional on the tampered object's
ETag; nothing else is written under blobs/). Prints "repaired <kind> <entry> <version> <file|-> <digest>
(<what it held>) from <source>", "unrecoverable|failed <kind> <entry> <version> <file|-> <digest> <code>:
<message>", then the counts, which the status document records too; progress goes to stderr for 1000
blobs or more. It reads every blob: run it from a workstation, not in Lambda. --json prints one JSON
document instead (its shape is in the README).

exit status: 0 when the re-index ran (rejections included), or with --verify when every blob is intact or
repaired; 1 when it failed (run it again: it converges), or with --verify when a blob is unrecoverable or
failed; 2 on usage errors`,
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
	originList := fs.String("origin", "", "render the documents too large for one response for these origins (comma-separated https://host,\n"+
		"as the deployment's SKILLDROP_ORIGINS; default: the origins the catalog records)")
	defaultVis := defaultVisibilityFlag(fs)
	verify := fs.Bool("verify", false, "re-hash and repair the blobs the catalog pins, instead of reconciling the keys")
	asJSON := fs.Bool("json", false, "with --verify, print one JSON document instead of lines")
	signingKey := signingKeyFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	signer, code, ok := dirSigner(fs.Name(), &tg, signingKey, stderr)
	if !ok {
		return code
	}
	switch {
	case *asJSON && !*verify:
		printf(stderr, "skilldrop reindex: --json applies to --verify only\n")
		return exitUsage
	case *verify && *namespace != "":
		printf(stderr, "skilldrop reindex: --metric-namespace has no effect with --verify, which counts no metric\n")
		return exitUsage
	}
	lv, err := level()
	if err != nil {
		printf(stderr, "skilldrop reindex: %v\n", err)
		return exitUsage
	}
	vis, err := defaultVis()
	if err != nil {
		printf(stderr, "skilldrop reindex: %v\n", err)
		return exitUsage
	}
	lvl, _ := obs.ParseLevel(lv)
	var origins []*url.URL
	for o := range strings.SplitSeq(*originList, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		u, err := indexer.ParseOrigin(o)
		if err != nil {
			printf(stderr, "skilldrop reindex: --origin: %v\n", err)
			return exitUsage
		}
		origins = append(origins, u)
	}
	logger := obs.NewLogger(stderr, lvl)
	tg.log = logger
	st, closeStore, code, ok := tg.openFor(ctx, fs.Name(), stderr)
	if !ok {
		return code
	}
	defer closeStore()
	if *verify {
		return runBlobVerify(ctx, &tg, st, logger, *asJSON, stdout, stderr)
	}
	metrics, err := tg.metrics(metricNamespace(*namespace), logger)
	if err != nil {
		printf(stderr, "skilldrop reindex: --metric-namespace: %v\n", err)
		return exitUsage
	}
	ix, err := indexer.New(indexer.Config{Store: st, Origins: origins, KeepOrigins: true, Logger: logger, Auditor: obs.NewAuditor(logger), Metrics: metrics,
		Bucket: tg.bucket, DefaultVisibility: vis, ConfigSettle: tg.configSettle(), Signer: signer})
	if err != nil {
		printf(stderr, "skilldrop reindex: %v\n", err)
		return exitFailure
	}
	res, rerr := ix.Reindex(ctx)
	out := &resultWriter{w: stdout}
	if res != nil {
		for _, c := range res.Published {
			note := ""
			if r := restoredAs(res, c); r != "" {
				note = " (restored: was " + r + ")"
			}
			out.printf("published %s %s %s %s%s\n", c.Kind, c.ID(), printable(c.Version), printable(c.Source), note)
		}
		for _, c := range res.Withdrawn {
			out.printf("withdrawn %s %s %s %s\n", c.Kind, c.ID(), printable(c.Version), printable(c.Source))
		}
		for _, c := range res.Gone {
			out.printf("gone %s %s %s %s %s: %s\n", c.Kind, c.ID(), printable(c.Version), printable(c.Source), c.Gone.Code,
				oneLine(c.Gone.Reason))
		}
		for _, k := range res.Held {
			out.printf("held %s: waits for a valid agent-skills.yaml\n", printable(k))
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
			if len(res.Held) > 0 {
				rejected += fmt.Sprintf(", %d held", len(res.Held))
			}
			unchanged := strconv.Itoa(len(res.Unchanged)) + " unchanged"
			if res.Resigned > 0 {
				unchanged += fmt.Sprintf(" (%d signed again with the new key)", res.Resigned)
			}
			published := strconv.Itoa(len(res.Published)) + " published"
			if len(res.Restored) > 0 {
				published += fmt.Sprintf(" (%d restored)", len(res.Restored))
			}
			out.printf("reindexed %s: %s, %d withdrawn, %s, %s, %s, catalog revision %d\n",
				tg.String(), published, len(res.Withdrawn), goneSummary(res.Gone), rejected, unchanged, res.Revision)
		}
	}
	if rerr != nil {
		printf(stderr, "skilldrop reindex: %v\n", rerr)
		return finish(out, stderr, exitFailure)
	}
	if tg.bucket != "" {
		warnNoOrigin(ctx, st, &tg, stderr)
	}
	return finish(out, stderr, exitOK)
}

// restoredAs is why published version c had been out of service, when
// this run put it back ("": it had not been).
func restoredAs(res *indexer.Result, c indexer.Change) string {
	for _, r := range res.Restored {
		if r.Kind == c.Kind && r.Listing == c.Listing && r.Name == c.Name && r.Version == c.Version && r.Gone != nil {
			return r.Gone.Code
		}
	}
	return ""
}

// goneSummary counts the versions taken out of service, by code:
// "1 gone (1 scan_blocked)".
func goneSummary(gone []indexer.Change) string {
	s := strconv.Itoa(len(gone)) + " gone"
	byCode := map[string]int{}
	for _, c := range gone {
		if c.Gone != nil {
			byCode[c.Gone.Code]++
		}
	}
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(byCode)) {
		parts = append(parts, fmt.Sprintf("%d %s", byCode[code], code))
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// warnNoOrigin says, after a re-index of a bucket, when its catalog records
// no origin: then no large document is rendered into the bucket, and the
// api answers one too large for a Lambda response with 503.
func warnNoOrigin(ctx context.Context, st store.Store, tg *target, stderr io.Writer) {
	h, err := catalog.ReadHead(ctx, st, "")
	if err != nil || len(h.DocumentOrigins) > 0 {
		return
	}
	printf(stderr, "skilldrop reindex: warning: the catalog of %s records no origin, so no document too large for a Lambda response "+
		"(over 6 MB: an index of about 15,000 skills, fewer with long descriptions) is rendered into the bucket, and the api answers such a "+
		"document with 503. Run the stack's ReindexCommand output instead (the indexer knows its origin), or this command again with "+
		"--origin set to the stack's BaseUrl output (https://<PublicBaseUrl, else the API's domain>).\n", tg)
}
