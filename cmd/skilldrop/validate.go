package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/publish"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "validate skill files, folders, archives, sub-agents and agent-skills.yaml with the rules the indexer applies",
		args:    "[--subagent] [--json] [--max-…] FILE-or-FOLDER...",
		about: `Each FILE-or-FOLDER is read as the bucket contract reads it:
  <name>.md, <name>.zip, <name>.tar.gz, <name>.tgz  a skill (a .md is a sub-agent with --subagent or below a subagents/ directory)
  <name>/SKILL.md, <name>/agent.md                 a skill-md skill, a sub-agent
  <name>/ holding SKILL.md                         what skilldrop publish uploads: the zip it packs, skills/<name>.zip;
                                                   inside a directory laid out like the bucket (.../skills/<name>/),
                                                   what the bucket serves: its SKILL.md alone, as a skill-md
  <name>/ holding agent.md (and no SKILL.md)       a sub-agent: its agent.md
  agent-skills.yaml                                the operator config
The name a file or folder name implies must equal the frontmatter's (name_mismatch). Every artifact is scanned
as the indexer scans it, and judged under the default policy, or inside a directory laid out like the bucket
under that bucket's agent-skills.yaml (its scan.block, and its entry's caps and allows): what blocks is
rejected (scan_blocked), other findings are warnings ("scan: <file>:<line>: <severity> <rule>: <message>"); skilldrop scan prints findings alone.

Prints one line per argument: "ok <path> <name> <type> <digest>" (for agent-skills.yaml: "ok <path> - config <digest>")
or "rejected <path> <code>: <message>"; warnings and notes on stderr. With --json, one JSON document instead
(its shape is in the README).

exit status: 0 when all are valid, 1 when any is rejected, 2 on usage errors (a bad flag, a path that does not exist)`,
		hidden: []string{"max-clock-skew-secs"},
		run:    runValidate,
	})
}

// codeUnreadable is the rejection code for a path that exists but cannot
// be read (permissions, an I/O error).
const codeUnreadable = "unreadable"

// validation is the outcome for one argument; it is also the JSON shape
// of `validate --json` (README: "validate --json").
type validation struct {
	Path    string        `json:"path"`
	OK      bool          `json:"ok"`
	Name    string        `json:"name,omitempty"`
	Type    string        `json:"type,omitempty"` // skill-md, archive, agent-md or config
	Version string        `json:"version,omitempty"`
	Digest  digest.Digest `json:"digest,omitzero"`
	Size    int64         `json:"size,omitempty"`
	// Key is the bucket key the bytes described are (or would be) at.
	Key      string   `json:"key,omitempty"`
	Code     string   `json:"code,omitempty"`
	Message  string   `json:"message,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Scan is the content scan, judged under the default policy, or inside
	// a bucket layout under that bucket's agent-skills.yaml (its threshold,
	// and the allows its entry gives these bytes).
	Scan *scan.Result `json:"scan,omitempty"`
	// Publish is what `skilldrop publish` uploads instead, for a folder the
	// bucket serves otherwise (a skill folder inside a bucket layout).
	Publish *publishForm `json:"publish,omitempty"`
	// served is the key the bucket serves the folder from, for the note on
	// Publish (Key is left out of a rejection).
	served string
	// note is said on stderr beside the result (not part of the JSON).
	note string
}

// publishForm is what publish would upload, or why it would refuse.
type publishForm struct {
	Key     string        `json:"key,omitempty"`
	Type    string        `json:"type,omitempty"`
	Digest  digest.Digest `json:"digest,omitzero"`
	Code    string        `json:"code,omitempty"`
	Message string        `json:"message,omitempty"`
}

// runValidate validates every argument and prints the outcomes.
func runValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commands["validate"].flagSet(stderr)
	subagent := fs.Bool("subagent", false, "read .md files and folders as sub-agents (agent.md); paths below a subagents/ directory always are")
	asJSON := fs.Bool("json", false, "print one JSON document instead of lines")
	lim := archive.DefaultLimits()
	fs.Int64Var(&lim.MaxArtifactBytes, "max-artifact-bytes", lim.MaxArtifactBytes, "cap on each artifact's size (it may be lowered, never raised)")
	fs.Int64Var(&lim.MaxExpandedBytes, "max-expanded-bytes", lim.MaxExpandedBytes, "cap on an archive's decompressed file content")
	fs.Int64Var(&lim.MaxMetadataBytes, "max-metadata-bytes", lim.MaxMetadataBytes, "cap on an archive's decompressed headers (tar headers, PAX records)")
	fs.IntVar(&lim.MaxEntries, "max-entries", lim.MaxEntries, "cap on an archive's entries, directories included")
	fs.Float64Var(&lim.MaxRatio, "max-decompression-ratio", lim.MaxRatio, "cap on an archive's content bytes ÷ archive bytes")
	fs.IntVar(&lim.MaxClockSkewSecs, "max-clock-skew-secs", lim.MaxClockSkewSecs, "accepted for configuration compatibility; no effect")
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		printf(stderr, "skilldrop validate: no FILE-or-FOLDER given\n")
		fs.Usage()
		return exitUsage
	}
	if lim.MaxArtifactBytes > archive.DefaultMaxArtifactBytes {
		printf(stderr, "skilldrop validate: --max-artifact-bytes may lower the %s limit, not raise it\n", bytesize.Format(archive.DefaultMaxArtifactBytes))
		return exitUsage
	}
	if _, err := lim.Effective(); err != nil {
		printf(stderr, "skilldrop validate: %v\n", err)
		return exitUsage
	}
	if code, ok := checkPathsExist("skilldrop validate", paths, stderr); !ok {
		return code
	}
	status := exitOK
	results := make([]validation, 0, len(paths))
	for _, p := range paths {
		v := validatePath(p, *subagent, lim)
		if !v.OK {
			status = exitFailure
		}
		results = append(results, v)
	}
	out := &resultWriter{w: stdout}
	if *asJSON {
		out.json(struct {
			OK      bool         `json:"ok"`
			Results []validation `json:"results"`
		}{status == exitOK, results})
		return finish(out, stderr, status)
	}
	for _, v := range results {
		switch {
		case !v.OK:
			out.printf("rejected %s %s: %s\n", printable(v.Path), v.Code, oneLine(v.Message))
		case v.Type == typeConfig:
			out.printf("ok %s - %s %s\n", printable(v.Path), v.Type, v.Digest)
		default:
			out.printf("ok %s %s %s %s\n", printable(v.Path), v.Name, v.Type, v.Digest)
		}
		for _, w := range v.Warnings {
			printf(stderr, "warning %s: %s\n", printable(v.Path), oneLine(w))
		}
		for _, n := range []string{publishNote(v), v.note} {
			if n != "" {
				printf(stderr, "note %s: %s\n", printable(v.Path), n)
			}
		}
	}
	return finish(out, stderr, status)
}

// typeConfig is the type validate reports agent-skills.yaml as.
const typeConfig = "config"

// checkPathsExist refuses, as a usage error, paths that do not exist:
// nothing is validated or uploaded when one was mistyped.
func checkPathsExist(cmd string, paths []string, stderr io.Writer) (int, bool) {
	ok := true
	for _, p := range paths {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			printf(stderr, "%s: %s: no such file or directory\n", cmd, printable(p))
			ok = false
		}
	}
	if !ok {
		return exitUsage, false
	}
	return exitOK, true
}

// validatePath validates one argument.
func validatePath(p string, subagent bool, lim archive.Limits) validation {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return rejected(p, err)
	case st.IsDir():
		return validateFolder(p, subagent, lim)
	case filepath.Base(p) == artifact.ConfigKey:
		return validateConfig(p)
	}
	return validateFile(p, subagent, lim)
}

// validateFile validates a file as the key the bucket would hold it at: its
// own key when it lies in a directory laid out like the bucket, else the
// key `skilldrop publish` uploads it to.
func validateFile(p string, subagent bool, lim archive.Limits) validation {
	up, err := publish.Prepare(p, publish.Options{Subagent: subagent, Limits: lim})
	if err != nil {
		return rejected(p, err)
	}
	key := up.Key
	if bk, ok := artifact.BucketKeyOf(p); ok && (!subagent || bk.Kind == artifact.KindSubagent) {
		key = bk.Key
	}
	return validateAs(p, key, up.Body, lim)
}

// validateFolder validates a folder as what publish uploads, except where
// the bucket reads it otherwise: a skill folder inside a bucket layout
// (.../skills/<name>/) is served as its SKILL.md alone, a skill-md, which is
// what is reported, with publish's archive beside it.
func validateFolder(dir string, subagent bool, lim archive.Limits) validation {
	skillPath := filepath.Join(dir, artifact.SkillFile)
	if bk, ok := artifact.BucketKeyOf(skillPath); ok && !subagent && bk.Kind == artifact.KindSkill && isRegular(skillPath) {
		return validateServedFolder(dir, skillPath, bk, lim)
	}
	up, err := publish.Prepare(dir, publish.Options{Subagent: subagent, Limits: lim})
	if err != nil {
		v := rejected(dir, err)
		if _, laidOut := layoutKeys(dir); laidOut && v.Code == archive.CodeMissingSkillMD {
			v.Message += fmt.Sprintf("; %s is laid out like a bucket (it holds skills/, listings/ or subagents/), not a skill folder: "+
				"validate %s, or the skill folders and files in it (skilldrop validate %s) and its sub-agents (skilldrop validate --subagent %s)",
				dir, filepath.Join(dir, artifact.ConfigKey), filepath.Join(dir, filepath.FromSlash(artifact.SkillsPrefix), "*"),
				filepath.Join(dir, filepath.FromSlash(artifact.SubagentsPrefix), "*"))
		}
		return v
	}
	key := up.Key
	if bk, ok := artifact.BucketKeyOf(filepath.Join(dir, artifact.AgentFile)); ok && !up.Packed && bk.Kind == artifact.KindSubagent {
		key = bk.Key
	}
	v := validateAs(dir, key, up.Body, lim)
	if len(up.LeftOut) > 0 {
		v.Warnings = append(v.Warnings, leftOutMessage(up.LeftOut))
	}
	if len(up.Ignored) > 0 {
		v.Warnings = append(v.Warnings, "only its agent.md is published; ignored: "+strings.Join(quoteAll(up.Ignored), ", "))
	}
	return v
}

// validateServedFolder validates a skill folder of a bucket layout as the
// indexer reads it (its SKILL.md, the other files ignored with a warning)
// and says what publish would upload from it instead.
func validateServedFolder(dir, skillPath string, bk artifact.Key, lim archive.Limits) validation {
	data, err := readBounded(skillPath, lim)
	if err != nil {
		return rejected(dir, err)
	}
	v := validateAs(dir, bk.Key, data, lim)
	v.served = bk.Key
	if beside := besideFiles(dir); len(beside) > 0 {
		v.Warnings = append(v.Warnings, artifact.BesideWarning(artifact.Key{Kind: artifact.KindBeside, Name: bk.Name, Listing: bk.Listing})+": "+
			strings.Join(quoteAll(beside), ", "))
	}
	up, err := publish.Prepare(dir, publish.Options{Listing: bk.Listing, Limits: lim})
	if err == nil {
		pv := validateAs(dir, up.Key, up.Body, lim)
		if pv.OK {
			v.Publish = &publishForm{Key: up.Key, Type: pv.Type, Digest: pv.Digest}
			return v
		}
		v.Publish = &publishForm{Code: pv.Code, Message: pv.Message}
		return v
	}
	r := rejected(dir, err)
	v.Publish = &publishForm{Code: r.Code, Message: r.Message}
	return v
}

// publishNote says what publish does differently with a folder.
func publishNote(v validation) string {
	switch p := v.Publish; {
	case p == nil:
		return ""
	case p.Code != "":
		return fmt.Sprintf("the bucket reads %s alone; `skilldrop publish` would refuse the folder: %s: %s", printable(v.served), p.Code, p.Message)
	case !v.OK:
		return fmt.Sprintf("the bucket reads %s alone (and rejects it); `skilldrop publish` uploads the folder packed instead, as %s: an %s, %s",
			printable(v.served), p.Key, p.Type, p.Digest)
	default:
		return fmt.Sprintf("the bucket serves %s alone, as a %s; `skilldrop publish` uploads the folder packed instead, as %s: an %s, %s",
			printable(v.served), v.Type, p.Key, p.Type, p.Digest)
	}
}

// validateAs validates data as the object at key, with the rules the
// indexer applies to it.
func validateAs(p, key string, data []byte, lim archive.Limits) validation {
	k, err := artifact.ParseKey(key)
	if err != nil {
		return rejected(p, err)
	}
	// Inside a bucket layout, validated and judged as that bucket's indexer
	// does: under the caps its config's entry sets, its scan policy, and
	// the allows the entry gives these bytes.
	var pol scan.Policy
	var ce *skillsconfig.Entry
	cfg, root, cfgErr := bucketConfig(p, key)
	if cfg != nil {
		kind := catalog.KindSkill
		if k.Kind == artifact.KindSubagent {
			kind = catalog.KindSubagent
		}
		pol, ce = cfg.Policy(), cfg.Touches(kind, k.Listing, k.Name)
		lim = indexer.EntryLimits(lim, ce)
	}
	a, err := artifact.Validate(k, data, lim)
	if err != nil {
		return rejected(p, err)
	}
	res := pol.Judge(a.Scan, ce.Allows(a.Digest))
	v := validation{Path: p, Scan: &res}
	if cfgErr != nil {
		v.Warnings = append(v.Warnings, fmt.Sprintf("the bucket's %s cannot be used (%v): judged under the default scan policy, "+
			"though the bucket's indexer holds every new publication until it is fixed", printable(filepath.Join(root, skillsconfig.Key)), cfgErr))
	}
	if res.Verdict == scan.Block {
		v.Code, v.Message = scan.CodeBlocked, res.BlockedMessage(pol, a.Digest.String())
		return v
	}
	v.OK, v.Name, v.Type, v.Version, v.Digest, v.Size, v.Key = true, a.Name, string(a.Type), a.Version, a.Digest, a.Size, key
	v.Warnings = append(v.Warnings, a.Warnings...)
	for _, f := range res.Findings {
		v.Warnings = append(v.Warnings, "scan: "+findingLine(f))
	}
	return v
}

// bucketConfig reads the agent-skills.yaml of the bucket layout p is the
// object at key of (the root p is key under), or nil when p is in none or
// the bucket has no config (the default policy, as the indexer's); err is
// why the config there cannot be read or does not parse.
func bucketConfig(p, key string) (cfg *skillsconfig.Config, root string, err error) {
	if abs, err := filepath.Abs(p); err == nil {
		abs = filepath.ToSlash(abs)
		for _, at := range []string{abs, abs + "/" + path.Base(key)} { // a file, or a folder and its SKILL.md
			if r, ok := strings.CutSuffix(at, "/"+key); ok {
				root = filepath.FromSlash(r)
				break
			}
		}
	}
	if root == "" {
		return nil, "", nil
	}
	data, err := readAtMost(filepath.Join(root, skillsconfig.Key), skillsconfig.MaxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, root, nil
	case err != nil:
		return nil, root, err
	}
	cfg, err = skillsconfig.Parse(data)
	return cfg, root, err
}

// validateConfig validates the operator config as the indexer will when it
// is uploaded (collisions with other keys of the bucket aside).
func validateConfig(p string) validation {
	data, err := readAtMost(p, skillsconfig.MaxBytes)
	if err != nil {
		return rejected(p, err)
	}
	cfg, err := skillsconfig.Parse(data)
	if err != nil {
		var ce *skillsconfig.Error
		if errors.As(err, &ce) {
			msg := ce.Msg
			if ce.Field != "" {
				msg = ce.Field + ": " + msg
			}
			return validation{Path: p, Code: ce.Code(), Message: msg}
		}
		return rejected(p, err)
	}
	v := validation{Path: p, OK: true, Type: typeConfig, Digest: cfg.Digest, Size: int64(len(data)), Key: artifact.ConfigKey}
	v.Warnings = cfg.RuleWarnings(scan.Default())
	if r, ok := checkInline(p, cfg, &v); !ok {
		return r
	}
	if siblings, err := os.ReadDir(filepath.Dir(p)); err == nil {
		for _, f := range siblings {
			if !f.IsDir() && skillsconfig.IsStray(f.Name()) {
				v.Warnings = append(v.Warnings, fmt.Sprintf("%s beside it: %s", printable(f.Name()), skillsconfig.StrayMessage()))
			}
		}
	}
	keys, ok := layoutKeys(filepath.Dir(p))
	if !ok {
		// The deployment's default is not known here: a skill's own word is.
		v.Warnings = append(v.Warnings, cfg.GateWarnings(skillsconfig.Published{}, "")...)
		v.note = "its names were not checked against any skill: it is not at the root of a directory laid out like the bucket " +
			"(skills/, listings/, subagents/); once it is uploaded, `skilldrop status` lists the entries that name nothing published"
		return v
	}
	published := skillsconfig.PublishedAt(keys)
	published.Versions, published.Current = localVersions(filepath.Dir(p), keys), true
	for _, u := range cfg.Unmatched(published) {
		v.Warnings = append(v.Warnings, u.Message)
	}
	v.Warnings = append(v.Warnings, cfg.GateWarnings(published, "")...)
	return v
}

// checkInline checks the config's inline entries (a body) as the indexer
// will when it reads the config: validated and scanned under the config's
// own policy and allows. The first entry the indexer would refuse is the
// config's rejection (ok false); a body published with findings adds them
// to v's warnings.
func checkInline(p string, cfg *skillsconfig.Config, v *validation) (validation, bool) {
	entries := slices.Concat(cfg.Skills, cfg.Subagents)
	for _, l := range cfg.Listings {
		entries = append(entries, l.Entries...)
	}
	for i := range entries {
		ce := &entries[i]
		if ce.Body == "" {
			continue
		}
		res, sum, err := indexer.CheckInline(cfg, ce, archive.DefaultLimits())
		if err != nil {
			r := rejected(p, err)
			if e, ok := artifact.AsError(err); ok {
				r.Message = e.Msg
			}
			r.Message = fmt.Sprintf("%s (%s, its inline body, %s) is refused (the config itself is valid, and stays in force once uploaded): %s",
				ce.Field, ce.Name, sum, r.Message)
			r.Scan = res
			return r, false
		}
		for _, f := range res.Findings {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s (%s, its inline body, %s): scan: %s", ce.Field, ce.Name, sum, findingLine(f)))
		}
	}
	return validation{}, true
}

// localVersions returns the versions the files of a laid-out directory
// hold under a name, read (and validated) only for the names a revocation
// asks about: each key's bytes as the indexer would read them.
func localVersions(dir string, keys []string) func(name string) []skillsconfig.PublishedVersion {
	return func(name string) []skillsconfig.PublishedVersion {
		var out []skillsconfig.PublishedVersion
		lim := archive.DefaultLimits()
		for _, key := range keys {
			k, err := artifact.ParseKey(key)
			if err != nil || k.Name != name || (k.Kind != artifact.KindSkill && k.Kind != artifact.KindSubagent) {
				continue
			}
			data, err := readBounded(filepath.Join(dir, filepath.FromSlash(key)), lim)
			if err != nil {
				continue
			}
			a, err := artifact.Validate(k, data, lim)
			if err != nil {
				continue // refused: it publishes no version
			}
			kind := catalog.KindSkill
			if k.Kind == artifact.KindSubagent {
				kind = catalog.KindSubagent
			}
			out = append(out, skillsconfig.PublishedVersion{Kind: kind, Listing: k.Listing, Label: a.Version, Digest: a.Digest})
		}
		return out
	}
}

// layoutKeys lists the keys under the source prefixes of dir when it is
// laid out like the bucket (it holds skills/, listings/ or subagents/),
// as the bucket would hold them: what a config beside them names.
func layoutKeys(dir string) ([]string, bool) {
	var keys []string
	laidOut := false
	for _, prefix := range []string{artifact.SkillsPrefix, artifact.ListingsPrefix, artifact.SubagentsPrefix} {
		root := filepath.Join(dir, filepath.FromSlash(prefix))
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			continue
		}
		laidOut = true
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return fs.SkipDir
			case strings.HasPrefix(d.Name(), ".") && p != root:
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			case !d.IsDir():
				rel, _ := filepath.Rel(dir, p)
				keys = append(keys, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	return keys, laidOut
}

// rejected is the outcome for an error: its stable code when it has one,
// else unreadable.
func rejected(p string, err error) validation {
	if e, ok := artifact.AsError(err); ok {
		msg := e.Msg
		if e.Entry != "" {
			msg = fmt.Sprintf("%q: %s", e.Entry, e.Msg)
		}
		if r := skillsconfig.Remedy(e.Code); r != "" {
			msg += "; " + r
		}
		return validation{Path: p, Code: e.Code, Message: msg}
	}
	return validation{Path: p, Code: codeUnreadable, Message: err.Error()}
}

// readBounded reads an artifact file, refusing an oversized one unread.
func readBounded(p string, lim archive.Limits) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if err := artifact.CheckSize(st.Size(), lim); err != nil {
		return nil, err
	}
	data, err := readAtMost(p, lim.MaxArtifactBytes)
	if err != nil {
		return nil, err
	}
	return data, artifact.CheckSize(int64(len(data)), lim)
}

// readAtMost reads at most limit+1 bytes of p: bounded even when its size
// was not the truth (a pipe, a file growing while read).
func readAtMost(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// besideFiles lists what a skill folder holds beside its SKILL.md (dot-files
// aside, which the bucket ignores too), slash-separated, sorted.
func besideFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return fs.SkipDir // an unreadable directory: nothing of it is listed
		case p == dir:
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.IsDir() && rel != artifact.SkillFile {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func isRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = printable(n)
	}
	return out
}
