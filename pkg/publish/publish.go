// Package publish turns what an operator has on disk — a skill folder, an
// archive, a SKILL.md or an agent.md — into the one object `skilldrop
// publish` uploads: its bucket key under the bucket contract and its bytes.
// A folder is packed into a zip (pkg/pack), so a multi-file skill reaches
// the bucket as one object and the indexer never sees it half-written.
package publish

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
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
}

// Prepare reads path and returns the object to upload. A folder must hold
// a SKILL.md; it is packed into skills/<name>.zip, where name is the
// frontmatter's. A file keeps the name its path implies (as `skilldrop
// validate` reads it): <name>.zip|.tar.gz|.tgz and <name>.md go to
// skills/<name>.<ext> (a sub-agent's .md to subagents/<name>.md),
// <name>/SKILL.md to skills/<name>.md and <name>/agent.md to
// subagents/<name>.md. Prepare does not validate the result: callers check
// it with the indexer's rules (indexer.Validate) before uploading.
//
// What the bucket contract refuses is an *artifact.Error with a stable
// code (a folder without SKILL.md is missing_skill_md, an invalid SKILL.md
// keeps its skillmd code, a symlink is symlink, too much content
// expanded_too_large); options that cannot apply wrap ErrOptions; any
// other error is the file system's.
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
	case k.Type == artifact.TypeAgentMD:
		if opts.Listing != "" {
			return nil, fmt.Errorf("%w: %s is a sub-agent, and sub-agents are not published in listings", ErrOptions, p)
		}
		key = "subagents/" + k.Name + ".md"
	case k.Format == artifact.FormatMarkdown:
		key = "skills/" + k.Name + ".md"
	default:
		key = "skills/" + path.Base(filepath.ToSlash(p)) // keeps .zip, .tar.gz or .tgz
	}
	return &Upload{Key: inListing(key, opts.Listing), Body: body, ContentType: k.Format.ContentType()}, nil
}

func prepareFolder(dir string, opts Options, lim archive.Limits) (*Upload, error) {
	skillPath := filepath.Join(dir, "SKILL.md")
	doc, err := readFile(skillPath, lim.MaxArtifactBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &artifact.Error{Code: archive.CodeMissingSkillMD, Entry: dir, Msg: "a skill folder holds a SKILL.md at its root"}
	}
	if err != nil {
		return nil, err
	}
	s, err := skillmd.ParseSkill(doc)
	if se, ok := skillmd.AsError(err); ok {
		msg := se.Msg
		if se.Field != "" {
			msg = se.Field + ": " + msg
		}
		return nil, &artifact.Error{Code: se.Code, Entry: skillPath, Msg: msg, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", skillPath, err)
	}
	packed, err := pack.Folder(os.DirFS(dir), lim.MaxExpandedBytes)
	if err != nil {
		return nil, packError(dir, err, lim)
	}
	return &Upload{
		Key:         inListing("skills/"+s.Name+".zip", opts.Listing),
		Body:        packed.Zip,
		ContentType: artifact.FormatZip.ContentType(),
		Packed:      true,
		LeftOut:     packed.LeftOut,
	}, nil
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
			Msg: fmt.Sprintf("the folder's files hold more than max_expanded_bytes (%d)", lim.MaxExpandedBytes), Err: err}
	}
	return err
}

func inListing(key, listing string) string {
	if listing == "" || !strings.HasPrefix(key, "skills/") {
		return key
	}
	return "listings/" + listing + "/" + key
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
		return nil, &artifact.Error{Code: artifact.CodeTooLarge, Entry: p, Msg: fmt.Sprintf("more than max_artifact_bytes (%d)", limit)}
	}
	return b, nil
}
