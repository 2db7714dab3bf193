//go:build e2e

package e2e

import (
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// hiding is a bucket whose agent-skills.yaml hides a skill, a listing's own
// skill and a sub-agent, all three named secret-…, beside a public skill.
var hiding = struct {
	config string
	drops  map[string][]byte
}{
	config: "version: 1\nskills:\n  - name: secret-skill\n    visibility: authenticated\n" +
		"listings:\n  partner:\n    skills:\n      - name: secret-listed\n        visibility: authenticated\n" +
		"subagents:\n  - name: secret-agent\n    visibility: authenticated\n",
	drops: map[string][]byte{
		"skills/open.md":                           mdDoc("open", "1"),
		"skills/secret-skill.md":                   mdDoc("secret-skill", "1"),
		"listings/partner/skills/secret-listed.md": mdDoc("secret-listed", "1"),
		"subagents/secret-agent.md":                []byte("---\nname: secret-agent\ndescription: A secret agent.\nversion: \"1\"\n---\nYou keep secrets.\n"),
	},
}

// anonymousSurfaces starts the api binary cold over bucket and asks every
// surface an anonymous caller has for what the bucket hides: the RFC index
// and the listing's, the artifact, the native feed's sub-agents, search and
// MCP's skills/list. It returns what each answered, by surface.
func anonymousSurfaces(t *testing.T, bucket, namespace, parameter, key string) map[string]string {
	t.Helper()
	fn := start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
		"SKILLDROP_BUCKET": bucket, "SKILLDROP_METRIC_NAMESPACE": namespace, "SKILLDROP_API_KEY_PARAMETER": parameter,
	}))
	defer fn.stop()
	var auth map[string]string
	if key != "" {
		auth = map[string]string{"Authorization": "Bearer " + key}
	}
	out := map[string]string{}
	for name, c := range map[string]call{
		"rfc index":     {method: http.MethodGet, target: "/.well-known/agent-skills/index.json", header: auth},
		"listing index": {method: http.MethodGet, target: "/.well-known/agent-skills/partner/index.json", header: auth},
		"artifact":      {method: http.MethodGet, target: "/skills/secret-skill.md", header: auth},
		"sub-agents":    {method: http.MethodGet, target: "/subagents/v1/pages/all.json", header: auth},
		"search":        {method: http.MethodGet, target: "/api/v1/skills?q=secret", header: auth},
		"mcp":           mcpCall("skills/list", "", "", key),
	} {
		resp := invokeAPI(t, fn, c)
		out[name] = http.StatusText(resp.StatusCode) + " " + resp.Body
	}
	return out
}

// leaks names the surfaces whose answer mentions a secret-… entry.
func leaks(answers map[string]string) []string {
	var out []string
	for surface, body := range answers {
		if strings.Contains(body, "secret-") {
			out = append(out, surface)
		}
	}
	return out
}

// TestAnIncompleteConfigHidesThroughTheBinaries is the red-team trial of
// issue 23 through the indexer and api binaries under aws-lambda-rie: each
// config that says less than the one hiding three entries (0 bytes,
// comments only, ---, null, {}, no version, visibility ~ and "") is
// refused, both as the bucket's first config and replacing the one in
// force, and no anonymous surface (RFC index, listing, artifact, native
// feed, search, MCP) shows a hidden entry; a key holder sees what the
// config in force hides.
func TestAnIncompleteConfigHidesThroughTheBinaries(t *testing.T) {
	cfg := awstest.Config(t)
	s3c := awstest.S3(cfg)
	namespace := metricNamespace(t)
	keys := newAPIKeys(t, cfg)
	unset := func(v string) string {
		return strings.Replace(hiding.config, "visibility: authenticated", "visibility: "+v, 1)
	}
	for name, doc := range map[string]string{
		"0 bytes":       "",
		"comments only": "# to be written\n",
		"---":           "---\n",
		"null":          "null\n",
		"{}":            "{}\n",
		"no version":    strings.TrimPrefix(hiding.config, "version: 1\n"),
		"visibility ~":  unset("~"),
		`visibility ""`: unset(`""`),
	} {
		t.Run(name, func(t *testing.T) {
			bucket := awstest.Bucket(t, cfg)
			ix := startIndexer(t, bucket, namespace)
			reconcile := func() *indexer.Result {
				t.Helper()
				return decodeResult(t, ix.mustInvoke(t, []byte(indexer.ReconcilePayload)))
			}
			// As the first config: the drops wait for a valid one.
			upload(t, s3c, bucket, hiding.drops)
			upload(t, s3c, bucket, map[string][]byte{"agent-skills.yaml": []byte(doc)})
			res := decodeResult(t, ix.mustInvoke(t, []byte(indexer.ReindexPayload)))
			if l := leaks(anonymousSurfaces(t, bucket, namespace, keys.parameter, "")); len(l) > 0 {
				t.Fatalf("with %s as the first config an anonymous caller sees a hidden entry through %v", name, l)
			}
			if res.Config != indexer.ConfigRejected || len(res.Held) != 4 {
				t.Fatalf("the first config: %s", dumpJSON(res))
			}
			// The whole config: published, hidden.
			upload(t, s3c, bucket, map[string][]byte{"agent-skills.yaml": []byte(hiding.config)})
			if res := reconcile(); res.Config != indexer.ConfigApplied || len(res.Published) != 4 {
				t.Fatalf("the whole config: %s", dumpJSON(res))
			}
			if l := leaks(anonymousSurfaces(t, bucket, namespace, keys.parameter, keys.key)); len(l) < 5 {
				t.Fatalf("a key holder finds a hidden entry only through %v: the surfaces are not asked for them", l)
			}
			// Replacing the one in force: refused, and nothing relaxed.
			upload(t, s3c, bucket, map[string][]byte{"agent-skills.yaml": []byte(doc)})
			res = reconcile()
			if l := leaks(anonymousSurfaces(t, bucket, namespace, keys.parameter, "")); len(l) > 0 {
				t.Fatalf("with %s replacing the config in force an anonymous caller sees a hidden entry through %v", name, l)
			}
			if res.Config != indexer.ConfigRejected || len(res.Rejected) != 1 || res.Rejected[0].Code != indexer.CodeInvalidConfig {
				t.Fatalf("replacing the config in force: %s", dumpJSON(res))
			}
		})
	}
}

// TestTheDeploymentsDefaultThroughTheBinaries: an indexer deployed with
// DefaultVisibility authenticated (SKILLDROP_DEFAULT_VISIBILITY, as the
// template passes the parameter) hides a bucket without agent-skills.yaml
// from every anonymous surface of the api binary; a config entry's
// visibility: public shows that skill alone. A misspelt entry is a warning
// in the status document and an audit event on the indexer's log.
func TestTheDeploymentsDefaultThroughTheBinaries(t *testing.T) {
	cfg := awstest.Config(t)
	s3c := awstest.S3(cfg)
	namespace := metricNamespace(t)
	keys := newAPIKeys(t, cfg)
	bucket := awstest.Bucket(t, cfg)
	env := indexerEnv(bucket, namespace)
	env["SKILLDROP_DEFAULT_VISIBILITY"] = "authenticated"
	ix := start(t, "indexer", bootstrap(t, runtime.GOARCH, "indexer"), templateEnv(t, indexerID, env))
	drops := map[string][]byte{}
	for k, v := range hiding.drops {
		drops[k] = v
	}
	upload(t, s3c, bucket, drops)
	ix.mustInvoke(t, []byte(indexer.ReindexPayload))
	answers := anonymousSurfaces(t, bucket, namespace, keys.parameter, "")
	if l := leaks(answers); len(l) > 0 || strings.Contains(answers["rfc index"], `"open"`) {
		t.Fatalf("under the deployment's default an anonymous caller sees %v: %s", l, answers["rfc index"])
	}
	// Hidden, not unserved: the index answers 200 (an api answering 503
	// everywhere leaks nothing either), and a key holder is served every
	// entry, open among them.
	if !strings.HasPrefix(answers["rfc index"], http.StatusText(http.StatusOK)+" ") {
		t.Fatalf("under the deployment's default the anonymous RFC index is not served: %.300s", answers["rfc index"])
	}
	withKey := anonymousSurfaces(t, bucket, namespace, keys.parameter, keys.key)
	if idx := withKey["rfc index"]; !strings.HasPrefix(idx, http.StatusText(http.StatusOK)+" ") || !strings.Contains(idx, `"open"`) || !strings.Contains(idx, `"secret-skill"`) {
		t.Fatalf("under the deployment's default a key holder's RFC index: %.500s", idx)
	}
	upload(t, s3c, bucket, map[string][]byte{"agent-skills.yaml": []byte("version: 1\nskills:\n  - name: open\n    visibility: public\n" +
		"  - name: secret-skil\n    description: Misspelt.\n")})
	ix.mustInvoke(t, []byte(indexer.ReconcilePayload))
	answers = anonymousSurfaces(t, bucket, namespace, keys.parameter, "")
	if l := leaks(answers); len(l) > 0 || !strings.Contains(answers["rfc index"], `"open"`) {
		t.Fatalf("with open made public: leaks %v, index %s", l, answers["rfc index"])
	}
	st := store.NewS3(cfg, bucket)
	status := statusOf(t, st)
	if w := status.Warnings["agent-skills.yaml"]; len(w) != 1 || !strings.Contains(w[0], `"secret-skil" names no published skill (did you mean "secret-skill"?)`) {
		t.Fatalf("status warnings of agent-skills.yaml: %q", w)
	}
	var audited bool
	for line := range strings.SplitSeq(ix.out.String(), "\n") {
		var m map[string]any
		if i := strings.Index(line, "{"); i >= 0 && json.Unmarshal([]byte(line[i:]), &m) == nil && m["event"] == obs.EventConfigUnmatched {
			audited = m["name"] == "secret-skil" && m["did_you_mean"] == "secret-skill"
		}
	}
	if !audited {
		t.Errorf("no %s audit event on the indexer's log:\n%s", obs.EventConfigUnmatched, ix.out)
	}
}

func statusOf(t *testing.T, st store.Store) *catalog.Status {
	t.Helper()
	s, _, err := catalog.LoadStatus(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHealthzThroughTheRuntimeAPI: the api binary's health check answers
// 503 before the first catalog (the feeds would too) and 200 with the
// build's version once the indexer binary has written one.
func TestHealthzThroughTheRuntimeAPI(t *testing.T) {
	cfg := awstest.Config(t)
	namespace := metricNamespace(t)
	bucket := awstest.Bucket(t, cfg)
	get := func() (int, string) {
		fn := start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
			"SKILLDROP_BUCKET": bucket, "SKILLDROP_METRIC_NAMESPACE": namespace, "SKILLDROP_API_KEY_PARAMETER": "",
		}))
		defer fn.stop()
		resp := invokeAPI(t, fn, call{method: http.MethodGet, target: "/healthz"})
		return resp.StatusCode, resp.Body
	}
	if code, body := get(); code != http.StatusServiceUnavailable {
		t.Fatalf("before any catalog: %d %s", code, body)
	}
	startIndexer(t, bucket, namespace).mustInvoke(t, []byte(indexer.ReindexPayload))
	if code, body := get(); code != http.StatusOK || !strings.HasPrefix(body, `{"status":"ok","version":"`) {
		t.Fatalf("with a catalog: %d %s", code, body)
	}
}
