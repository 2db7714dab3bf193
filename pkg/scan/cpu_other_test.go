//go:build !unix

package scan_test

import (
	"testing"
	"time"
)

// cpuTime is not measured here: the benchmarks report wall time only.
func cpuTime(testing.TB) time.Duration { return 0 }
