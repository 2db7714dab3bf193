package artifact

import (
	"slices"
	"testing"
)

// TestContractKeysParseBack: every key the contract's builders write reads
// back through ParseKey as what it was built for, so a writer (publish, the
// indexer's served paths) and the reader cannot drift apart.
func TestContractKeysParseBack(t *testing.T) {
	tests := []struct {
		key     string
		want    string
		kind    Kind
		listing string
		format  Format
	}{
		{SkillKey("", "deploy", FormatMarkdown), "skills/deploy.md", KindSkill, "", FormatMarkdown},
		{SkillKey("", "deploy", FormatZip), "skills/deploy.zip", KindSkill, "", FormatZip},
		{SkillKey("", "deploy", FormatTarGz), "skills/deploy.tar.gz", KindSkill, "", FormatTarGz},
		{SkillKey("partner-a", "deploy", FormatZip), "listings/partner-a/skills/deploy.zip", KindSkill, "partner-a", FormatZip},
		{SkillFolder("", "deploy") + SkillFile, "skills/deploy/SKILL.md", KindSkill, "", FormatMarkdown},
		{SkillFolder("partner-a", "deploy") + SkillFile, "listings/partner-a/skills/deploy/SKILL.md", KindSkill, "partner-a", FormatMarkdown},
		{SubagentKey("reviewer"), "subagents/reviewer.md", KindSubagent, "", FormatMarkdown},
	}
	for _, tt := range tests {
		if tt.key != tt.want {
			t.Errorf("built %q, want %q", tt.key, tt.want)
		}
		k, err := ParseKey(tt.key)
		if err != nil || k.Kind != tt.kind || k.Listing != tt.listing || k.Format != tt.format || (k.Name != "deploy" && k.Name != "reviewer") {
			t.Errorf("ParseKey(%q) = %+v, %v", tt.key, k, err)
		}
	}
	for _, k := range []Kind{KindSkill, KindSubagent} {
		for _, listing := range []string{"", "partner-a"} {
			if k == KindSubagent && listing != "" {
				continue
			}
			name := "deploy"
			key := SkillKey(listing, name, FormatZip)
			if k == KindSubagent {
				key = SubagentKey(name)
			}
			if p := NamePrefix(k, listing, name); len(key) < len(p) || key[:len(p)] != p {
				t.Errorf("NamePrefix(%s, %q, %q) = %q does not prefix %q", k, listing, name, p, key)
			}
		}
	}
}

func TestFormatOf(t *testing.T) {
	for name, want := range map[string]Format{
		"x.md": FormatMarkdown, "x.zip": FormatZip, "x.tar.gz": FormatTarGz, "x.tgz": FormatTarGz,
		"files/a/b.zip": FormatZip, "x.MD": "", "x.tar": "", "x": "", "x.gz": "",
	} {
		got, ok := FormatOf(name)
		if got != want || ok != (want != "") {
			t.Errorf("FormatOf(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, f := range []Format{FormatMarkdown, FormatZip, FormatTarGz} {
		if got, _ := FormatOf("x" + f.Ext()); got != f {
			t.Errorf("FormatOf(x%s) = %q, want %q", f.Ext(), got, f)
		}
	}
}

func TestSourcePrefixesLeaveOutTheIndexersOwnKeys(t *testing.T) {
	p := SourcePrefixes()
	if !slices.Contains(p, ConfigKey) || slices.Contains(p, BlobsPrefix) || slices.Contains(p, CatalogPrefix) {
		t.Fatalf("SourcePrefixes() = %q", p)
	}
	p[0] = "changed"
	if SourcePrefixes()[0] == "changed" {
		t.Fatal("SourcePrefixes returns shared state")
	}
}
