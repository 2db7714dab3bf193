package indexer

import (
	"context"
	"encoding/json"
)

// Handle is the body of the indexer Lambda: it decodes the payload (S3
// events, directly or through SQS; an SQS batch from the queue; an
// s3:TestEvent; the reindex and reconcile commands) and reconciles the
// keys it names, or the bucket. An error means the invocation should be
// retried; the catalog is consistent either way. For an SQS batch the
// messages that must be retried are named in Result.Batch (the batch's
// other messages are done), and an error means all of them.
func (ix *Indexer) Handle(ctx context.Context, raw json.RawMessage) (*Result, error) {
	p, err := DecodePayload(raw)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Reindex:
		return ix.reindexCommand(ctx)
	case p.Reconcile:
		return ix.ReconcileBucket(ctx)
	case p.Messages != nil:
		return ix.handleBatch(ctx, p)
	}
	keys, foreign := p.Keys(ix.bucket)
	if foreign > 0 {
		ix.log.WarnContext(ctx, "ignoring events for another bucket", "bucket", ix.bucket, "events", foreign)
	}
	if p.TestEvents > 0 {
		ix.log.InfoContext(ctx, "ignoring s3:TestEvent", "events", p.TestEvents)
	}
	if len(keys) == 0 {
		return &Result{}, nil
	}
	return ix.Reconcile(ctx, keys...)
}

// BatchResponse is an SQS batch's answer to the event source mapping
// (ReportBatchItemFailures): the messages to deliver again.
type BatchResponse struct {
	BatchItemFailures []BatchItemFailure `json:"batchItemFailures"`
}

// BatchItemFailure names one message to deliver again.
type BatchItemFailure struct {
	ItemIdentifier string `json:"itemIdentifier"`
}

// handleBatch reconciles the keys of every message of a queue batch in one
// invocation (one round, one catalog write), and names in the result the
// messages whose keys could not be read or that could not be decoded.
func (ix *Indexer) handleBatch(ctx context.Context, p Payload) (*Result, error) {
	var keys []string
	seen := map[string]bool{}
	foreign := 0
	for _, m := range p.Messages {
		mk, f := m.Keys(ix.bucket)
		foreign += f
		for _, k := range mk {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if foreign > 0 {
		ix.log.WarnContext(ctx, "ignoring events for another bucket", "bucket", ix.bucket, "events", foreign)
	}
	res := &Result{}
	failed := map[string]error{}
	if len(keys) > 0 {
		var err error
		res, failed, err = ix.run(ctx, keys, false)
		if err != nil {
			return res, err
		}
	}
	res.Batch = &BatchResponse{BatchItemFailures: []BatchItemFailure{}}
	for _, m := range p.Messages {
		bad := m.Err != nil
		if bad {
			ix.log.ErrorContext(ctx, "undecodable queue message", "message_id", m.ID, "error", m.Err.Error())
		}
		mk, _ := m.Keys(ix.bucket)
		for _, k := range mk {
			if err := failed[k]; err != nil {
				bad = true
				ix.log.WarnContext(ctx, "key not reconciled; its message is delivered again", "message_id", m.ID, "key", k, "error", err.Error())
			}
		}
		if bad {
			res.Batch.BatchItemFailures = append(res.Batch.BatchItemFailures, BatchItemFailure{ItemIdentifier: m.ID})
		}
	}
	ix.noteJobs(ctx, p.Messages, res.Batch)
	return res, nil
}

// Respond is Handle as the Lambda answers: an SQS batch with its
// BatchResponse (what the event source mapping reads), anything else with
// the Result.
func (ix *Indexer) Respond(ctx context.Context, raw json.RawMessage) (any, error) {
	res, err := ix.Handle(ctx, raw)
	if res != nil && res.Batch != nil {
		return res.Batch, err
	}
	return res, err
}
