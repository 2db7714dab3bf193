package obs

import (
	"context"
	"sync"
)

// The metric names, and the dimension each is also counted under. Alarms
// watch the datapoints without dimensions; the dimension says which skill
// (resp. which rejection code) it was.
const (
	DigestMismatch  = "DigestMismatch"
	UploadRejected  = "UploadRejected"
	UploadPublished = "UploadPublished"
	// ScanBlocked counts uploads the content scan blocked, ScanWarned the
	// versions published with findings; each with Rule, once per rule.
	ScanBlocked = "ScanBlocked"
	ScanWarned  = "ScanWarned"

	DimensionSkill  = "Skill"  // with DigestMismatch: the skill name
	DimensionReason = "Reason" // with UploadRejected: the rejection code
	DimensionKind   = "Kind"   // with UploadPublished: skill or subagent
	DimensionRule   = "Rule"   // with ScanBlocked and ScanWarned: the scan rule id
)

// Metrics counts incidents. Count adds one to the metric name twice over:
// once without dimensions and once under the single dimension
// dimension=value (when value is empty, only the first).
//
// Count never fails from the caller's point of view: an implementation that
// cannot deliver logs the failure and returns, because a metric must never
// change a response or abort an indexing run. It returns only once the
// count was sent or given up (a Lambda is frozen as soon as it responds, so
// nothing may be left in flight), within a short bound.
//
// CountN is Count adding n at once (n > 0): what one round counts in one
// send rather than n.
type Metrics interface {
	Count(ctx context.Context, name, dimension, value string)
	CountN(ctx context.Context, name, dimension, value string, n int)
}

// Nop is a Metrics that counts nothing.
type Nop struct{}

// Count does nothing.
func (Nop) Count(context.Context, string, string, string) {}

// CountN does nothing.
func (Nop) CountN(context.Context, string, string, string, int) {}

// Sample is one Count (N 1) or CountN call as a Recorder saw it.
type Sample struct {
	Name, Dimension, Value string
	N                      int
}

// Recorder is an in-memory Metrics for tests: it keeps every Count call, in
// order. The zero value is ready to use and safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	samples []Sample
}

// Count records the call.
func (r *Recorder) Count(ctx context.Context, name, dimension, value string) {
	r.CountN(ctx, name, dimension, value, 1)
}

// CountN records the call.
func (r *Recorder) CountN(_ context.Context, name, dimension, value string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, Sample{Name: name, Dimension: dimension, Value: value, N: n})
}

// Samples returns a copy of the calls recorded so far.
func (r *Recorder) Samples() []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Sample(nil), r.samples...)
}

// Total returns what name was counted to (the dimensionless series).
func (r *Recorder) Total(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.samples {
		if s.Name == name {
			n += s.N
		}
	}
	return n
}

var (
	_ Metrics = Nop{}
	_ Metrics = (*Recorder)(nil)
)
