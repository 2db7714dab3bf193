//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// secret is one kind of entry agent-skills.yaml can hide, as the bucket
// holds it.
type secret struct {
	kind, key  string
	body       func(version string) []byte
	hide, show string
	// seen reports whether a caller sees the entry in the compiled view.
	seen func(v *catalog.View, authenticated bool) bool
	// path is where an anonymous caller would find it listed.
	path string
}

var secrets = []secret{
	{
		kind: "skill", key: "skills/secret-x.md", path: "/.well-known/agent-skills/index.json",
		body: func(v string) []byte { return mdDoc("secret-x", v) },
		hide: "version: 1\nskills:\n  - name: secret-x\n    visibility: authenticated\n",
		show: "version: 1\nskills:\n  - name: secret-x\n    description: Public.\n",
		seen: func(v *catalog.View, auth bool) bool {
			return v.Skill("secret-x", callerOf(auth)) != nil || v.ByPath("/skills/secret-x.md", callerOf(auth)) != nil
		},
	},
	{
		kind: "listing skill", key: "listings/partner/skills/secret-x.md", path: "/.well-known/agent-skills/partner/index.json",
		body: func(v string) []byte { return mdDoc("secret-x", v) },
		hide: "version: 1\nlistings:\n  partner:\n    skills:\n      - name: secret-x\n        visibility: authenticated\n",
		show: "version: 1\nlistings:\n  partner:\n    skills:\n      - name: secret-x\n        description: Public.\n",
		seen: func(v *catalog.View, auth bool) bool {
			members, _ := v.Listing("partner", callerOf(auth))
			return slices.ContainsFunc(members, func(e *catalog.Entry) bool { return e.Name == "secret-x" })
		},
	},
	{
		kind: "sub-agent", key: "subagents/secret-x.md", path: "/subagents/v1/index.json",
		body: func(v string) []byte {
			return []byte(fmt.Sprintf("---\nname: secret-x\ndescription: A secret agent.\nversion: %q\n---\nYou keep secrets.\n", v))
		},
		hide: "version: 1\nsubagents:\n  - name: secret-x\n    visibility: authenticated\n",
		show: "version: 1\nsubagents:\n  - name: secret-x\n    description: Public.\n",
		seen: func(v *catalog.View, auth bool) bool { return v.Subagent("secret-x", callerOf(auth)) != nil },
	},
}

func mdDoc(name, version string) []byte {
	return []byte(fmt.Sprintf("---\nname: %s\ndescription: A secret.\nmetadata:\n  version: %q\n---\nSteps.\n", name, version))
}

// TestVisibilityFailsClosedForEveryKind is pkg/indexer's
// TestVisibilityFailsClosed through the indexer binary under
// aws-lambda-rie, with the emulator's own event messages in a queue batch:
// for skills, listing skills and sub-agents, agent-skills.yaml (hiding the
// entry) and the entry are created, overwritten or deleted in either order,
// and only one of the two events is delivered. An anonymous caller never
// sees the entry, in the catalog as written or, where the issue found the
// leak (both created, the entry's event alone), through an API binary that
// starts cold.
func TestVisibilityFailsClosedForEveryKind(t *testing.T) {
	cfg := awstest.Config(t)
	s3c := awstest.S3(cfg)
	namespace := metricNamespace(t)
	type write struct {
		key  string
		body []byte // nil deletes
	}
	for _, k := range secrets {
		config := "agent-skills.yaml"
		cases := []struct {
			name           string
			before, writes []write
			// keySees: a key holder sees the entry, by the event delivered.
			keySees map[string]bool
		}{
			{"create both, config first", nil, []write{{config, []byte(k.hide)}, {k.key, k.body("1")}}, map[string]bool{"drop": true, "config": true}},
			{"create both, drop first", nil, []write{{k.key, k.body("1")}, {config, []byte(k.hide)}}, map[string]bool{"drop": true, "config": true}},
			{"overwrite both, config first", []write{{config, []byte(k.show)}, {k.key, k.body("1")}},
				[]write{{config, []byte(k.hide)}, {k.key, k.body("2")}}, map[string]bool{"drop": true, "config": true}},
			{"overwrite both, drop first", []write{{config, []byte(k.show)}, {k.key, k.body("1")}},
				[]write{{k.key, k.body("2")}, {config, []byte(k.hide)}}, map[string]bool{"drop": true, "config": true}},
			{"delete the config, overwrite the drop", []write{{config, []byte(k.hide)}, {k.key, k.body("1")}},
				[]write{{config, nil}, {k.key, k.body("2")}}, map[string]bool{"drop": true, "config": true}},
			{"overwrite the config, delete the drop", []write{{config, []byte(k.hide)}, {k.key, k.body("1")}},
				[]write{{config, []byte(k.hide + "# edited\n")}, {k.key, nil}}, map[string]bool{"drop": false, "config": true}},
			{"delete both", []write{{config, []byte(k.hide)}, {k.key, k.body("1")}},
				[]write{{config, nil}, {k.key, nil}}, map[string]bool{"drop": false, "config": true}},
		}
		for _, c := range cases {
			for _, deliver := range []string{"drop", "config"} {
				t.Run(fmt.Sprintf("%s/%s/only the %s's event", k.kind, c.name, deliver), func(t *testing.T) {
					bucket := awstest.Bucket(t, cfg)
					queue := newEventQueue(t, cfg, bucket)
					ix := startIndexer(t, bucket, namespace)
					st := store.NewS3(cfg, bucket)
					apply := func(ws []write) [][]byte {
						for _, w := range ws {
							if w.body == nil {
								remove(t, s3c, bucket, w.key)
							} else {
								upload(t, s3c, bucket, map[string][]byte{w.key: w.body})
							}
						}
						return queue.Receive(t, len(ws))
					}
					handle := func(msg []byte) {
						t.Helper()
						out := ix.mustInvoke(t, sqsEvent(t, map[string][]byte{"m": msg}))
						if !strings.Contains(string(out), `"batchItemFailures":[]`) {
							t.Fatalf("the indexer answered %s", clip(out))
						}
					}
					for _, w := range c.before {
						for _, msg := range apply([]write{w}) {
							handle(msg)
						}
					}
					key := k.key
					if deliver == "config" {
						key = config
					}
					handle(messageFor(t, apply(c.writes), key))
					v := catalog.Compile(loadCatalog(t, st), "")
					if k.seen(v, false) {
						t.Fatal("an anonymous caller sees secret-x in the catalog the binary wrote")
					}
					if got := k.seen(v, true); got != c.keySees[deliver] {
						t.Fatalf("a key holder sees secret-x: %v, want %v", got, c.keySees[deliver])
					}
					if c.name == "create both, config first" && deliver == "drop" {
						status, body := coldAnonymousGet(t, bucket, namespace, k.path)
						// A listing of hidden skills only is as missing as an unknown one.
						hiddenListing := status == http.StatusNotFound && k.kind == "listing skill"
						if (status != http.StatusOK && !hiddenListing) || strings.Contains(body, "secret-x") {
							t.Fatalf("an anonymous GET %s through the API binary: %d %s", k.path, status, clip([]byte(body)))
						}
					}
					// Whatever was lost, the schedule's reconcile brings the
					// catalog to the bucket and still hides the entry.
					ix.mustInvoke(t, []byte(indexer.ReconcilePayload))
					if k.seen(catalog.Compile(loadCatalog(t, st), ""), false) {
						t.Fatal("after the reconcile an anonymous caller sees secret-x")
					}
				})
			}
		}
	}
}

// coldAnonymousGet starts the API binary for bucket and GETs path without
// credentials.
func coldAnonymousGet(t *testing.T, bucket, namespace, path string) (int, string) {
	t.Helper()
	fn := start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
		"SKILLDROP_BUCKET": bucket, "SKILLDROP_METRIC_NAMESPACE": namespace, "SKILLDROP_API_KEY_PARAMETER": "",
	}))
	defer fn.stop()
	resp := invokeAPI(t, fn, call{method: http.MethodGet, target: path})
	return resp.StatusCode, resp.Body
}
