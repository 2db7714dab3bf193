package main

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/store"
)

func init() {
	register(&command{
		name:    "status",
		summary: "print the published skills and sub-agents with their latest versions, and the recent rejections",
		args:    "(--bucket NAME | --dir DIR) [--all] [--rejections N]",
		run:     runStatus,
	})
}

// runStatus reads the catalog and the status document of the target and
// prints them as tables. A target with no catalog yet is not an error.
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["status"].flagSet(stderr)
	var tg target
	tg.flags(fs)
	all := fs.Bool("all", false, "also list withdrawn skills and sub-agents")
	limit := fs.Int("rejections", 20, "how many recent rejections to print (0: none)")
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
	c, _, err := catalog.Load(ctx, st)
	if errors.Is(err, store.ErrNotFound) {
		printf(stdout, "%s has no catalog yet: nothing was indexed (run `skilldrop reindex`)\n", tg.String())
		return exitOK
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
	out := &resultWriter{w: stdout}
	renderStatus(out, tg.String(), c, s, *all, *limit)
	return finish(out, stderr, exitOK)
}

// renderStatus writes the catalog and status document as tables.
func renderStatus(out *resultWriter, where string, c *catalog.Catalog, s *catalog.Status, all bool, limit int) {
	out.printf("%s: catalog revision %d, updated %s\n", where, c.Revision, c.UpdatedAt.UTC().Format(time.RFC3339))
	if c.Config != nil {
		out.printf("config: agent-skills.yaml %s, in force since %s\n", c.Config.Digest, c.Config.AppliedAt.UTC().Format(time.RFC3339))
	}
	entries := func(title string, list []*catalog.Entry) {
		tw := tabwriter.NewWriter(&writerOf{out}, 0, 4, 2, ' ', 0)
		n := 0
		for _, e := range list {
			if !all && !e.Live() {
				continue
			}
			if n == 0 {
				out.printf("\n%s\n", title)
				_, _ = io.WriteString(tw, "  NAME\tLATEST\tTYPE\tVISIBILITY\tVERSIONS\tSOURCE\tNOTE\n")
			}
			n++
			typ := ""
			if v := e.LatestVersion(); v != nil {
				typ = string(v.Type)
			}
			var notes []string
			if e.Withdrawn {
				notes = append(notes, "withdrawn")
			}
			if e.ExternalURL != "" {
				notes = append(notes, "external "+e.ExternalURL)
			}
			if len(e.Listings) > 0 {
				notes = append(notes, "listings "+strings.Join(e.Listings, ","))
			}
			if len(e.Contenders) > 0 {
				notes = append(notes, "contenders "+strings.Join(e.Contenders, ","))
			}
			_, _ = io.WriteString(tw, "  "+strings.Join([]string{e.ID(), printable(e.Latest), typ, string(e.Visibility),
				strconv.Itoa(e.VersionCount()), e.Source, strings.Join(notes, "; ")}, "\t")+"\n")
		}
		if n == 0 {
			out.printf("\n%s: none\n", title)
		}
		_ = tw.Flush()
	}
	entries("skills", c.SortedSkills())
	entries("sub-agents", c.SortedSubagents())
	if limit > 0 {
		rs := s.Rejections
		if len(rs) > limit {
			rs = rs[:limit]
		}
		if len(rs) == 0 {
			out.printf("\nrecent rejections: none\n")
		} else {
			out.printf("\nrecent rejections (newest first)\n")
			tw := tabwriter.NewWriter(&writerOf{out}, 0, 4, 2, ' ', 0)
			for _, r := range rs {
				_, _ = io.WriteString(tw, "  "+strings.Join([]string{r.Time.UTC().Format(time.RFC3339), printable(r.Key), r.Code, oneLine(r.Message)}, "\t")+"\n")
			}
			_ = tw.Flush()
		}
	}
	if len(s.Warnings) > 0 {
		out.printf("\nwarnings\n")
		for _, key := range slices.Sorted(maps.Keys(s.Warnings)) {
			for _, w := range s.Warnings[key] {
				out.printf("  %s: %s\n", printable(key), oneLine(w))
			}
		}
	}
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
