// Package publish turns what an operator has on disk — a skill folder, an
// archive, a SKILL.md or an agent.md — into the one object `skilldrop
// publish` uploads: its bucket key under the bucket contract and its bytes.
// A folder is packed into a zip (pkg/pack), so a multi-file skill reaches
// the bucket as one object and the indexer never sees it half-written.
package publish

import (
	"archive/zip"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/pack"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// Options say where an upload goes.
type Options struct {
	// Subagent reads a <name>.md file as an agent.md (a path with a
	// subagents/ element, or a file named agent.md, always is one).
	Subagent bool
	// Listing publishes a skill only in that listing
	// (listings/<listing>/skills/…) rather than at the top level.
	Listing string
	// Limits bound what is read and packed; zero fields are the defaults.
	Limits archive.Limits
}

// ErrOptions is wrapped by Prepare's error for Options that cannot apply: an
// invalid listing name, or a listing for a sub-agent. It is the caller's
// command line that is wrong, not the file.
var ErrOptions = errors.New("publish: invalid options")

// Upload is one object to put into the bucket.
type Upload struct {
	Key         string
	Body        []byte
	ContentType string
	// Packed is set when Body is a zip packed from a folder.
	Packed bool
	// LeftOut are the folder's dot-files and dot-directories, which are
	// never packed (pack.Packed.LeftOut); the operator should hear of them.
	LeftOut []string
	// Ignored are the files of a sub-agent folder beside its agent.md,
	// which is all that is uploaded; the operator should hear of them too.
	Ignored []string
}

// Prepare reads path and returns the object to upload, under the key the
// bucket contract gives it. The name is the one the path implies, as the
// indexer takes it from the key, so a frontmatter name that differs is a
// name_mismatch when the upload is validated:
//
//   - a skill folder (holding SKILL.md) is packed into skills/<folder>.zip;
//   - a sub-agent folder (holding agent.md and no SKILL.md, or any folder
//     with Subagent set or below a subagents/ directory) uploads its
//     agent.md as subagents/<folder>.md;
//   - a file keeps the name its path implies (artifact.LocalKey):
//     <name>.zip|.tar.gz|.tgz and <name>.md go to skills/<name>.<ext> (a
//     sub-agent's .md to subagents/<name>.md), <name>/SKILL.md to
//     skills/<name>.md and <name>/agent.md to subagents/<name>.md.
//
// Prepare does not validate the result: callers check it with the
// indexer's rules (artifact.Validate, indexer.Validate) before uploading.
//
// What the bucket contract refuses is an *artifact.Error with a stable
// code (a folder without SKILL.md is missing_skill_md, an invalid SKILL.md
// keeps its skillmd code, a symlink is symlink, too much content
// expanded_too_large); options that cannot apply wrap ErrOptions; any
// other error is the file system's (fs.ErrNotExist for a missing path).
func Prepare(p string, opts Options) (*Upload, error) {
	lim, err := opts.Limits.Effective()
	if err != nil {
		return nil, err
	}
	if opts.Listing != "" {
		if err := skillmd.ValidateName(opts.Listing); err != nil {
			msg := err.Error()
			if se, ok := skillmd.AsError(err); ok {
				msg = se.Msg
			}
			return nil, fmt.Errorf("%w: listing: %s", ErrOptions, msg)
		}
		if opts.Subagent {
			return nil, fmt.Errorf("%w: sub-agents are not published in listings", ErrOptions)
		}
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return prepareFolder(p, opts, lim)
	}
	k, err := artifact.LocalKey(p, opts.Subagent)
	if err != nil {
		return nil, err
	}
	if err := artifact.CheckSize(st.Size(), lim); err != nil {
		return nil, err
	}
	body, err := readFile(p, lim.MaxArtifactBytes)
	if err != nil {
		return nil, err
	}
	var key string
	switch {
	case k.Kind == artifact.KindSubagent:
		if opts.Listing != "" {
			return nil, fmt.Errorf("%w: %s is a sub-agent, and sub-agents are not published in listings", ErrOptions, p)
		}
		key = artifact.SubagentKey(k.Name)
	case k.Format == artifact.FormatMarkdown:
		key = artifact.SkillKey(opts.Listing, k.Name, k.Format)
	default:
		key = artifact.SkillsIn(opts.Listing) + filepath.Base(p) // keeps .zip, .tar.gz or .tgz
	}
	return &Upload{Key: key, Body: body, ContentType: k.Format.ContentType()}, nil
}

func prepareFolder(dir string, opts Options, lim archive.Limits) (*Upload, error) {
	skillPath, agentPath := filepath.Join(dir, artifact.SkillFile), filepath.Join(dir, artifact.AgentFile)
	hasSkill, hasAgent := isFile(skillPath), isFile(agentPath)
	k, err := artifact.FolderKey(dir, opts.Subagent || (!hasSkill && hasAgent))
	if err != nil {
		return nil, err
	}
	if k.Kind == artifact.KindSubagent {
		return prepareSubagentFolder(dir, k, opts, lim)
	}
	doc, err := readFile(skillPath, lim.MaxArtifactBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &artifact.Error{Code: archive.CodeMissingSkillMD, Entry: dir,
			Msg: "a skill folder holds a SKILL.md at its root (a sub-agent folder, an agent.md)"}
	}
	if err != nil {
		return nil, err
	}
	// Parsed here too, so that an invalid SKILL.md is reported at its path
	// rather than as an entry of an archive the operator never made.
	if _, err := skillmd.ParseSkill(doc); err != nil {
		if se, ok := skillmd.AsError(err); ok {
			msg := se.Msg
			if se.Field != "" {
				msg = se.Field + ": " + msg
			}
			return nil, &artifact.Error{Code: se.Code, Entry: skillPath, Msg: msg, Err: err}
		}
		return nil, fmt.Errorf("%s: %w", skillPath, err)
	}
	packed, err := pack.Folder(os.DirFS(dir), lim.MaxExpandedBytes)
	if err != nil {
		return nil, packError(dir, err, lim)
	}
	if n := int64(len(packed.Zip)); n > lim.MaxArtifactBytes {
		return nil, &artifact.Error{Code: artifact.CodeTooLarge, Entry: dir, Msg: fmt.Sprintf("packed, the folder is larger than max_artifact_bytes: %s; "+
			"its largest files, compressed: %s", bytesize.Exceeds(n, lim.MaxArtifactBytes), largest(packed.Zip, 3))}
	}
	return &Upload{
		Key:         artifact.SkillKey(opts.Listing, k.Name, artifact.FormatZip),
		Body:        packed.Zip,
		ContentType: artifact.FormatZip.ContentType(),
		Packed:      true,
		LeftOut:     packed.LeftOut,
	}, nil
}

// prepareSubagentFolder uploads a sub-agent folder's agent.md, which is
// all the bucket reads of one (subagents/<name>/agent.md).
func prepareSubagentFolder(dir string, k artifact.Key, opts Options, lim archive.Limits) (*Upload, error) {
	if opts.Listing != "" {
		return nil, fmt.Errorf("%w: %s is a sub-agent folder, and sub-agents are not published in listings", ErrOptions, dir)
	}
	body, err := readFile(filepath.Join(dir, artifact.AgentFile), lim.MaxArtifactBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &artifact.Error{Code: archive.CodeMissingSkillMD, Entry: dir, Msg: "a sub-agent folder holds an agent.md"}
	}
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	up := &Upload{Key: artifact.SubagentKey(k.Name), Body: body, ContentType: artifact.FormatMarkdown.ContentType()}
	for _, e := range entries {
		// Dot-files are never published; nothing else beside agent.md is either.
		if name := e.Name(); name != artifact.AgentFile && !strings.HasPrefix(name, ".") {
			if e.IsDir() {
				name += "/"
			}
			up.Ignored = append(up.Ignored, name)
		}
	}
	return up, nil
}

// largest names the n files of a zip that take the most room in it, with
// their compressed sizes.
func largest(z []byte, n int) string {
	r, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	files := slices.Clone(r.File)
	slices.SortStableFunc(files, func(a, b *zip.File) int { return cmp.Compare(b.CompressedSize64, a.CompressedSize64) })
	var out []string
	for _, f := range files[:min(n, len(files))] {
		out = append(out, fmt.Sprintf("%s (%s)", f.Name, bytesize.Format(int64(f.CompressedSize64))))
	}
	return strings.Join(out, ", ")
}

// isFile reports whether p names a regular file (following symlinks).
func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// packError gives what pack refuses the code the indexer would give the
// same content in an archive.
func packError(dir string, err error, lim archive.Limits) error {
	var fe *pack.FileError
	switch {
	case errors.As(err, &fe) && fe.Symlink:
		return &artifact.Error{Code: archive.CodeSymlink, Entry: filepath.Join(dir, filepath.FromSlash(fe.Name)),
			Msg: "a symlink; a skill archive holds regular files only (copy the file in instead)", Err: err}
	case errors.As(err, &fe):
		return &artifact.Error{Code: archive.CodeSpecialFile, Entry: filepath.Join(dir, filepath.FromSlash(fe.Name)),
			Msg: "not a regular file; a skill archive holds regular files only", Err: err}
	case errors.Is(err, pack.ErrTooLarge):
		return &artifact.Error{Code: archive.CodeExpandedTooLarge, Entry: dir,
			Msg: fmt.Sprintf("the folder's files hold more than max_expanded_bytes (%s)", bytesize.Format(lim.MaxExpandedBytes)), Err: err}
	}
	return err
}

// readFile reads at most limit bytes, failing with the artifact cap's code
// for a file that holds more (it may have grown since it was sized).
func readFile(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		msg := "larger than max_artifact_bytes (" + bytesize.Format(limit) + ")"
		if st, err := f.Stat(); err == nil && st.Size() > limit {
			msg = "larger than max_artifact_bytes: " + bytesize.Exceeds(st.Size(), limit)
		}
		return nil, &artifact.Error{Code: artifact.CodeTooLarge, Entry: p, Msg: msg}
	}
	return b, nil
}
