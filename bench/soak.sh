#!/usr/bin/env bash
# A soak run of ferry-everything over HTTP (not run in CI): for N minutes, mixed load
# every minute — echo calls, two-round MRTR calls, listen streams opened and closed, and
# a few abusive clients (silent connections, a head sent one byte a second, oversized
# heads, garbage) — with the server's RSS, open descriptors and the error counts of each
# minute printed as one line per minute (and kept in bench/results/soak-*.jsonl).
#
#   bench/soak.sh                  5 minutes
#   bench/soak.sh --minutes 60
#   bench/soak.sh --binary PATH    another ferry-everything build
#
# Build first: cargo build --release -p ferry-everything, and the bench's loadgen
# (bench/run.sh --smoke builds both). Everything is on 127.0.0.1.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
MINUTES=5
BINARY="$ROOT/target/release/ferry-everything"
LOADGEN="$BENCH/target/release/loadgen"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --binary) BINARY="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -x "$BINARY" ]] || { echo "soak.sh: no server at $BINARY (build it first)" >&2; exit 1; }
[[ -x "$LOADGEN" ]] || { echo "soak.sh: no loadgen at $LOADGEN (bench/run.sh --smoke)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "soak.sh: python3 is needed" >&2; exit 1; }

OUT="$BENCH/results"
mkdir -p "$OUT"
RECORD="$OUT/soak-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
WORK="$(mktemp -d)"
PORT=$(( 10000 + RANDOM % 20000 ))   # below the ephemeral range (32768 up)
URL="http://127.0.0.1:$PORT/mcp"

SERVER_PID=""
cleanup() {
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
seen = {"silent_opened": 0, "silent_closed_by_server": 0, "oversized_431": 0,
        "garbage_400": 0, "trickle_408_or_closed": 0, "unexpected": 0}
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
silent = []
for _ in range(40):
    try:
        silent.append(connect()); seen["silent_opened"] += 1
    except OSError:
        seen["unexpected"] += 1
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
for s in silent:
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            seen["silent_closed_by_server"] += 1
    except BlockingIOError:
        pass
    except OSError:
        seen["silent_closed_by_server"] += 1
    s.close()
trickle.close()
print(json.dumps(seen))
PY
}

field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status"; }
fds() { ls "/proc/$SERVER_PID/fd" | wc -l; }

echo "minute | RSS MiB | fds | echo calls (errors) | MRTR calls (errors) | listen opened (failed) | abusive clients"
for minute in $(seq "$MINUTES"); do
  pids=()
  "$LOADGEN" echo --url "$URL" --connections 8 --duration 55 >"$WORK/echo.json" 2>&1 &
  pids+=($!)
  "$LOADGEN" mrtr --url "$URL" --connections 4 --duration 55 >"$WORK/mrtr.json" 2>&1 &
  pids+=($!)
  "$LOADGEN" listen --url "$URL" --streams 500 --open-concurrency 32 --settle 40 --timeout 55 \
    --pid "$SERVER_PID" >"$WORK/listen.json" 2>&1 &
  pids+=($!)
  abuse 50 >"$WORK/abuse.json" 2>&1 &
  pids+=($!)
  sleep 58
  for p in "${pids[@]}"; do wait "$p" || true; done
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "soak.sh: the server died" >&2; exit 1; }
  echo_j=$(tail -1 "$WORK/echo.json"); mrtr_j=$(tail -1 "$WORK/mrtr.json")
  listen_j=$(tail -1 "$WORK/listen.json"); abuse_j=$(tail -1 "$WORK/abuse.json")
  rss=$(rss_kib); fd=$(fds)
  printf '%s | %s | %s | %s (%s) | %s (%s) | %s (%s) | %s\n' "$minute" \
    "$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')" "$fd" \
    "$(field "$echo_j" calls)" "$(field "$echo_j" errors)" \
    "$(field "$mrtr_j" calls)" "$(field "$mrtr_j" errors)" \
    "$(field "$listen_j" opened)" "$(field "$listen_j" failed)" "$abuse_j"
  printf '{"minute":%s,"rss_kib":%s,"fds":%s,"echo":%s,"mrtr":%s,"listen":%s,"abuse":%s}\n' \
    "$minute" "$rss" "$fd" "$echo_j" "$mrtr_j" "$listen_j" "$abuse_j" >>"$RECORD"
done
echo "record: $RECORD"
