package indexer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/skilldrop/skilldrop/internal/skilltest"
)

// invoke hands payload to Handle through aws-lambda-go's own handler
// wrapper, as the Lambda runtime does, and decodes the response.
func (e *env) invoke(payload []byte) (*Result, error) {
	e.t.Helper()
	h := lambda.NewHandler(func(ctx context.Context, raw json.RawMessage) (*Result, error) {
		return e.ix.Handle(ctx, raw)
	})
	out, err := h.Invoke(context.Background(), payload)
	if err != nil {
		return nil, err
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		e.t.Fatalf("response %s: %v", out, err)
	}
	return &res, nil
}

// fixtureFor rewrites aws-lambda-go's s3-event.json to name bucket and key
// (escaped as S3 escapes keys in events) with eventName.
func fixtureFor(t *testing.T, bucket, key, eventName string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(lambdaTestdata(t), "s3-event.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	rec := doc["Records"].([]any)[0].(map[string]any)
	rec["eventName"] = eventName
	s3 := rec["s3"].(map[string]any)
	s3["bucket"].(map[string]any)["name"] = bucket
	s3["object"].(map[string]any)["key"] = url.QueryEscape(key)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// motoRecord is an event as moto sends it: no zone in eventTime, no
// sequencer, and "/" escaped as %2F.
func motoRecord(bucket, key, eventName string) []byte {
	return []byte(fmt.Sprintf(`{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1",
		"eventTime":"2026-11-29T22:03:00.123000","eventName":%q,"s3":{"s3SchemaVersion":"1.0",
		"bucket":{"name":%q,"arn":"arn:aws:s3:::%s"},"object":{"key":%q,"size":1,"eTag":"e"}}}]}`,
		eventName, bucket, bucket, url.QueryEscape(key)))
}

// deleteMarkerRecord is what real S3 sends when a key of a versioned
// bucket is deleted (moto sends nothing then).
func deleteMarkerRecord(bucket, key string) []byte {
	return []byte(fmt.Sprintf(`{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1",
		"eventTime":"2026-11-29T22:03:00.000Z","eventName":"ObjectRemoved:DeleteMarkerCreated",
		"userIdentity":{"principalId":"AWS:EXAMPLE"},"requestParameters":{"sourceIPAddress":"127.0.0.1"},
		"responseElements":{"x-amz-request-id":"R","x-amz-id-2":"I"},
		"s3":{"s3SchemaVersion":"1.0","configurationId":"skilldrop",
		"bucket":{"name":%q,"ownerIdentity":{"principalId":"EXAMPLE"},"arn":"arn:aws:s3:::%s"},
		"object":{"key":%q,"versionId":"3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY","sequencer":"0055AED6DCD90281E5"}}}]}`,
		bucket, bucket, url.QueryEscape(key)))
}

func testHandleEventShapes(t *testing.T, mk envMaker) {
	const bucket = "sourcebucket"
	key := "skills/happy-face.md"
	tests := []struct {
		name    string
		payload func(t *testing.T) []byte
		present bool // the key exists when the event is handled
		live    bool
	}{
		{"aws-lambda-go's S3 fixture", func(t *testing.T) []byte { return fixtureFor(t, bucket, key, "ObjectCreated:Put") }, true, true},
		{"a moto record", func(*testing.T) []byte { return motoRecord(bucket, key, "ObjectCreated:Put") }, true, true},
		{"an SQS message carrying the fixture", func(t *testing.T) []byte {
			body, _ := json.Marshal(string(fixtureFor(t, bucket, key, "ObjectCreated:Copy")))
			return []byte(`{"Records":[{"messageId":"m","eventSource":"aws:sqs","body":` + string(body) + `}]}`)
		}, true, true},
		{"a delete marker", func(*testing.T) []byte { return deleteMarkerRecord(bucket, key) }, false, false},
		{"a removal in the fixture's shape", func(t *testing.T) []byte { return fixtureFor(t, bucket, key, "ObjectRemoved:Delete") }, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mk(t, func(c *Config) { c.Bucket = bucket })
			e.drop(key, skillDoc("happy-face", "1", "Smile."))
			if !tt.present {
				e.del(key)
			}
			res, err := e.invoke(tt.payload(t))
			if err != nil {
				t.Fatal(err)
			}
			if got := e.skill("happy-face").Live(); got != tt.live {
				t.Fatalf("live = %v, want %v; result %s", got, tt.live, dump(res))
			}
		})
	}
}

func testHandleIgnoresWhatIsNotAHint(t *testing.T, mk envMaker) {
	tests := []struct {
		name    string
		payload func(t *testing.T) []byte
		logged  string
	}{
		{"the fixture unchanged (a key outside the contract)", func(t *testing.T) []byte {
			raw, err := os.ReadFile(filepath.Join(lambdaTestdata(t), "s3-event.json"))
			if err != nil {
				t.Fatal(err)
			}
			return raw
		}, ""},
		{"another bucket's event", func(*testing.T) []byte { return motoRecord("other-bucket", "skills/x.md", "ObjectCreated:Put") }, "another bucket"},
		{"s3:TestEvent", func(*testing.T) []byte {
			return []byte(`{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-11-29T22:00:00.000Z","Bucket":"sourcebucket"}`)
		}, "s3:TestEvent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mk(t, func(c *Config) { c.Bucket = "sourcebucket" })
			e.put("skills/x.md", skillDoc("x", "1", "Not indexed by a foreign event."))
			res, err := e.invoke(tt.payload(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Published) != 0 || e.catalog().Revision != 0 {
				t.Fatalf("result %s", dump(res))
			}
			if tt.logged != "" && !strings.Contains(e.logs.String(), tt.logged) {
				t.Fatalf("no log line mentioning %q: %s", tt.logged, e.logs.String())
			}
		})
	}
}

func TestHandleRejectsAnUnknownPayload(t *testing.T) {
	e := newEnv(t)
	if _, err := e.invoke([]byte(`{"skilldrop":"explode"}`)); err == nil {
		t.Fatal("an unknown command succeeded")
	}
}

func testHandleReindexPayload(t *testing.T, mk envMaker) {
	e := mk(t)
	e.put("skills/a.md", skillDoc("a", "1", "A."))
	e.put("subagents/b.md", agentDoc("b", "1"))
	res, err := e.invoke([]byte(ReindexPayload))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Published) != 2 || res.Revision != 1 {
		t.Fatalf("result %s", dump(res))
	}
}

// testEventsConverge delivers the events of a sequence of bucket operations
// duplicated and in every order, and checks the catalog ends where the
// bucket is.
func testEventsConverge(t *testing.T, mk envMaker) {
	type op struct {
		key  string
		body []byte // nil: delete
	}
	tests := []struct {
		name   string
		ops    []op
		latest string // "" : withdrawn
	}{
		{"two uploads", []op{{"skills/x.md", skillDoc("x", "1", "One.")}, {"skills/x.md", skillDoc("x", "2", "Two.")}}, "2"},
		{"upload then delete", []op{{"skills/x.md", skillDoc("x", "1", "One.")}, {"skills/x.md", nil}}, ""},
		{"delete then upload again", []op{{"skills/x.md", skillDoc("x", "1", "One.")}, {"skills/x.md", nil}, {"skills/x.md", skillDoc("x", "3", "Three.")}}, "3"},
		{"a replacement under another key", []op{{"skills/x.md", skillDoc("x", "1", "One.")}, {"skills/x.zip", skilltest.Zip(t, map[string]string{"SKILL.md": string(skillDoc("x", "2", "Zip."))})}, {"skills/x.md", nil}}, "2"},
	}
	for _, tt := range tests {
		for _, order := range permutations(len(tt.ops)) {
			t.Run(fmt.Sprintf("%s/%v", tt.name, order), func(t *testing.T) {
				e := mk(t, func(c *Config) { c.Bucket = "b" })
				var events [][]byte
				for _, o := range tt.ops {
					if o.body == nil {
						e.del(o.key)
						events = append(events, motoRecord("b", o.key, "ObjectRemoved:Delete"))
					} else {
						e.put(o.key, o.body)
						events = append(events, motoRecord("b", o.key, "ObjectCreated:Put"))
					}
				}
				for _, i := range order {
					for range 2 { // every event delivered twice
						if _, err := e.invoke(events[i]); err != nil {
							t.Fatal(err)
						}
					}
				}
				en := e.skill("x")
				switch {
				case tt.latest == "" && en != nil && en.Live():
					t.Fatalf("live after its key was deleted: %s", dump(en))
				case tt.latest != "" && (en == nil || !en.Live() || en.Latest != tt.latest):
					t.Fatalf("entry %s, want latest %s", dump(en), tt.latest)
				}
				consistent(t, e.st)
			})
		}
	}
}

func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := slices.Insert(slices.Clone(p), i, n-1)
			out = append(out, q)
		}
	}
	return out
}

func TestReindexOfAnEmptyBucketWritesAnEmptyCatalog(t *testing.T) {
	e := newEnv(t)
	if res := e.reindex(); res.Revision != 1 {
		t.Fatalf("result %s", dump(res))
	}
	if _, err := e.st.Head(context.Background(), "catalog/catalog.json"); err != nil {
		t.Fatalf("no catalog after a full re-index: %v", err)
	}
	if res := e.reindex(); res.Revision != 1 {
		t.Fatalf("a second re-index of the empty bucket wrote again: %s", dump(res))
	}
}

// TestHandleIgnoresKeysTheStoreCannotHold: an event can name a key the
// local directory store refuses (a ".." or dot element, a backslash). No
// object can exist under it, so the hint is ignored with a log line; an
// error would make Lambda retry the event forever.
func TestHandleIgnoresKeysTheStoreCannotHold(t *testing.T) {
	keys := []string{
		"listings/../skills/x.md",
		"skills/x/../../agent-skills.yaml",
		"skills/a/./b.md",
		`skills/a\b.md`,
		"subagents/x\x00.md",
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.Bucket = "b" })
			e.put("skills/x.md", skillDoc("x", "1", "Untouched."))
			res, err := e.invoke(motoRecord("b", key, "ObjectCreated:Put"))
			if err != nil {
				t.Fatalf("Handle failed: %v", err)
			}
			if !slices.Contains(res.Ignored, key) || len(res.Published)+len(res.Rejected)+len(res.Withdrawn) != 0 {
				t.Fatalf("result %s, want %q ignored and nothing else", dump(res), key)
			}
			if !strings.Contains(e.logs.String(), "the store cannot hold") {
				t.Fatalf("no log line about the ignored key:\n%s", e.logs.String())
			}
		})
	}
}
