// Package queue is where the indexer feeds keys to itself: the SQS queue
// the bucket's notifications go to and its batches come from. A re-index
// or a reconcile larger than one invocation sends its keys there in
// chunks, and the batched pipeline does the work within each invocation's
// timeout.
package queue

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Sender sends message bodies to a queue.
type Sender interface {
	Send(ctx context.Context, bodies [][]byte) error
}

// maxBatch is SQS's limit of messages per SendMessageBatch.
const maxBatch = 10

// SQS sends to one SQS queue. It is safe for concurrent use.
type SQS struct {
	client *sqs.Client
	url    string
}

var _ Sender = (*SQS)(nil)

// NewSQS returns the sender for the queue at url.
func NewSQS(client *sqs.Client, url string) *SQS { return &SQS{client: client, url: url} }

// Send implements Sender, ten messages per request. A message SQS refuses
// fails the call (the caller sends again; a key reconciled twice is fine).
func (q *SQS) Send(ctx context.Context, bodies [][]byte) error {
	for len(bodies) > 0 {
		n := min(len(bodies), maxBatch)
		entries := make([]types.SendMessageBatchRequestEntry, n)
		for i, b := range bodies[:n] {
			entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(b))}
		}
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: entries})
		if err != nil {
			return fmt.Errorf("send to %s: %w", q.url, err)
		}
		if len(out.Failed) > 0 {
			f := out.Failed[0]
			return fmt.Errorf("send to %s: %d of %d messages refused (%s: %s)", q.url, len(out.Failed), n,
				aws.ToString(f.Code), aws.ToString(f.Message))
		}
		bodies = bodies[n:]
	}
	return nil
}

// Memory is a Sender that keeps what it was sent, for tests.
type Memory struct {
	mu     sync.Mutex
	bodies [][]byte
}

var _ Sender = (*Memory)(nil)

// Send implements Sender.
func (m *Memory) Send(_ context.Context, bodies [][]byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bodies = append(m.bodies, bodies...)
	return nil
}

// Take returns what was sent since the last Take.
func (m *Memory) Take() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.bodies
	m.bodies = nil
	return out
}
