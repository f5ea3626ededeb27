#!/usr/bin/env bash
# The two-round MRTR tools/call (`confirm_delete`, single use) on one ferry-everything
# instance with its replay ledger in Redis (--redis) against the same server with the
# in-memory ledger (target: at least 0.7x), and through nginx in front of three such
# instances (deploy/nginx.conf.template: round robin, so the rounds of one call land on
# different instances) against the one Redis instance direct, interleaved round-robin,
# as calls per second and their ratios. nginx and the instances share the server CPU, so
# the proxy's work counts. Redis and nginx run on loopback, started and stopped by this
# script.
#
#   bench/redis.sh            3 rounds x 10 s
#   bench/redis.sh --smoke    1 round x 1 s: checks that both answer and the ratio comes out
#
# Options: --rounds N, --duration SECS, --connections N (default 32), --load-cpu N,
# --server-cpu N, --redis-cpu N. Needs redis-server and nginx (apt-get install
# redis-server nginx).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
HELP_LINES="2,12"
REDIS_CPU=0
declare -A EXTRA_OPTIONS=([--redis-cpu]=REDIS_CPU)
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
parse_options "$@"
if (( $(nproc) < 2 )); then REDIS_CPU=0; fi
command -v redis-server >/dev/null || { echo "redis.sh: redis-server is missing" >&2; exit 1; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[[ -x "$NGINX" ]] || { echo "redis.sh: nginx is missing" >&2; exit 1; }

# shellcheck source=deploy/nginx.sh
source "$ROOT/deploy/nginx.sh"
build_servers

REDIS_PORT="$(free_port)"
taskset -c "$REDIS_CPU" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" \
  --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
PIDS+=($!)

# One set of requestState keys for every Redis instance: a retry may land on another.
export FERRY_STATE_KEYS="k1:$(head -c 32 /dev/urandom | base64)"
# And one sandbox folder: confirm_delete asks about a file in it, and an instance with a
# folder of its own would rightly ask again about what is, to it, another file.
mkdir -p "$WORK/sandbox"
declare -A EXTRA=([memory]="" [redis]="--redis redis://127.0.0.1:$REDIS_PORT"
  [peer1]="--redis redis://127.0.0.1:$REDIS_PORT" [peer2]="--redis redis://127.0.0.1:$REDIS_PORT")
for name in memory redis peer1 peer2; do
  PORT[$name]="$(free_port)"
  # shellcheck disable=SC2086
  taskset -c "$SERVER_CPU" "$BIN" --http "127.0.0.1:${PORT[$name]}" --sandbox "$WORK/sandbox" \
    ${EXTRA[$name]} >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
done
for name in memory redis peer1 peer2; do
  "$LOADGEN" check --url "http://127.0.0.1:${PORT[$name]}/mcp" --wait 30 >/dev/null \
    || { echo "redis.sh: the $name server failed its check"; cat "$WORK/$name.log"; exit 1; }
done

# nginx in front of the redis instance and its two peers.
PORT[nginx]="$(free_port)"
SERVERS=""
for name in redis peer1 peer2; do
  SERVERS+="    server 127.0.0.1:${PORT[$name]} max_fails=1 fail_timeout=5s;"$'\n'
done
write_nginx_conf "$WORK/nginx" "${PORT[nginx]}" "$SERVERS" off
taskset -c "$SERVER_CPU" "$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" 2>>"$WORK/nginx/error.log" &
PIDS+=($!)
"$LOADGEN" check --url "http://127.0.0.1:${PORT[nginx]}/mcp" --wait 30 >/dev/null \
  || { echo "redis.sh: nginx in front of the instances failed its check"; cat "$WORK/nginx/error.log"; exit 1; }

RAW="$WORK/raw.jsonl"
: >"$RAW"
for round in $(seq "$ROUNDS"); do
  for name in memory redis nginx; do
    say "round $round of $ROUNDS: $name, $CONNECTIONS connections, ${DURATION}s"
    out="$(taskset -c "$LOAD_CPU" "$LOADGEN" mrtr --url "http://127.0.0.1:${PORT[$name]}/mcp" \
      --connections "$CONNECTIONS" --duration "$DURATION" --warmup "$WARMUP")"
    printf '{"ledger":"%s","round":%s,"data":%s}\n' "$name" "$round" "$out" >>"$RAW"
  done
done

python3 - "$RAW" "$MODE" "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" <<'PY'
import json, statistics, sys
raw, mode, commit = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [json.loads(l) for l in open(raw) if l.strip()]
by = {"memory": [], "redis": [], "nginx": []}
errors = 0
for r in rows:
    by[r["ledger"]].append(r["data"])
    errors += r["data"].get("errors", 0)
med = {k: statistics.median(d["calls_per_s"] for d in v) for k, v in by.items()}
p99 = {k: statistics.median((d.get("p99_ms") or 0) for d in v) for k, v in by.items()}
ratio = med["redis"] / med["memory"] if med["memory"] else 0.0
proxied = med["nginx"] / med["redis"] if med["redis"] else 0.0
labels = {"memory": "one instance, in-memory ledger", "redis": "one instance, Redis ledger",
          "nginx": "nginx + three instances, Redis ledger"}
print("| deployment | MRTR calls/s (median) | p99 of a call (ms) |")
print("| --- | ---: | ---: |")
for k in ("memory", "redis", "nginx"):
    print(f"| {labels[k]} | {med[k]:.0f} | {p99[k]:.2f} |")
target = "yes" if ratio >= 0.7 else "no"
print(f"\nredis ÷ memory: **{ratio:.2f}x** (target ≥ 0.7x: {target}); nginx ÷ direct: "
      f"**{proxied:.2f}x**; rounds: {len(by['memory'])}, errors: {errors}, commit {commit}, mode {mode}")
ok = all(d["calls"] > 0 for v in by.values() for d in v) and errors == 0
sys.exit(0 if ok else 1)
PY
