package main

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

func init() {
	register(&command{
		name:    "scan",
		summary: "scan files, folders and archives for dangerous content with the indexer's rule pack, executing nothing",
		args:    "[--block SEVERITY] [--json] FILE-or-FOLDER...",
		about: `Scans every file statically, as the indexer scans an upload before it publishes it: a folder's regular files
(symbolic links are not followed), an archive's files as the validator reads them (nothing is extracted), any
other file as it is. Prints, per argument, "<verdict> <path>" (clean, warn or block) and one line per finding,
"  <file>:<line>: <severity> <rule>: <message>"; with --json, one JSON document (its shape is in the README).
--block sets the lowest severity that blocks (critical, high, medium or low; default high), as agent-skills.yaml's
scan.block does.

exit status: 0 when nothing blocks, 1 when something blocks (or an archive is refused or a file cannot be read),
2 on usage errors`,
		run: runScan,
	})
}

// scanned is the outcome for one argument, and the JSON shape of
// `scan --json` (README: "scan --json").
type scanned struct {
	Path     string         `json:"path"`
	Verdict  scan.Verdict   `json:"verdict,omitempty"`
	Findings []scan.Finding `json:"findings"`
	// Code and Message say why the path could not be scanned.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// maxScanFile bounds a folder's file read for a scan; larger ones are
// scanned up to it (the validator would refuse them whole anyway).
const maxScanFile = archive.DefaultMaxExpandedBytes

func runScan(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["scan"].flagSet(stderr)
	asJSON := fs.Bool("json", false, "print one JSON document instead of lines")
	block := fs.String("block", scan.DefaultBlock.String(), "the lowest severity that blocks: critical, high, medium or low")
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	sev, err := scan.ParseSeverity(*block)
	if err != nil {
		printf(stderr, "skilldrop scan: --block: %v\n", err)
		return exitUsage
	}
	if len(paths) == 0 {
		printf(stderr, "skilldrop scan: no FILE-or-FOLDER given\n")
		fs.Usage()
		return exitUsage
	}
	if code, ok := checkPathsExist("skilldrop scan", paths, stderr); !ok {
		return code
	}
	pol := scan.Policy{Block: sev}
	status := exitOK
	results := make([]scanned, 0, len(paths))
	for _, p := range paths {
		r := scanPath(p, pol)
		if r.Verdict == scan.Block || r.Code != "" {
			status = exitFailure
		}
		results = append(results, r)
	}
	out := &resultWriter{w: stdout}
	if *asJSON {
		out.json(struct {
			OK      bool      `json:"ok"`
			Engine  string    `json:"engine"`
			Results []scanned `json:"results"`
		}{status == exitOK, scan.Engine(), results})
		return finish(out, stderr, status)
	}
	for _, r := range results {
		if r.Code != "" {
			out.printf("rejected %s %s: %s\n", printable(r.Path), r.Code, oneLine(r.Message))
			continue
		}
		out.printf("%s %s\n", r.Verdict, printable(r.Path))
		for _, f := range r.Findings {
			out.printf("  %s\n", findingLine(f))
		}
	}
	return finish(out, stderr, status)
}

// scanPath scans one argument.
func scanPath(p string, pol scan.Policy) scanned {
	files, err := filesOf(p)
	if err != nil {
		r := rejected(p, err)
		return scanned{Path: p, Code: r.Code, Message: r.Message, Findings: []scan.Finding{}}
	}
	res := pol.Judge(scan.Files(files), nil)
	if res.Findings == nil {
		res.Findings = []scan.Finding{}
	}
	return scanned{Path: p, Verdict: res.Verdict, Findings: res.Findings}
}

// filesOf reads what a path holds, as the scanner reads an artifact.
func filesOf(p string) ([]archive.File, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return folderFiles(p)
	}
	data, err := readAtMost(p, maxScanFile)
	if err != nil {
		return nil, err
	}
	if _, ok := archive.FormatOf(p); ok {
		res, err := archive.Validate(data, p, archive.Limits{})
		if err != nil {
			return nil, wrapArchive(err)
		}
		return res.Files, nil
	}
	return []archive.File{{Path: filepath.Base(p), Data: data}}, nil
}

// folderFiles reads a folder's regular files, with slash-separated paths
// relative to it; symbolic links are not followed.
func folderFiles(dir string) ([]archive.File, error) {
	var out []archive.File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := readAtMost(p, maxScanFile)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, archive.File{Path: filepath.ToSlash(rel), Data: data})
		return nil
	})
	return out, err
}

// wrapArchive gives an archive's refusal the artifact error shape, so
// rejected reports its stable code.
func wrapArchive(err error) error {
	if e, ok := archive.AsError(err); ok {
		return &artifact.Error{Code: e.Code, Entry: e.Entry, Msg: e.Msg, Err: err}
	}
	return err
}

// findingLine is a finding for the terminal: the file name (from the
// artifact) escaped, the rest the scanner's own words.
func findingLine(f scan.Finding) string {
	loc := printable(f.File)
	if f.Line > 0 {
		loc += ":" + strconv.Itoa(f.Line)
	}
	return loc + ": " + f.Severity.String() + " " + f.Rule + ": " + oneLine(f.Message)
}
