#!/usr/bin/env bash
# Starts and stops the AWS emulator the integration tests talk to.
#
#   scripts/emulator.sh up        start moto (scripts/moto_serial.py) on $EMULATOR_HOST:$EMULATOR_PORT unless something listens there
#   scripts/emulator.sh down      stop the moto_server this script started (by its recorded pid), nothing else
#   scripts/emulator.sh run CMD…  up, run CMD, and stop the emulator again if this call started it
#
# LocalStack listens on the same port; when it (or any emulator) is already up, it is used as is.
set -euo pipefail

host=${EMULATOR_HOST:-127.0.0.1}
port=${EMULATOR_PORT:-4566}
root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.run"
pidfile="$state/moto-$port.pid"

listening() { (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; }

up() {
	if listening; then
		echo "emulator: something already listens on $host:$port; using it"
		return 1
	fi
	if ! python3 -c 'import moto.server' >/dev/null 2>&1; then
		echo "emulator: moto is not installed for python3; install it with: pip install 'moto[server]'" >&2
		exit 2
	fi
	mkdir -p "$state"
	# moto_serial.py is moto_server with atomic requests (see its docstring).
	nohup python3 "$root/scripts/moto_serial.py" -H "$host" -p "$port" >"$state/moto-$port.log" 2>&1 &
	echo $! >"$pidfile"
	for _ in $(seq 1 150); do
		if listening; then
			echo "emulator: moto $(cat "$pidfile") on http://$host:$port (log: .run/moto-$port.log)"
			return 0
		fi
		if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
			echo "emulator: moto exited; its log follows" >&2
			cat "$state/moto-$port.log" >&2
			exit 1
		fi
		sleep 0.2
	done
	echo "emulator: moto did not listen on $host:$port within 30s" >&2
	exit 1
}

down() {
	[ -f "$pidfile" ] || { echo "emulator: none started by this script on port $port"; return 0; }
	pid=$(cat "$pidfile")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	rm -f "$pidfile"
	echo "emulator: stopped moto $pid"
}

case "${1:-}" in
up) up || true ;;
down) down ;;
run)
	shift
	started=0
	if up; then started=1; fi
	status=0
	"$@" || status=$?
	if [ "$started" = 1 ]; then down; fi
	exit "$status"
	;;
*)
	echo "usage: $0 up|down|run CMD..." >&2
	exit 2
	;;
esac
