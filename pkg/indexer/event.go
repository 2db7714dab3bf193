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
	// Reindex asks for a full reconciliation of the bucket.
	Reindex bool
	// Hints from S3 records, in delivery order (order carries no meaning).
	Hints []Hint
	// TestEvents counts s3:TestEvent messages, which are ignored.
	TestEvents int
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
	Body *string `json:"body"`
}

type envelope struct {
	Records   []record `json:"Records"`
	Event     string   `json:"Event"`     // "s3:TestEvent"
	Skilldrop string   `json:"skilldrop"` // "reindex"
}

// maxNesting bounds SQS-wrapped S3 events (one level is all that exists).
const maxNesting = 2

// DecodePayload decodes an indexer invocation: an S3 event (from S3 itself,
// from an emulator, or wrapped in SQS messages), an s3:TestEvent, or the
// reindex payload.
func DecodePayload(raw []byte) (Payload, error) {
	var p Payload
	err := decodeInto(&p, raw, 0)
	return p, err
}

func decodeInto(p *Payload, raw []byte, depth int) error {
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&env); err != nil {
		return fmt.Errorf("%w: %w", ErrPayload, err)
	}
	switch {
	case env.Skilldrop == "reindex":
		p.Reindex = true
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
			if err := decodeInto(p, []byte(*r.Body), depth+1); err != nil {
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

// Keys returns the distinct keys of the hints for bucket (all when bucket is
// ""), in first-seen order; hints for other buckets are dropped.
func (p Payload) Keys(bucket string) (keys []string, foreign int) {
	seen := map[string]bool{}
	for _, h := range p.Hints {
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
