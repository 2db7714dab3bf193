package indexer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ReindexPayload is the documented non-S3 invocation payload that asks the
// indexer Lambda for a full re-index:
//
//	{"skilldrop": "reindex"}
const ReindexPayload = `{"skilldrop":"reindex"}`

// ReconcilePayload is what the schedule invokes the indexer with: compare a
// listing of the bucket with the catalog and reconcile what differs.
const ReconcilePayload = `{"skilldrop":"reconcile"}`

// The skilldrop commands of an invocation payload or a queue message.
const (
	commandReindex   = "reindex"
	commandReconcile = "reconcile"
	// commandKeys is a queue message naming keys to reconcile: the chunks
	// a large re-index or reconcile feeds to the queue.
	commandKeys = "keys"
)

// keysMessage is the body of a commandKeys queue message.
type keysMessage struct {
	Skilldrop string   `json:"skilldrop"`
	Job       string   `json:"job,omitempty"`
	Keys      []string `json:"keys"`
}

// Hint says that a key may have changed. Events are only hints: the indexer
// reads the key's current state and reconciles, so duplicated, redelivered
// and reordered events converge.
type Hint struct {
	Bucket    string
	Key       string // decoded: '+' is a space, %XX escapes resolved
	EventName string // e.g. "ObjectCreated:Put", "ObjectRemoved:DeleteMarkerCreated"
}

// Payload is a decoded indexer invocation.
type Payload struct {
	// Reindex asks for a full reconciliation of the bucket; Reconcile for a
	// reconciliation of what a listing shows to differ from the catalog.
	Reindex, Reconcile bool
	// Hints from S3 records and queue messages, in delivery order (order
	// carries no meaning).
	Hints []Hint
	// TestEvents counts s3:TestEvent messages, which are ignored.
	TestEvents int
	// Messages are the queue messages of an SQS batch (nil for any other
	// invocation), so that each failure can be reported for its message.
	Messages []Message
	job      string // of a keys message being decoded
}

// Message is one queue message of an SQS batch.
type Message struct {
	ID    string
	Hints []Hint
	// Job names the re-index a commandKeys message belongs to.
	Job string
	// Err is why the body could not be decoded: the message is reported as
	// failed, and after the queue's retries lands in the failed-events queue.
	Err error
}

// ErrPayload reports an invocation payload the indexer does not understand.
var ErrPayload = errors.New("indexer: unrecognised payload")

// record is the part of an S3 event record the indexer needs. It is decoded
// here rather than with events.S3Event because emulators send shapes that
// type cannot decode (moto's eventTime has no time zone) and fields it
// requires are absent (no sequencer).
type record struct {
	EventSource string          `json:"eventSource"`
	EventName   string          `json:"eventName"`
	EventTime   json.RawMessage `json:"eventTime"` // any shape; unused
	S3          struct {
		Bucket struct {
			Name string `json:"name"`
		} `json:"bucket"`
		Object struct {
			Key string `json:"key"`
		} `json:"object"`
	} `json:"s3"`
	// Body carries an S3 event when the record is an SQS message (a queue
	// between the bucket and the function, or a redrive).
	Body      *string `json:"body"`
	MessageID string  `json:"messageId"`
}

type envelope struct {
	Records   []record `json:"Records"`
	Event     string   `json:"Event"`     // "s3:TestEvent"
	Skilldrop string   `json:"skilldrop"` // "reindex", "reconcile", "keys"
	Job       string   `json:"job"`
	Keys      []string `json:"keys"`
}

// maxNesting bounds SQS-wrapped S3 events (one level is all that exists).
const maxNesting = 2

// DecodePayload decodes an indexer invocation: an S3 event (from S3 itself,
// from an emulator, or wrapped in SQS messages), an s3:TestEvent, or the
// reindex payload.
//
// An SQS batch (every record an SQS message with a messageId) decodes each
// message on its own: a message that cannot be decoded is reported in its
// Message.Err, and fails only itself.
func DecodePayload(raw []byte) (Payload, error) {
	var p Payload
	var env envelope
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&env); err != nil {
		return p, fmt.Errorf("%w: %w", ErrPayload, err)
	}
	if !isBatch(env.Records) {
		err := decodeEnvelope(&p, env, 0, false)
		return p, err
	}
	for _, r := range env.Records {
		m := Message{ID: r.MessageID}
		var one Payload
		if r.Body == nil {
			m.Err = fmt.Errorf("%w: message %s has no body", ErrPayload, clip(r.MessageID))
		} else if err := decodeInto(&one, []byte(*r.Body), 1, true); err != nil {
			m.Err = fmt.Errorf("message %s: %w", clip(r.MessageID), err)
		}
		if m.Err == nil {
			m.Hints, m.Job = one.Hints, one.job
			p.TestEvents += one.TestEvents
			p.Hints = append(p.Hints, one.Hints...)
		}
		p.Messages = append(p.Messages, m)
	}
	return p, nil
}

// isBatch reports whether records are the messages of an SQS event source
// mapping's batch.
func isBatch(records []record) bool {
	if len(records) == 0 {
		return false
	}
	for _, r := range records {
		if r.EventSource != "aws:sqs" || r.MessageID == "" {
			return false
		}
	}
	return true
}

func decodeInto(p *Payload, raw []byte, depth int, inQueue bool) error {
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&env); err != nil {
		return fmt.Errorf("%w: %w", ErrPayload, err)
	}
	return decodeEnvelope(p, env, depth, inQueue)
}

// decodeEnvelope decodes one payload or message body. The keys command is
// accepted only from the queue, where only this stack's functions write.
func decodeEnvelope(p *Payload, env envelope, depth int, inQueue bool) error {
	switch {
	case env.Skilldrop == commandReindex:
		p.Reindex = true
		return nil
	case env.Skilldrop == commandReconcile:
		p.Reconcile = true
		return nil
	case env.Skilldrop == commandKeys && inQueue:
		for i, k := range env.Keys {
			if k == "" {
				return fmt.Errorf("%w: key %d is empty", ErrPayload, i)
			}
			p.Hints = append(p.Hints, Hint{Key: k, EventName: commandKeys})
		}
		p.job = env.Job
		return nil
	case env.Skilldrop != "":
		return fmt.Errorf("%w: unknown skilldrop command %q", ErrPayload, clip(env.Skilldrop))
	case env.Event == "s3:TestEvent":
		p.TestEvents++
		return nil
	case env.Records == nil:
		return fmt.Errorf("%w: no Records", ErrPayload)
	}
	for i, r := range env.Records {
		if r.Body != nil && r.EventSource == "aws:sqs" {
			if depth >= maxNesting {
				return fmt.Errorf("%w: record %d: SQS messages nested too deep", ErrPayload, i)
			}
			if err := decodeInto(p, []byte(*r.Body), depth+1, inQueue); err != nil {
				return fmt.Errorf("record %d (SQS body): %w", i, err)
			}
			continue
		}
		if r.EventSource != "" && r.EventSource != "aws:s3" {
			return fmt.Errorf("%w: record %d has eventSource %q", ErrPayload, i, clip(r.EventSource))
		}
		if !strings.HasPrefix(r.EventName, "ObjectCreated:") && !strings.HasPrefix(r.EventName, "ObjectRemoved:") {
			// Other S3 event types (restore, replication, …) say nothing about content.
			continue
		}
		key, err := url.QueryUnescape(r.S3.Object.Key)
		if err != nil {
			return fmt.Errorf("%w: record %d: key %q: %w", ErrPayload, i, clip(r.S3.Object.Key), err)
		}
		if key == "" {
			return fmt.Errorf("%w: record %d has no object key", ErrPayload, i)
		}
		p.Hints = append(p.Hints, Hint{Bucket: r.S3.Bucket.Name, Key: key, EventName: r.EventName})
	}
	return nil
}

// Keys returns the distinct keys of hints for bucket (all when bucket is ""), in first-seen order; hints for other buckets are dropped.
func (p Payload) Keys(bucket string) (keys []string, foreign int) {
	return hintKeys(p.Hints, bucket)
}

// Keys is Payload.Keys for the hints of one message.
func (m Message) Keys(bucket string) (keys []string, foreign int) {
	return hintKeys(m.Hints, bucket)
}

func hintKeys(hints []Hint, bucket string) (keys []string, foreign int) {
	seen := map[string]bool{}
	for _, h := range hints {
		if bucket != "" && h.Bucket != "" && h.Bucket != bucket {
			foreign++
			continue
		}
		if !seen[h.Key] {
			seen[h.Key] = true
			keys = append(keys, h.Key)
		}
	}
	return keys, foreign
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
