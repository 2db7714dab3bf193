package indexer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/queue"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// sqsBatch is what an SQS event source mapping hands the function: each
// body is one message.
func sqsBatch(t testing.TB, bodies map[string][]byte) []byte {
	t.Helper()
	type record struct {
		MessageID   string `json:"messageId"`
		EventSource string `json:"eventSource"`
		Body        string `json:"body"`
	}
	var recs []record
	for _, id := range slices.Sorted(mapKeys(bodies)) {
		recs = append(recs, record{MessageID: id, EventSource: "aws:sqs", Body: string(bodies[id])})
	}
	b, err := json.Marshal(map[string]any{"Records": recs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// failingKey fails every read of one key.
type failingKey struct {
	store.Store
	key string
}

func (f *failingKey) Get(ctx context.Context, key string, o store.GetOptions) (*store.Object, error) {
	if key == f.key {
		return nil, fmt.Errorf("get %s: %w", key, errInjected)
	}
	return f.Store.Get(ctx, key, o)
}

func (f *failingKey) Head(ctx context.Context, key string) (store.Info, error) {
	if key == f.key {
		return store.Info{}, fmt.Errorf("head %s: %w", key, errInjected)
	}
	return f.Store.Head(ctx, key)
}

// TestABatchIsOneRoundAndOneWrite: a hundred messages are one round and
// one catalog write; a message whose key cannot be read, or that cannot be
// decoded, is named for redelivery, and the others are done.
func TestABatchIsOneRoundAndOneWrite(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Bucket = "b" })
	e.drop("skills/first.md", skillDoc("first", "1", "Before the batch."))
	bodies := map[string][]byte{}
	for i := range 100 {
		key := fmt.Sprintf("skills/s%03d.md", i)
		e.put(key, skillDoc(fmt.Sprintf("s%03d", i), "1", "In the batch."))
		bodies[fmt.Sprintf("m%03d", i)] = motoRecord("b", key, "ObjectCreated:Put")
	}
	e.put("skills/flaky.md", skillDoc("flaky", "1", "Cannot be read."))
	bodies["m-flaky"] = motoRecord("b", "skills/flaky.md", "ObjectCreated:Put")
	bodies["m-garbled"] = []byte(`{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"object":{"key":"skills/%zz"}}}]}`)
	bodies["m-test"] = []byte(`{"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"b"}`)
	e.st = &failingKey{Store: e.st, key: "skills/flaky.md"}
	e.ix.store = e.st
	rev, published := e.catalog().Revision, e.metrics.Total(obs.UploadPublished)

	out, err := e.ix.Respond(context.Background(), sqsBatch(t, bodies))
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := out.(*BatchResponse)
	if !ok {
		t.Fatalf("an SQS batch answered %T, want *BatchResponse", out)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	slices.Sort(failed)
	if want := []string{"m-flaky", "m-garbled"}; !slices.Equal(failed, want) {
		t.Fatalf("batchItemFailures %v, want %v", failed, want)
	}
	c := e.catalog()
	if got := c.Revision - rev; got != 1 {
		t.Errorf("%d catalog writes for one batch, want 1", got)
	}
	for i := range 100 {
		if en := c.Skills[fmt.Sprintf("s%03d", i)]; en == nil || !en.Live() {
			t.Fatalf("s%03d not published", i)
		}
	}
	if got := e.metrics.Total(obs.UploadPublished) - published; got != 100 {
		t.Errorf("UploadPublished counted %d, want 100", got)
	}
	// The JSON the event source mapping reads.
	b, _ := json.Marshal(out)
	if !strings.HasPrefix(string(b), `{"batchItemFailures":[{"itemIdentifier":`) {
		t.Errorf("response %s", b)
	}
}

// TestARoundThatCannotFinishFailsTheBatch: when the round fails as a whole
// (here: the catalog cannot be written), no message is done.
func TestARoundThatCannotFinishFailsTheBatch(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Bucket = "b" })
	e.put("skills/x.md", skillDoc("x", "1", "X."))
	e.st = &failingKey{Store: e.st, key: catalog.Key}
	e.ix.store = e.st
	if _, err := e.ix.Respond(context.Background(), sqsBatch(t, map[string][]byte{"m1": motoRecord("b", "skills/x.md", "ObjectCreated:Put")})); err == nil {
		t.Fatal("a batch whose round failed succeeded")
	}
}

// TestTheCatalogNeverOutgrowsItsLimit: uploads that would grow the catalog
// past its limit are refused as catalog_full, saying how full it is; the
// others publish, and withdrawals always go through.
func TestTheCatalogNeverOutgrowsItsLimit(t *testing.T) {
	var limit int64
	e := newEnv(t, func(c *Config) { c.MaxCatalogBytes = 1 << 40 })
	for i := range 5 {
		e.drop(fmt.Sprintf("skills/s%d.md", i), skillDoc(fmt.Sprintf("s%d", i), "1", "Fits."))
	}
	size := e.catalog().StoredSize()
	limit = size + 1500 // room for about one more skill
	e.ix.maxCatalog = limit
	var keys []string
	for i := range 4 {
		key := fmt.Sprintf("skills/new%d.md", i)
		e.put(key, skillDoc(fmt.Sprintf("new%d", i), "1", "Grows the catalog."))
		keys = append(keys, key)
	}
	res := e.reconcile(keys...)
	if len(res.Published) == len(keys) {
		t.Fatalf("every upload published past the limit: %s", dump(res))
	}
	full := 0
	for _, r := range res.Rejected {
		if r.Code != CodeCatalogFull {
			t.Fatalf("rejection %s", dump(r))
		}
		if !strings.Contains(r.Message, "the catalog is full") || !strings.Contains(r.Message, "%") {
			t.Errorf("message %q does not say how full the catalog is", r.Message)
		}
		full++
	}
	if full == 0 || full+len(res.Published) != len(keys) {
		t.Fatalf("published %d, refused %d of %d", len(res.Published), full, len(keys))
	}
	if got := e.catalog().StoredSize(); got > limit {
		t.Fatalf("the catalog is %d bytes, past its limit of %d", got, limit)
	}
	// Full, a withdrawal still goes through (and makes room).
	if res := e.remove("skills/s0.md"); len(res.Withdrawn) != 1 {
		t.Fatalf("a withdrawal from a full catalog: %s", dump(res))
	}
}

// TestALargeReindexIsFedToTheQueue: a re-index with more keys than one
// invocation takes decides the config, sends the keys to the queue in
// chunks (oldest write first) and returns a small result; the batches
// that take them publish everything, and the status shows the progress.
func TestALargeReindexIsFedToTheQueue(t *testing.T) {
	q := &queue.Memory{}
	e := newEnv(t, func(c *Config) { c.Queue, c.InlineKeys = q, 10 })
	const n = 55
	for i := range n {
		e.put(fmt.Sprintf("skills/s%02d.md", i), skillDoc(fmt.Sprintf("s%02d", i), "1", "Queued."))
	}
	e.put("agent-skills.yaml", []byte("version: 1\nskills:\n  - name: s07\n    visibility: authenticated\n"))
	res, err := e.invoke([]byte(ReindexPayload))
	if err != nil {
		t.Fatal(err)
	}
	// The config's round reads what it names (s07) itself.
	if res.Queued != n || res.Job == "" || res.Config != ConfigApplied || len(res.Published) > 1 {
		t.Fatalf("result %s, want %d keys queued and the config applied", dump(res), n)
	}
	b, _ := json.Marshal(res)
	if len(b) > 1024 {
		t.Errorf("the result is %d bytes: not small", len(b))
	}
	bodies := q.Take()
	if len(bodies) != (n+keysPerMessage-1)/keysPerMessage {
		t.Fatalf("%d messages for %d keys", len(bodies), n)
	}
	if j := e.status().Job(res.Job); j == nil || j.Keys != n || j.Done != 0 {
		t.Fatalf("job %s", dump(j))
	}
	// The batches: one message each, as two consumers would take them.
	for i, body := range bodies {
		if _, err := e.ix.Respond(context.Background(), sqsBatch(t, map[string][]byte{fmt.Sprint(i): body})); err != nil {
			t.Fatal(err)
		}
	}
	c := e.catalog()
	for i := range n {
		if en := c.Skills[fmt.Sprintf("s%02d", i)]; en == nil || !en.Live() {
			t.Fatalf("s%02d not published by the queued chunks", i)
		}
	}
	if c.Skills["s07"].Visibility != catalog.Authenticated {
		t.Error("the config decided before the chunks was not applied to them")
	}
	if j := e.status().Job(res.Job); j == nil || j.Done != n || j.Finished == nil {
		t.Fatalf("job after the batches %s", dump(j))
	}
}
