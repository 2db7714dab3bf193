package artifact

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/responselimit"
)

// TestTextCostIsBothEncoders pins textCost to what the two encoders make
// of a whole string: json.Marshal (HTML escaping on, as the MCP SDK's
// ReadResourceResult), then the adapter's JSONStringLen.
func TestTextCostIsBothEncoders(t *testing.T) {
	var all strings.Builder
	for c := range 128 {
		all.WriteByte(byte(c))
	}
	noise := make([]byte, 4096)
	_, _ = rand.Read(noise)
	for _, s := range []string{
		"", "plain text", all.String(), "<html> & \"quotes\" \\ \t\n\r\b\f", "sep\u2028ar\u2029ators", "héllo wörld ✓ 🎉",
		strings.ToValidUTF8(string(noise), "?"),
	} {
		inner, _ := json.Marshal(s)
		want := responselimit.JSONStringLen(string(inner[1:len(inner)-1])) - 2
		if got := textCost([]byte(s)); got != int64(want) {
			t.Errorf("textCost(%.20q) = %d, the encoders make %d", s, got, want)
		}
	}
}

func TestReadAsText(t *testing.T) {
	for _, tc := range []struct {
		mediaType, data string
		want            bool
	}{
		{"text/markdown", "# x", true},
		{"application/json", "{}", true},
		{"image/svg+xml", "<svg/>", true},
		{"application/yaml", "a: 1", true},
		{"text/plain", "caf\xe9", false}, // not UTF-8: a JSON string would change it
		{"text/plain", "", false},        // empty: a blob, since empty text is left out
		{"image/png", "\x89PNG", false},
		{"application/octet-stream", "abc", false},
		{"not a media type", "abc", false},
	} {
		if got := ReadAsText(tc.mediaType, []byte(tc.data)); got != tc.want {
			t.Errorf("ReadAsText(%q, %q) = %v", tc.mediaType, tc.data, got)
		}
	}
}

func TestMCPExclusion(t *testing.T) {
	fm := json.RawMessage(`{"name":"a","description":"d"}`)
	file := func(path, mediaType, data string) archive.File {
		return archive.File{Path: path, Digest: digest.Of([]byte(data)), Size: int64(len(data)), MediaType: mediaType, Data: []byte(data)}
	}
	skill := file("SKILL.md", "text/markdown", "---\nname: a\n---\n")
	quotes := file("q.md", "text/markdown", strings.Repeat(`"`, 1000)) // 4 bytes each once both encoders are done
	binary := file("b.bin", "application/octet-stream", strings.Repeat("\x00", 999))
	many := []archive.File{skill}
	for i := range MCPMaxFiles {
		many = append(many, file(fmt.Sprintf("f%03d.txt", i), "text/plain", "x"))
	}
	fits := ReadAnswerBytes(quotes.Path, quotes.MediaType, quotes.Data)
	if want := int64(readAnswerOverhead + len("q.md") + len("text/markdown") + 4000); fits != want {
		t.Fatalf("ReadAnswerBytes(1000 quotes) = %d, want %d", fits, want)
	}
	if got, want := ReadAnswerBytes(binary.Path, binary.MediaType, binary.Data), int64(readAnswerOverhead+len("b.bin")+len("application/octet-stream")+1332); got != want {
		t.Fatalf("ReadAnswerBytes(999 binary bytes) = %d, want %d (base64)", got, want)
	}
	big := file("big.txt", "text/plain", "")
	big.Size = MCPMaxTotalBytes // sizes are summed as recorded
	for _, tc := range []struct {
		name      string
		files     []archive.File
		fm        json.RawMessage
		maxAnswer int64
		want      string // substring; "" when served
	}{
		{"within every limit", []archive.File{skill, quotes, binary}, fm, fits, ""},
		{"one byte over the response limit", []archive.File{skill, quotes}, fm, fits - 1, "q.md: its resources/read answer would take"},
		{"no JSON frontmatter", []archive.File{skill}, nil, fits, "no faithful JSON form (why)"},
		{"513 files", many, fm, fits, "513 files, more than the 512"},
		{"512 files", many[:MCPMaxFiles], fm, fits, ""},
		{"more than 16 MiB", []archive.File{skill, big}, fm, fits, "more than the 16777216"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mcpExclusion(tc.files, tc.fm, "why", tc.maxAnswer)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("exclusion %q, want %q", got, tc.want)
			}
		})
	}
}

// TestValidateRecordsFilesForMCP follows the files and the MCP decision
// through Validate, with the real response limit.
func TestValidateRecordsFilesForMCP(t *testing.T) {
	doc := skillDoc("pdf", "license: MIT\nmetadata:\n  version: \"1.2\"\n")
	t.Run("skill-md", func(t *testing.T) {
		a, err := Validate(mustKey(t, "skills/pdf.md"), []byte(doc), archive.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		want := archive.File{Path: "SKILL.md", Digest: digest.Of([]byte(doc)), Size: int64(len(doc)), MediaType: "text/markdown", Data: []byte(doc)}
		if len(a.Files) != 1 || a.Files[0].Path != want.Path || !a.Files[0].Digest.Equal(want.Digest) || a.Files[0].Size != want.Size || a.Files[0].MediaType != want.MediaType {
			t.Errorf("files %+v", a.Files)
		}
		if string(a.Frontmatter) != `{"name":"pdf","description":"Does pdf.","license":"MIT","metadata":{"version":"1.2"}}` || a.MCPExcluded != "" {
			t.Errorf("frontmatter %s, excluded %q", a.Frontmatter, a.MCPExcluded)
		}
	})
	t.Run("archive within the limits", func(t *testing.T) {
		data := skilltest.Zip(t, map[string]string{"SKILL.md": doc, "references/FORMS.md": "# Forms\n"})
		a, err := Validate(mustKey(t, "skills/pdf.zip"), data, archive.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Files) != 2 || a.Files[1].Path != "references/FORMS.md" || a.MCPExcluded != "" || len(a.Warnings) != 0 {
			t.Errorf("files %v, excluded %q, warnings %q", len(a.Files), a.MCPExcluded, a.Warnings)
		}
	})
	t.Run("archive with 513 files", func(t *testing.T) {
		files := map[string]string{"SKILL.md": doc}
		for i := range MCPMaxFiles {
			files[fmt.Sprintf("refs/f%03d.md", i)] = "x"
		}
		a, err := Validate(mustKey(t, "skills/pdf.zip"), skilltest.Zip(t, files), archive.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.MCPExcluded, "513 files") || len(a.Warnings) != 1 || a.Warnings[0] != MCPWarning(a.MCPExcluded) {
			t.Errorf("excluded %q, warnings %q", a.MCPExcluded, a.Warnings)
		}
	})
	t.Run("a file whose answer would not fit the response", func(t *testing.T) {
		// 6 MB of hex digits: valid within the archive caps (it deflates
		// to about half), but no 6 MB response can carry it as text.
		raw := make([]byte, 3_000_000)
		_, _ = rand.Read(raw)
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, f := range []struct{ name, body string }{{"SKILL.md", doc}, {"data/dump.txt", hex.EncodeToString(raw)}} {
			w, err := zw.Create(f.name)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write([]byte(f.body))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		a, err := Validate(mustKey(t, "skills/pdf.zip"), buf.Bytes(), archive.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.MCPExcluded, "data/dump.txt: its resources/read answer would take") {
			t.Errorf("excluded %q", a.MCPExcluded)
		}
	})
	t.Run("agent-md carries frontmatter only", func(t *testing.T) {
		a, err := Validate(mustKey(t, "subagents/reviewer.md"), []byte(agentDoc("reviewer")), archive.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Files) != 0 || a.MCPExcluded != "" || string(a.Frontmatter) != `{"name":"reviewer","description":"Reviews."}` {
			t.Errorf("files %d, excluded %q, frontmatter %s", len(a.Files), a.MCPExcluded, a.Frontmatter)
		}
	})
}
