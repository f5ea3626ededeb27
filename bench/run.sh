#!/usr/bin/env bash
# Ferry's performance harness: one command that builds every server in release mode and
# measures, interleaved round-robin so that machine drift hits all alike,
#
#   ceiling  bare hyper + serde_json (bench/ceiling), the reference
#   ferry       crates/ferry-everything from the main workspace (every feature)
#   ferry-echo  crates/ferry-echo: the benchmark's tools alone on Ferry, as rmcp-echo is on rmcp
#   rmcp     the official Rust SDK, rmcp 3.x (bench/rmcp-echo)
#   python   the official Python SDK, mcp==2.3.0 (bench/python/server.py)
#
# and prints a markdown table (also written to bench/results/latest.md) with each figure's
# ratio to the ceiling and to rmcp. See bench/README.md.
#
#   bench/run.sh            3 rounds x 10 s per figure (about 27 minutes)
#   bench/run.sh --quick    1 round x 2 s
#   bench/run.sh --smoke    CI: 1 round x 1 s, 200 listen streams, debug builds; checks
#                           that every server answers correctly and the table is complete
#
# Options: --rounds N, --duration SECS, --connections N, --many N (the many-connections
# figures, 1000), --text-bytes N (the large echo, 10240), --streams N, --flood SECS,
# --servers "ceiling ferry ferry-echo rmcp python", --ferry-args "ARGS", --load-cpu N, --server-cpu N.
#
# All traffic stays on 127.0.0.1; every load is bounded in time; every server this script
# starts is stopped on exit.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
VENV="$BENCH/.venv"
RESULTS="$BENCH/results"

# ---------------------------------------------------------------- settings and options
MODE=full
ROUNDS=3
DURATION=10          # seconds per throughput figure and round
WARMUP=1             # seconds of unrecorded load before each server's first figure of a round
CONNECTIONS=32       # the fixed concurrency of the HTTP figures
WINDOW=64            # requests in flight for the pipelined stdio figure
FLOOD=5              # seconds of writing without reading, for the flood figure
MANY=1000            # the concurrency of the many-connections figures
TEXT_BYTES=10240     # the text of the large-payload echo figure
STREAMS=10000        # listen streams held open for the memory figure
LISTEN_TIMEOUT=150   # seconds allowed to open them
SERVERS="ceiling ferry ferry-echo rmcp python"
FERRY_ARGS=""        # extra arguments for ferry-everything, e.g. "--state-ttl 2"
LOAD_CPU=0
SERVER_CPU=1

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) MODE=quick; ROUNDS=1; DURATION=2; FLOOD=2; shift ;;
    --smoke) MODE=smoke; ROUNDS=1; DURATION=1; WARMUP=0; FLOOD=1; STREAMS=200; LISTEN_TIMEOUT=60; MANY=100; shift ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --connections) CONNECTIONS="$2"; shift 2 ;;
    --streams) STREAMS="$2"; shift 2 ;;
    --many) MANY="$2"; shift 2 ;;
    --text-bytes) TEXT_BYTES="$2"; shift 2 ;;
    --flood) FLOOD="$2"; shift 2 ;;
    --servers) SERVERS="$2"; shift 2 ;;
    --ferry-args) FERRY_ARGS="$2"; shift 2 ;;
    --load-cpu) LOAD_CPU="$2"; shift 2 ;;
    --server-cpu) SERVER_CPU="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
read -r -a SERVER_LIST <<<"$SERVERS"
for name in "${SERVER_LIST[@]}"; do
  case "$name" in
    ceiling|ferry|ferry-echo|rmcp|python) ;;
    *) echo "run.sh: unknown server $name (ceiling, ferry, ferry-echo, rmcp, python)" >&2; exit 2 ;;
  esac
done

say() { printf '\n==> %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" >&2; }
warn() { printf 'run.sh: %s\n' "$*" >&2; }

# ---------------------------------------------------------------- tools
say "tools"
HTTP_TOOL=wrk
if ! command -v wrk >/dev/null 2>&1; then
  # wrk comes from Debian's packages; without it the HTTP echo figures use loadgen.
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null) 2>&1 \
    || warn "wrk could not be installed"
  command -v wrk >/dev/null 2>&1 || { HTTP_TOOL=loadgen; warn "measuring HTTP echo with loadgen instead of wrk"; }
fi
if [[ " ${SERVER_LIST[*]} " == *" python "* ]]; then
  # The Python SDK server runs in its own virtualenv, pinned by python/requirements.txt.
  if ! "$VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$BENCH/python/requirements.txt"
  fi
fi

# ---------------------------------------------------------------- builds
# Figures come from the fully optimised `dist` profile (the bench workspace's `release`);
# smoke mode checks the harness, not the figures, and uses debug builds, which CI has
# already made by then.
FERRY_PROFILE=dist
BENCH_PROFILE=release
[[ $MODE == smoke ]] && { FERRY_PROFILE=dev; BENCH_PROFILE=dev; }
# `out_dir PROFILE`: the directory under target/ a profile builds into.
out_dir() { if [[ $1 == dev ]]; then echo debug; else echo "$1"; fi; }
FERRY_BIN="$ROOT/target/$(out_dir "$FERRY_PROFILE")"
BENCH_BIN="$BENCH/target/$(out_dir "$BENCH_PROFILE")"
say "build ($FERRY_PROFILE): ferry-everything and ferry-echo, and the bench workspace (ceiling, rmcp-echo, loadgen)"
# Two builds: one build of both would unify their features, and ferry-echo leaves out the
# general JSON Schema engine that ferry-everything's fixtures need.
(cd "$ROOT" && cargo build --profile "$FERRY_PROFILE" --quiet -p ferry-everything)
(cd "$ROOT" && cargo build --profile "$FERRY_PROFILE" --quiet -p ferry-echo)
(cd "$BENCH" && cargo build --profile "$BENCH_PROFILE" --quiet --locked)
LOADGEN="$BENCH_BIN/loadgen"

# A function layout names symbols whose hashes change with a crate's dependencies: say so
# when most of a Ferry server's no longer exist, since idle RSS grows by megabytes.
# 99%: a change to ferry-everything's own startup code renames only a dozen functions (its
# argument parser, its main future), and that alone took idle RSS from 5.9 to 6.8 MiB.
for server in ferry:ferry-everything ferry-echo:ferry-echo; do
  name="${server%%:*}" package="${server#*:}"
  ORDER="$ROOT/crates/$package/link-order.txt"
  [[ " ${SERVER_LIST[*]} " == *" $name "* ]] || continue
  if [[ $MODE != smoke && -f $ORDER ]] && command -v nm >/dev/null 2>&1; then
    ORDER_FOUND=$(comm -12 <(sort -u "$ORDER") <(nm "$FERRY_BIN/$package" 2>/dev/null | awk '{print $NF}' | sort -u) | wc -l)
    ORDER_ALL=$(sort -u "$ORDER" | wc -l)
    if (( ORDER_FOUND * 100 < ORDER_ALL * 99 )); then
      warn "crates/$package/link-order.txt names $ORDER_FOUND of its $ORDER_ALL functions in this build: run bench/link-order.sh --servers $name (a stale layout costs megabytes of idle RSS)"
    fi
  fi
done

# ---------------------------------------------------------------- machine set-up
if (( $(nproc) < 2 )); then
  warn "only $(nproc) CPU: load and servers share CPU 0"
  LOAD_CPU=0; SERVER_CPU=0
fi
# Every listen stream is a connection, and so a descriptor on each side.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (( $(ulimit -n) < STREAMS + 256 )); then
  warn "descriptor limit $(ulimit -n): opening $(( $(ulimit -n) - 256 )) listen streams, not $STREAMS"
  STREAMS=$(( $(ulimit -n) - 256 ))
fi

mkdir -p "$RESULTS/logs"
STAMP="$(date -u +%Y%m%d-%H%M%S)"
RAW="$RESULTS/raw-$STAMP.jsonl"
LOGS="$RESULTS/logs"
: >"$RAW"
# Consecutive loopback ports, one per server, none of them taken, and below the kernel's
# range of ephemeral ports: the listen figure leaves thousands of client ports behind it,
# and a server port among them could not be bound again.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
EPHEMERAL_LOW="$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)"
PORT_SPAN=$(( EPHEMERAL_LOW - 10000 - 100 ))
if (( PORT_SPAN < 1000 )); then PORT_SPAN=1000; fi
for _ in $(seq 50); do
  BASE_PORT=$(( 10000 + RANDOM % PORT_SPAN ))
  taken=0
  for i in "${!SERVER_LIST[@]}"; do
    if port_taken $(( BASE_PORT + i )); then taken=1; fi
  done
  if (( taken == 0 )); then break; fi
done

# `load CMD...`: run the load generator (or wrk) on the load CPU.
load() { taskset -c "$LOAD_CPU" "$@"; }

# `server_argv NAME http PORT` or `server_argv NAME stdio`: sets ARGV to the command line.
server_argv() {
  local name="$1" mode="$2" port="${3:-}"
  case "$name" in
    ceiling) ARGV=("$BENCH_BIN/ceiling") ;;
    ferry)
      ARGV=("$FERRY_BIN/ferry-everything")
      # No drain on SIGTERM (5 s by default, for load balancers): stop_server then finds
      # it gone, and its temporary sandbox removed, instead of killing it.
      [[ "$FERRY_ARGS" == *--drain-grace* ]] || ARGV+=(--drain-grace 0)
      read -r -a extra <<<"$FERRY_ARGS"
      ARGV+=("${extra[@]}")
      ;;
    ferry-echo) ARGV=("$FERRY_BIN/ferry-echo") ;;
    rmcp) ARGV=("$BENCH_BIN/rmcp-echo") ;;
    python) ARGV=("$VENV/bin/python" "$BENCH/python/server.py") ;;
    *) warn "unknown server $name"; exit 2 ;;
  esac
  case "$name:$mode" in
    python:http) ARGV+=(http "$port") ;;
    python:stdio) ARGV+=(stdio) ;;
    *:http) ARGV+=(--http "127.0.0.1:$port") ;;
    *:stdio) ARGV+=(--stdio) ;;
  esac
  ARGV=(taskset -c "$SERVER_CPU" "${ARGV[@]}")
}

port_of() {
  local i
  for i in "${!SERVER_LIST[@]}"; do
    if [[ "${SERVER_LIST[$i]}" == "$1" ]]; then echo $(( BASE_PORT + i )); return; fi
  done
}
url_of() { echo "http://127.0.0.1:$(port_of "$1")/mcp"; }

# Servers started by this script, by name, and stopped on exit.
declare -A PIDS=()
declare -A FAILED=()
stop_server() {
  local pid="${PIDS[$1]:-}"
  [[ -n "$pid" ]] || return 0
  kill "$pid" 2>/dev/null || true
  # Give it two seconds, then insist.
  for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "PIDS[$1]"
}
cleanup() {
  local name
  for name in "${!PIDS[@]}"; do stop_server "$name"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# `record SERVER FIGURE ROUND JSON`: one raw record.
record() { printf '{"server":"%s","figure":"%s","round":%s,"data":%s}\n' "$1" "$2" "$3" "$4" >>"$RAW"; }
fail() {
  warn "$1 failed: $2"
  FAILED[$1]=1
  record "$1" check 0 "$(python3 -c 'import json,sys; print(json.dumps({"failed": sys.argv[1]}))' "$2")"
}
alive() { [[ -z "${FAILED[$1]:-}" ]]; }

# `start_server NAME`: start its HTTP server on the server CPU and check every call.
start_server() {
  local name="$1" out
  server_argv "$name" http "$(port_of "$name")"
  "${ARGV[@]}" >>"$LOGS/$name-http.log" 2>&1 &
  PIDS[$name]=$!
  if ! out="$(load "$LOADGEN" check --url "$(url_of "$name")" --wait 30 2>&1)"; then
    fail "$name" "HTTP check: ${out//$'\n'/; }"
    stop_server "$name"
  fi
}

# `status_mib PID KEY`: a memory line of /proc/PID/status (VmRSS, RssAnon, ...) in MiB.
status_mib() { awk -v key="$2:" '$1 == key { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null; }
# `memory_json PID`: resident memory in all, anonymous (heap, stacks) and file-backed.
memory_json() {
  local rss anon file
  rss="$(status_mib "$1" VmRSS)"; anon="$(status_mib "$1" RssAnon)"; file="$(status_mib "$1" RssFile)"
  printf '{"rss_mib":%s,"anon_mib":%s,"file_mib":%s}' "${rss:-null}" "${anon:-null}" "${file:-null}"
}

# `http_echo SERVER FIGURE CONNECTIONS ROUND`: the echo throughput figure.
http_echo() {
  local name="$1" figure="$2" conns="$3" round="$4" out
  if [[ "$HTTP_TOOL" == wrk ]]; then
    out="$(load wrk -t1 -c"$conns" -d"${DURATION}s" --timeout 5s -s "$BENCH/wrk/echo.lua" "$(url_of "$name")" \
      | sed -n 's/^WRKJSON //p')" || true
  else
    out="$(load "$LOADGEN" echo --url "$(url_of "$name")" --connections "$conns" --duration "$DURATION")" || true
  fi
  if [[ -n "$out" ]]; then
    record "$name" "$figure" "$round" "$out"
  else
    fail "$name" "$figure: no result"
  fi
}

# `mrtr_load SERVER FIGURE CONNECTIONS ROUND`: the two-round MRTR throughput figure.
mrtr_load() {
  measure "$1" "$4" "$2" -- mrtr --url "$(url_of "$1")" \
    --connections "$3" --duration "$DURATION" --warmup "$WARMUP"
}

# `warm SERVER`: unrecorded load, so that every server starts its figures warm.
warm() {
  (( WARMUP > 0 )) || return 0
  if [[ "$HTTP_TOOL" == wrk ]]; then
    load wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$BENCH/wrk/echo.lua" "$(url_of "$1")" >/dev/null || true
  else
    load "$LOADGEN" echo --url "$(url_of "$1")" --connections "$CONNECTIONS" --duration "$WARMUP" >/dev/null || true
  fi
}

# `measure SERVER ROUND FIGURE -- loadgen arguments`: record a loadgen figure.
measure() {
  local name="$1" round="$2" figure="$3" out
  shift 4
  if out="$(load "$LOADGEN" "$@" 2>>"$LOGS/loadgen.log")"; then
    record "$name" "$figure" "$round" "$out"
  else
    fail "$name" "$figure: $(tail -n 1 "$LOGS/loadgen.log")"
  fi
}

# The commit measured, marked when crates/ has uncommitted changes.
if GIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"; then
  git -C "$ROOT" diff --quiet HEAD -- crates || GIT="$GIT+changes"
else
  GIT="unknown commit"
fi
META_START="$(loadavg)"

# ---------------------------------------------------------------- throughput, interleaved
for round in $(seq "$ROUNDS"); do
  say "round $round of $ROUNDS: start the HTTP servers"
  record all loadavg "$round" "{\"loadavg\":\"$(loadavg)\"}"
  for name in "${SERVER_LIST[@]}"; do
    if ! alive "$name"; then continue; fi
    start_server "$name"
    if ! alive "$name"; then continue; fi
    if (( round == 1 )); then
      # Idle memory: after one call of each kind (the check), before any load.
      sleep 1
      record "$name" idle_rss 1 "$(memory_json "${PIDS[$name]}")"
    fi
    warm "$name"
  done

  say "round $round: HTTP tools/call echo, $CONNECTIONS connections"
  for name in "${SERVER_LIST[@]}"; do
    if alive "$name"; then http_echo "$name" http_c32 "$CONNECTIONS" "$round"; fi
  done
  say "round $round: HTTP tools/call echo, 1 connection"
  for name in "${SERVER_LIST[@]}"; do
    if alive "$name"; then http_echo "$name" http_c1 1 "$round"; fi
  done
  say "round $round: two-round MRTR tools/call, $CONNECTIONS connections"
  for name in "${SERVER_LIST[@]}"; do
    if alive "$name"; then mrtr_load "$name" mrtr "$CONNECTIONS" "$round"; fi
  done
  say "round $round: HTTP echo and two-round MRTR, $MANY connections"
  for name in "${SERVER_LIST[@]}"; do
    if alive "$name"; then http_echo "$name" http_many "$MANY" "$round"; fi
  done
  for name in "${SERVER_LIST[@]}"; do
    if alive "$name"; then mrtr_load "$name" mrtr_many "$MANY" "$round"; fi
  done
  say "round $round: HTTP echo of $TEXT_BYTES bytes of text, $CONNECTIONS connections"
  for name in "${SERVER_LIST[@]}"; do
    if alive "$name"; then
      measure "$name" "$round" http_large -- echo --url "$(url_of "$name")" \
        --connections "$CONNECTIONS" --duration "$DURATION" --warmup "$WARMUP" --text-bytes "$TEXT_BYTES"
    fi
  done
  for name in "${SERVER_LIST[@]}"; do stop_server "$name"; done

  say "round $round: stdio pipelined ($WINDOW in flight) and sequential"
  for figure in stdio_pipelined stdio_sequential; do
    if [[ "$figure" == stdio_pipelined ]]; then window="$WINDOW"; else window=1; fi
    for name in "${SERVER_LIST[@]}"; do
      if ! alive "$name"; then continue; fi
      server_argv "$name" stdio
      measure "$name" "$round" "$figure" -- stdio --window "$window" --duration "$DURATION" \
        --warmup "$WARMUP" --log "$LOGS/$name-stdio.log" -- "${ARGV[@]}"
    done
  done
done

# ---------------------------------------------------------------- memory, once per server
say "stdio flood: ${FLOOD} s of writing without reading, then draining"
for name in "${SERVER_LIST[@]}"; do
  if ! alive "$name"; then continue; fi
  server_argv "$name" stdio
  measure "$name" 1 flood_rss -- flood --duration "$FLOOD" --drain 60 --log "$LOGS/$name-stdio.log" -- "${ARGV[@]}"
done

say "$STREAMS open subscriptions/listen streams"
for name in "${SERVER_LIST[@]}"; do
  if ! alive "$name"; then continue; fi
  start_server "$name"
  if ! alive "$name"; then continue; fi
  measure "$name" 1 listen_rss -- listen --url "$(url_of "$name")" --pid "${PIDS[$name]}" \
    --streams "$STREAMS" --timeout "$LISTEN_TIMEOUT"
  stop_server "$name"
done

# ---------------------------------------------------------------- the table
record all meta 0 "$(python3 - <<PY
import json
print(json.dumps({
    "servers": "$SERVERS".split(), "rounds": $ROUNDS, "duration": $DURATION, "mode": "$MODE",
    "connections": $CONNECTIONS, "many": $MANY, "text_kib": ($TEXT_BYTES / 1024 if $TEXT_BYTES % 1024 else $TEXT_BYTES // 1024), "window": $WINDOW, "flood": $FLOOD, "streams": $STREAMS,
    "load_cpu": $LOAD_CPU, "server_cpu": $SERVER_CPU, "http_tool": "$HTTP_TOOL",
    "ferry_args": "$FERRY_ARGS",
    "date": "$(date -u +%Y-%m-%dT%H:%MZ)", "git": "$GIT", "rustc": "$(rustc --version | cut -d' ' -f1-2)",
    "loadavg_start": "$META_START", "loadavg_end": "$(loadavg)",
}))
PY
)"

say "results ($RAW)"
status=0
python3 "$BENCH/report.py" "$RAW" ${MODE:+--$MODE} >"$RESULTS/latest.md" || status=$?
cat "$RESULTS/latest.md"
if (( status != 0 )); then
  warn "some servers failed or some figures are missing (see above and $LOGS)"
fi
exit "$status"
