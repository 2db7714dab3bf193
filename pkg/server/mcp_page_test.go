package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/lambdahttp"
	"github.com/skilldrop/skilldrop/pkg/responselimit"
	"github.com/skilldrop/skilldrop/pkg/skillmd"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// servedSkill publishes an archive skill the way the indexer records one
// for MCP: each file's blob, and the version's files and frontmatter.
func servedSkill(b *bucket, name string, vis catalog.Visibility, files map[string][]byte) *catalog.Entry {
	b.t.Helper()
	if files["SKILL.md"] == nil {
		files["SKILL.md"] = skillMD(name)
	}
	e := b.skill(name, "", vis, artifact.FormatZip, []byte("PK\x03\x04 "+name))
	v := e.LatestVersion()
	s, err := skillmd.ParseSkill(files["SKILL.md"])
	if err != nil {
		b.t.Fatal(err)
	}
	v.Frontmatter = s.Frontmatter
	for path, body := range files {
		v.Files = append(v.Files, catalog.File{Path: path, Digest: b.blob(body), Size: int64(len(body)), MediaType: archive.MediaType(path, body)})
	}
	sort.Slice(v.Files, func(i, j int) bool { return v.Files[i].Path < v.Files[j].Path })
	return e
}

// wideFiles are n files with long paths: an entry of about n × 300 bytes.
func wideFiles(n int) map[string][]byte {
	files := map[string][]byte{}
	for i := range n {
		files[fmt.Sprintf("references/%s/file-%03d.md", strings.Repeat("deep", 50), i)] = []byte("x")
	}
	return files
}

// viaGateway sends one JSON-RPC message through the API Gateway adapter,
// with its default (the real) response limit.
func viaGateway(t testing.TB, srv *Server, body string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	ev := events.APIGatewayV2HTTPRequest{
		RawPath: "/mcp", Body: body,
		Headers: map[string]string{"content-type": "application/json", "accept": "application/json, text/event-stream", "host": "skills.example.com"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "skills.example.com", RequestID: "gw-1",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodPost, Path: "/mcp"},
		},
	}
	resp, err := lambdahttp.New(srv).Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestMCPPagesAreBoundedBySize lists large skills through the adapter:
// every page is within mcpPageBytes and fits the function's response,
// pages hold whole entries, and the pages together list every skill once.
func TestMCPPagesAreBoundedBySize(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	var want []string
	for i := range 24 {
		name := fmt.Sprintf("large-%02d", i)
		servedSkill(b, name, catalog.Public, wideFiles(artifact.MCPMaxFiles-1))
		want = append(want, "skill://"+name+"/SKILL.md")
	}
	b.publish()
	h := newHarness(t, st)
	var got []string
	cursor, pages := "", 0
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		resp := viaGateway(t, h.srv, `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":`+params+`}`)
		if resp.StatusCode != http.StatusOK || resp.IsBase64Encoded {
			t.Fatalf("page %d: status %d, base64 %v: %.200s", pages, resp.StatusCode, resp.IsBase64Encoded, resp.Body)
		}
		var r struct {
			Result wireList `json:"result"`
		}
		if err := json.Unmarshal([]byte(resp.Body), &r); err != nil {
			t.Fatal(err)
		}
		if n := len(resp.Body); n > mcpPageBytes+4096 || len(r.Result.Skills) == 0 {
			t.Fatalf("page %d: %d bytes, %d skills", pages, n, len(r.Result.Skills))
		}
		for _, sk := range r.Result.Skills {
			if len(sk.Resources) != artifact.MCPMaxFiles {
				t.Fatalf("%s: %d resources, want all %d on its page", sk.URI, len(sk.Resources), artifact.MCPMaxFiles)
			}
			got = append(got, sk.URI)
		}
		pages++
		if cursor = r.Result.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(got, want) || pages < 3 {
		t.Errorf("%d pages listing %d skills; want every one of %d once, over several pages", pages, len(got), len(want))
	}
}

// TestMCPCursorSurvivesAPublish pages through skills/list while the
// catalog changes under it: the skill the cursor names is withdrawn, one
// is added before it and one after. The cursor still works; the next pages
// start after the URI it names, list the skill added after it, and no
// skill present throughout is missed or listed twice.
func TestMCPCursorSurvivesAPublish(t *testing.T) {
	st := store.NewMemory()
	b := newBucket(t, st)
	for i := range 12 {
		servedSkill(b, fmt.Sprintf("s%02d", i*2), catalog.Public, wideFiles(artifact.MCPMaxFiles-1))
	}
	b.publish()
	h := newHarness(t, st)
	c := newMCPClient(t, h, statelessRevision, "")
	var first wireList
	c.result("skills/list", nil, &first)
	if first.NextCursor == "" || len(first.Skills) < 2 {
		t.Fatalf("want several pages; the first has %d skills and cursor %q", len(first.Skills), first.NextCursor)
	}
	last := first.Skills[len(first.Skills)-1].URI
	lastName := strings.TrimSuffix(strings.TrimPrefix(last, "skill://"), "/SKILL.md")

	b.cat.Skills[lastName].Withdrawn = true
	servedSkill(b, "s01", catalog.Public, wideFiles(10)) // before the cursor: a later listing finds it
	servedSkill(b, "s99", catalog.Public, wideFiles(10)) // after it: this listing must
	b.publish()
	h.clock.Advance(2 * time.Second) // past the revalidation interval

	seen := map[string]bool{}
	for _, sk := range first.Skills {
		seen[sk.URI] = true
	}
	cursor := first.NextCursor
	for cursor != "" {
		var page wireList
		c.result("skills/list", map[string]any{"cursor": cursor}, &page)
		for _, sk := range page.Skills {
			if sk.URI <= last || seen[sk.URI] {
				t.Errorf("%s listed after the cursor naming %s", sk.URI, last)
			}
			seen[sk.URI] = true
		}
		cursor = page.NextCursor
	}
	for i := range 12 {
		if uri := fmt.Sprintf("skill://s%02d/SKILL.md", i*2); !seen[uri] {
			t.Errorf("%s, present throughout, was never listed", uri)
		}
	}
	if !seen["skill://s99/SKILL.md"] {
		t.Error("the skill published after the cursor's position was not listed")
	}
}

// TestMCPReadAtTheResponseLimit serves, through the adapter and its real
// limit, a file sized so that artifact.ReadAnswerBytes (what the indexer
// admits to MCP by) is as close to the limit as the content allows: the
// answer fits, and the bound is above what is sent by no more than the
// envelope it reserves.
func TestMCPReadAtTheResponseLimit(t *testing.T) {
	chunk := `<a href="x">&amp;</a> \ "quoted" é ✓` + "\u2028\t\n" + strings.Repeat("plain text ", 8)
	bound := func(n int) int64 {
		return artifact.ReadAnswerBytes("references/big.md", "text/markdown", []byte(strings.Repeat(chunk, n)))
	}
	n := int((responselimit.MaxEncodedBody - bound(0)) / (bound(1) - bound(0)))
	if bound(n) > responselimit.MaxEncodedBody || bound(n+1) <= responselimit.MaxEncodedBody {
		t.Fatalf("%d chunks: bound %d, next %d, limit %d", n, bound(n), bound(n+1), responselimit.MaxEncodedBody)
	}
	big := []byte(strings.Repeat(chunk, n))
	st := store.NewMemory()
	b := newBucket(t, st)
	servedSkill(b, "huge", catalog.Public, map[string][]byte{"references/big.md": big})
	b.publish()
	h := newHarness(t, st)
	resp := viaGateway(t, h.srv, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://huge/references/big.md"}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %.300s", resp.StatusCode, resp.Body)
	}
	var r struct {
		Result wireContents `json:"result"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &r); err != nil || len(r.Result.Contents) != 1 || r.Result.Contents[0].Text == nil {
		t.Fatalf("answer %.200s: %v", resp.Body, err)
	}
	if got := []byte(*r.Result.Contents[0].Text); !digest.Of(got).Equal(digest.Of(big)) {
		t.Fatal("the text read is not the file")
	}
	sent := int64(responselimit.JSONStringLen(resp.Body))
	for k, v := range resp.Headers {
		sent += int64(len(k) + len(v) + 8)
	}
	if bound(n) < sent || bound(n)-sent > 8<<10 {
		t.Errorf("bound %d, sent %d: the bound must cover what is sent, within its 8 KiB reserve", bound(n), sent)
	}
	t.Logf("%d-byte file: bound %d, sent %d, limit %d", len(big), bound(n), sent, responselimit.MaxEncodedBody)
}
