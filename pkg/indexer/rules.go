package indexer

import (
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/scan"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// validated is an accepted artifact as the catalog records it, with the
// warnings for the status document and its files' content (putFiles).
type validated struct {
	catalog.Version
	warnings []string
	files    []archive.File
	report   scan.Report
}

// judge records the scan's verdict on v under the config's policy and the
// allows the entry ce (nil: none) gives v's bytes; a verdict that blocks
// is the rejection of key instead.
func (v *validated) judge(cfg *skillsconfig.Config, ce *skillsconfig.Entry, key, name string) *rejection {
	pol := cfg.Policy()
	res := pol.Judge(v.report, ce.Allows(v.Digest))
	if res.Verdict != scan.Block {
		v.Scan = &res
		return nil
	}
	return &rejection{Key: key, Code: CodeScanBlocked, Name: name, Digest: v.Digest, blocking: res.Blocking(pol), scan: &res,
		Message: res.BlockedMessage(pol, v.Digest.String())}
}

// targetOfKey is the entry a skill or sub-agent key claims.
func targetOfKey(k artifact.Key) target {
	kind := catalog.KindSkill
	if k.Kind == artifact.KindSubagent {
		kind = catalog.KindSubagent
	}
	return target{Kind: kind, Listing: k.Listing, Name: k.Name}
}

// validateDrop applies the bucket contract's rules to a dropped key's bytes.
func validateDrop(k artifact.Key, data []byte, lim archive.Limits) (*validated, error) {
	a, err := artifact.Validate(k, data, lim)
	if err != nil {
		return nil, err
	}
	return fromArtifact(a), nil
}

// validateEntry applies the same rules to a config entry's bytes (inline,
// from files/, or fetched): the type the entry declares, the name rule
// against the entry's name, and the entry's caps.
func validateEntry(ce *skillsconfig.Entry, data []byte, lim archive.Limits) (*validated, error) {
	k := artifact.Key{Kind: artifact.KindSkill, Name: ce.Name, Listing: ce.Listing, Type: ce.Type}
	switch {
	case ce.Kind == catalog.KindSubagent:
		k.Kind, k.Type, k.Format = artifact.KindSubagent, artifact.TypeAgentMD, artifact.FormatMarkdown
	case ce.Type == artifact.TypeArchive:
		k.Format = externalFormat(ce, data)
	default:
		k.Type, k.Format = artifact.TypeSkillMD, artifact.FormatMarkdown
	}
	// Type and format are set, so the key only names the bytes in messages.
	switch {
	case ce.FilePath != "":
		k.Key = ce.FilePath
	case ce.ExternalURL != "":
		k.Key = ce.ExternalURL
	default:
		k.Key = skillsconfig.Key
	}
	a, err := artifact.Validate(k, data, lim)
	if err != nil {
		return nil, err
	}
	return fromArtifact(a), nil
}

func fromArtifact(a *artifact.Artifact) *validated {
	return &validated{
		Version: catalog.Version{
			Label:       a.Version,
			Digest:      a.Digest,
			Type:        a.Type,
			Format:      a.Format,
			Size:        a.Size,
			Description: a.Description,
			Subagent:    a.Subagent,
			Frontmatter: a.Frontmatter,
			Files:       catalogFiles(a.Files),
			MCPExcluded: a.MCPExcluded,
		},
		warnings: a.Warnings,
		files:    a.Files,
		report:   a.Scan,
	}
}

// rejectionOf returns the stable code and the message (without the code,
// and without the key, which the rejection records beside it) of a
// validation error of key; artifact.Validate and artifact.ParseKey return
// only *artifact.Error.
func rejectionOf(err error, key string) (code, msg string) {
	e, ok := artifact.AsError(err)
	if !ok {
		return "invalid", err.Error()
	}
	msg = e.Msg
	if e.Entry != "" && e.Entry != key {
		msg = e.Entry + ": " + msg
	}
	if r := skillsconfig.Remedy(e.Code); r != "" {
		msg += "; " + r
	}
	return e.Code, msg
}

// besideWarning is the status warning for a file beside a SKILL.md.
func besideWarning(k artifact.Key) string { return artifact.BesideWarning(k) }

// The forms the bucket contract accepts, for the messages of keys that
// miss them.
const (
	skillForms    = "<name>.md, <name>.zip, <name>.tar.gz, <name>.tgz or <name>/SKILL.md"
	subagentForms = "subagents/<name>.md or subagents/<name>/agent.md"
	nameRule      = "<name>: lowercase letters, digits and single hyphens"
)

// contractMiss judges a key under a prefix of the bucket contract that is
// in none of its forms (artifact.ParseKey's KindIgnored): a file is
// refused with a code and a message naming the forms, so a drop never
// disappears silently; a file inside a folder that is not a skill or
// sub-agent folder gets a status warning instead, as files beside a
// SKILL.md do. All empty: ignored (folder markers, and keys outside the
// contract's prefixes, which the bucket's notifications do not cover).
func contractMiss(key string) (code, msg, warning string) {
	switch {
	case strings.HasSuffix(key, "/"):
		return "", "", "" // a folder marker, as the S3 console creates
	case strings.HasPrefix(key, artifact.SkillsPrefix):
		return skillMiss(artifact.SkillsPrefix, key[len(artifact.SkillsPrefix):])
	case strings.HasPrefix(key, artifact.ListingsPrefix):
		listing, rest, _ := strings.Cut(key[len(artifact.ListingsPrefix):], "/")
		if r, ok := strings.CutPrefix(rest, artifact.SkillsPrefix); ok {
			return skillMiss(artifact.ListingPrefix(listing)+artifact.SkillsPrefix, r)
		}
		return artifact.CodeUnsupportedFile, "not a listing key: want listings/<listing>/skills/ followed by " + skillForms + " (" + nameRule + ")", ""
	case strings.HasPrefix(key, artifact.SubagentsPrefix):
		if folder, _, inFolder := strings.Cut(key[len(artifact.SubagentsPrefix):], "/"); inFolder {
			return "", "", artifact.SubagentBesideWarning(folder)
		}
		return artifact.CodeUnsupportedFile, "not a sub-agent key: want " + subagentForms + " (" + nameRule + ")", ""
	}
	return "", "", ""
}

// skillMiss is contractMiss for what follows a skills/ prefix.
func skillMiss(prefix, rest string) (code, msg, warning string) {
	if _, _, inFolder := strings.Cut(rest, "/"); inFolder {
		return "", "", "ignored: not in a skill folder (" + prefix + "<name>/SKILL.md, " + nameRule + "); " +
			"a multi-file skill is an archive (skilldrop publish packs a folder into one)"
	}
	return artifact.CodeUnsupportedFile, "not a skill key: want " + prefix + " followed by " + skillForms + " (" + nameRule + ")", ""
}
