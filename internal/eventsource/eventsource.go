// Package eventsource stands in, for tests and benchmarks, for what Lambda
// puts between the bucket's notifications and the indexer: an SQS event
// source mapping (batches, bounded concurrency, partial batch responses),
// or, as the first version was deployed, S3 invoking the function once per
// event.
package eventsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Invoke runs the function once with payload and returns its answer; an
// error is a failed invocation (the function's error or the runtime's).
type Invoke func(ctx context.Context, payload []byte) ([]byte, error)

// Mapping consumes a queue as an SQS event source mapping does: Consumers
// pollers, each gathering up to BatchSize messages (waiting at most Window
// after the first), invoking the function with them as one SQS event, and
// deleting every message the answer does not name in batchItemFailures
// (ReportBatchItemFailures). A failed invocation deletes nothing: its
// messages are made visible again at once (Lambda waits out the visibility
// timeout; a benchmark would only measure that wait).
type Mapping struct {
	Client    *sqs.Client
	QueueURL  string
	QueueARN  string
	BatchSize int
	Window    time.Duration
	Consumers int
	Invoke    Invoke
	// Invoked, when set, is called after each invocation, from the
	// consumer that made it.
	Invoked func(messages int, err error)
}

// Run consumes until ctx ends; it returns the first error that is not the
// function's (SQS calls failing), or nil. An invocation under way when ctx
// ends runs to its end (as in Lambda, where a poller stopping does not
// stop a function).
func (m *Mapping) Run(ctx context.Context) error {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range m.Consumers {
		wg.Go(func() {
			if err := m.consume(ctx); err != nil && ctx.Err() == nil {
				once.Do(func() { first = err })
			}
		})
	}
	wg.Wait()
	return first
}

func (m *Mapping) consume(ctx context.Context) error {
	for ctx.Err() == nil {
		batch, err := m.gather(ctx)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			continue
		}
		if ctx.Err() != nil {
			// Received as the mapping stopped: for the next consumer.
			return m.settle(context.WithoutCancel(ctx), nil, batch)
		}
		failed, ierr := m.invoke(ctx, batch)
		if m.Invoked != nil {
			m.Invoked(len(batch), ierr)
		}
		var done, again []sqstypes.Message
		for _, msg := range batch {
			if ierr != nil || failed[aws.ToString(msg.MessageId)] {
				again = append(again, msg)
			} else {
				done = append(done, msg)
			}
		}
		if err := m.settle(ctx, done, again); err != nil {
			return err
		}
	}
	return nil
}

// gather receives up to BatchSize messages: it long-polls for the first,
// then keeps receiving until the batch is full or Window has passed.
func (m *Mapping) gather(ctx context.Context) ([]sqstypes.Message, error) {
	var batch []sqstypes.Message
	var deadline time.Time
	for len(batch) < m.BatchSize {
		if len(batch) == 0 && stopping(ctx) {
			break // the mapping stops: an empty batch
		}
		wait := int32(1)
		if len(batch) > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			wait = 0 // short polls while the window is open
		}
		// A poll is never cut short: the emulator would go on with it and
		// hide what it received for the visibility timeout.
		out, err := m.Client.ReceiveMessage(context.WithoutCancel(ctx), &sqs.ReceiveMessageInput{
			QueueUrl: &m.QueueURL, MaxNumberOfMessages: int32(min(10, m.BatchSize-len(batch))), WaitTimeSeconds: wait,
		})
		if err != nil {
			return nil, fmt.Errorf("receive: %w", err)
		}
		if len(batch) == 0 && len(out.Messages) > 0 {
			deadline = time.Now().Add(m.Window)
		}
		batch = append(batch, out.Messages...)
		if len(batch) > 0 && len(out.Messages) == 0 {
			time.Sleep(min(50*time.Millisecond, time.Until(deadline)))
		}
	}
	return batch, nil
}

// stopping reports whether ctx has ended.
func stopping(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// invoke hands the batch to the function as the SQS event Lambda builds,
// and returns the message ids its answer names as failed.
func (m *Mapping) invoke(ctx context.Context, batch []sqstypes.Message) (map[string]bool, error) {
	ev := events.SQSEvent{}
	for _, msg := range batch {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(msg.MessageId), ReceiptHandle: aws.ToString(msg.ReceiptHandle), Body: aws.ToString(msg.Body),
			EventSource: "aws:sqs", EventSourceARN: m.QueueARN, AWSRegion: "us-east-1",
		})
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	answer, err := m.Invoke(context.WithoutCancel(ctx), payload)
	if err != nil {
		return nil, err
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(answer, &resp); err != nil {
		return nil, fmt.Errorf("the function's answer is not a batch response: %w: %.200s", err, answer)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	return failed, nil
}

// settle deletes what was done and makes what failed visible again.
func (m *Mapping) settle(ctx context.Context, done, again []sqstypes.Message) error {
	for chunk := range chunks(done) {
		var entries []sqstypes.DeleteMessageBatchRequestEntry
		for i, msg := range chunk {
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: msg.ReceiptHandle})
		}
		out, err := m.Client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &m.QueueURL, Entries: entries})
		if err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		if err := refused(out.Failed); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
	}
	return release(ctx, m.Client, m.QueueURL, again)
}

// release makes msgs visible again at once, ten a request; a message SQS
// did not change (a stale receipt handle, say) is an error, although the
// request succeeded: it stays hidden for its visibility timeout.
func release(ctx context.Context, client *sqs.Client, queueURL string, msgs []sqstypes.Message) error {
	for chunk := range chunks(msgs) {
		var entries []sqstypes.ChangeMessageVisibilityBatchRequestEntry
		for i, msg := range chunk {
			entries = append(entries, sqstypes.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: msg.ReceiptHandle})
		}
		out, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &queueURL, Entries: entries})
		if err != nil {
			return fmt.Errorf("change visibility: %w", err)
		}
		if err := refused(out.Failed); err != nil {
			return fmt.Errorf("change visibility: %w", err)
		}
	}
	return nil
}

// refused is the error for the entries an SQS batch call answered as
// failed, or nil.
func refused(failed []sqstypes.BatchResultErrorEntry) error {
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d messages refused (%s: %s)", len(failed), aws.ToString(failed[0].Code), aws.ToString(failed[0].Message))
}

// chunks yields msgs ten at a time, the most one SQS batch call takes.
func chunks(msgs []sqstypes.Message) func(func([]sqstypes.Message) bool) {
	return func(yield func([]sqstypes.Message) bool) {
		for len(msgs) > 0 {
			n := min(10, len(msgs))
			if !yield(msgs[:n]) {
				return
			}
			msgs = msgs[n:]
		}
	}
}

// PerEvent is the first version's delivery: S3 invoking the function with
// each notification on its own, all at once (asynchronous invocations,
// concurrency bounded only by Concurrency when set), a failed invocation
// retried up to Retries times.
type PerEvent struct {
	Client      *sqs.Client
	QueueURL    string
	Invoke      Invoke
	Retries     int
	Concurrency int // 0: unbounded
	// Invoked, when set, is called after each invocation.
	Invoked func(messages int, err error)
}

// ErrGaveUp is a notification whose every invocation failed.
var ErrGaveUp = errors.New("eventsource: an event failed every retry")

// Run takes the notifications off the queue as they arrive and invokes the
// function with each, until ctx ends, and waits for the invocations under
// way; it returns the first SQS error or ErrGaveUp.
func (p *PerEvent) Run(ctx context.Context) error {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	fail := func(err error) { once.Do(func() { first = err }) }
	slots := make(chan struct{}, max(p.Concurrency, 1))
	for ctx.Err() == nil {
		// Never cut short (see Mapping.gather).
		out, err := p.Client.ReceiveMessage(context.WithoutCancel(ctx), &sqs.ReceiveMessageInput{QueueUrl: &p.QueueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			fail(fmt.Errorf("receive: %w", err))
			break
		}
		if ctx.Err() != nil {
			if err := release(context.WithoutCancel(ctx), p.Client, p.QueueURL, out.Messages); err != nil {
				fail(err)
			}
			break
		}
		for _, msg := range out.Messages {
			if _, err := p.Client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &p.QueueURL, ReceiptHandle: msg.ReceiptHandle}); err != nil {
				fail(fmt.Errorf("delete: %w", err))
				break
			}
			body := []byte(aws.ToString(msg.Body))
			if p.Concurrency > 0 {
				slots <- struct{}{}
			}
			wg.Go(func() {
				defer func() {
					if p.Concurrency > 0 {
						<-slots
					}
				}()
				for attempt := 0; ; attempt++ {
					_, err := p.Invoke(context.WithoutCancel(ctx), body)
					if p.Invoked != nil {
						p.Invoked(1, err)
					}
					if err == nil {
						return
					}
					if attempt == p.Retries {
						fail(ErrGaveUp)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	return first
}
