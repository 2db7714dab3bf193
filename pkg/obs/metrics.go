package obs

import (
	"context"
	"sync"
)

// The metric names, and the dimension each is also counted under. Alarms
// watch the datapoints without dimensions; the dimension says which skill
// (resp. which rejection code) it was.
const (
	DigestMismatch = "DigestMismatch"
	UploadRejected = "UploadRejected"

	DimensionSkill  = "Skill"  // with DigestMismatch: the skill name
	DimensionReason = "Reason" // with UploadRejected: the rejection code
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
type Metrics interface {
	Count(ctx context.Context, name, dimension, value string)
}

// Nop is a Metrics that counts nothing.
type Nop struct{}

// Count does nothing.
func (Nop) Count(context.Context, string, string, string) {}

// Sample is one Count call as a Recorder saw it.
type Sample struct {
	Name, Dimension, Value string
}

// Recorder is an in-memory Metrics for tests: it keeps every Count call, in
// order. The zero value is ready to use and safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	samples []Sample
}

// Count records the call.
func (r *Recorder) Count(_ context.Context, name, dimension, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, Sample{Name: name, Dimension: dimension, Value: value})
}

// Samples returns a copy of the calls recorded so far.
func (r *Recorder) Samples() []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Sample(nil), r.samples...)
}

// Total returns how many times name was counted (the dimensionless series).
func (r *Recorder) Total(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.samples {
		if s.Name == name {
			n++
		}
	}
	return n
}

var (
	_ Metrics = Nop{}
	_ Metrics = (*Recorder)(nil)
)
