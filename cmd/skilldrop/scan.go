package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/publish"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

func init() {
	register(&command{
		name:    "scan",
		summary: "scan files, folders and archives for dangerous content with the indexer's rule pack, executing nothing",
		args:    "[--block SEVERITY] [--json] FILE-or-FOLDER... | --rules [--block SEVERITY] [--json]",
		about: `Scans every file statically, as the indexer scans an upload before it publishes it: a skill folder's regular
files (one holding SKILL.md or agent.md; an archive in it is a nested archive), an archive's files as the
validator reads them (nothing is extracted), any other file as it is. Any other folder (a bucket, a folder of
skills) is the artifacts it holds, each scanned on its own: every skill folder in it, and every other file, an
archive as an archive. Symbolic links are not followed. Prints, per argument, "<verdict> <path>" (clean, warn or block) and one line per finding,
"  <file>:<line>: <severity> <rule>: <message>", then the digest an allow in agent-skills.yaml names (a skill
folder's: of its SKILL.md in a bucket layout, which serves it alone, else of the zip publish packs); with --json, one JSON document (its shape is in the README).
--block sets the lowest severity that blocks (critical, high, medium or low; default high), as agent-skills.yaml's
scan.block does. scan judges by that alone: it reads no agent-skills.yaml, so a finding a bucket's allow lets
through still shows here as it is; skilldrop validate judges a file or folder of a bucket under that bucket's
config (its scan.block and the allows of the entry), as the indexer will.

--rules prints the rule pack instead, the engine version and every rule a finding can name: its id (what an allow
in agent-skills.yaml lists), category, severity, whether it blocks under --block, and its message; with --json,
one JSON document (its shape is in the README). Rules that only take part in a combination are not listed: no
finding names them.

An archive the validator refuses only for its root SKILL.md (none there, its files under a top folder, or a
frontmatter that does not parse) is reported as refused, and its files are scanned all the same.

A folder with no regular file is reported as nothing_to_scan (not clean), a file larger than the 10 MiB scan
reads as too_large, its start scanned all the same (the validator refuses it whole), and an archive by its bytes
not named *.zip, *.tar.gz or *.tgz as archive_name, its files scanned. Of a folder laid out like the bucket, only
what uploads fill is read (skills/, listings/, subagents/, files/, agent-skills.yaml), not the indexer's state.

exit status: 0 when nothing blocks, 1 when something blocks (or an archive is refused, a file cannot be read, a
folder is empty or a file too large), 2 on usage errors (a path that does not exist)`,
		run: runScan,
	})
}

// scanned is the outcome for one argument, and the JSON shape of
// `scan --json` (README: "scan --json").
type scanned struct {
	Path    string       `json:"path"`
	Verdict scan.Verdict `json:"verdict,omitempty"`
	// Digest is a file's or an archive's, or a skill folder's (folderDigest),
	// as an allow names the bytes it is for.
	Digest   string         `json:"digest,omitempty"`
	Findings []scan.Finding `json:"findings"`
	// Code and Message say why the path could not be scanned.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// maxScanFile bounds what a scan reads of a file: a larger one is scanned
// up to it and reported as too large (codeTooLargeToScan), as the
// validator refuses it whole anyway.
var maxScanFile int64 = archive.DefaultMaxExpandedBytes

// The codes of paths scan could not scan whole: nothing in them to scan (a
// folder without a regular file: not clean, but most likely the wrong
// path), or a file larger than it reads.
const (
	codeNothingToScan  = "nothing_to_scan"
	codeTooLargeToScan = "too_large"
	codeArchiveName    = "archive_name"
)

// scanError is why scan could not scan a path whole, with its code.
type scanError struct{ code, msg string }

func (e *scanError) Error() string { return e.msg }

// tooLarge is the refusal of the files a scan read only the first
// maxScanFile bytes of.
func tooLarge(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	return &scanError{codeTooLargeToScan, fmt.Sprintf("%s: larger than the %s scan reads of a file; only the start is scanned, and the validator refuses the artifact",
		strings.Join(quoteAll(paths), ", "), bytesize.Format(maxScanFile))}
}

func runScan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["scan"].flagSet(stderr)
	asJSON := fs.Bool("json", false, "print one JSON document instead of lines")
	block := fs.String("block", scan.DefaultBlock.String(), "the lowest severity that blocks: critical, high, medium or low")
	rules := fs.Bool("rules", false, "print the rule pack (engine version, and each rule's id, category, severity and message) instead of scanning")
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	sev, err := scan.ParseSeverity(*block)
	if err != nil {
		printf(stderr, "skilldrop scan: --block: %v\n", err)
		return exitUsage
	}
	if *rules {
		if len(paths) > 0 {
			printf(stderr, "skilldrop scan: --rules takes no FILE-or-FOLDER, got %d\n", len(paths))
			return exitUsage
		}
		return printRules(stdout, stderr, scan.Policy{Block: sev}, *asJSON)
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
	for _, arg := range paths {
		for _, p := range scanTargets(arg) {
			if ctx.Err() != nil {
				printf(stderr, "skilldrop scan: interrupted: %d scanned, the rest not\n", len(results))
				return exitFailure
			}
			r := scanPath(p, pol)
			if r.Verdict == scan.Block || r.Code != "" {
				status = exitFailure
			}
			results = append(results, r)
		}
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
			if r.Verdict == "" {
				continue
			}
			what := "its files as the validator read them, though it refuses the archive"
			if r.Code == codeTooLargeToScan {
				what = "in the part it read; the rest is not scanned"
			}
			out.printf("%s %s (%s)\n", r.Verdict, printable(r.Path), what)
		} else {
			out.printf("%s %s\n", r.Verdict, printable(r.Path))
		}
		for _, f := range r.Findings {
			out.printf("  %s\n", findingLine(f))
		}
		if len(r.Findings) > 0 && r.Digest != "" && r.Code == "" {
			out.printf("  digest %s (what an allow in agent-skills.yaml names, with the rules above)\n", r.Digest)
		}
	}
	return finish(out, stderr, status)
}

// packRule is one rule as `scan --rules` lists it, and the JSON shape of
// its rules (README: "scan --rules --json").
type packRule struct {
	ID       string        `json:"id"`
	Category scan.Category `json:"category"`
	Severity scan.Severity `json:"severity"`
	Blocks   bool          `json:"blocks"`
	Message  string        `json:"message"`
}

// printRules prints the embedded rule pack: the rules a finding can name
// (signals, parts of combinations only, never can), in the pack's order.
func printRules(stdout, stderr io.Writer, pol scan.Policy, asJSON bool) int {
	pack := scan.Default()
	list := []packRule{}
	for _, r := range pack.Rules() {
		if r.Signal() {
			continue
		}
		list = append(list, packRule{ID: r.ID, Category: r.Category, Severity: r.Severity, Blocks: r.Severity >= pol.Block, Message: r.Message})
	}
	out := &resultWriter{w: stdout}
	if asJSON {
		out.json(struct {
			Engine string     `json:"engine"`
			Block  string     `json:"block"`
			Rules  []packRule `json:"rules"`
		}{pack.Engine(), pol.Block.String(), list})
		return finish(out, stderr, exitOK)
	}
	out.printf("%s: %d rules; %s and above block (an allow in agent-skills.yaml names a rule by its id)\n", pack.Engine(), len(list), pol.Block)
	tw := tabwriter.NewWriter(&writerOf{out}, 0, 4, 2, ' ', 0)
	_, _ = io.WriteString(tw, "  ID\tCATEGORY\tSEVERITY\tBLOCKS\tMESSAGE\n")
	for _, r := range list {
		blocks := "no"
		if r.Blocks {
			blocks = "yes"
		}
		_, _ = io.WriteString(tw, "  "+strings.Join([]string{r.ID, string(r.Category), r.Severity.String(), blocks, oneLine(r.Message)}, "\t")+"\n")
	}
	_ = tw.Flush()
	return finish(out, stderr, exitOK)
}

// scanTargets are the artifacts a path holds, each scanned on its own as
// the indexer would read it: a file, or a skill folder (one holding
// SKILL.md or agent.md), as it is; any other folder (a bucket, a folder
// of skills) is what it holds: each skill folder in it, and each other
// file, archives included, which are scanned as archives, never as a
// nested archive of the folder. Of a folder laid out like the bucket,
// only what uploads fill (skills/, listings/, subagents/, files/,
// agent-skills.yaml; no dot-file) is read, not the indexer's state beside
// it. Symbolic links are not followed.
func scanTargets(p string) []string {
	if !isDir(p) || isSkillFolder(p) {
		return []string{p}
	}
	var out []string
	_, bucket := layoutKeys(p)
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			// A folder that cannot be read: scanned on its own, which
			// reports why.
			out = append(out, q)
			return filepath.SkipDir
		case q == p:
			return nil
		case bucket && filepath.Dir(q) == filepath.Clean(p) && !uploaded(d.Name(), d.IsDir()):
			// A bucket's own state (blobs/, catalog/, .skilldrop/ …) is
			// the service's, not an upload's.
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case bucket && strings.HasPrefix(d.Name(), "."):
			// Dot-files the bucket ignores too.
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case d.IsDir() && isSkillFolder(q):
			out = append(out, q)
			return filepath.SkipDir
		case d.Type().IsRegular():
			out = append(out, q)
		}
		return nil
	})
	if len(out) == 0 {
		return []string{p} // nothing to scan, which its scan reports
	}
	return out
}

// uploaded reports whether a bucket's top-level entry holds uploads: the
// source prefixes, files/ and agent-skills.yaml.
func uploaded(name string, dir bool) bool {
	if !dir {
		return name == artifact.ConfigKey
	}
	for _, prefix := range []string{artifact.SkillsPrefix, artifact.ListingsPrefix, artifact.SubagentsPrefix, artifact.FilesPrefix} {
		if name+"/" == prefix {
			return true
		}
	}
	return false
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// isSkillFolder reports whether dir holds a SKILL.md or an agent.md.
func isSkillFolder(dir string) bool {
	return isRegular(filepath.Join(dir, artifact.SkillFile)) || isRegular(filepath.Join(dir, artifact.AgentFile))
}

// scanPath scans one artifact. An archive the validator refuses only for
// its SKILL.md (files under a top folder, as downloads often are, or a
// broken frontmatter) is refused and scanned all the same: what it holds
// matters to whoever is about to fix and upload it.
func scanPath(p string, pol scan.Policy) scanned {
	files, sum, refused, err := filesOf(p)
	if err != nil {
		r := scanRejected(p, err)
		return scanned{Path: p, Code: r.Code, Message: r.Message, Findings: []scan.Finding{}}
	}
	res := pol.Judge(scan.Files(files), nil)
	if res.Findings == nil {
		res.Findings = []scan.Finding{}
	}
	out := scanned{Path: p, Verdict: res.Verdict, Findings: res.Findings}
	if !sum.IsZero() {
		out.Digest = sum.String()
	}
	if refused != nil {
		r := scanRejected(p, refused)
		out.Code, out.Message = r.Code, r.Message
	}
	return out
}

// scanRejected is rejected, with scan's own codes.
func scanRejected(p string, err error) validation {
	if e, ok := errors.AsType[*scanError](err); ok {
		return validation{Path: p, Code: e.code, Message: e.msg}
	}
	return rejected(p, err)
}

// filesOf reads what a path holds, as the scanner reads an artifact, and
// a file's digest (zero for a folder); refused is why the validator
// refuses an archive whose files it read nonetheless (its SKILL.md is
// missing or invalid).
func filesOf(p string) (files []archive.File, sum digest.Digest, refused, err error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, sum, nil, err
	}
	if st.IsDir() {
		files, large, err := folderFiles(p)
		if err == nil && len(files) == 0 {
			err = &scanError{codeNothingToScan, "the folder holds no regular file to scan"}
		}
		if err == nil && len(large) == 0 {
			sum = folderDigest(p)
		}
		return files, sum, tooLarge(large), err
	}
	data, err := readAtMost(p, maxScanFile)
	if err != nil {
		return nil, sum, nil, err
	}
	if int64(len(data)) > maxScanFile {
		// Its digest would be of the start alone: none is given.
		return []archive.File{{Path: filepath.Base(p), Data: data[:maxScanFile]}}, sum, tooLarge([]string{filepath.Base(p)}), nil
	}
	if filepath.Base(p) != skillsconfig.Key {
		// An allow names an upload's bytes, never the config's (validate
		// names each inline body's).
		sum = digest.Of(data)
	}
	if _, ok := archive.FormatOf(p); ok {
		res, err := archive.Validate(data, p, archive.Limits{})
		if err == nil {
			return res.Files, sum, nil, nil
		}
		if !skillMDOnly(err) {
			return nil, sum, nil, wrapArchive(err)
		}
		c, cerr := archive.Contents(data, p, archive.Limits{})
		if cerr != nil {
			return nil, sum, nil, wrapArchive(err)
		}
		return c.Files, sum, wrapArchive(err), nil
	}
	if ext := archiveByContent(data); ext != "" {
		// An archive by its bytes, not by its name (evil.ZIP, a .skill):
		// the bucket takes no such key, and the scan reads its files all
		// the same, rather than one opaque file.
		if c, err := archive.Contents(data, filepath.Base(p)+ext, archive.Limits{}); err == nil {
			return c.Files, sum, &scanError{codeArchiveName, fmt.Sprintf("an archive (%s) not named *.zip, *.tar.gz or *.tgz, "+
				"which the bucket refuses; its files are scanned as the validator would read them", strings.TrimPrefix(ext, "."))}, nil
		}
	}
	return []archive.File{{Path: filepath.Base(p), Data: data}}, sum, nil, nil
}

// archiveByContent is the extension of the archive format data starts
// with (".zip", ".tar.gz"), or "".
func archiveByContent(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")), bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return ".zip"
	case bytes.HasPrefix(data, []byte("\x1f\x8b")):
		return ".tar.gz"
	}
	return ""
}

// folderDigest is the digest of what the bucket reads from a skill or
// sub-agent folder, what an allow names: inside a bucket layout the
// SKILL.md (or agent.md) it serves alone, else what publish uploads (the
// zip it packs); zero when there is none (publish would refuse it).
func folderDigest(dir string) digest.Digest {
	for _, name := range []string{artifact.SkillFile, artifact.AgentFile} {
		f := filepath.Join(dir, name)
		if _, ok := artifact.BucketKeyOf(f); ok && isRegular(f) {
			if data, err := readAtMost(f, maxScanFile); err == nil && int64(len(data)) <= maxScanFile {
				return digest.Of(data)
			}
			return digest.Digest{}
		}
	}
	if up, err := publish.Prepare(dir, publish.Options{}); err == nil {
		return digest.Of(up.Body)
	}
	return digest.Digest{}
}

// skillMDOnly reports whether the validator refused an archive for its
// root SKILL.md alone: none there, or one that does not parse.
func skillMDOnly(err error) bool {
	e, ok := archive.AsError(err)
	if !ok {
		return false
	}
	_, fromSkill := skillmd.AsError(e.Err)
	return e.Code == archive.CodeMissingSkillMD || e.Entry == "SKILL.md" && (fromSkill || e.Code == skillmd.CodeInvalidFrontmatter)
}

// folderFiles reads a folder's regular files, with slash-separated paths
// relative to it, and lists those larger than maxScanFile (read up to it);
// symbolic links are not followed.
func folderFiles(dir string) (out []archive.File, large []string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
		rel = filepath.ToSlash(rel)
		if int64(len(data)) > maxScanFile {
			data = data[:maxScanFile]
			large = append(large, rel)
		}
		out = append(out, archive.File{Path: rel, Data: data})
		return nil
	})
	return out, large, err
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
