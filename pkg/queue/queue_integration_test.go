//go:build integration

package queue_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/skilldrop/skilldrop/internal/awstest"
	"github.com/skilldrop/skilldrop/pkg/queue"
)

// TestSQSSendsEveryBody: more bodies than one SendMessageBatch carries all
// arrive, each once, byte for byte (moto validates no bodies: the refusal
// of one is queue_test.go's).
func TestSQSSendsEveryBody(t *testing.T) {
	cfg := awstest.Config(t)
	url, _ := awstest.Queue(t, cfg)
	client := sqs.NewFromConfig(cfg)
	q := queue.NewSQS(client, url)
	var sent []string
	var bodies [][]byte
	for i := range 23 {
		b := fmt.Sprintf(`{"skilldrop":"reconcile","keys":["skills/k-%02d.md"],"note":"ü"}`, i)
		sent = append(sent, b)
		bodies = append(bodies, []byte(b))
	}
	if err := q.Send(t.Context(), bodies); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 50 {
		out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			got = append(got, aws.ToString(m.Body))
			if _, err := client.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) >= len(sent) {
			break
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, sent) {
		t.Fatalf("received %d bodies, sent %d:\n%v", len(got), len(sent), got)
	}
}
