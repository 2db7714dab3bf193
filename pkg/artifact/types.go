// Package artifact owns the bucket contract: its names (the config's key,
// the prefixes, the key forms, extension → format; contract.go), how a key
// or a local path reads under it (key.go, local.go), and the rules that
// turn a key and its bytes into a validated artifact (validate.go). The
// indexer, pkg/publish, pkg/skillsconfig and the CLI all ask it, so what an
// operator validates locally is what the bucket publishes.
package artifact

// Type is the artifact type a feed advertises.
type Type string

// The artifact types.
const (
	TypeSkillMD Type = "skill-md" // a single SKILL.md
	TypeArchive Type = "archive"  // a .zip or .tar.gz with SKILL.md at its root
	TypeAgentMD Type = "agent-md" // a sub-agent definition
)

// Format is the byte format of an artifact; it decides content types and
// the file names under /api/v1/.
type Format string

// The artifact formats.
const (
	FormatMarkdown Format = "md"
	FormatZip      Format = "zip"
	FormatTarGz    Format = "tar.gz"
)

// ContentType is the Content-Type an artifact of this format is served with.
func (f Format) ContentType() string {
	switch f {
	case FormatZip:
		return "application/zip"
	case FormatTarGz:
		return "application/gzip"
	default:
		return "text/markdown; charset=utf-8"
	}
}
