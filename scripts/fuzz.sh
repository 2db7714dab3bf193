#!/usr/bin/env bash
# fuzz.sh PKG TARGET FUZZTIME: runs one Go fuzz target for FUZZTIME.
#
# A duration -fuzztime races Go's fuzzing coordinator against its own
# deadline (golang/go#51484, #75804): on a loaded machine a run can end in a
# bare "context deadline exceeded" having found nothing. That one outcome (no
# failing input written, no panic, no other test output) is tried once more;
# anything else fails at once, and a second such failure fails too.
set -uo pipefail
pkg=$1 target=$2 fuzztime=$3
for attempt in 1 2; do
	log=$(mktemp)
	"${GO:-go}" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "./$pkg" 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	if [ "$status" -eq 0 ]; then
		rm -f "$log"
		exit 0
	fi
	flake=0
	if grep -qx '    context deadline exceeded' "$log" &&
		! grep -qE 'Failing input written|panic:' "$log" &&
		! grep -E '^    ' "$log" | grep -qvx '    context deadline exceeded'; then
		flake=1
	fi
	rm -f "$log"
	if [ "$flake" -eq 1 ] && [ "$attempt" -eq 1 ]; then
		echo "fuzz.sh: $target ended on the fuzzing engine's deadline race with nothing found; running it once more" >&2
		continue
	fi
	exit "$status"
done
