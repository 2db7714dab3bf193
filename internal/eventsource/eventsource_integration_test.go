//go:build integration

package eventsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/skilldrop/skilldrop/internal/awstest"
)

func send(t *testing.T, c *sqs.Client, url string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
}

// recorder is a function that records the bodies it was invoked with.
type recorder struct {
	mu      sync.Mutex
	seen    []string
	batches int
}

func (r *recorder) add(bodies ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, bodies...)
	r.batches++
}

func (r *recorder) sorted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.seen))
}

// waitFor runs until the recorder has seen n bodies, then stops run's
// context and returns what it returned.
func waitFor(t *testing.T, r *recorder, n int, run func(context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for len(r.sorted()) < n {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("saw %d of %d bodies: %q", len(r.sorted()), n, r.sorted())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	return <-done
}

// TestMappingBatchesAndRedelivers: messages reach the function in batches;
// those it names in batchItemFailures, and all of a failed invocation, come
// again; the rest are deleted.
func TestMappingBatchesAndRedelivers(t *testing.T) {
	cfg := awstest.Config(t)
	c := sqs.NewFromConfig(cfg)
	url, arn := awstest.Queue(t, cfg)
	var bodies []string
	for i := range 25 {
		bodies = append(bodies, fmt.Sprintf("m%02d", i))
	}
	send(t, c, url, bodies...)
	r := &recorder{}
	failedOnce := map[string]bool{}
	var mu sync.Mutex
	m := &Mapping{Client: c, QueueURL: url, QueueARN: arn, BatchSize: 10, Window: 200 * time.Millisecond, Consumers: 2,
		Invoke: func(_ context.Context, payload []byte) ([]byte, error) {
			var ev events.SQSEvent
			if err := json.Unmarshal(payload, &ev); err != nil || len(ev.Records) == 0 || len(ev.Records) > 10 {
				return nil, fmt.Errorf("bad event (%w): %s", err, payload)
			}
			mu.Lock()
			defer mu.Unlock()
			var resp events.SQSEventResponse
			var ok []string
			for _, rec := range ev.Records {
				switch {
				case rec.Body == "m03" && !failedOnce["whole"]: // the whole invocation fails once
					failedOnce["whole"] = true
					return nil, errors.New("function error")
				case rec.Body == "m07" && !failedOnce[rec.Body]: // one message fails once
					failedOnce[rec.Body] = true
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
				default:
					ok = append(ok, rec.Body)
				}
			}
			r.add(ok...)
			return json.Marshal(resp)
		}}
	if err := waitFor(t, r, len(bodies), m.Run); err != nil {
		t.Fatal(err)
	}
	if got := r.sorted(); !slices.Equal(got, bodies) {
		t.Fatalf("handled %q, want each of %q once", got, bodies)
	}
	if r.batches >= len(bodies) {
		t.Errorf("%d invocations for %d messages: not batched", r.batches, len(bodies))
	}
	// Nothing is left: every handled message was deleted.
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	if err != nil || len(out.Messages) != 0 {
		t.Fatalf("left in the queue: %d messages (%v)", len(out.Messages), err)
	}
}

// TestPerEventInvokesOncePerMessage: each body is an invocation of its
// own, a failed one retried.
func TestPerEventInvokesOncePerMessage(t *testing.T) {
	cfg := awstest.Config(t)
	c := sqs.NewFromConfig(cfg)
	url, _ := awstest.Queue(t, cfg)
	bodies := []string{"a", "b", "c", "d", "e"}
	send(t, c, url, bodies...)
	r := &recorder{}
	var once sync.Once
	p := &PerEvent{Client: c, QueueURL: url, Retries: 2, Invoke: func(_ context.Context, payload []byte) ([]byte, error) {
		failed := false
		if string(payload) == "c" {
			once.Do(func() { failed = true })
		}
		if failed {
			return nil, errors.New("function error")
		}
		r.add(string(payload))
		return []byte("null"), nil
	}}
	if err := waitFor(t, r, len(bodies), p.Run); err != nil {
		t.Fatal(err)
	}
	if got := r.sorted(); !slices.Equal(got, bodies) || r.batches != len(bodies) {
		t.Fatalf("handled %q in %d invocations, want each of %q in one", got, r.batches, bodies)
	}
}

// TestSettleChecksEachMessage: SQS reports each entry of a batch call on
// its own, and a call that succeeds can still have failed for some
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessageBatch.html
// and API_ChangeMessageVisibilityBatch.html: a Failed entry per message
// not handled, in a 200 answer). A message not deleted or not made
// visible again fails settle, naming SQS's code; the others are handled.
func TestSettleChecksEachMessage(t *testing.T) {
	cfg := awstest.Config(t)
	c := sqs.NewFromConfig(cfg)
	ctx := context.Background()
	for _, deleting := range []bool{true, false} {
		url, _ := awstest.Queue(t, cfg)
		send(t, c, url, "m")
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, VisibilityTimeout: 600})
		if err != nil || len(out.Messages) != 1 {
			t.Fatalf("receive: %d messages, %v", len(out.Messages), err)
		}
		stale := sqstypes.Message{ReceiptHandle: aws.String("a-receipt-handle-sqs-never-issued")}
		msgs := []sqstypes.Message{out.Messages[0], stale}
		m := &Mapping{Client: c, QueueURL: url}
		if deleting {
			err = m.settle(ctx, msgs, nil)
		} else {
			err = m.settle(ctx, nil, msgs)
		}
		if err == nil || !strings.Contains(err.Error(), "ReceiptHandleIsInvalid") {
			t.Fatalf("deleting %v: settle = %v, want the stale handle's refusal", deleting, err)
		}
		left, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url})
		if err != nil || (len(left.Messages) == 0) != deleting {
			t.Fatalf("deleting %v: %d messages visible (%v); the valid entry was not handled", deleting, len(left.Messages), err)
		}
	}
}
