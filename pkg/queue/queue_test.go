package queue_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/skilldrop/skilldrop/pkg/queue"
)

// TestMemoryTakesWhatWasSent: Take returns the bodies in order, once.
func TestMemoryTakesWhatWasSent(t *testing.T) {
	var m queue.Memory
	_ = m.Send(t.Context(), [][]byte{[]byte("a"), []byte("b")})
	_ = m.Send(t.Context(), [][]byte{[]byte("c")})
	if got := m.Take(); len(got) != 3 || string(got[0]) != "a" || string(got[2]) != "c" {
		t.Fatalf("Take = %q", got)
	}
	if got := m.Take(); len(got) != 0 {
		t.Fatalf("a second Take = %q, want nothing", got)
	}
}

// TestSQSReportsRefusedMessages: SendMessageBatch answers 200 while
// refusing some entries (each in Failed, with a Code: see
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html,
// which says a 200 can carry failures and they must be checked); the
// sender fails the call, naming the refusal, and sends no later batch.
func TestSQSReportsRefusedMessages(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		b, _ := io.ReadAll(r.Body)
		if !strings.Contains(r.Header.Get("X-Amz-Target"), "SendMessageBatch") || !strings.Contains(string(b), `"QueueUrl":"https://sqs.example/q"`) {
			t.Errorf("request %s %s", r.Header.Get("X-Amz-Target"), b)
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, `{"Successful":[],"Failed":[{"Id":"3","Code":"InvalidMessageContents","Message":"bad character","SenderFault":true}]}`)
	}))
	defer srv.Close()
	client := sqs.NewFromConfig(aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.AnonymousCredentials{},
	})
	bodies := make([][]byte, 15)
	for i := range bodies {
		bodies[i] = []byte("x")
	}
	err := queue.NewSQS(client, "https://sqs.example/q").Send(t.Context(), bodies)
	if err == nil || !strings.Contains(err.Error(), "InvalidMessageContents") || calls != 1 {
		t.Fatalf("Send = %v after %d calls; want the refusal, after one call", err, calls)
	}
}
