package cwmetrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/skilldrop/skilldrop/pkg/obs"
	"github.com/skilldrop/skilldrop/pkg/obs/cwmetrics"
)

const putMetricDataOK = `<PutMetricDataResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/">` +
	`<ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></PutMetricDataResponse>`

// fakeCloudWatch is a loopback endpoint that records the forms it is sent
// and answers each with the given status and body.
type fakeCloudWatch struct {
	mu          sync.Mutex
	forms       []url.Values
	contentType []string
	status      int
	body        string
}

func newFake(t *testing.T, status int, body string) (*fakeCloudWatch, string) {
	t.Helper()
	f := &fakeCloudWatch{status: status, body: body}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeCloudWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(b))
	f.mu.Lock()
	f.forms = append(f.forms, form)
	f.contentType = append(f.contentType, r.Header.Get("Content-Type"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.body)
}

func (f *fakeCloudWatch) requests() ([]url.Values, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]url.Values(nil), f.forms...), append([]string(nil), f.contentType...)
}

// testConfig is the configuration config.LoadDefaultConfig would build for
// endpoint, without reading the environment.
func testConfig(endpoint string) aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		Credentials:  aws.AnonymousCredentials{},
		BaseEndpoint: aws.String(endpoint),
		// LoadDefaultConfig's default; at 0 the SDK gzips every PutMetricData body.
		RequestMinCompressSizeBytes: 10240,
	}
}

func newSink(t *testing.T, api cwmetrics.API, timeout time.Duration) (*cwmetrics.Sink, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	s, err := cwmetrics.New(api, cwmetrics.Options{
		Namespace: "SkilldropTest",
		Timeout:   timeout,
		Logger:    obs.NewLogger(&logs, slog.LevelDebug),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, &logs
}

// datum is a MetricDatum as read back from a query-protocol form.
type datum struct {
	name, unit, value string
	dims              map[string]string
}

func datums(form url.Values) []datum {
	var out []datum
	for i := 1; ; i++ {
		p := "MetricData.member." + strconv.Itoa(i) + "."
		if form.Get(p+"MetricName") == "" {
			return out
		}
		d := datum{name: form.Get(p + "MetricName"), unit: form.Get(p + "Unit"), value: form.Get(p + "Value"), dims: map[string]string{}}
		for j := 1; form.Get(p+"Dimensions.member."+strconv.Itoa(j)+".Name") != ""; j++ {
			q := p + "Dimensions.member." + strconv.Itoa(j) + "."
			d.dims[form.Get(q+"Name")] = form.Get(q + "Value")
		}
		out = append(out, d)
	}
}

func TestCountSendsTwoDatumsInOneQueryProtocolCall(t *testing.T) {
	cases := []struct {
		name              string
		metric, dim, val  string
		wantDimensionless bool
		wantDims          map[string]string // nil: no dimensioned datum
	}{
		{"digest mismatch is counted without and with Skill", obs.DigestMismatch, obs.DimensionSkill, "deploy-via-pr", true, map[string]string{"Skill": "deploy-via-pr"}},
		{"rejection is counted without and with Reason", obs.UploadRejected, obs.DimensionReason, "name_mismatch", true, map[string]string{"Reason": "name_mismatch"}},
		{"empty value sends only the dimensionless datum", obs.UploadRejected, obs.DimensionReason, "", true, nil},
		{"blank value sends only the dimensionless datum", obs.UploadRejected, obs.DimensionReason, "  \t", true, nil},
		{"empty dimension name sends only the dimensionless datum", obs.DigestMismatch, "", "x", true, nil},
		{"non-ASCII and control characters become ?", obs.DigestMismatch, obs.DimensionSkill, "caf\u00e9\x01x", true, map[string]string{"Skill": "caf??x"}},
		{"an over-long value is cut to 1024 bytes", obs.DigestMismatch, obs.DimensionSkill, strings.Repeat("a", 2000), true, map[string]string{"Skill": strings.Repeat("a", 1024)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake, endpoint := newFake(t, http.StatusOK, putMetricDataOK)
			sink, logs := newSink(t, cwmetrics.NewClient(testConfig(endpoint)), 5*time.Second)
			sink.Count(context.Background(), c.metric, c.dim, c.val)

			forms, types := fake.requests()
			if len(forms) != 1 {
				t.Fatalf("got %d requests, want exactly 1 PutMetricData", len(forms))
			}
			if !strings.HasPrefix(types[0], "application/x-www-form-urlencoded") {
				t.Errorf("Content-Type %q: not the query protocol", types[0])
			}
			f := forms[0]
			if f.Get("Action") != "PutMetricData" || f.Get("Version") != "2010-08-01" || f.Get("Namespace") != "SkilldropTest" {
				t.Errorf("Action=%q Version=%q Namespace=%q", f.Get("Action"), f.Get("Version"), f.Get("Namespace"))
			}
			ds := datums(f)
			want := 1
			if c.wantDims != nil {
				want = 2
			}
			if len(ds) != want {
				t.Fatalf("got %d datums %+v, want %d", len(ds), ds, want)
			}
			for _, d := range ds {
				if d.name != c.metric || d.unit != "Count" || d.value != "1" {
					t.Errorf("datum %+v: want %s, Count, 1", d, c.metric)
				}
			}
			if len(ds[0].dims) != 0 {
				t.Errorf("first datum has dimensions %v, want none (the alarm's series)", ds[0].dims)
			}
			if c.wantDims != nil && !mapsEqual(ds[1].dims, c.wantDims) {
				t.Errorf("second datum dimensions %v, want %v", ds[1].dims, c.wantDims)
			}
			if logs.Len() != 0 {
				t.Errorf("a successful send logged: %s", logs)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func TestNewClientKeepsQueryProtocolWhateverTheOptions(t *testing.T) {
	fake, endpoint := newFake(t, http.StatusOK, putMetricDataOK)
	// An option that resets the protocol would bring back the SDK's CBOR default.
	client := cwmetrics.NewClient(testConfig(endpoint), func(o *cloudwatch.Options) { o.Protocol = nil })
	sink, logs := newSink(t, client, 5*time.Second)
	sink.Count(context.Background(), obs.DigestMismatch, obs.DimensionSkill, "a")
	forms, _ := fake.requests()
	if len(forms) != 1 || forms[0].Get("Action") != "PutMetricData" {
		t.Fatalf("requests %v, logs %s: want one query-protocol PutMetricData", forms, logs)
	}
}

func TestCountIsSentEvenWhenTheCallerHasGoneAway(t *testing.T) {
	fake, endpoint := newFake(t, http.StatusOK, putMetricDataOK)
	sink, logs := newSink(t, cwmetrics.NewClient(testConfig(endpoint)), 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sink.Count(ctx, obs.DigestMismatch, obs.DimensionSkill, "a")
	if forms, _ := fake.requests(); len(forms) != 1 {
		t.Fatalf("got %d requests with a cancelled caller context, want 1; logs: %s", len(forms), logs)
	}
}

// logLine is the part of a "metric not sent" line the tests check.
type logLine struct {
	Level  string `json:"level"`
	Msg    string `json:"msg"`
	Metric string `json:"metric"`
	Error  string `json:"error"`
}

// TestCountLogsAndReturnsWhenSendingFails: a failed send is logged, never
// returned. PutMetricData is not a batch call with results per datum:
// its answer has no elements, and a datum CloudWatch refuses fails the
// whole request (InvalidParameterValue, a 400, among the errors
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricData.html
// lists), so the call's error is all there is to check ("refused").
func TestCountLogsAndReturnsWhenSendingFails(t *testing.T) {
	closed := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		return "http://" + addr
	}
	serverError := func(t *testing.T) string {
		_, ep := newFake(t, http.StatusInternalServerError,
			`<ErrorResponse><Error><Type>Receiver</Type><Code>InternalFailure</Code><Message>boom</Message></Error></ErrorResponse>`)
		return ep
	}
	refused := func(t *testing.T) string {
		_, ep := newFake(t, http.StatusBadRequest,
			`<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameterValue</Code><Message>bad name</Message></Error></ErrorResponse>`)
		return ep
	}
	hanging := func(t *testing.T) string {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(func() { close(release); srv.Close() })
		return srv.URL
	}
	cases := []struct {
		name     string
		endpoint func(t *testing.T) string
		wantErr  string
		// timeout bounds the send: short where the timeout is what is
		// tested, else long enough for the SDK's retries on a busy machine.
		timeout time.Duration
	}{
		{"dead endpoint (closed loopback port)", closed, "connect", 10 * time.Second},
		{"service error after retries", serverError, "InternalFailure", 10 * time.Second},
		{"request refused", refused, "InvalidParameterValue", 10 * time.Second},
		{"endpoint that never answers is cut by the timeout", hanging, "deadline exceeded", 300 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink, logs := newSink(t, cwmetrics.NewClient(testConfig(c.endpoint(t))), c.timeout)
			sink.Count(context.Background(), obs.DigestMismatch, obs.DimensionSkill, "a") // must return, not panic

			var line logLine
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("want one JSON log line, got %q: %v", logs, err)
			}
			if line.Level != "WARN" || line.Msg != "metric not sent" || line.Metric != obs.DigestMismatch {
				t.Errorf("log line %+v", line)
			}
			if !strings.Contains(line.Error, c.wantErr) {
				t.Errorf("logged error %q does not mention %q", line.Error, c.wantErr)
			}
		})
	}
}

// fakeAPI is an API whose answer the test chooses, to check what Count does
// with an error without any network.
type fakeAPI struct {
	err   error
	calls int
}

func (f *fakeAPI) PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error) {
	f.calls++
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("fake: no deadline on the send context")
	}
	return &cloudwatch.PutMetricDataOutput{}, f.err
}

func TestCountBoundsEverySendWithADeadline(t *testing.T) {
	api := &fakeAPI{}
	sink, logs := newSink(t, api, 0)
	sink.Count(context.Background(), obs.UploadRejected, obs.DimensionReason, "x")
	if api.calls != 1 || logs.Len() != 0 {
		t.Fatalf("calls=%d logs=%s: want one call with a deadline", api.calls, logs)
	}
}

func TestNewValidatesTheNamespace(t *testing.T) {
	cases := []struct {
		name      string
		namespace string
		want      string // "" = accepted; else the namespace the sink uses
		wantErr   bool
	}{
		{"empty means the default", "", cwmetrics.DefaultNamespace, false},
		{"custom with allowed punctuation", "Acme/Skill-Drop_1.0#a:b c", "Acme/Skill-Drop_1.0#a:b c", false},
		{"AWS/ is reserved", "AWS/Skilldrop", "", true},
		{"blank", "   ", "", true},
		{"disallowed character", "Skill$drop", "", true},
		{"non-ASCII", "Skilldröp", "", true},
		{"256 characters", strings.Repeat("a", 256), "", true},
		{"255 characters", strings.Repeat("a", 255), strings.Repeat("a", 255), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := cwmetrics.New(&fakeAPI{}, cwmetrics.Options{Namespace: c.namespace})
			if c.wantErr {
				if !errors.Is(err, cwmetrics.ErrNamespace) {
					t.Fatalf("err = %v, want ErrNamespace", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Namespace() != c.want {
				t.Errorf("Namespace() = %q, want %q", s.Namespace(), c.want)
			}
		})
	}
}

func BenchmarkCountLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, putMetricDataOK)
	}))
	defer srv.Close()
	sink, err := cwmetrics.New(cwmetrics.NewClient(testConfig(srv.URL)), cwmetrics.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		sink.Count(ctx, obs.DigestMismatch, obs.DimensionSkill, "deploy-via-pr")
	}
}
