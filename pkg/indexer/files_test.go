package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// testFilesArePinnedForMCP follows a skill's files from a drop to the
// catalog and the store: every file recorded with its digest, size and
// media type, its bytes in a blob of their own, the frontmatter as JSON;
// and what is not served over MCP (over the extension's limits, external)
// says so in the catalog and in the status document.
func testFilesArePinnedForMCP(t *testing.T, mk envMaker) {
	ctx := context.Background()
	doc := skilltest.SkillMD("pdf-tools", "1.0", "Fills PDF forms.")
	files := map[string]string{"SKILL.md": doc, "references/FORMS.md": "# Forms\n", "scripts/fill.py": "print(1)\n"}
	e := mk(t)
	e.drop("skills/pdf-tools.zip", skilltest.Zip(t, files))
	v := e.live(catalog.KindSkill, "pdf-tools").LatestVersion()
	want := []catalog.File{
		{Path: "SKILL.md", Digest: digest.Of([]byte(doc)), Size: int64(len(doc)), MediaType: "text/markdown"},
		{Path: "references/FORMS.md", Digest: digest.Of([]byte("# Forms\n")), Size: 8, MediaType: "text/markdown"},
		{Path: "scripts/fill.py", Digest: digest.Of([]byte("print(1)\n")), Size: 9, MediaType: "text/x-python"},
	}
	if dump(v.Files) != dump(want) || v.MCPExcluded != "" {
		t.Fatalf("files %s, excluded %q; want %s", dump(v.Files), v.MCPExcluded, dump(want))
	}
	var fm bytes.Buffer
	if err := json.Compact(&fm, v.Frontmatter); err != nil || fm.String() != `{"name":"pdf-tools","description":"Fills PDF forms.","metadata":{"version":"1.0"}}` {
		t.Fatalf("frontmatter %s", v.Frontmatter)
	}
	for _, f := range want {
		b, _, err := store.ReadAll(ctx, e.st, catalog.BlobKey(f.Digest), 0)
		if err != nil || string(b) != files[f.Path] {
			t.Fatalf("blob of %s: %q, %v", f.Path, b, err)
		}
	}
	consistent(t, e.st)

	// A skill-md is its one file, whose blob is the artifact's.
	e.drop("skills/notes.md", skillDoc("notes", "", "Notes."))
	if v := e.live(catalog.KindSkill, "notes").LatestVersion(); len(v.Files) != 1 || v.Files[0].Path != "SKILL.md" || !v.Files[0].Digest.Equal(v.Digest) {
		t.Fatalf("skill-md files %s", dump(v.Files))
	}

	// Over the Skills extension's 512 files: in every other feed, with a warning.
	wide := map[string]string{"SKILL.md": skilltest.SkillMD("wide", "1", "Wide.")}
	for i := range artifact.MCPMaxFiles {
		wide[fmt.Sprintf("refs/r%03d.md", i)] = fmt.Sprint(i)
	}
	e.drop("skills/wide.zip", skilltest.Zip(t, wide))
	if v := e.live(catalog.KindSkill, "wide").LatestVersion(); !strings.Contains(v.MCPExcluded, "513 files") || len(v.Files) != 513 {
		t.Fatalf("wide: %d files, excluded %q", len(v.Files), v.MCPExcluded)
	}
	if w := e.status().Warnings["skills/wide.zip"]; len(w) != 1 || !strings.HasPrefix(w[0], "not served over MCP: it has 513 files") {
		t.Fatalf("status warnings %q", w)
	}
	consistent(t, e.st)
}

func TestExternalEntriesAreNotServedOverMCP(t *testing.T) {
	doc := skillDoc("ext", "4", "Fetched.")
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(doc) })
	e := newEnv(t, func(c *Config) { c.Fetcher = fetcherFor(srv) })
	pinned := "https://skills.example.com/pinned.md"
	e.config(fmt.Sprintf("version: 1\nskills:\n  - name: ext\n    type: skill-md\n    url: %s/ext.md\n"+
		"  - name: pinned\n    type: skill-md\n    url: %s\n    description: Pinned.\n    digest: %s\n", srv.URL, pinned, digest.Of(doc)))
	for _, tc := range []struct{ name, key string }{{"ext", "agent-skills.yaml skills[0] (ext)"}, {"pinned", "agent-skills.yaml skills[1] (pinned)"}} {
		if v := e.live(catalog.KindSkill, tc.name).LatestVersion(); v.MCPExcluded != mcpExternal {
			t.Errorf("%s: excluded %q", tc.name, v.MCPExcluded)
		}
		if w := e.status().Warnings[tc.key]; len(w) != 1 || w[0] != artifact.MCPWarning(mcpExternal) {
			t.Errorf("%s: status warnings %q under %s", tc.name, w, tc.key)
		}
	}
}
