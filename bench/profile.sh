#!/usr/bin/env bash
# Instructions per request, counted by valgrind's callgrind: a figure that, unlike the
# timings of run.sh, does not move with whatever else the machine is doing.
#
#   bench/profile.sh                 ceiling, ferry and rmcp; 2,000 calls per figure
#   bench/profile.sh --calls 500 --servers "ceiling ferry"
#   bench/profile.sh --servers gateway   `ferry gateway` alone, in front of ferry-everything
#   bench/profile.sh --servers "ferry ferry-otel"   ferry-everything without and with OTLP export
#
# For each server and each of HTTP echo, HTTP two-round MRTR (per whole call), HTTP echo
# of 10 KiB of text (--text-bytes N) and stdio echo, it runs the server twice under
# callgrind — once with the readiness check alone, once with the check and N more calls on
# one connection — and divides the difference by N. `gateway` is `ferry gateway` with a
# ferry-everything upstream outside callgrind, so its figures are the gateway's own work
# per call (it has no stdio figure). `ferry-otel` is ferry-everything exporting spans and
# metrics over OTLP/HTTP to a rotel receiver outside callgrind (python3 -m pip install
# rotel), so its figures include building, batching and encoding the export. The profiles
# stay in bench/results/profile/ for callgrind_annotate, with the top
# functions by instructions per call beside them (*.percall.txt, from percall.py). Run
# bench/run.sh (or --quick) first: this script uses the binaries it builds, or build them
# with `cargo build --release -p ferry-everything` and `(cd bench && cargo build --release)`.
# FERRY_EVERYTHING=PATH profiles another build of ferry-everything as `ferry` (to compare
# two builds: run once with each, then callgrind_annotate the two profiles).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
OUT="$BENCH/results/profile"
CALLS=2000
SERVERS="ceiling ferry rmcp"
TEXT_BYTES=10240

while [[ $# -gt 0 ]]; do
  case "$1" in
    --calls) CALLS="$2"; shift 2 ;;
    --servers) SERVERS="$2"; shift 2 ;;
    --text-bytes) TEXT_BYTES="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "profile.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
read -r -a SERVER_LIST <<<"$SERVERS"

command -v valgrind >/dev/null 2>&1 || { echo "profile.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
LOADGEN="$BENCH/target/release/loadgen"
[[ -x "$LOADGEN" ]] || { echo "profile.sh: build first (bench/run.sh --quick, or cargo build --release in bench/)" >&2; exit 1; }
mkdir -p "$OUT"

binary() {
  case "$1" in
    ceiling) echo "$BENCH/target/release/ceiling" ;;
    ferry)
      # The binary bench/run.sh measured (dist), else the everyday release build.
      if [[ -n "${FERRY_EVERYTHING:-}" ]]; then echo "$FERRY_EVERYTHING"
      elif [[ -x "$ROOT/target/dist/ferry-everything" ]]; then echo "$ROOT/target/dist/ferry-everything"
      else echo "$ROOT/target/release/ferry-everything"; fi ;;
    ferry-otel) binary ferry ;;
    rmcp) echo "$BENCH/target/release/rmcp-echo" ;;
    gateway)
      if [[ -x "$ROOT/target/dist/ferry" ]]; then echo "$ROOT/target/dist/ferry"
      else echo "$ROOT/target/release/ferry"; fi ;;
    *) echo "profile.sh: no profile for $1" >&2; exit 2 ;;
  esac
}

# The server under callgrind, and the gateway's upstream, stopped on exit.
SERVER_PID=""
UPSTREAM_PID=""
UPSTREAM_URL=""
RECEIVER_PID=""
RECEIVER_URL=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill -9 "$SERVER_PID" 2>/dev/null || true; fi
  if [[ -n "$UPSTREAM_PID" ]]; then kill -9 "$UPSTREAM_PID" 2>/dev/null || true; fi
  if [[ -n "$RECEIVER_PID" ]]; then kill "$RECEIVER_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# `total FILE`: the instruction count callgrind wrote.
total() { awk '/^(totals|summary):/ { print $2; exit }' "$1"; }

# `http_run SERVER KIND CALLS FILE`: callgrind over an HTTP server that answers the
# readiness check and then CALLS calls of KIND (echo, mrtr, or large: echo of TEXT_BYTES
# of text) on one connection.
http_run() {
  local name="$1" kind="$2" calls="$3" file="$4" port
  local load=("$kind")
  if [[ $kind == large ]]; then load=(echo --text-bytes "$TEXT_BYTES"); fi
  port=$(( 10000 + RANDOM % 20000 ))   # below the ephemeral range (32768 up)
  local listen=(--http "127.0.0.1:$port") export=(-u OTEL_EXPORTER_OTLP_ENDPOINT)
  if [[ $name == gateway ]]; then
    start_upstream
    listen=(gateway --listen "127.0.0.1:$port" --upstream "$UPSTREAM_URL")
  fi
  if [[ $name == ferry-otel ]]; then
    start_receiver
    export=(OTEL_EXPORTER_OTLP_ENDPOINT="$RECEIVER_URL" OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)
  fi
  env "${export[@]}" valgrind --tool=callgrind --callgrind-out-file="$file" "$(binary "$name")" \
    "${listen[@]}" >"$file.log" 2>&1 &
  SERVER_PID=$!
  "$LOADGEN" check --url "http://127.0.0.1:$port/mcp" --wait 120 >/dev/null
  if (( calls > 0 )); then
    "$LOADGEN" "${load[@]}" --url "http://127.0.0.1:$port/mcp" --connections 1 --calls "$calls" --duration 600 >/dev/null
  fi
  # SIGTERM: Ferry shuts down gracefully, the others end by the signal; callgrind dumps
  # its counts either way. (A background job ignores SIGINT.)
  kill -TERM "$SERVER_PID"
  for _ in $(seq 600); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# `start_upstream`: the gateway's upstream, a ferry-everything outside callgrind, started
# once; sets UPSTREAM_URL.
start_upstream() {
  if [[ -z "$UPSTREAM_URL" ]]; then
    local port=$(( 10000 + RANDOM % 20000 ))
    "$(binary ferry)" --http "127.0.0.1:$port" >"$OUT/gateway-upstream.log" 2>&1 &
    UPSTREAM_PID=$!
    UPSTREAM_URL="http://127.0.0.1:$port/mcp"
    "$LOADGEN" check --url "$UPSTREAM_URL" --wait 60 >/dev/null
  fi
}

# `start_receiver`: an OTLP receiver (rotel, discarding what it gets) for ferry-otel,
# started once; sets RECEIVER_URL.
start_receiver() {
  if [[ -z "$RECEIVER_URL" ]]; then
    local agent http grpc
    agent="$(python3 -c "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))" 2>/dev/null || true)"
    [[ -x "$agent" ]] || { echo "profile.sh: ferry-otel needs rotel (python3 -m pip install rotel)" >&2; exit 1; }
    http=$(( 10000 + RANDOM % 20000 ))
    grpc=$(( 10000 + RANDOM % 20000 ))
    "$agent" start --otlp-http-endpoint "127.0.0.1:$http" --otlp-grpc-endpoint "127.0.0.1:$grpc" \
      --exporter blackhole --pid-file "$OUT/rotel.pid" --log-file "$OUT/rotel.log" \
      >"$OUT/rotel.out" 2>&1 &
    RECEIVER_PID=$!
    RECEIVER_URL="http://127.0.0.1:$http"
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$http") 2>/dev/null && break; sleep 0.1; done
  fi
}

# `stdio_run SERVER CALLS FILE`: callgrind over the stdio server fed CALLS echo calls.
stdio_run() {
  local name="$1" calls="$2" file="$3" meta
  meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
  for i in $(seq "$calls"); do
    printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},%s}}\n' "$i" "$meta"
  done >"$file.in"
  # Through pipes, as a client runs a stdio server (and as run.sh measures it): a server
  # may read and write pipes differently from files (Ferry polls pipes on its event loop).
  cat "$file.in" | timeout 600 valgrind --tool=callgrind --callgrind-out-file="$file" \
    "$(binary "$name")" --stdio 2>"$file.log" | cat >/dev/null
  rm -f "$file.in"
}

per_call() { echo $(( ($2 - $1) / CALLS )); }
fmt() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }   # 123456 -> 123,456

echo "| server | HTTP echo (instr./call) | HTTP two-round MRTR (instr./call) | HTTP echo, $TEXT_BYTES bytes of text (instr./call) | stdio echo (instr./call) |"
echo "|---|---|---|---|---|"
for name in "${SERVER_LIST[@]}"; do
  row="| $name |"
  http_run "$name" echo 0 "$OUT/$name-http-base.out"
  for kind in echo mrtr large; do
    http_run "$name" "$kind" "$CALLS" "$OUT/$name-$kind.out"
    row+=" $(fmt "$(per_call "$(total "$OUT/$name-http-base.out")" "$(total "$OUT/$name-$kind.out")")") |"
    python3 "$BENCH/percall.py" "$OUT/$name-http-base.out" "$OUT/$name-$kind.out" "$CALLS" 40 \
      >"$OUT/$name-$kind.percall.txt"
  done
  if [[ $name == gateway || $name == ferry-otel ]]; then echo "$row — |"; continue; fi
  stdio_run "$name" 1 "$OUT/$name-stdio-base.out"
  stdio_run "$name" "$(( CALLS + 1 ))" "$OUT/$name-stdio.out"
  row+=" $(fmt "$(per_call "$(total "$OUT/$name-stdio-base.out")" "$(total "$OUT/$name-stdio.out")")") |"
  python3 "$BENCH/percall.py" "$OUT/$name-stdio-base.out" "$OUT/$name-stdio.out" "$CALLS" 40 \
    >"$OUT/$name-stdio.percall.txt"
  echo "$row"
done
echo
echo "Each figure: (instructions with $CALLS more calls - instructions without) / $CALLS, one connection."
echo "Profiles: $OUT/*.out (callgrind_annotate FILE); top functions per call: $OUT/*.percall.txt"
