package indexer

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// lambdaTestdata returns aws-lambda-go's events/testdata directory from the
// module cache, so real S3 event fixtures drive these tests without copying them.
func lambdaTestdata(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go").Output()
	if err != nil {
		t.Fatalf("locate aws-lambda-go in the module cache: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "events", "testdata")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("aws-lambda-go testdata: %v", err)
	}
	return dir
}

func TestDecodeRealS3Fixture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(lambdaTestdata(t), "s3-event.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodePayload(raw)
	if err != nil {
		t.Fatalf("decode aws-lambda-go's s3-event.json: %v", err)
	}
	// Cross-check with aws-lambda-go's own type, which decodes real S3 records.
	var ev events.S3Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	if len(p.Hints) != len(ev.Records) || len(p.Hints) == 0 {
		t.Fatalf("hints = %+v, records = %d", p.Hints, len(ev.Records))
	}
	for i, r := range ev.Records {
		want, err := url.QueryUnescape(r.S3.Object.Key)
		if err != nil {
			t.Fatal(err)
		}
		h := p.Hints[i]
		if h.Key != want || h.Bucket != r.S3.Bucket.Name || h.EventName != r.EventName {
			t.Fatalf("hint %d = %+v, want key %q bucket %q event %q", i, h, want, r.S3.Bucket.Name, r.EventName)
		}
	}
	if p.Hints[0].Key != "Happy Face.jpg" {
		t.Fatalf("key %q: the fixture's '+' must decode to a space", p.Hints[0].Key)
	}
}

func TestDecodePayload(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantKeys []string
		reindex  bool
		tests    int
		wantErr  bool
	}{
		{
			name: "moto record: zoneless eventTime, no sequencer, %2F in key",
			in: `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1","eventTime":"2026-11-29T22:03:00.123000",
				"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b","arn":"arn:aws:s3:::b"},"object":{"key":"skills%2Fdeploy-via-pr.md","size":12,"eTag":"x"}}}]}`,
			wantKeys: []string{"skills/deploy-via-pr.md"},
		},
		{
			name: "delete marker on a versioned bucket",
			in: `{"Records":[{"eventSource":"aws:s3","eventTime":"2026-11-29T22:03:00.000Z","eventName":"ObjectRemoved:DeleteMarkerCreated",
				"s3":{"bucket":{"name":"b"},"object":{"key":"skills/x.zip","sequencer":"0A1B","versionId":"v"}}}]}`,
			wantKeys: []string{"skills/x.zip"},
		},
		{
			name:     "plus is a space and %2B a plus",
			in:       `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"files/a+b%2Bc.md"}}}]}`,
			wantKeys: []string{"files/a b+c.md"},
		},
		{
			name: "duplicates collapse, order kept",
			in: `{"Records":[
				{"eventSource":"aws:s3","eventName":"ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"key":"skills/b.md"}}},
				{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"skills/a.md"}}},
				{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"skills/b.md"}}}]}`,
			wantKeys: []string{"skills/b.md", "skills/a.md"},
		},
		{
			name:     "other event types carry no hint",
			in:       `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectRestore:Completed","s3":{"bucket":{"name":"b"},"object":{"key":"skills/a.md"}}}]}`,
			wantKeys: nil,
		},
		{
			name:     "S3 event inside an SQS message",
			in:       `{"Records":[{"eventSource":"aws:sqs","body":"{\"Records\":[{\"eventSource\":\"aws:s3\",\"eventName\":\"ObjectCreated:Put\",\"s3\":{\"bucket\":{\"name\":\"b\"},\"object\":{\"key\":\"skills/q.md\"}}}]}"}]}`,
			wantKeys: []string{"skills/q.md"},
		},
		{name: "s3:TestEvent", in: `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-11-29T22:00:00.000Z","Bucket":"b"}`, tests: 1},
		{name: "reindex", in: ReindexPayload, reindex: true},
		{name: "unknown command", in: `{"skilldrop":"explode"}`, wantErr: true},
		{name: "not json", in: `Records`, wantErr: true},
		{name: "no records", in: `{}`, wantErr: true},
		{name: "bad escape", in: `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"skills/%zz.md"}}}]}`, wantErr: true},
		{name: "empty key", in: `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":""}}}]}`, wantErr: true},
		{name: "foreign source", in: `{"Records":[{"eventSource":"aws:dynamodb","eventName":"INSERT"}]}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DecodePayload([]byte(tt.in))
			if tt.wantErr {
				if !errors.Is(err, ErrPayload) {
					t.Fatalf("error = %v, want ErrPayload", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			keys, _ := p.Keys("b")
			if strings.Join(keys, "|") != strings.Join(tt.wantKeys, "|") || p.Reindex != tt.reindex || p.TestEvents != tt.tests {
				t.Fatalf("keys %q reindex %v tests %d", keys, p.Reindex, p.TestEvents)
			}
		})
	}
}

func TestKeysDropsForeignBuckets(t *testing.T) {
	var p Payload
	raw, _ := json.Marshal(map[string]any{"Records": []any{
		map[string]any{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", "s3": map[string]any{"bucket": map[string]any{"name": "mine"}, "object": map[string]any{"key": "skills/a.md"}}},
		map[string]any{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", "s3": map[string]any{"bucket": map[string]any{"name": "other"}, "object": map[string]any{"key": "skills/b.md"}}},
	}})
	p, err := DecodePayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	keys, foreign := p.Keys("mine")
	if len(keys) != 1 || keys[0] != "skills/a.md" || foreign != 1 {
		t.Fatalf("keys %q foreign %d", keys, foreign)
	}
}

func TestResultSortIsReproducible(t *testing.T) {
	r := &Result{
		Published: []Change{{Kind: "skill", Name: "b"}, {Kind: "skill", Name: "a"}, {Kind: "subagent", Name: "a"}},
		Rejected:  []Rejection{{Key: "skills/z.md", Code: "x"}, {Key: "skills/a.md", Code: "y"}},
		Unchanged: []string{"skills/b.md", "skills/a.md"},
	}
	r.sort()
	got := []string{r.Published[0].Name, r.Published[1].Name, string(r.Published[2].Kind), r.Rejected[0].Key, r.Unchanged[0]}
	want := []string{"a", "b", "subagent", "skills/a.md", "skills/a.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("sorted %q, want %q", got, want)
	}
}
