package artifact

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// Stable error codes of this package. Validation errors from pkg/archive
// and pkg/skillmd keep their own codes (path_traversal, invalid_frontmatter,
// …): Validate wraps them in an *Error with the same code.
const (
	CodeInvalidKey      = "invalid_key"      // the key's implied name or listing is not a valid name
	CodeUnsupportedFile = "unsupported_file" // a local file whose name the contract does not know
	CodeNameMismatch    = "name_mismatch"    // the frontmatter name differs from the key's
	CodeTooLarge        = archive.CodeTooLarge
	CodeInvalidLimits   = archive.CodeInvalidLimits
)

// Error is a rejection: a stable code, the entry concerned (an archive
// entry, a key or a file; "" for the artifact as a whole), a message, and
// the underlying *archive.Error or *skillmd.Error when there is one.
type Error struct {
	Code  string
	Entry string
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	if e.Entry == "" {
		return e.Code + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %q: %s", e.Code, e.Entry, e.Msg)
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// AsError unwraps err to an *Error when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Artifact is a validated skill or sub-agent.
type Artifact struct {
	Name   string
	Type   Type
	Format Format
	Digest digest.Digest
	Size   int64
	// Version is the frontmatter label (metadata.version, else version),
	// or "sha256-<first 12 hex digits>" of the bytes without one.
	Version string
	// Description is the frontmatter's.
	Description string
	// Subagent is a skill's metadata.subagent, when it is a valid name.
	Subagent string
	// Warnings are for the operator: ignored frontmatter keys and the like.
	Warnings []string
	// Exactly one of Skill (skill-md, archive) and Agent (agent-md) is set.
	Skill *skillmd.Skill
	Agent *skillmd.Agent
	// Entries lists an archive's entries.
	Entries []archive.Entry
	// Frontmatter is the SKILL.md (or agent.md) frontmatter as JSON,
	// verbatim; nil when it has no faithful JSON form.
	Frontmatter json.RawMessage
	// Files are a skill's files, in path order: its one SKILL.md, or every
	// regular file of an archive, with their content. Empty for agent-md.
	Files []archive.File
	// MCPExcluded says why the skill is not served over MCP (MCPExclusion);
	// "" when it is, and for agent-md. A warning says so too.
	MCPExcluded string
	// Scan is what the content scanner (pkg/scan, the embedded rule pack)
	// found in every file: the caller judges it under its policy.
	Scan scan.Report
}

// Validate validates the bytes of the artifact k names, with the rules the
// indexer and `skilldrop validate` share: the size cap first, then the
// format's own validation (skillmd.ParseSkill, archive.ValidateFormat,
// skillmd.ParseAgent), then the name the key implies must equal the
// frontmatter's. k.Type and k.Format are taken from k.Key's extension when
// empty. Every rejection is an *Error. An accepted artifact is scanned
// (Artifact.Scan): what the findings mean is the caller's policy.
func Validate(k Key, data []byte, lim archive.Limits) (*Artifact, error) {
	if err := CheckSize(int64(len(data)), lim); err != nil {
		return nil, err
	}
	if err := skillmd.ValidateName(k.Name); err != nil {
		return nil, invalidKey(k.Key, "implied", k.Name, err)
	}
	t, f, err := typeAndFormat(k)
	if err != nil {
		return nil, err
	}
	a := &Artifact{Type: t, Format: f, Size: int64(len(data))}
	var label string
	switch t {
	case TypeSkillMD, TypeArchive:
		if t == TypeArchive {
			res, err := archive.ValidateFormat(data, archive.Format(f), lim)
			if err != nil {
				return nil, wrap(err)
			}
			a.Skill, a.Digest, a.Entries, a.Files = res.Skill, res.Digest, res.Entries, res.Files
		} else {
			if a.Skill, err = skillmd.ParseSkill(data); err != nil {
				return nil, wrap(err)
			}
			a.Files = []archive.File{{Path: SkillFile, Digest: digest.Of(data), Size: int64(len(data)), MediaType: SkillMediaType, Data: data}}
		}
		s := a.Skill
		a.Name, a.Description, a.Warnings, a.Frontmatter = s.Name, s.Description, s.Warnings, s.Frontmatter
		if a.MCPExcluded = MCPExclusion(a.Files, s.Frontmatter, s.FrontmatterIssue); a.MCPExcluded != "" {
			a.Warnings = append(a.Warnings, MCPWarning(a.MCPExcluded))
		}
		if label, err = s.VersionLabel(); err != nil {
			return nil, wrap(err)
		}
		if sub := s.Subagent(); sub != "" {
			if skillmd.ValidateName(sub) == nil {
				a.Subagent = sub
			} else {
				a.Warnings = append(a.Warnings, fmt.Sprintf("metadata.subagent %q is not a valid sub-agent name; ignored", clip(sub)))
			}
		}
	case TypeAgentMD:
		if a.Agent, err = skillmd.ParseAgent(data); err != nil {
			return nil, wrap(err)
		}
		a.Name, a.Description, a.Warnings, a.Frontmatter = a.Agent.Name, a.Agent.Description, a.Agent.Warnings, a.Agent.Frontmatter
		if label, err = a.Agent.VersionLabel(); err != nil {
			return nil, wrap(err)
		}
	}
	if a.Name != k.Name {
		return nil, &Error{Code: CodeNameMismatch, Entry: clip(k.Key),
			Msg: fmt.Sprintf("the frontmatter name %q differs from %q, the name the key implies", a.Name, k.Name)}
	}
	if a.Digest.IsZero() {
		a.Digest = digest.Of(data)
	}
	a.Version = label
	if a.Version == "" {
		a.Version = "sha256-" + a.Digest.Short()
	}
	files := a.Files
	if t == TypeAgentMD {
		files = []archive.File{{Path: AgentFile, Data: data}}
	}
	a.Scan = scan.Files(files)
	return a, nil
}

// CheckSize applies the first rule, max_artifact_bytes, to an artifact of
// size bytes, so that callers holding a file can refuse it unread.
func CheckSize(size int64, lim archive.Limits) error {
	eff, err := lim.Effective()
	if err != nil {
		return wrap(err)
	}
	if size > eff.MaxArtifactBytes {
		return &Error{Code: CodeTooLarge, Msg: "the artifact is larger than max_artifact_bytes: " + bytesize.Exceeds(size, eff.MaxArtifactBytes)}
	}
	return nil
}

// typeAndFormat completes k's type and format and checks they agree.
func typeAndFormat(k Key) (Type, Format, error) {
	t, f := k.Type, k.Format
	if f == "" || t == "" {
		_, ft, ff, ok := cutFileName(k.Key, k.Kind == KindSubagent)
		if !ok && (f == "" || t == "") {
			return "", "", &Error{Code: CodeUnsupportedFile, Entry: clip(k.Key), Msg: "neither the key's extension nor its type and format say what it is"}
		}
		if f == "" {
			f = ff
		}
		if t == "" {
			t = ft
		}
	}
	switch {
	case t == TypeArchive && (f == FormatZip || f == FormatTarGz):
	case (t == TypeSkillMD || t == TypeAgentMD) && f == FormatMarkdown:
	default:
		return "", "", &Error{Code: CodeUnsupportedFile, Entry: clip(k.Key), Msg: fmt.Sprintf("type %q cannot have format %q", t, f)}
	}
	return t, f, nil
}

// wrap gives an archive or skillmd rejection this package's error type,
// keeping its code, entry and message and unwrapping to it.
func wrap(err error) error {
	if e, ok := archive.AsError(err); ok {
		return &Error{Code: e.Code, Entry: e.Entry, Msg: e.Msg, Err: err}
	}
	if e, ok := skillmd.AsError(err); ok {
		msg := e.Msg
		if e.Field != "" {
			msg = e.Field + ": " + msg
		}
		return &Error{Code: e.Code, Msg: msg, Err: err}
	}
	return err
}

// clip bounds hostile names echoed into errors and logs.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
