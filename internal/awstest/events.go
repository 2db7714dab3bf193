package awstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// EventQueue receives a bucket's S3 event notifications through an SQS
// queue: the way an emulator can deliver them, as it runs no Lambda code
// on a trigger.
type EventQueue struct {
	client   *sqs.Client
	url, arn string
	records  func(body []byte) (int, error)
}

// URL is the queue's URL.
func (q *EventQueue) URL() string { return q.url }

// ARN is the queue's ARN.
func (q *EventQueue) ARN() string { return q.arn }

// RouteEvents routes bucket's object-created and object-removed
// notifications for the keys under each of prefixes to a new queue
// (deleted when the test ends). records counts the event records a message
// body holds (an s3:TestEvent holds none); its error fails the test, so it
// is also where a test checks that the emulator's bodies decode.
func RouteEvents(t testing.TB, cfg aws.Config, bucket string, prefixes []string, records func(body []byte) (int, error)) *EventQueue {
	t.Helper()
	url, arn := Queue(t, cfg)
	var confs []s3types.QueueConfiguration
	for i, p := range prefixes {
		confs = append(confs, s3types.QueueConfiguration{
			Id:       aws.String(fmt.Sprintf("skilldrop-%d", i)),
			QueueArn: aws.String(arn),
			Events:   []s3types.Event{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"},
			Filter: &s3types.NotificationConfigurationFilter{Key: &s3types.S3KeyFilter{
				FilterRules: []s3types.FilterRule{{Name: s3types.FilterRuleNamePrefix, Value: aws.String(p)}},
			}},
		})
	}
	_, err := S3(cfg).PutBucketNotificationConfiguration(context.Background(), &s3.PutBucketNotificationConfigurationInput{
		Bucket:                    aws.String(bucket),
		NotificationConfiguration: &s3types.NotificationConfiguration{QueueConfigurations: confs},
	})
	if err != nil {
		t.Fatalf("route the notifications of %s to a queue: %v", bucket, err)
	}
	return &EventQueue{client: sqs.NewFromConfig(cfg), url: url, arn: arn, records: records}
}

// Receive returns the bodies of the queue's messages, in the order
// received, until they hold at least n event records, and deletes them from
// the queue. The minute it waits at most only keeps a broken emulator from
// hanging the run; it is not a figure under test.
func (q *EventQueue) Receive(t testing.TB, n int) [][]byte {
	t.Helper()
	ctx := context.Background()
	var bodies [][]byte
	got := 0
	deadline := time.Now().Add(time.Minute)
	for got < n {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d event records from the emulator", got, n)
		}
		out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		for _, m := range out.Messages {
			body := []byte(aws.ToString(m.Body))
			records, err := q.records(body)
			if err != nil {
				t.Fatalf("the emulator's message does not decode: %v\n%s", err, body)
			}
			got += records
			bodies = append(bodies, body)
			if _, err := q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete message: %v", err)
			}
		}
	}
	return bodies
}
