package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
)

// TestMCPAsAHost does what a host does with the feed, in each protocol
// revision, anonymously and with a key: list every skill, fetch each with
// skills/get, read every listed file and verify its digest and size, parse
// each SKILL.md's frontmatter and compare it with the entry's, and find
// every skill of the RFC index and its listings there, except those the
// status document says are not served over MCP.
func TestMCPAsAHost(t *testing.T) {
	st := mcpBucket(t)
	status, _, err := catalog.LoadStatus(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	// A drop's warnings are under its key; an external entry's under the
	// entry, as its rejections name it.
	for _, key := range []string{"skills/wide.zip", "agent-skills.yaml skills[2] (elsewhere)"} {
		if w := status.Warnings[key]; len(w) == 0 || !strings.HasPrefix(w[len(w)-1], "not served over MCP: ") {
			t.Fatalf("status warnings for %s: %q (all: %q)", key, w, status.Warnings)
		}
	}
	h := newHarness(t, st)
	for _, rev := range revisions {
		for _, key := range []string{"", goodKey} {
			name := rev + "/anonymous"
			if key != "" {
				name = rev + "/with a key"
			}
			t.Run(name, func(t *testing.T) {
				c := newMCPClient(t, h, rev, key)
				scope := "public"
				if key != "" {
					scope = "private"
				}
				skills := c.listAll()
				var uris []string
				for _, sk := range skills {
					uris = append(uris, sk.URI)
				}
				want := []string{
					"skill://code-review/SKILL.md", "skill://deploy-via-pr/SKILL.md", "skill://overridden/SKILL.md",
					"skill://partner-a.listing/partner-onboarding/SKILL.md",
				}
				if key != "" {
					want = slices.Insert(want, 2, "skill://internal-rotate-secret/SKILL.md")
				}
				if !slices.Equal(uris, want) {
					t.Fatalf("skills/list URIs\n %q\nwant\n %q", uris, want)
				}
				rfc := rfcNames(t, h, key)
				for _, name := range rfc {
					if name == "wide" || name == "elsewhere" {
						continue // not served over MCP, and the status says why
					}
					if !slices.ContainsFunc(uris, func(u string) bool { return strings.HasSuffix(u, "/"+name+"/SKILL.md") }) {
						t.Errorf("RFC index skill %s is not in skills/list", name)
					}
				}
				files := 0
				for _, sk := range skills {
					var got wireGet
					c.result("skills/get", map[string]any{"uri": sk.URI}, &got)
					if !reflect.DeepEqual(got.Skill, sk) || got.NextCursor != nil {
						t.Errorf("skills/get %s = %+v, skills/list said %+v", sk.URI, got.Skill, sk)
					}
					checkCaching(t, "skills/get", got.wireCaching, scope)
					root := strings.TrimSuffix(sk.URI, "/SKILL.md")
					for _, r := range sk.Resources {
						if !strings.HasPrefix(r.URI, root+"/") {
							t.Errorf("%s lies outside %s", r.URI, root)
						}
						body, mediaType, res := c.read(r.URI)
						checkCaching(t, "resources/read", res.wireCaching, scope)
						if d := digest.Of(body); d.String() != r.Digest || int64(len(body)) != r.Size {
							t.Errorf("%s: read %d bytes hashing to %s; the entry pins %d bytes, %s", r.URI, len(body), d, r.Size, r.Digest)
						}
						if r.URI == sk.URI {
							if mediaType != "text/markdown" {
								t.Errorf("%s media type %q", r.URI, mediaType)
							}
							sameFrontmatter(t, sk, body)
						}
						files++
					}
				}
				if files < 10 {
					t.Errorf("read only %d files", files)
				}
			})
		}
	}
}

// rfcNames returns the skill names of the RFC index and its listings, as
// the caller sees them.
func rfcNames(t *testing.T, h *harness, key string) []string {
	t.Helper()
	var names []string
	for _, path := range []string{"/.well-known/agent-skills/index.json", "/.well-known/agent-skills/partner-a/index.json"} {
		var hdr []string
		if key != "" {
			hdr = append(hdr, bearer(key))
		}
		w := h.do(http.MethodGet, path, hdr...)
		var idx struct {
			Skills []struct{ Name string } `json:"skills"`
		}
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &idx) != nil {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		for _, s := range idx.Skills {
			names = append(names, s.Name)
		}
	}
	return names
}

// sameFrontmatter parses the SKILL.md a host read and compares its
// frontmatter with the entry's, field by field, as SEP-2640 requires.
func sameFrontmatter(t *testing.T, sk wireSkill, body []byte) {
	t.Helper()
	s, err := skillmd.ParseSkill(body)
	if err != nil {
		t.Fatalf("%s: %v", sk.URI, err)
	}
	var fromFile, fromEntry map[string]any
	if err := json.Unmarshal(s.Frontmatter, &fromFile); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sk.Frontmatter, &fromEntry); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFile, fromEntry) {
		t.Errorf("%s: entry frontmatter %s, the file's %s", sk.URI, sk.Frontmatter, s.Frontmatter)
	}
	if name := path.Base(strings.TrimSuffix(sk.URI, "/SKILL.md")); fromEntry["name"] != name {
		t.Errorf("%s: frontmatter name %v is not the URI's last segment %q", sk.URI, fromEntry["name"], name)
	}
}

func checkCaching(t *testing.T, method string, c wireCaching, scope string) {
	t.Helper()
	if c.TTLMs == nil || *c.TTLMs != mcpTTLMs || c.CacheScope != scope {
		t.Errorf("%s: ttlMs %v, cacheScope %q; want %d, %q", method, c.TTLMs, c.CacheScope, mcpTTLMs, scope)
	}
}

// TestMCPEntries pins the entries themselves: the frontmatter verbatim
// (a description override of agent-skills.yaml does not apply), the files
// with their URIs, and text, binary and empty files read as text, base64
// and an empty blob.
func TestMCPEntries(t *testing.T) {
	h := newHarness(t, mcpBucket(t))
	c := newMCPClient(t, h, statelessRevision, "")
	var got wireGet
	c.result("skills/get", map[string]any{"uri": "skill://overridden/SKILL.md"}, &got)
	var fm map[string]any
	_ = json.Unmarshal(got.Skill.Frontmatter, &fm)
	if fm["description"] != "The frontmatter's own words." {
		t.Errorf("frontmatter %s: the config's description override must not apply over MCP", got.Skill.Frontmatter)
	}
	if w := h.do(http.MethodGet, "/.well-known/agent-skills/index.json"); !bytes.Contains(w.Body.Bytes(), []byte("The operator's words.")) {
		t.Errorf("the RFC index does not apply the override: %s", w.Body)
	}

	c.result("skills/get", map[string]any{"uri": "skill://code-review/SKILL.md"}, &got)
	if !sameJSON(t, got.Skill.Frontmatter, `{"name":"code-review","description":"Review a change (1 < 2 > 0) & \"well\".","license":"MIT","allowed-tools":["Read","Grep"],"metadata":{"version":"2.1","owner":"platform"}}`) {
		t.Errorf("frontmatter %s", got.Skill.Frontmatter)
	}
	var uris []string
	for _, r := range got.Skill.Resources {
		uris = append(uris, r.URI)
	}
	wantURIs := []string{ // in the files' path order
		"skill://code-review/SKILL.md", "skill://code-review/assets/logo.png", "skill://code-review/references/checklist.md",
		"skill://code-review/references/read%20me.md", "skill://code-review/references/%C3%BCber.md",
		"skill://code-review/scripts/lint.sh", "skill://code-review/templates/empty.txt",
	}
	if !slices.Equal(uris, wantURIs) {
		t.Errorf("resources\n %q\nwant\n %q", uris, wantURIs)
	}
	for _, tc := range []struct {
		uri, mediaType, text string
		blob                 []byte
	}{
		{"skill://code-review/references/checklist.md", "text/markdown", "# Checklist\n\n- Tests <pass> & \"lint\" is clean\u2028\n", nil},
		{"skill://code-review/scripts/lint.sh", "text/x-shellscript", "#!/bin/sh\nexec golangci-lint run ./...\n", nil},
		{"skill://code-review/assets/logo.png", "image/png", "", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")},
		{"skill://code-review/templates/empty.txt", "text/plain", "", []byte{}},
	} {
		var res wireContents
		c.result("resources/read", map[string]any{"uri": tc.uri}, &res)
		ct := res.Contents[0]
		switch {
		case ct.MIMEType != tc.mediaType:
			t.Errorf("%s: media type %q, want %q", tc.uri, ct.MIMEType, tc.mediaType)
		case tc.blob == nil && (ct.Text == nil || *ct.Text != tc.text || ct.Blob != nil):
			t.Errorf("%s: want text %q, got %+v", tc.uri, tc.text, ct)
		case tc.blob != nil && (ct.Blob == nil || !bytes.Equal(*ct.Blob, tc.blob) || ct.Text != nil):
			t.Errorf("%s: want blob %q, got %+v", tc.uri, tc.blob, ct)
		}
	}
}

// TestMCPVisibility: an authenticated skill exists only for a valid key,
// on every method; without one it is answered exactly as a skill that
// does not exist. An invalid key is 401 before MCP is spoken at all.
func TestMCPVisibility(t *testing.T) {
	h := newHarness(t, mcpBucket(t))
	hidden := map[string]map[string]any{
		"skills/get":               {"uri": "skill://internal-rotate-secret/SKILL.md"},
		"resources/read":           {"uri": "skill://internal-rotate-secret/SKILL.md"},
		"resources/directory/read": {"uri": "skill://internal-rotate-secret"},
	}
	unknown := map[string]map[string]any{
		"skills/get":               {"uri": "skill://no-such-skill/SKILL.md"},
		"resources/read":           {"uri": "skill://no-such-skill/SKILL.md"},
		"resources/directory/read": {"uri": "skill://no-such-skill"},
	}
	for _, rev := range revisions {
		anon, keyed := newMCPClient(t, h, rev, ""), newMCPClient(t, h, rev, goodKey)
		for method, params := range hidden {
			a := anon.wantError(method, params, -32602)
			u := anon.wantError(method, unknown[method], -32602)
			if strings.ReplaceAll(a.Message, "internal-rotate-secret", "X") != strings.ReplaceAll(u.Message, "no-such-skill", "X") ||
				!bytes.Equal(bytes.ReplaceAll(a.Data, []byte("internal-rotate-secret"), []byte("X")), bytes.ReplaceAll(u.Data, []byte("no-such-skill"), []byte("X"))) {
				t.Errorf("%s %s: a hidden skill answers %+v, an unknown one %+v", rev, method, a, u)
			}
			if _, rerr, _ := keyed.call(method, params); rerr != nil {
				t.Errorf("%s %s with a key: %+v", rev, method, rerr)
			}
		}
		var res wireResources
		anon.result("resources/list", nil, &res)
		for _, r := range res.Resources {
			if strings.Contains(r.URI, "internal-rotate-secret") {
				t.Errorf("%s: resources/list shows %s to an anonymous caller", rev, r.URI)
			}
		}
		checkCaching(t, "resources/list", res.wireCaching, "public")
		keyed.result("resources/list", nil, &res)
		checkCaching(t, "resources/list", res.wireCaching, "private")
	}
	w := h.post("/mcp", initializeMsg, append(mcpHeaders, bearer("sk-not-a-key"))...)
	if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("an invalid key: %d %s", w.Code, w.Body)
	}
}

// TestMCPDirectories reads directories as a host would descend them.
func TestMCPDirectories(t *testing.T) {
	h := newHarness(t, mcpBucket(t))
	c := newMCPClient(t, h, statelessRevision, "")
	children := func(uri string) (out []string) {
		var res wireResources
		c.result("resources/directory/read", map[string]any{"uri": uri}, &res)
		checkCaching(t, "resources/directory/read", res.wireCaching, "public")
		for _, r := range res.Resources {
			out = append(out, r.URI+" "+r.MIMEType)
		}
		return out
	}
	for _, tc := range []struct {
		uri  string
		want []string
	}{
		{"skill://code-review", []string{
			"skill://code-review/SKILL.md text/markdown", "skill://code-review/assets inode/directory",
			"skill://code-review/references inode/directory", "skill://code-review/scripts inode/directory",
			"skill://code-review/templates inode/directory",
		}},
		{"skill://code-review/references", []string{
			"skill://code-review/references/%C3%BCber.md text/markdown", "skill://code-review/references/checklist.md text/markdown",
			"skill://code-review/references/read%20me.md text/markdown",
		}},
		{"skill://partner-a.listing", []string{"skill://partner-a.listing/partner-onboarding inode/directory"}},
		{"skill://partner-a.listing/partner-onboarding", []string{"skill://partner-a.listing/partner-onboarding/SKILL.md text/markdown"}},
	} {
		if got := children(tc.uri); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n %q\nwant\n %q", tc.uri, got, tc.want)
		}
	}
	for _, uri := range []string{"skill://code-review/SKILL.md", "skill://code-review/references/", "skill://code-review/nope", "skill://wide"} {
		c.wantError("resources/directory/read", map[string]any{"uri": uri}, -32602)
	}
}

// sameJSON reports whether got means the same JSON value as want.
func sameJSON(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	return reflect.DeepEqual(a, b)
}
