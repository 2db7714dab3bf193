package skillsconfig

import (
	"fmt"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/bytesize"
)

// Remedy says, for the rejection code of an archive budget, where its limit
// is set and what to do instead ("" for other codes): the per-entry key of
// agent-skills.yaml with its ceiling, the stack's parameter for the whole
// service, and validate's flag.
func Remedy(code string) string {
	set := func(key, param, flag, ceiling string) string {
		return fmt.Sprintf("the limit is %s: an entry's in %s (up to %s) or, for the whole service, the stack's %s parameter "+
			"(skilldrop validate: --%s)", key, Key, ceiling, param, flag)
	}
	switch code {
	case archive.CodeTooLarge:
		return fmt.Sprintf("%s is the most one Lambda response carries (6 MB, base64-encoded), so max_artifact_bytes (an entry's in %s, "+
			"the stack's MaxArtifactBytes parameter) can lower it, never raise it: keep large files out of the skill (host them "+
			"elsewhere and fetch them from its scripts, or split it in two)", bytesize.Format(archive.DefaultMaxArtifactBytes), Key)
	case archive.CodeRatioExceeded:
		return set("max_decompression_ratio", "MaxDecompressionRatio", "max-decompression-ratio", fmt.Sprint(ceilRatio)) +
			"; or store the file compressed in the skill"
	case archive.CodeExpandedTooLarge:
		return set("max_expanded_bytes", "MaxExpandedBytes", "max-expanded-bytes", bytesize.Format(ceilExpandedBytes))
	case archive.CodeTooManyEntries:
		return set("max_entries", "MaxEntries", "max-entries", fmt.Sprint(ceilEntries))
	}
	return ""
}
