// Package awstest gives integration tests (build tag "integration") what they
// need from an AWS endpoint: configuration from the environment only, unique
// resource names, and resources that clean up after themselves.
//
// AWS_ENDPOINT_URL is the one switch: `make test` points it at the emulator
// it starts (moto_server, or LocalStack when one already listens on 4566).
// Without it the tests refuse to run unless SKILLDROP_TEST_REAL_AWS=1, so a
// stray shell with production credentials never creates resources by accident.
package awstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Config loads the SDK configuration from the environment, filling in the
// emulator's dummy credentials and region when none are set.
func Config(t testing.TB) aws.Config {
	t.Helper()
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	if endpoint == "" && os.Getenv("SKILLDROP_TEST_REAL_AWS") != "1" {
		t.Fatal("AWS_ENDPOINT_URL is not set: run the integration tests with `make test` (which starts the emulator), " +
			"or set AWS_ENDPOINT_URL=http://127.0.0.1:4566, or SKILLDROP_TEST_REAL_AWS=1 for real AWS")
	}
	return ConfigFor(t, endpoint)
}

// ConfigFor is Config against an explicit endpoint ("" for the environment's).
func ConfigFor(t testing.TB, endpoint string) aws.Config {
	t.Helper()
	opts := []func(*config.LoadOptions) error{}
	if endpoint != "" {
		opts = append(opts, config.WithBaseEndpoint(endpoint))
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
			t.Setenv("AWS_ACCESS_KEY_ID", "test")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
		}
	}
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		t.Fatalf("load AWS config: %v", err)
	}
	return cfg
}

// Name returns a unique lowercase name, valid for buckets and queues.
func Name(t testing.TB, prefix string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(prefix) + "-" + hex.EncodeToString(b[:])
}

// S3 returns an S3 client for cfg, path-style when an endpoint is set.
func S3(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = cfg.BaseEndpoint != nil })
}

// Bucket creates a uniquely named bucket and empties and deletes it when the
// test ends.
func Bucket(t testing.TB, cfg aws.Config) string {
	t.Helper()
	name := Name(t, "skilldrop-test")
	client := S3(cfg)
	ctx := context.Background()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	t.Cleanup(func() { DeleteBucket(t, client, name) })
	return name
}

// VersionedBucket is Bucket with versioning enabled, as template.yaml
// deploys the bucket.
func VersionedBucket(t testing.TB, cfg aws.Config) string {
	t.Helper()
	name := Bucket(t, cfg)
	_, err := S3(cfg).PutBucketVersioning(context.Background(), &s3.PutBucketVersioningInput{
		Bucket:                  &name,
		VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled},
	})
	if err != nil {
		t.Fatalf("enable versioning on %s: %v", name, err)
	}
	return name
}

// Queue creates a uniquely named SQS queue, deleted when the test ends, and
// returns its URL and ARN.
func Queue(t testing.TB, cfg aws.Config) (url, arn string) {
	t.Helper()
	client := sqs.NewFromConfig(cfg)
	ctx := context.Background()
	name := Name(t, "skilldrop-test")
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name})
	if err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	url = *out.QueueUrl
	t.Cleanup(func() {
		if _, err := client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: &url}); err != nil {
			t.Logf("cleanup: delete queue %s: %v", name, err)
		}
	})
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatalf("queue attributes %s: %v", name, err)
	}
	return url, attrs.Attributes["QueueArn"]
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// FreePorts returns n distinct free loopback ports: each is held until all
// are chosen, as the system may hand a port just released out again (two
// FreePort calls in a row can return the same one).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// Moto is a moto server of one test's own.
type Moto struct {
	// Endpoint is its http://127.0.0.1:<port> URL.
	Endpoint string
	cmd      *exec.Cmd
	done     chan struct{}
	stopped  bool
}

// PrivateMoto starts a moto server (scripts/moto_serial.py) of the test's own
// on a free loopback port, for tests that must stop or pause the emulator
// mid-way; it is stopped at cleanup. It never touches the shared emulator.
func PrivateMoto(t testing.TB) *Moto {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "..", "scripts", "moto_serial.py")
	port := FreePort(t)
	m := &Moto{
		Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port),
		cmd:      exec.Command("python3", script, "-H", "127.0.0.1", "-p", fmt.Sprint(port)),
		done:     make(chan struct{}),
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("start private moto: %v", err)
	}
	go func() { _ = m.cmd.Wait(); close(m.done) }()
	t.Cleanup(m.Stop)
	addr := strings.TrimPrefix(m.Endpoint, "http://")
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return m
		}
		select {
		case <-m.done:
			t.Fatal("private moto exited before listening")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal(errors.New("private moto did not listen within 30s"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Pause stops the process (SIGSTOP): connections hang as they would to an
// unresponsive endpoint, and its state survives for Resume.
func (m *Moto) Pause() error { return m.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT).
func (m *Moto) Resume() error { return m.cmd.Process.Signal(syscall.SIGCONT) }

// Stop kills the process and waits for it; it is idempotent.
func (m *Moto) Stop() {
	if m.stopped {
		return
	}
	m.stopped = true
	_ = m.cmd.Process.Signal(syscall.SIGCONT)
	_ = m.cmd.Process.Kill()
	<-m.done
}
