package artifact

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

func skillDoc(name, extra string) string {
	return "---\nname: " + name + "\ndescription: Does " + name + ".\n" + extra + "---\n# " + name + "\n"
}

func agentDoc(name string) string {
	return "---\nname: " + name + "\ndescription: Reviews.\n---\nYou review.\n"
}

func mustKey(t *testing.T, key string) Key {
	t.Helper()
	k, err := ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestValidateAccepts(t *testing.T) {
	withVersion := skillDoc("deploy", "metadata:\n  version: \"1.10\"\n  subagent: reviewer\nfancy: 1\n")
	plain := skillDoc("deploy", "")
	archived := skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("deploy", "version: 2.0\n"), "run.sh": "#!/bin/sh\n"})
	tests := []struct {
		name     string
		key      Key
		data     []byte
		typ      Type
		format   Format
		version  string
		subagent string
		warnings int
		entries  int
	}{
		{"skill-md with a version", mustKey(t, "skills/deploy.md"), []byte(withVersion), TypeSkillMD, FormatMarkdown, "1.10", "reviewer", 1, 0},
		{"skill-md without a version", mustKey(t, "skills/deploy/SKILL.md"), []byte(plain), TypeSkillMD, FormatMarkdown, "sha256-" + digest.Of([]byte(plain)).Short(), "", 0, 0},
		{"zip archive", mustKey(t, "listings/p/skills/deploy.zip"), archived, TypeArchive, FormatZip, "2.0", "", 0, 2},
		{"agent-md", mustKey(t, "subagents/reviewer/agent.md"), []byte(agentDoc("reviewer")), TypeAgentMD, FormatMarkdown, "sha256-" + digest.Of([]byte(agentDoc("reviewer"))).Short(), "", 0, 0},
		{"type and format from the key's name", Key{Key: "files/x/deploy.zip", Kind: KindSkill, Name: "deploy"}, archived, TypeArchive, FormatZip, "2.0", "", 0, 2},
		{"format from the name, type given", Key{Key: "deploy.md", Name: "deploy", Type: TypeSkillMD}, []byte(plain), TypeSkillMD, FormatMarkdown, "sha256-" + digest.Of([]byte(plain)).Short(), "", 0, 0},
		{"sub-agent kind makes .md an agent", Key{Key: "files/r.md", Kind: KindSubagent, Name: "reviewer"}, []byte(agentDoc("reviewer")), TypeAgentMD, FormatMarkdown, "sha256-" + digest.Of([]byte(agentDoc("reviewer"))).Short(), "", 0, 0},
		{"invalid metadata.subagent is a warning", mustKey(t, "skills/deploy.md"), []byte(skillDoc("deploy", "metadata:\n  subagent: Not Valid\n")), TypeSkillMD, FormatMarkdown, "", "", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Validate(tt.key, tt.data, archive.Limits{})
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if a.Name != tt.key.Name || a.Type != tt.typ || a.Format != tt.format || a.Size != int64(len(tt.data)) || a.Digest != digest.Of(tt.data) {
				t.Fatalf("artifact %+v", a)
			}
			if tt.version != "" && a.Version != tt.version {
				t.Fatalf("version %q, want %q", a.Version, tt.version)
			}
			if a.Subagent != tt.subagent || len(a.Warnings) != tt.warnings || len(a.Entries) != tt.entries {
				t.Fatalf("subagent %q warnings %q entries %d", a.Subagent, a.Warnings, len(a.Entries))
			}
			if a.Description == "" || (a.Skill == nil) == (a.Agent == nil) {
				t.Fatalf("description or parsed document missing: %+v", a)
			}
		})
	}
}

func TestValidateRejects(t *testing.T) {
	evil := skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("deploy", ""), "../evil": "x"})
	tests := []struct {
		name  string
		key   Key
		data  []byte
		lim   archive.Limits
		code  string
		entry string
		as    any // a type errors.As must find in the chain
	}{
		{"name mismatch, skill-md", mustKey(t, "skills/other.md"), []byte(skillDoc("deploy", "")), archive.Limits{}, CodeNameMismatch, "skills/other.md", nil},
		{"name mismatch, folder", mustKey(t, "skills/other/SKILL.md"), []byte(skillDoc("deploy", "")), archive.Limits{}, CodeNameMismatch, "", nil},
		{"name mismatch, archive", mustKey(t, "skills/other.zip"), skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("deploy", "")}), archive.Limits{}, CodeNameMismatch, "", nil},
		{"name mismatch, agent", mustKey(t, "subagents/other.md"), []byte(agentDoc("reviewer")), archive.Limits{}, CodeNameMismatch, "", nil},
		{"an agent without a body", mustKey(t, "subagents/reviewer.md"), []byte("---\nname: reviewer\ndescription: d\n---\n"), archive.Limits{}, skillmd.CodeInvalidBody, "", new(*skillmd.Error)},
		{"frontmatter error passes through", mustKey(t, "skills/deploy.md"), []byte("---\nname: deploy\n---\n"), archive.Limits{}, skillmd.CodeInvalidFrontmatter, "", new(*skillmd.Error)},
		{"reserved version passes through", mustKey(t, "skills/deploy.md"), []byte(skillDoc("deploy", "version: latest\n")), archive.Limits{}, skillmd.CodeReservedVersion, "", new(*skillmd.Error)},
		{"archive error passes through", mustKey(t, "skills/deploy.zip"), evil, archive.Limits{}, archive.CodePathTraversal, "../evil", new(*archive.Error)},
		{"archive frontmatter error", mustKey(t, "skills/deploy.zip"), skilltest.Zip(t, map[string]string{"SKILL.md": "---\nname: deploy\n---\n"}), archive.Limits{}, skillmd.CodeInvalidFrontmatter, "SKILL.md", new(*skillmd.Error)},
		{"tar.gz key with zip bytes", mustKey(t, "skills/deploy.tgz"), evil, archive.Limits{}, archive.CodeFormatMismatch, "", nil},
		{"size cap before anything else", mustKey(t, "skills/deploy.md"), bytes.Repeat([]byte{0xff}, archive.DefaultMaxArtifactBytes+1), archive.Limits{}, CodeTooLarge, "", nil},
		{"lowered size cap", mustKey(t, "skills/deploy.md"), []byte(skillDoc("deploy", "")), archive.Limits{MaxArtifactBytes: 10}, CodeTooLarge, "", nil},
		{"size cap cannot be raised", mustKey(t, "skills/deploy.md"), bytes.Repeat([]byte("a"), archive.DefaultMaxArtifactBytes+1), archive.Limits{MaxArtifactBytes: 1 << 30}, CodeTooLarge, "", nil},
		{"negative cap", mustKey(t, "skills/deploy.md"), []byte(skillDoc("deploy", "")), archive.Limits{MaxEntries: -1}, CodeInvalidLimits, "", nil},
		{"no name", Key{Key: "files/x.md", Type: TypeSkillMD, Format: FormatMarkdown}, []byte(skillDoc("deploy", "")), archive.Limits{}, CodeInvalidKey, "", nil},
		{"type and format disagree", Key{Key: "x", Name: "deploy", Type: TypeArchive, Format: FormatMarkdown}, []byte(skillDoc("deploy", "")), archive.Limits{}, CodeUnsupportedFile, "", nil},
		{"nothing says what it is", Key{Key: "files/x", Name: "deploy"}, []byte(skillDoc("deploy", "")), archive.Limits{}, CodeUnsupportedFile, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Validate(tt.key, tt.data, tt.lim)
			e, ok := AsError(err)
			if !ok || a != nil {
				t.Fatalf("got %v, %v; want an *Error", a, err)
			}
			if e.Code != tt.code || (tt.entry != "" && e.Entry != tt.entry) {
				t.Fatalf("error %v, want code %s entry %q", e, tt.code, tt.entry)
			}
			if tt.as != nil && !errors.As(err, tt.as) {
				t.Fatalf("error %v does not unwrap to %T", err, tt.as)
			}
			if !strings.HasPrefix(err.Error(), tt.code+": ") {
				t.Fatalf("Error() = %q, want it to start with the code", err.Error())
			}
		})
	}
}

// TestSizeRejectionsReadForPeople: a size rejection says how large and how
// large at most in binary units, as the caps are set.
func TestSizeRejectionsReadForPeople(t *testing.T) {
	err := CheckSize(6<<20+12345, archive.Limits{})
	if e, ok := AsError(err); !ok || e.Code != CodeTooLarge || !strings.Contains(e.Msg, "6.0 MiB > 4 MiB") {
		t.Fatalf("CheckSize: %v; want artifact_too_large saying 6.0 MiB > 4 MiB", err)
	}
	big := skilltest.Zip(t, map[string]string{"SKILL.md": skillDoc("deploy", ""), "data": strings.Repeat("a", 3<<20)})
	_, err = Validate(mustKey(t, "skills/deploy.zip"), big, archive.Limits{MaxExpandedBytes: 1 << 20})
	if e, ok := AsError(err); !ok || e.Code != archive.CodeExpandedTooLarge || !strings.Contains(e.Msg, "(1 MiB)") {
		t.Fatalf("Validate: %v; want expanded_too_large saying 1 MiB", err)
	}
}
