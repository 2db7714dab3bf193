//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/indexer"
)

// sqsEvent is what the event source mapping hands the indexer: each body one
// message of the queue, under a message id of its own.
func sqsEvent(t testing.TB, bodies map[string][]byte) []byte {
	t.Helper()
	ev := events.SQSEvent{}
	for id, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: id, ReceiptHandle: "rh-" + id, Body: string(b),
			EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:e2e", AWSRegion: "us-east-1"})
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// messageFor returns the emulator's event message naming key.
func messageFor(t testing.TB, bodies [][]byte, key string) []byte {
	t.Helper()
	for _, b := range bodies {
		p, err := indexer.DecodePayload(b)
		if err != nil {
			continue
		}
		if keys, _ := p.Keys(""); len(keys) == 1 && keys[0] == key {
			return b
		}
	}
	t.Fatalf("no event message for %s among %d", key, len(bodies))
	return nil
}

// TestVisibilityFailsClosedThroughTheRuntimeAPI is the leak issue 9 found,
// through the binaries: agent-skills.yaml hides secret-x, then the skill is
// written, and only the skill's event reaches the indexer (in a queue
// batch): the skill is published hidden. Deleting the config relaxes
// nothing; an invalid config holds the skill it was meant to hide; and a
// reconcile finds a fixed config whose event was lost.
func TestVisibilityFailsClosedThroughTheRuntimeAPI(t *testing.T) {
	cfg := awstest.Config(t)
	s3c := awstest.S3(cfg)
	bucket := awstest.Bucket(t, cfg)
	queue := newEventQueue(t, cfg, bucket)
	namespace := metricNamespace(t)
	keys := newAPIKeys(t, cfg)
	ix := startIndexer(t, bucket, namespace)
	// Each check is made by an API that starts cold, so that no cached
	// catalog can make a negative answer pass.
	status := func(path string, key bool) int {
		t.Helper()
		api := &apiPair{
			fn: start(t, "api", bootstrap(t, runtime.GOARCH, "api"), templateEnv(t, apiID, map[string]string{
				"SKILLDROP_BUCKET":            bucket,
				"SKILLDROP_METRIC_NAMESPACE":  namespace,
				"SKILLDROP_API_KEY_PARAMETER": keys.parameter,
			})),
			ref: inProcessAPI(t, cfg, bucket, metricNamespace(t), keys.parameter),
		}
		defer api.fn.stop()
		c := call{method: http.MethodGet, target: path}
		if key {
			c.header = map[string]string{"Authorization": "Bearer " + keys.key}
		}
		return api.do(t, c).StatusCode
	}
	batch := func(bodies map[string][]byte) indexer.BatchResponse {
		t.Helper()
		var resp indexer.BatchResponse
		out := ix.mustInvoke(t, sqsEvent(t, bodies))
		if err := json.Unmarshal(out, &resp); err != nil || !strings.Contains(string(out), `"batchItemFailures"`) {
			t.Fatalf("the indexer answered a batch with %s (%v)", clip(out), err)
		}
		return resp
	}
	skill := func(name, description string) []byte {
		return []byte(fmt.Sprintf("---\nname: %s\ndescription: %s\n---\nSteps.\n", name, description))
	}
	hide := "version: 1\nskills:\n  - name: secret-x\n    visibility: authenticated\n  - name: secret-y\n    visibility: authenticated\n"

	// The config, then the skill; only the skill's event is delivered.
	upload(t, s3c, bucket, map[string][]byte{"agent-skills.yaml": []byte(hide)})
	time.Sleep(1100 * time.Millisecond) // S3 times objects to the second: the config is the older
	upload(t, s3c, bucket, map[string][]byte{"skills/secret-x.md": skill("secret-x", "Rotate a secret.")})
	bodies := queue.Receive(t, 2)
	if resp := batch(map[string][]byte{"m-skill": messageFor(t, bodies, "skills/secret-x.md")}); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("batchItemFailures %v", resp.BatchItemFailures)
	}
	if got := status("/skills/secret-x.md", false); got != http.StatusNotFound {
		t.Fatalf("anonymous GET of the hidden skill: %d, want 404 (the leak)", got)
	}
	if got := status("/skills/secret-x.md", true); got != http.StatusOK {
		t.Fatalf("GET of the hidden skill with a key: %d, want 200", got)
	}

	// Deleting the config: its event is delivered; nothing is relaxed.
	remove(t, s3c, bucket, "agent-skills.yaml")
	if resp := batch(map[string][]byte{"m-config": messageFor(t, queue.Receive(t, 1), "agent-skills.yaml")}); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("batchItemFailures %v", resp.BatchItemFailures)
	}
	if got := status("/skills/secret-x.md", false); got != http.StatusNotFound {
		t.Fatalf("anonymous GET after the config was deleted: %d, want 404", got)
	}

	// An invalid config, and the skill it was meant to hide: held.
	upload(t, s3c, bucket, map[string][]byte{"agent-skills.yaml": []byte(strings.ReplaceAll(hide, "visibility:", "visibilty:"))})
	upload(t, s3c, bucket, map[string][]byte{"skills/secret-y.md": skill("secret-y", "Another secret.")})
	bodies = queue.Receive(t, 2)
	batch(map[string][]byte{"m-1": messageFor(t, bodies, "agent-skills.yaml"), "m-2": messageFor(t, bodies, "skills/secret-y.md")})
	for _, key := range []bool{false, true} {
		if got := status("/skills/secret-y.md", key); got != http.StatusNotFound {
			t.Fatalf("GET of a held skill (key %v): %d, want 404", key, got)
		}
	}

	// The fixed config (the one in force again) has its event lost; the
	// schedule's reconcile finds it, ends the hold and publishes the held skill.
	upload(t, s3c, bucket, map[string][]byte{"agent-skills.yaml": []byte(hide)})
	queue.Receive(t, 1) // lost
	var res indexer.Result
	if err := json.Unmarshal(ix.mustInvoke(t, []byte(indexer.ReconcilePayload)), &res); err != nil ||
		len(res.Published) != 1 || res.Published[0].Name != "secret-y" {
		t.Fatalf("the reconcile: %+v (%v), want secret-y published", res, err)
	}
	if anon, key := status("/skills/secret-y.md", false), status("/skills/secret-y.md", true); anon != http.StatusNotFound || key != http.StatusOK {
		t.Fatalf("after the reconcile: anonymous %d, with a key %d; want 404 and 200", anon, key)
	}
}
