package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// progressFrom is the number of blobs from which `reindex --verify` reports
// its progress on stderr, every twentieth of the way.
var progressFrom = 1000

// verifyDoc is the JSON shape of `reindex --verify --json` (README:
// "reindex --verify --json").
type verifyDoc struct {
	Target string `json:"target"`
	*indexer.VerifyResult
}

// runBlobVerify verifies and repairs the blobs of the target's catalog
// (indexer.Verify), prints what it found, and returns the exit status:
// exitOK when every blob is intact or repaired, else exitFailure.
func runBlobVerify(ctx context.Context, tg *target, st store.Store, logger *slog.Logger, asJSON bool, stdout, stderr io.Writer) int {
	ix, err := indexer.New(indexer.Config{Store: st, Logger: logger, Bucket: tg.bucket})
	if err != nil {
		printf(stderr, "skilldrop reindex: %v\n", err)
		return exitFailure
	}
	res, err := ix.Verify(ctx, indexer.VerifyOptions{Progress: progressTo(stderr)})
	out := &resultWriter{w: stdout}
	if errors.Is(err, store.ErrNotFound) {
		if asJSON {
			out.json(verifyDoc{Target: tg.String(), VerifyResult: complete(&indexer.VerifyResult{})})
		} else {
			out.printf("%s has no catalog yet: nothing to verify\n", tg.String())
		}
		return finish(out, stderr, exitOK)
	}
	if err != nil {
		// Stopped or unrecorded: what it repaired is said, the counts are not.
		if res != nil && !asJSON {
			printBlobs(out, res)
		}
		printf(stderr, "skilldrop reindex --verify: %v\n", err)
		return finish(out, stderr, exitFailure)
	}
	if asJSON {
		out.json(verifyDoc{Target: tg.String(), VerifyResult: complete(res)})
	} else {
		printBlobs(out, res)
		out.printf("verified %s: %s\n", printable(tg.String()), verifyCounts(res.Verify))
	}
	if res.Unrecoverable+res.Failed > 0 {
		return finish(out, stderr, exitFailure)
	}
	return finish(out, stderr, exitOK)
}

// complete gives res empty lists where it has none, so the JSON shape
// never depends on what was found.
func complete(res *indexer.VerifyResult) *indexer.VerifyResult {
	if res.Problems == nil {
		res.Problems = []catalog.BlobProblem{}
	}
	if res.Repairs == nil {
		res.Repairs = []indexer.Repair{}
	}
	return res
}

// progressTo reports the progress of a verify of many blobs on w: a line
// every twentieth of the way, and at the end.
func progressTo(w io.Writer) func(done, total int) {
	return func(done, total int) {
		if total < progressFrom {
			return
		}
		if step := max(total/20, 1); done%step == 0 || done == total {
			printf(w, "skilldrop reindex --verify: %d of %d blobs checked\n", done, total)
		}
	}
}

// printBlobs writes one line per blob repaired or not vouched for.
func printBlobs(out *resultWriter, res *indexer.VerifyResult) {
	for _, r := range res.Repairs {
		out.printf("repaired %s %s %s %s %s (%s) from %s%s\n", r.Kind, printable(r.Entry), printable(r.Version), fileOrDash(r.File),
			r.Digest, r.Was, printable(r.From), pinnedBy(r.Others))
	}
	for _, p := range res.Problems {
		out.printf("%s\n", problemLine(p))
	}
}

// problemLine is one blob a verify could not vouch for, as the plain
// outputs of reindex --verify and status print it.
func problemLine(p catalog.BlobProblem) string {
	return p.State + " " + string(p.Kind) + " " + printable(p.Entry) + " " + printable(p.Version) + " " + fileOrDash(p.File) + " " +
		p.Digest.String() + " " + p.Code + ": " + oneLine(p.Message) + pinnedBy(p.Others)
}

// verifyCounts is the summary of a verify's counts.
func verifyCounts(v catalog.Verify) string {
	return fmt.Sprintf("%d blobs, %d verified, %d repaired, %d unrecoverable, %d failed; %d versions skipped (external or withdrawn)",
		v.Blobs, v.Verified, v.Repaired, v.Unrecoverable, v.Failed, v.Skipped)
}

func fileOrDash(path string) string {
	if path == "" {
		return "-"
	}
	return printable(path)
}

func pinnedBy(others int) string {
	if others == 0 {
		return ""
	}
	return fmt.Sprintf(" (pinned by %d more)", others)
}

// renderBlobVerify writes the status document's record of the last verify.
func renderBlobVerify(out *resultWriter, v *catalog.Verify) {
	if v == nil {
		return
	}
	out.printf("\nlast verify (reindex --verify), finished %s: %s\n", v.Finished.UTC().Format(time.RFC3339), verifyCounts(*v))
	for _, p := range v.Problems {
		out.printf("  %s\n", problemLine(p))
	}
	if named := len(v.Problems); named < v.Unrecoverable+v.Failed {
		out.printf("  (the first %d named)\n", named)
	}
}
