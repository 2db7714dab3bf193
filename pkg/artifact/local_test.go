package artifact

import (
	"path/filepath"
	"testing"
)

func TestFolderKey(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		dir   string
		agent bool
		kind  Kind
		name  string
		typ   Type
		code  string
	}{
		{dir: "deploy", kind: KindSkill, name: "deploy", typ: TypeArchive},
		{dir: "deploy/", kind: KindSkill, name: "deploy", typ: TypeArchive},
		{dir: "src/deploy/.", kind: KindSkill, name: "deploy", typ: TypeArchive},
		{dir: "reviewer", agent: true, kind: KindSubagent, name: "reviewer", typ: TypeAgentMD},
		{dir: "bucket/subagents/reviewer/", kind: KindSubagent, name: "reviewer", typ: TypeAgentMD},
		{dir: "My Skill", code: CodeInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			k, err := FolderKey(filepath.Join(root, tt.dir), tt.agent)
			if tt.code != "" {
				if e, ok := AsError(err); !ok || e.Code != tt.code {
					t.Fatalf("error %v, want code %s", err, tt.code)
				}
				return
			}
			if err != nil || k.Kind != tt.kind || k.Name != tt.name || k.Type != tt.typ {
				t.Fatalf("FolderKey = %+v, %v; want kind %s name %s type %s", k, err, tt.kind, tt.name, tt.typ)
			}
		})
	}
	t.Chdir(filepath.Join(root))
	if k, err := FolderKey(".", false); err != nil || k.Name != filepath.Base(root) {
		t.Fatalf("FolderKey(.) = %+v, %v; want the working directory's name", k, err)
	}
}

func TestBucketKeyOf(t *testing.T) {
	tests := []struct {
		path, key string // key "" = not a skill or sub-agent key of a bucket layout
		listing   string
	}{
		{"/srv/bucket/skills/deploy/SKILL.md", "skills/deploy/SKILL.md", ""},
		{"/srv/bucket/skills/deploy.zip", "skills/deploy.zip", ""},
		{"/srv/bucket/listings/partner-a/skills/x.md", "listings/partner-a/skills/x.md", "partner-a"},
		{"/srv/bucket/listings/partner-a/skills/x/SKILL.md", "listings/partner-a/skills/x/SKILL.md", "partner-a"},
		{"/srv/bucket/subagents/reviewer/agent.md", "subagents/reviewer/agent.md", ""},
		{"/home/skills/project/skills/x.md", "skills/x.md", ""},
		{"/srv/bucket/skills/deploy/notes.txt", "", ""},
		{"/srv/bucket/files/x.md", "", ""},
		{"/srv/bucket/agent-skills.yaml", "", ""},
		{"/srv/skills", "", ""},
		{"/tmp/deploy.md", "", ""},
	}
	for _, tt := range tests {
		k, ok := BucketKeyOf(filepath.FromSlash(tt.path))
		if ok != (tt.key != "") || (ok && (k.Key != tt.key || k.Listing != tt.listing)) {
			t.Errorf("BucketKeyOf(%s) = %+v, %v; want %q in listing %q", tt.path, k, ok, tt.key, tt.listing)
		}
	}
}
