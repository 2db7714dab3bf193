package memlimit

import (
	"math"
	"runtime/debug"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int64
		err  bool
	}{
		{"the api's 1024 MB", map[string]string{EnvFunctionMemory: "1024"}, 1024 << 20 * SharePercent / 100, false},
		{"the indexer's 2048 MB", map[string]string{EnvFunctionMemory: "2048"}, 2048 << 20 * SharePercent / 100, false},
		{"outside Lambda", map[string]string{}, 0, false},
		{"GOMEMLIMIT wins", map[string]string{EnvFunctionMemory: "1024", "GOMEMLIMIT": "500MiB"}, 0, false},
		{"not a number", map[string]string{EnvFunctionMemory: "lots"}, 0, true},
		{"zero", map[string]string{EnvFunctionMemory: "0"}, 0, true},
		{"negative", map[string]string{EnvFunctionMemory: "-5"}, 0, true},
		{"absurd", map[string]string{EnvFunctionMemory: "99999999999"}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromEnv(env(tc.env))
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("FromEnv = %d, %v; want %d, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestApplySetsTheRuntimesLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	limit, err := Apply(env(map[string]string{EnvFunctionMemory: "1024"}))
	if err != nil || limit == 0 {
		t.Fatalf("Apply = %d, %v", limit, err)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("the runtime's limit is %d, want %d", got, limit)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if limit, err := Apply(env(map[string]string{})); err != nil || limit != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatalf("outside Lambda Apply set a limit (%d, %v)", limit, err)
	}
}
