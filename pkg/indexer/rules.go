package indexer

import (
	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// validated is an accepted artifact as the catalog records it, with the
// warnings for the status document.
type validated struct {
	catalog.Version
	warnings []string
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
		},
		warnings: a.Warnings,
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
	if e.Entry != "" && e.Entry != key {
		return e.Code, e.Entry + ": " + e.Msg
	}
	return e.Code, e.Msg
}

// besideWarning is the status warning for a file beside a SKILL.md.
func besideWarning(k artifact.Key) string {
	folder := "skills/" + k.Name
	if k.Listing != "" {
		folder = "listings/" + k.Listing + "/" + folder
	}
	return "ignored: a skill folder publishes only its SKILL.md (" + folder + "/SKILL.md); " +
		"a multi-file skill is an archive (skilldrop publish packs a folder into one)"
}
