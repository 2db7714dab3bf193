package main

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
)

// TestRefusalsSayWhereTheLimitIs, through the built command: a refusal for
// a budget names the file, the limit, and where the limit is set or what
// to do instead, in validate, publish and the indexer's own rejections
// (reindex prints them).
func TestRefusalsSayWhereTheLimitIs(t *testing.T) {
	src, bucket := t.TempDir(), t.TempDir()
	noise := make([]byte, 5<<20) // incompressible: packed, still above 4 MiB
	_, _ = rand.Read(noise)
	manual := strings.Repeat("The manual says the same thing on every line.\n", 130000) // 6 MB, compressing far past 100:1
	skilltest.WriteFiles(t, src, map[string]string{
		"big/SKILL.md":      skillDoc("big"),
		"big/data/blob.bin": string(noise),
		"big/notes.txt":     "small",
		"huge.md":           skillDoc("huge") + string(noise),
		"manual/SKILL.md":   skillDoc("manual"),
		"manual/manual.txt": manual,
	})
	skilltest.WriteFiles(t, bucket, map[string]string{"skills/huge.md": skillDoc("huge") + string(noise)})
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"validate", "big"}, []string{`rejected big artifact_too_large: "big": packed, the folder is larger than max_artifact_bytes: 5.0 MiB > 4 MiB; ` +
			"its largest files, compressed: data/blob.bin (5.0 MiB), SKILL.md", "can lower it, never raise it", "MaxArtifactBytes", "keep large files out of the skill"}},
		{[]string{"publish", "--dir", bucket, "big"}, []string{`rejected big artifact_too_large: "big": packed`, "data/blob.bin (5.0 MiB)"}},
		{[]string{"validate", "huge.md"}, []string{"rejected huge.md artifact_too_large: ", "5.0 MiB > 4 MiB", "MaxArtifactBytes parameter"}},
		{[]string{"validate", "manual"}, []string{`rejected manual ratio_exceeded: "manual.txt": content exceeds max_decompression_ratio (100)`,
			"the limit is max_decompression_ratio: an entry's in agent-skills.yaml (up to 10000)", "the stack's MaxDecompressionRatio parameter",
			"--max-decompression-ratio"}},
		{[]string{"reindex", "--dir", bucket}, []string{"rejected skills/huge.md artifact_too_large: ", "5.0 MiB > 4 MiB", "the stack's MaxArtifactBytes parameter"}},
	} {
		code, out, errOut := builtRun(t, src, tt.args...)
		if code != exitFailure && tt.args[0] != "reindex" {
			t.Errorf("%v: exit %d, want 1", tt.args, code)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: stdout lacks %q:\n%s%s", tt.args, w, out, errOut)
			}
		}
	}
}
