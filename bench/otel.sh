#!/usr/bin/env bash
# HTTP tools/call echo on ferry-everything exporting its spans and metrics over OTLP (to a
# real receiver, the rotel collector from PyPI, on loopback) against the same server with
# export off, interleaved round-robin, as calls per second, server CPU per call, and their
# ratios (target: at least 0.85x). The load generator sends no trace context, so every
# request is a root span, as most traffic is: the server samples and exports each one.
#
# The target is held against calls per server CPU second. On two cores the receiver has
# to share the load generator's core, and in the export-on arm it takes about an eighth
# of it: the load generator then sends less, the server's core idles, and calls/s
# measures the harness as much as the server. The server's own CPU time per call (its
# exporter thread included) is what export costs it.
#
#   bench/otel.sh            3 rounds x 10 s
#   bench/otel.sh --smoke    1 round x 1 s: checks that both answer and the ratio comes out
#
# Options: --rounds N, --duration SECS, --connections N (default 32), --load-cpu N,
# --server-cpu N. Needs the rotel collector (python3 -m pip install rotel).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
HELP_LINES="2,18"
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
parse_options "$@"

build_servers
AGENT="${FERRY_ROTEL_AGENT:-$(python3 -c "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))" 2>/dev/null || true)}"
[[ -x "$AGENT" ]] || { echo "otel.sh: rotel-agent is missing (python3 -m pip install rotel)" >&2; exit 1; }

OTLP_PORT="$(free_port)"
GRPC_PORT="$(free_port)"
# The receiver shares the load generator's core, so the server's core does only what
# serving and exporting cost; the receiver's own work slows the load a little in the
# export-on arm, which makes the ratio, if anything, an underestimate.
taskset -c "$LOAD_CPU" "$AGENT" start --otlp-http-endpoint "127.0.0.1:$OTLP_PORT" \
  --otlp-grpc-endpoint "127.0.0.1:$GRPC_PORT" --exporter blackhole \
  --pid-file "$WORK/rotel.pid" --log-file "$WORK/rotel.log" >"$WORK/rotel.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do port_taken "$OTLP_PORT" && break; sleep 0.1; done
port_taken "$OTLP_PORT" || { echo "otel.sh: the receiver did not start"; cat "$WORK/rotel.out"; exit 1; }

PORT[off]="$(free_port)"
PORT[on]="$(free_port)"
# `exec` in the background jobs: the pid is the server's own, whose CPU time is measured.
(exec taskset -c "$SERVER_CPU" env -u OTEL_EXPORTER_OTLP_ENDPOINT "$BIN" --drain-grace 0 \
  --http "127.0.0.1:${PORT[off]}" >"$WORK/off.log" 2>&1) &
PIDS+=($!)
SERVER_PID[off]=$!
(exec taskset -c "$SERVER_CPU" env OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$OTLP_PORT" \
  OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf OTEL_SERVICE_NAME=ferry-everything-bench \
  "$BIN" --drain-grace 0 --http "127.0.0.1:${PORT[on]}" >"$WORK/on.log" 2>&1) &
PIDS+=($!)
SERVER_PID[on]=$!
for name in off on; do
  "$LOADGEN" check --url "http://127.0.0.1:${PORT[$name]}/mcp" --wait 30 >/dev/null \
    || { echo "otel.sh: the server with export $name failed its check"; cat "$WORK/$name.log"; exit 1; }
done

echo_rounds "$WORK/raw.jsonl" off on
echo_report "$WORK/raw.jsonl" "OTLP export" "export on ÷ off" 0.85 off=off "on=on (rotel on loopback)" \
  --capacity
