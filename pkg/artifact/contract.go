package artifact

import (
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
)

// The bucket contract's names. Every package that builds or reads a bucket
// key asks these (the indexer, publish, skillsconfig, the CLI), so the
// contract is written down once.
const (
	// ConfigKey is the operator configuration's key.
	ConfigKey = "agent-skills.yaml"

	SkillsPrefix    = "skills/"    // skills/<name>.<ext>, skills/<name>/SKILL.md
	ListingsPrefix  = "listings/"  // listings/<listing>/skills/…
	SubagentsPrefix = "subagents/" // subagents/<name>.md, subagents/<name>/agent.md
	FilesPrefix     = "files/"     // bytes that agent-skills.yaml entries name with path:
	BlobsPrefix     = "blobs/"     // written by the indexer only
	CatalogPrefix   = "catalog/"   // written by the indexer only
	RenderedPrefix  = "rendered/"  // written by the indexer only: feed documents rendered for serving

	// SkillFile is the file a skill folder is served from.
	SkillFile = "SKILL.md"
	// AgentFile is the file a sub-agent folder is served from.
	AgentFile = "agent.md"
)

// SourcePrefixes returns where operators drop what the indexer reads: the
// keys a full re-index lists (never blobs/ or catalog/, which are the
// indexer's own and can be large). The config's key is one of them.
func SourcePrefixes() []string {
	return []string{SkillsPrefix, ListingsPrefix, SubagentsPrefix, FilesPrefix, ConfigKey}
}

// ListingPrefix is the key prefix of a listing's drops: "listings/<l>/".
func ListingPrefix(listing string) string { return ListingsPrefix + listing + "/" }

// SkillsIn is the skills/ prefix of a listing ("" for the top level):
// skills/ or listings/<listing>/skills/.
func SkillsIn(listing string) string {
	if listing == "" {
		return SkillsPrefix
	}
	return ListingPrefix(listing) + SkillsPrefix
}

// SkillKey is the key of a single-file skill of the format f in a listing
// ("" for the top level): skills/<name>.md|.zip|.tar.gz, or the same below
// listings/<listing>/.
func SkillKey(listing, name string, f Format) string { return SkillsIn(listing) + name + f.Ext() }

// SkillFolder is the folder of a skill-md skill: skills/<name>/ (or below
// listings/<listing>/); the bucket serves its SkillFile and ignores the rest.
func SkillFolder(listing, name string) string { return SkillsIn(listing) + name + "/" }

// SubagentKey is the key of a single-file sub-agent: subagents/<name>.md.
func SubagentKey(name string) string { return SubagentsPrefix + name + FormatMarkdown.Ext() }

// NamePrefix is the prefix of every key that can claim the name: for a
// skill skills/<name> (below listings/<listing>/ for a listing's), for a
// sub-agent subagents/<name>. It also matches keys of longer names
// (skills/<name>-two.md); ParseKey tells them apart.
func NamePrefix(kind Kind, listing, name string) string {
	if kind == KindSubagent {
		return SubagentsPrefix + name
	}
	return SkillsIn(listing) + name
}

// FormatOf returns the format a file name's extension declares: .md, and
// the archive extensions pkg/archive knows (.zip, .tar.gz, .tgz). Extensions
// are matched exactly (lower case), as the bucket contract spells them.
func FormatOf(fileName string) (Format, bool) {
	if strings.HasSuffix(fileName, FormatMarkdown.Ext()) {
		return FormatMarkdown, true
	}
	if f, ok := archive.FormatOf(fileName); ok {
		return Format(f), true
	}
	return "", false
}

// CutExt splits a file name into the name before its extension and the
// format the extension declares: the shortest suffix from a dot that
// FormatOf knows ("x.tar.gz" is x and tar.gz, "a.b.md" is a.b and md).
func CutExt(file string) (name string, f Format, ok bool) {
	for i := len(file) - 1; i >= 0; i-- {
		if file[i] != '.' {
			continue
		}
		if f, ok := FormatOf(file[i:]); ok {
			return file[:i], f, true
		}
	}
	return "", "", false
}

// Ext is the extension a key of this format is given: ".md", ".zip" or
// ".tar.gz" (".tgz" is read, never written).
func (f Format) Ext() string {
	switch f {
	case FormatZip:
		return ".zip"
	case FormatTarGz:
		return ".tar.gz"
	default:
		return ".md"
	}
}

// BesideWarning is the status warning for a file in a skill folder beside
// its SKILL.md (k is a KindBeside key): the bucket ignores it.
func BesideWarning(k Key) string {
	return "ignored: a skill folder publishes only its " + SkillFile + " (" + SkillFolder(k.Listing, k.Name) + SkillFile + "); " +
		"a multi-file skill is an archive (skilldrop publish packs a folder into one)"
}

// SubagentBesideWarning is the status warning for a file in a sub-agent
// folder beside its agent.md: the bucket ignores it.
func SubagentBesideWarning(folder string) string {
	return "ignored: a sub-agent folder publishes only its " + AgentFile + " (" + SubagentsPrefix + folder + "/" + AgentFile + ")"
}
