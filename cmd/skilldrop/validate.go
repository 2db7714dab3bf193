package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/publish"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "validate skill files and archives with the rules the indexer applies",
		args:    "[flags] FILE...",
		run:     runValidate,
	})
}

// codeUnreadable is the rejection code for a file that cannot be read.
const codeUnreadable = "unreadable"

// runValidate prints one line per file, "ok <file> <name> <type> <digest>"
// or "rejected <file> <code>: <message>", and warnings on stderr. It exits
// 0 when every file is valid, 1 when any is rejected.
func runValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["validate"].flagSet(stderr)
	subagent := fs.Bool("subagent", false, "read .md files as sub-agents (agent.md); paths with a subagents/ element always are")
	lim := archive.DefaultLimits()
	fs.Int64Var(&lim.MaxArtifactBytes, "max-artifact-bytes", lim.MaxArtifactBytes, "cap on each file's size; may lower, never raise, the default")
	fs.Int64Var(&lim.MaxExpandedBytes, "max-expanded-bytes", lim.MaxExpandedBytes, "cap on an archive's decompressed file content (0: the default)")
	fs.Int64Var(&lim.MaxMetadataBytes, "max-metadata-bytes", lim.MaxMetadataBytes, "cap on an archive's decompressed headers (tar headers, PAX records; 0: the default)")
	fs.IntVar(&lim.MaxEntries, "max-entries", lim.MaxEntries, "cap on an archive's entries, directories included (0: the default)")
	fs.Float64Var(&lim.MaxRatio, "max-decompression-ratio", lim.MaxRatio, "cap on an archive's content bytes ÷ archive bytes (0: the default)")
	fs.IntVar(&lim.MaxClockSkewSecs, "max-clock-skew-secs", lim.MaxClockSkewSecs, "accepted for configuration compatibility; no effect")
	files, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(files) == 0 {
		printf(stderr, "skilldrop validate: no FILE given\n")
		fs.Usage()
		return exitUsage
	}
	if lim.MaxArtifactBytes > archive.DefaultMaxArtifactBytes {
		printf(stderr, "skilldrop validate: -max-artifact-bytes may lower the %d-byte limit, not raise it\n", archive.DefaultMaxArtifactBytes)
		return exitUsage
	}
	if _, err := lim.Effective(); err != nil {
		printf(stderr, "skilldrop validate: %v\n", err)
		return exitUsage
	}
	status := exitOK
	out := &resultWriter{w: stdout}
	for _, f := range files {
		a, err := validateFile(f, *subagent, lim, stderr)
		if err != nil {
			status = exitFailure
			out.printf("rejected %s %s\n", printable(f), oneLine(rejection(err)))
			continue
		}
		out.printf("ok %s %s %s %s\n", printable(f), a.Name, a.Type, a.Digest)
		for _, w := range a.Warnings {
			printf(stderr, "warning %s: %s\n", printable(f), oneLine(w))
		}
	}
	if out.err != nil {
		printf(stderr, "skilldrop validate: write results: %v\n", out.err)
		return exitFailure
	}
	return status
}

// validateFile reads one local file, refusing an oversized one unread, and
// validates it as the indexer would the key its name implies.
func validateFile(path string, subagent bool, lim archive.Limits, stderr io.Writer) (*artifact.Artifact, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return validateFolder(path, lim, stderr)
	}
	k, err := artifact.LocalKey(path, subagent)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if err := artifact.CheckSize(st.Size(), lim); err != nil {
		return nil, err
	}
	// Bounded even when the size above was not the truth (a pipe, a file
	// growing while read).
	data, err := io.ReadAll(io.LimitReader(f, lim.MaxArtifactBytes+1))
	if err != nil {
		return nil, err
	}
	return artifact.Validate(k, data, lim)
}

// validateFolder validates a skill folder as what `skilldrop publish` would
// upload: the zip it packs, under the key it would use.
func validateFolder(dir string, lim archive.Limits, stderr io.Writer) (*artifact.Artifact, error) {
	if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); errors.Is(err, fs.ErrNotExist) {
		return nil, &artifact.Error{Code: archive.CodeMissingSkillMD, Entry: dir, Msg: "a skill folder holds a SKILL.md at its root"}
	}
	up, err := publish.Prepare(dir, publish.Options{Limits: lim})
	if err != nil {
		return nil, err
	}
	for _, name := range up.LeftOut {
		printf(stderr, "warning %s: %s is left out (dot-files are never packed)\n", printable(dir), printable(name))
	}
	k, err := artifact.ParseKey(up.Key)
	if err != nil {
		return nil, err
	}
	return artifact.Validate(k, up.Body, lim)
}

// rejection renders err as "<code>: <message>".
func rejection(err error) string {
	if _, ok := artifact.AsError(err); ok {
		return err.Error()
	}
	return codeUnreadable + ": " + err.Error()
}

// oneLine keeps a message on its output line.
func oneLine(s string) string { return lineBreaks.Replace(s) }

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
