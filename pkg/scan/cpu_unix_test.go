//go:build unix

package scan_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the processor time this process has spent, user and system:
// unlike the wall clock, it leaves out what a shared machine's neighbours
// take.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
