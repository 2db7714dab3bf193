package artifact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

func TestParseKey(t *testing.T) {
	tests := []struct {
		key     string
		kind    Kind
		name    string
		listing string
		typ     Type
		format  Format
		code    string
	}{
		{key: "skills/deploy-via-pr.md", kind: KindSkill, name: "deploy-via-pr", typ: TypeSkillMD, format: FormatMarkdown},
		{key: "skills/deploy/SKILL.md", kind: KindSkill, name: "deploy", typ: TypeSkillMD, format: FormatMarkdown},
		{key: "skills/deploy.zip", kind: KindSkill, name: "deploy", typ: TypeArchive, format: FormatZip},
		{key: "skills/deploy.tar.gz", kind: KindSkill, name: "deploy", typ: TypeArchive, format: FormatTarGz},
		{key: "skills/deploy.tgz", kind: KindSkill, name: "deploy", typ: TypeArchive, format: FormatTarGz},
		{key: "listings/partner-a/skills/x.md", kind: KindSkill, name: "x", listing: "partner-a", typ: TypeSkillMD, format: FormatMarkdown},
		{key: "listings/partner-a/skills/x/SKILL.md", kind: KindSkill, name: "x", listing: "partner-a", typ: TypeSkillMD, format: FormatMarkdown},
		{key: "listings/partner-a/skills/x.tgz", kind: KindSkill, name: "x", listing: "partner-a", typ: TypeArchive, format: FormatTarGz},
		{key: "subagents/reviewer.md", kind: KindSubagent, name: "reviewer", typ: TypeAgentMD, format: FormatMarkdown},
		{key: "subagents/reviewer/agent.md", kind: KindSubagent, name: "reviewer", typ: TypeAgentMD, format: FormatMarkdown},
		{key: "files/x.md", kind: KindFile},
		{key: "files/bundles/x.zip", kind: KindFile},
		{key: "agent-skills.yaml", kind: KindConfig},
		{key: "catalog/catalog.json", kind: KindInternal},
		{key: "blobs/sha256/abc", kind: KindInternal},
		{key: "skills/deploy/README.md", kind: KindBeside, name: "deploy"},
		{key: "skills/deploy/scripts/run.sh", kind: KindBeside, name: "deploy"},
		{key: "skills/deploy/skill.md", kind: KindBeside, name: "deploy"},
		{key: "listings/partner-a/skills/x/notes.txt", kind: KindBeside, name: "x", listing: "partner-a"},
		{key: "skills/deploy.txt", kind: KindIgnored},
		{key: "skills/.DS_Store", kind: KindIgnored},
		{key: "skills/deploy.MD", kind: KindIgnored},
		{key: "skills/", kind: KindIgnored},
		{key: "skills/deploy/", kind: KindIgnored},
		{key: "skills/Bad Folder/README.md", kind: KindIgnored},
		{key: "listings/Bad/skills/x/README.md", kind: KindIgnored},
		{key: "listings/partner-a/readme.txt", kind: KindIgnored},
		{key: "listings/partner-a", kind: KindIgnored},
		{key: "subagents/reviewer/notes.md", kind: KindIgnored},
		{key: "subagents/reviewer.zip", kind: KindIgnored},
		{key: "files/", kind: KindIgnored},
		{key: "files/dir/", kind: KindIgnored},
		{key: "agent-skills.yml", kind: KindIgnored},
		{key: "README.md", kind: KindIgnored},
		{key: "/skills/x.md", kind: KindIgnored},
		{key: "skills/Deploy.md", code: CodeInvalidKey},
		{key: "skills/a_b.zip", code: CodeInvalidKey},
		{key: "skills/.md", code: CodeInvalidKey},
		{key: "skills//SKILL.md", code: CodeInvalidKey},
		{key: "skills/x.y.tgz", code: CodeInvalidKey},
		{key: "skills/latest.md", code: CodeInvalidKey},
		{key: "skills/v1/SKILL.md", code: CodeInvalidKey},
		{key: "skills/My Skill/SKILL.md", code: CodeInvalidKey},
		{key: "skills/" + strings.Repeat("a", 65) + ".md", code: CodeInvalidKey},
		{key: "listings/Partner/skills/x.md", code: CodeInvalidKey},
		{key: "listings//skills/x.md", code: CodeInvalidKey},
		{key: "listings/partner-a/skills/X.zip", code: CodeInvalidKey},
		{key: "subagents/Reviewer.md", code: CodeInvalidKey},
		{key: "subagents/check-updates/agent.md", code: CodeInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			k, err := ParseKey(tt.key)
			if tt.code != "" {
				e, ok := AsError(err)
				if !ok || e.Code != tt.code || e.Entry != tt.key {
					t.Fatalf("error %v, want code %s naming the key", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			want := Key{Key: tt.key, Kind: tt.kind, Name: tt.name, Listing: tt.listing, Type: tt.typ, Format: tt.format}
			if k != want {
				t.Fatalf("ParseKey = %+v, want %+v", k, want)
			}
		})
	}
}

func TestLocalKey(t *testing.T) {
	tests := []struct {
		path  string
		agent bool
		kind  Kind
		name  string
		typ   Type
		code  string
	}{
		{path: "deploy.zip", kind: KindSkill, name: "deploy", typ: TypeArchive},
		{path: "out/deploy.tar.gz", kind: KindSkill, name: "deploy", typ: TypeArchive},
		{path: "/abs/deploy.tgz", kind: KindSkill, name: "deploy", typ: TypeArchive},
		{path: "skills/deploy.md", kind: KindSkill, name: "deploy", typ: TypeSkillMD},
		{path: "skills/deploy/SKILL.md", kind: KindSkill, name: "deploy", typ: TypeSkillMD},
		{path: "deploy/./SKILL.md", kind: KindSkill, name: "deploy", typ: TypeSkillMD},
		{path: "reviewer.md", agent: true, kind: KindSubagent, name: "reviewer", typ: TypeAgentMD},
		{path: "bucket/subagents/reviewer.md", kind: KindSubagent, name: "reviewer", typ: TypeAgentMD},
		{path: "subagents/reviewer/agent.md", kind: KindSubagent, name: "reviewer", typ: TypeAgentMD},
		{path: "reviewer/agent.md", kind: KindSubagent, name: "reviewer", typ: TypeAgentMD},
		{path: "deploy.zip", agent: true, kind: KindSkill, name: "deploy", typ: TypeArchive},
		{path: "skills/deploy/SKILL.md", agent: true, kind: KindSkill, name: "deploy", typ: TypeSkillMD},
		{path: "notes.txt", code: CodeUnsupportedFile},
		{path: "deploy.tar", code: CodeUnsupportedFile},
		{path: "Deploy.zip", code: CodeInvalidKey},
		{path: "My Skill/SKILL.md", code: CodeInvalidKey},
		{path: "subagents/Reviewer.md", code: CodeInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			k, err := LocalKey(tt.path, tt.agent)
			if tt.code != "" {
				if e, ok := AsError(err); !ok || e.Code != tt.code {
					t.Fatalf("error %v, want code %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.Key != tt.path || k.Kind != tt.kind || k.Name != tt.name || k.Type != tt.typ {
				t.Fatalf("LocalKey = %+v, want kind %s name %s type %s", k, tt.kind, tt.name, tt.typ)
			}
		})
	}
}

func TestLocalKeyBareSkillMDUsesTheWorkingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "from-cwd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	k, err := LocalKey("SKILL.md", false)
	if err != nil || k.Name != "from-cwd" || k.Key != "SKILL.md" {
		t.Fatalf("LocalKey(SKILL.md) = %+v, %v; want the working directory's name", k, err)
	}
}

func TestLocalKeyInsideSubagentsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "subagents")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	k, err := LocalKey("reviewer.md", false)
	if err != nil || k.Kind != KindSubagent || k.Type != TypeAgentMD {
		t.Fatalf("LocalKey(reviewer.md) inside subagents/ = %+v, %v; want a sub-agent", k, err)
	}
}

func TestInvalidKeyNamesTheNameOnce(t *testing.T) {
	_, err := ParseKey("skills/UPPER.md")
	e, ok := AsError(err)
	if !ok || e.Code != CodeInvalidKey || strings.Count(e.Error(), `"UPPER"`) != 1 {
		t.Fatalf("error %v: want invalid_key naming \"UPPER\" once", err)
	}
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"skills/x.md", "skills/x/SKILL.md", "listings/a/skills/b.tgz", "subagents/r/agent.md", "skills/x/y", "files/a", "catalog/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k, err := ParseKey(key)
		if err != nil {
			if e, ok := AsError(err); !ok || e.Code != CodeInvalidKey {
				t.Fatalf("error %v is not invalid_key", err)
			}
			return
		}
		if k.Key != key {
			t.Fatalf("Key %q, want %q", k.Key, key)
		}
		switch k.Kind {
		case KindSkill, KindSubagent:
			if k.Type == "" || k.Format == "" {
				t.Fatalf("artifact key without type/format: %+v", k)
			}
			fallthrough
		case KindBeside:
			if skillmd.ValidateName(k.Name) != nil || (k.Listing != "" && skillmd.ValidateName(k.Listing) != nil) {
				t.Fatalf("key %+v carries an invalid name", k)
			}
		default:
			if k.Name != "" || k.Listing != "" || k.Type != "" {
				t.Fatalf("non-artifact key %+v carries artifact fields", k)
			}
		}
	})
}
