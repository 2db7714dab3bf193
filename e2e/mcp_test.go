//go:build e2e

package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/digest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
)

// mcpCall is a stateless (2026-07-28) MCP request as a host sends it
// through API Gateway, with the key when there is one.
func mcpCall(method, uri, params, key string) call {
	header := map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method,
	}
	if uri != "" {
		header["Mcp-Name"] = uri
	}
	if key != "" {
		header["Authorization"] = "Bearer " + key
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params != "" {
		meta = params + "," + meta
	}
	return call{method: http.MethodPost, target: "/mcp", header: header,
		body: `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + meta + `}}`}
}

// mcpEntry and mcpResource are the parts of SEP-2640's Skill the test reads.
type (
	mcpEntry struct {
		URI       string        `json:"uri"`
		Resources []mcpResource `json:"resources"`
	}
	mcpResource struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	}
)

// TestMCPThroughTheRuntimeAPI indexes the example bucket with the indexer
// binary (which writes every file's blob to S3), then lists skills over MCP
// and reads a file of an archive through the api binary under
// aws-lambda-rie, as API Gateway events; every answer must equal the
// in-process adapter's, and what is read must be the file in examples/src,
// with the digest and size the listing pins.
func TestMCPThroughTheRuntimeAPI(t *testing.T) {
	cfg := awstest.Config(t)
	bucket := awstest.Bucket(t, cfg)
	upload(t, awstest.S3(cfg), bucket, exampleFiles(t))
	keys := newAPIKeys(t, cfg)
	namespace := metricNamespace(t)
	ix := startIndexer(t, bucket, namespace)
	if r := decodeResult(t, ix.mustInvoke(t, []byte(indexer.ReindexPayload))); len(r.Published) == 0 {
		t.Fatalf("the reindex published nothing: %s", dumpJSON(r))
	}
	ix.stop()
	p := &apiPair{
		fn: start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
			"SKILLDROP_BUCKET":            bucket,
			"SKILLDROP_METRIC_NAMESPACE":  namespace,
			"SKILLDROP_API_KEY_PARAMETER": keys.parameter,
		})),
		ref: inProcessAPI(t, cfg, bucket, metricNamespace(t), keys.parameter),
	}
	list := func(key string) (skills []mcpEntry, scope string) {
		a := p.do(t, mcpCall("skills/list", "", "", key))
		var rpc struct {
			Result struct {
				Skills     []mcpEntry `json:"skills"`
				CacheScope string     `json:"cacheScope"`
			} `json:"result"`
		}
		if a.StatusCode != http.StatusOK || a.IsBase64Encoded || json.Unmarshal(a.body, &rpc) != nil {
			t.Fatalf("skills/list: status %d, base64 %v: %s", a.StatusCode, a.IsBase64Encoded, clip(a.body))
		}
		return rpc.Result.Skills, rpc.Result.CacheScope
	}
	uris := func(skills []mcpEntry) (out []string) {
		for _, s := range skills {
			out = append(out, s.URI)
		}
		return out
	}

	anonymous, scope := list("")
	want := []string{"skill://deploy-via-pr/SKILL.md", "skill://partner-a.listing/partner-faq/SKILL.md",
		"skill://partner-a.listing/partner-onboarding/SKILL.md", "skill://pdf-tools/SKILL.md", "skill://release-notes/SKILL.md"}
	if got := uris(anonymous); !slices.Equal(got, want) || scope != "public" {
		t.Errorf("anonymous skills/list %q (%s), want %q (public)", got, scope, want)
	}
	keyed, scope := list(keys.key)
	if got := uris(keyed); !slices.Contains(got, "skill://internal-rotate-secret/SKILL.md") || scope != "private" {
		t.Errorf("skills/list with a key %q (%s): the authenticated skill is missing, or the scope is not private", got, scope)
	}

	const fileURI = "skill://pdf-tools/scripts/extract.py"
	src, err := os.ReadFile(filepath.Join("..", "examples", "src", "pdf-tools", "scripts", "extract.py"))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(anonymous, func(e mcpEntry) bool { return e.URI == "skill://pdf-tools/SKILL.md" })
	if i < 0 {
		t.Fatal("pdf-tools is not listed")
	}
	j := slices.IndexFunc(anonymous[i].Resources, func(r mcpResource) bool { return r.URI == fileURI })
	if j < 0 {
		t.Fatalf("%s is not among pdf-tools' resources: %+v", fileURI, anonymous[i].Resources)
	}
	pinned := anonymous[i].Resources[j]
	a := p.do(t, mcpCall("resources/read", fileURI, `"uri":"`+fileURI+`"`, ""))
	var rpc struct {
		Result struct {
			Contents []struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
			} `json:"contents"`
		} `json:"result"`
	}
	if a.StatusCode != http.StatusOK || json.Unmarshal(a.body, &rpc) != nil || len(rpc.Result.Contents) != 1 {
		t.Fatalf("resources/read: status %d: %s", a.StatusCode, clip(a.body))
	}
	got := []byte(rpc.Result.Contents[0].Text)
	if string(got) != string(src) || digest.Of(got).String() != pinned.Digest || int64(len(got)) != pinned.Size || rpc.Result.Contents[0].MIMEType != "text/x-python" {
		t.Errorf("read %d bytes (%s, %s); the listing pins %d bytes, %s; examples/src holds %d bytes",
			len(got), digest.Of(got), rpc.Result.Contents[0].MIMEType, pinned.Size, pinned.Digest, len(src))
	}
}
