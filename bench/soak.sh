#!/usr/bin/env bash
# A soak run of ferry-everything over HTTP (not run in CI): for N minutes, mixed load
# every minute — echo calls, two-round MRTR calls, listen streams opened and closed, a
# few abusive clients (a head sent one byte a second, oversized heads, garbage) and silent
# connections held past the server's idle timeout — with the server's RSS, open
# descriptors and the error counts of each minute printed as one line per minute (and
# kept in bench/results/soak-*.jsonl).
#
#   bench/soak.sh                  5 minutes
#   bench/soak.sh --minutes 60
#   bench/soak.sh --binary PATH    another ferry-everything build
#   bench/soak.sh --echo-rate 400 --mrtr-rate 100
#                                  the paced call rates (calls/s; 0: as fast as possible)
#
# The calls are paced so that a soak leaves the machine room for other work: it measures
# whether anything grows over time, not how fast the server is (bench/run.sh does that).
#
# Build first: cargo build --release -p ferry-everything, and the bench's loadgen
# ((cd bench && cargo build --release -p loadgen)). Everything is on 127.0.0.1.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
MINUTES=5
ECHO_RATE=400
MRTR_RATE=100
BINARY="$ROOT/target/release/ferry-everything"
LOADGEN="$BENCH/target/release/loadgen"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --binary) BINARY="$2"; shift 2 ;;
    --echo-rate) ECHO_RATE="$2"; shift 2 ;;
    --mrtr-rate) MRTR_RATE="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -x "$BINARY" ]] || { echo "soak.sh: no server at $BINARY (build it first)" >&2; exit 1; }
[[ -x "$LOADGEN" ]] || { echo "soak.sh: no loadgen at $LOADGEN (cd bench && cargo build --release -p loadgen)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "soak.sh: python3 is needed" >&2; exit 1; }

OUT="$BENCH/results"
mkdir -p "$OUT"
RECORD="$OUT/soak-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
WORK="$(mktemp -d)"
PORT=$(( 10000 + RANDOM % 20000 ))   # below the ephemeral range (32768 up)
URL="http://127.0.0.1:$PORT/mcp"

SERVER_PID=""
pids=()
silent_pid=""
cleanup() {
  # The minute's loads first (each is bounded in time, but an interrupted soak ends now).
  for p in "${pids[@]}" $silent_pid; do kill -TERM "$p" 2>/dev/null || true; done
  if [[ -n "$SERVER_PID" ]]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A short requestState life keeps the single-use ledger (100,000 entries) from filling.
"$BINARY" --http "127.0.0.1:$PORT" --state-ttl 2 >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
"$LOADGEN" check --url "$URL" --wait 30 >/dev/null

# `abuse SECONDS`: the abusive clients of one minute; prints what they saw as JSON.
abuse() {
  python3 - "$PORT" "$1" <<'PY'
import json, socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + seconds
seen = {"oversized_431": 0, "garbage_400": 0, "trickle_408_or_closed": 0, "unexpected": 0}
def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.settimeout(5)
    return s
def status(s):
    try:
        line = s.recv(64).split(b"\r\n", 1)[0]
        return int(line.split()[1]) if line.startswith(b"HTTP/1.1") else 0
    except (OSError, IndexError, ValueError):
        return -1
trickle = connect()
trickle.sendall(b"POST /mcp HTTP/1.1\r\n")
while time.time() < end:
    for _ in range(5):
        s = connect()
        s.sendall(b"POST /mcp HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * (100 * 1024) + b"\r\n\r\n")
        seen["oversized_431" if status(s) == 431 else "unexpected"] += 1
        s.close()
        s = connect()
        s.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
        seen["garbage_400" if status(s) == 400 else "unexpected"] += 1
        s.close()
    try:
        trickle.sendall(b"x")
    except OSError:
        seen["trickle_408_or_closed"] += 1
        trickle = connect(); trickle.sendall(b"POST /mcp HTTP/1.1\r\n")
    time.sleep(1)
trickle.close()
print(json.dumps(seen))
PY
}

# `silent SECONDS`: 40 connections that never send a byte, held SECONDS (longer than the
# server's 60 s idle timeout, so they outlive the minute that opened them); prints how
# many the server closed as JSON.
silent() {
  python3 - "$PORT" "$1" <<'PY'
import json, socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
seen = {"opened": 0, "closed_by_server": 0, "unexpected": 0}
held = []
for _ in range(40):
    try:
        held.append(socket.create_connection(("127.0.0.1", port), timeout=5)); seen["opened"] += 1
    except OSError:
        seen["unexpected"] += 1
time.sleep(seconds)
for s in held:
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            seen["closed_by_server"] += 1
    except BlockingIOError:
        pass
    except OSError:
        seen["closed_by_server"] += 1
    s.close()
print(json.dumps(seen))
PY
}

# `summary FILE`: the last line of a load's output when it is a JSON object, else its
# failure as one ({"failed": "..."}), so that every record line stays valid JSON.
summary() {
  python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1], errors="replace").read().strip().splitlines() or ["no output"]
try:
    value = json.loads(lines[-1])
    if not isinstance(value, dict):
        raise ValueError
except ValueError:
    value = {"failed": lines[-1][:200]}
print(json.dumps(value))
PY
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status"; }
fds() { ls "/proc/$SERVER_PID/fd" | wc -l; }

echo "minute | RSS MiB | fds | echo calls (errors) | MRTR calls (errors) | listen opened (failed) | abusive clients | silent connections (of the minute before)"
for minute in $(seq "$MINUTES"); do
  pids=()
  # Last minute's silent connections have been held past the idle timeout by now.
  silent_j=null
  if [[ -n "$silent_pid" ]]; then
    wait "$silent_pid" || true
    silent_j=$(summary "$WORK/silent.json")
  fi
  silent 70 >"$WORK/silent.json" 2>&1 &
  silent_pid=$!
  "$LOADGEN" echo --url "$URL" --connections 8 --duration 55 --rate "$ECHO_RATE" \
    >"$WORK/echo.json" 2>&1 &
  pids+=($!)
  "$LOADGEN" mrtr --url "$URL" --connections 4 --duration 55 --rate "$MRTR_RATE" \
    >"$WORK/mrtr.json" 2>&1 &
  pids+=($!)
  "$LOADGEN" listen --url "$URL" --streams 500 --open-concurrency 32 --settle 40 --timeout 55 \
    --pid "$SERVER_PID" >"$WORK/listen.json" 2>&1 &
  pids+=($!)
  abuse 50 >"$WORK/abuse.json" 2>&1 &
  pids+=($!)
  sleep 58
  for p in "${pids[@]}"; do wait "$p" || true; done
  pids=()
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "soak.sh: the server died" >&2; exit 1; }
  echo_j=$(summary "$WORK/echo.json"); mrtr_j=$(summary "$WORK/mrtr.json")
  listen_j=$(summary "$WORK/listen.json"); abuse_j=$(summary "$WORK/abuse.json")
  rss=$(rss_kib); fd=$(fds)
  printf '%s | %s | %s | %s (%s) | %s (%s) | %s (%s) | %s | %s\n' "$minute" \
    "$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')" "$fd" \
    "$(field "$echo_j" calls)" "$(field "$echo_j" errors)" \
    "$(field "$mrtr_j" calls)" "$(field "$mrtr_j" errors)" \
    "$(field "$listen_j" opened)" "$(field "$listen_j" failed)" "$abuse_j" "$silent_j"
  printf '{"minute":%s,"rss_kib":%s,"fds":%s,"echo":%s,"mrtr":%s,"listen":%s,"abuse":%s,"silent":%s}\n' \
    "$minute" "$rss" "$fd" "$echo_j" "$mrtr_j" "$listen_j" "$abuse_j" "$silent_j" >>"$RECORD"
done
if [[ -n "$silent_pid" ]]; then
  wait "$silent_pid" || true
  silent_pid=""
  echo "silent connections of the last minute: $(summary "$WORK/silent.json")"
fi
echo "record: $RECORD"
