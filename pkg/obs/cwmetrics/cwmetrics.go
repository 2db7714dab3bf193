// Package cwmetrics is the CloudWatch implementation of obs.Metrics: each
// count is one PutMetricData call carrying two datums, one without
// dimensions (the series alarms watch) and one with the count's dimension.
package cwmetrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/skilldrop/skilldrop/pkg/obs"
)

// DefaultNamespace is the namespace metrics go to when none is configured.
const DefaultNamespace = "Skilldrop"

// DefaultTimeout bounds one send, retries included. A count is sent on the
// request path, so a slow or unreachable CloudWatch may delay a response by
// at most this much, never fail it.
const DefaultTimeout = 2 * time.Second

// CloudWatch limits on names and dimension values.
const (
	maxNamespaceLen      = 255
	maxDimensionValueLen = 1024
)

// ErrNamespace is wrapped by New's error for a namespace CloudWatch would refuse.
var ErrNamespace = errors.New("invalid CloudWatch namespace")

// NewClient returns a CloudWatch client for cfg that speaks the query
// protocol. service/cloudwatch from v1.53 on defaults to Smithy RPC v2 CBOR,
// which emulators such as moto answer with 404; CloudWatch itself speaks
// query too, so the same client serves production and tests. The protocol
// is set after optFns, so no option can undo it.
func NewClient(cfg aws.Config, optFns ...func(*cloudwatch.Options)) *cloudwatch.Client {
	fns := append(append([]func(*cloudwatch.Options){}, optFns...), func(o *cloudwatch.Options) {
		o.Protocol = awsquery.New(schemas.GraniteServiceVersion20100801)
	})
	return cloudwatch.NewFromConfig(cfg, fns...)
}

// API is the part of *cloudwatch.Client a Sink uses.
type API interface {
	PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error)
}

// Options configure a Sink. The zero value means the defaults.
type Options struct {
	Namespace string        // "" is DefaultNamespace
	Timeout   time.Duration // per send, retries included; <= 0 is DefaultTimeout
	Logger    *slog.Logger  // where failed sends are reported; nil discards them
}

// Sink sends counts to CloudWatch. It is safe for concurrent use.
type Sink struct {
	api       API
	namespace string
	timeout   time.Duration
	logger    *slog.Logger
}

var _ obs.Metrics = (*Sink)(nil)

// New returns a Sink that sends through api (build it with NewClient). It
// fails only on a namespace CloudWatch would refuse, so that a typo in the
// configuration shows at start-up instead of as silently missing metrics.
func New(api API, opts Options) (*Sink, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	if err := checkNamespace(ns); err != nil {
		return nil, err
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sink{api: api, namespace: ns, timeout: timeout, logger: logger}, nil
}

// Namespace returns the namespace the Sink sends to.
func (s *Sink) Namespace() string { return s.namespace }

// Count sends one PutMetricData with name counted once without dimensions
// and once with dimension=value (only the first when dimension or value is
// empty or blank). A value CloudWatch would refuse is made acceptable
// (non-ASCII and control characters become '?', and it is cut to 1024
// bytes) rather than lose the dimensionless datum with it. Count waits for
// the answer at most the Sink's timeout, and a failure is logged at WARN
// with the error, never returned: a metric must not change a response.
// The caller's cancellation does not abort the send (the incident happened
// whether or not the client is still waiting), only the timeout does.
func (s *Sink) Count(ctx context.Context, name, dimension, value string) {
	s.CountN(ctx, name, dimension, value, 1)
}

// CountN is Count with both datums of value n: one send for n incidents.
func (s *Sink) CountN(ctx context.Context, name, dimension, value string, n int) {
	data := []types.MetricDatum{{
		MetricName: aws.String(name),
		Unit:       types.StandardUnitCount,
		Value:      aws.Float64(float64(n)),
	}}
	if v := dimensionValue(value); dimension != "" && v != "" {
		data = append(data, types.MetricDatum{
			MetricName: aws.String(name),
			Dimensions: []types.Dimension{{Name: aws.String(dimension), Value: aws.String(v)}},
			Unit:       types.StandardUnitCount,
			Value:      aws.Float64(float64(n)),
		})
	}
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	_, err := s.api.PutMetricData(sendCtx, &cloudwatch.PutMetricDataInput{
		Namespace:  aws.String(s.namespace),
		MetricData: data,
	})
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelWarn, "metric not sent",
			slog.String("namespace", s.namespace),
			slog.String("metric", name),
			slog.String("dimension", dimension),
			slog.String("dimension_value", value),
			slog.Any("error", err),
		)
	}
}

// dimensionValue returns v as CloudWatch accepts a dimension value (printable
// ASCII, at most 1024 bytes, not blank), or "" when nothing useful is left.
func dimensionValue(v string) string {
	if strings.TrimSpace(v) == "" {
		return ""
	}
	var b strings.Builder
	for _, r := range v {
		if b.Len() >= maxDimensionValueLen {
			break
		}
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkNamespace applies CloudWatch's namespace rules: 1–255 characters from
// [0-9A-Za-z.-_/#: ], not blank, and not in the reserved "AWS/" space.
func checkNamespace(ns string) error {
	if len(ns) > maxNamespaceLen {
		return fmt.Errorf("%w: %d characters, at most %d", ErrNamespace, len(ns), maxNamespaceLen)
	}
	if strings.TrimSpace(ns) == "" {
		return fmt.Errorf("%w: blank", ErrNamespace)
	}
	if strings.HasPrefix(ns, "AWS/") {
		return fmt.Errorf("%w %q: the AWS/ prefix is reserved for AWS services", ErrNamespace, ns)
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.IndexByte(".-_/#: ", c) >= 0:
		default:
			return fmt.Errorf("%w %q: character %q at %d is not allowed (use 0-9 A-Z a-z . - _ / # : and space)", ErrNamespace, ns, c, i)
		}
	}
	return nil
}
