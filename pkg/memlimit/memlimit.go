// Package memlimit gives the Go runtime the memory a Lambda function has.
//
// Lambda does not tell the runtime how much memory the function was given,
// so by default the garbage collector lets the heap grow to twice what is
// live: a function whose live heap is past half its memory is killed
// (Runtime.OutOfMemory) although it would fit. With a soft limit the
// collector works harder near it instead.
package memlimit

import (
	"fmt"
	"runtime/debug"
	"strconv"
)

// EnvFunctionMemory is the variable Lambda sets to the function's memory
// in MB (really MiB).
const EnvFunctionMemory = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"

// SharePercent is the part of the function's memory given to the Go
// runtime; the rest is for what the runtime does not count (the binary's
// text, the kernel's page tables).
const SharePercent = 90

// FromEnv is the soft limit for a function of the memory getenv reports,
// in bytes, or 0 when there is none to set: outside Lambda, or when
// GOMEMLIMIT (which the runtime reads itself) is set. A value that is not
// a positive number of MB is an error.
func FromEnv(getenv func(string) string) (int64, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	v := getenv(EnvFunctionMemory)
	if v == "" {
		return 0, nil
	}
	mb, err := strconv.ParseInt(v, 10, 64)
	if err != nil || mb <= 0 || mb > 1<<20 {
		return 0, fmt.Errorf("%s=%q is not a memory size in MB", EnvFunctionMemory, v)
	}
	return mb << 20 * SharePercent / 100, nil
}

// Apply sets the runtime's soft memory limit from getenv (see FromEnv) and
// returns it, or 0 when it set none.
func Apply(getenv func(string) string) (int64, error) {
	limit, err := FromEnv(getenv)
	if err != nil || limit == 0 {
		return 0, err
	}
	debug.SetMemoryLimit(limit)
	return limit, nil
}

// catalogShare is the part of the runtime's share a catalog may take: a
// route that needs the entries keeps them decoded, 3.6 to 3.9 times the
// catalog object's size (measured by make bench-scale), so 2/9 (4.5 times)
// leaves room for the rest of a request.
const catalogShareNum, catalogShareDen = 2, 9

// CatalogFor is the largest catalog, in bytes, a function of memoryMB can
// hold decoded beside serving requests.
func CatalogFor(memoryMB int64) int64 {
	return memoryMB << 20 * SharePercent / 100 * catalogShareNum / catalogShareDen
}
