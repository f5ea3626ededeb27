#!/usr/bin/env bash
# Runs Ferry as many instances on this machine, all on loopback: a Redis, three
# ferry-everything instances sharing it (and one set of requestState keys), and nginx in
# front (deploy/nginx.conf.template). Prints the URL to use and stops everything on exit
# (Ctrl-C).
#
#   deploy/local.sh                 # builds ferry-everything (release) first
#   FERRY_EVERYTHING=path/to/bin deploy/local.sh
#   INSTANCES=5 deploy/local.sh
#
# Needs redis-server and nginx (Debian: apt-get install redis-server nginx).
set -euo pipefail
DEPLOY="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$DEPLOY")"
INSTANCES="${INSTANCES:-3}"

for tool in redis-server nginx python3; do
  command -v "$tool" >/dev/null 2>&1 || [[ -x "/usr/sbin/$tool" ]] || {
    echo "local.sh: $tool is missing (apt-get install redis-server nginx)" >&2; exit 1; }
done
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

BIN="${FERRY_EVERYTHING:-}"
if [[ -z "$BIN" ]]; then
  (cd "$ROOT" && cargo build --release --quiet -p ferry-everything)
  BIN="$ROOT/target/release/ferry-everything"
fi

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local p
  while :; do
    p=$(( 20000 + RANDOM % 10000 ))
    if ! port_taken "$p" && [[ " ${USED:-} " != *" $p "* ]]; then USED="${USED:-} $p"; echo "$p"; return; fi
  done
}
wait_port() {
  local i
  for i in $(seq 100); do port_taken "$1" && return 0; sleep 0.1; done
  echo "local.sh: nothing listens on port $1 (see $WORK/*.log)" >&2; exit 1
}

REDIS_PORT="$(free_port)"; USED="$REDIS_PORT"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
wait_port "$REDIS_PORT"

# One set of keys for every instance, so any of them opens a requestState another sealed.
KEYS="k1:$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(32)).decode())')"
# And one sandbox folder for confirm_delete: the instances stand for one service, so the
# file one of them asks about is the file another deletes.
mkdir -p "$WORK/sandbox"
printf 'Ferry notes: a file to delete with confirm_delete.\n' >"$WORK/sandbox/notes.txt"
SERVERS=""
for i in $(seq "$INSTANCES"); do
  port="$(free_port)"
  FERRY_STATE_KEYS="$KEYS" "$BIN" --http "127.0.0.1:$port" --redis "redis://127.0.0.1:$REDIS_PORT" \
    --sandbox "$WORK/sandbox" >"$WORK/instance-$i.log" 2>&1 &
  PIDS+=($!)
  wait_port "$port"
  SERVERS+="    server 127.0.0.1:$port max_fails=1 fail_timeout=5s;"$'\n'
  echo "instance $i: http://127.0.0.1:$port/mcp (pid ${PIDS[-1]})"
done

NGINX_PORT="$(free_port)"
# shellcheck source=deploy/nginx.sh
source "$DEPLOY/nginx.sh"
write_nginx_conf "$WORK/nginx" "$NGINX_PORT" "$SERVERS"
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" 2>>"$WORK/nginx/error.log" &
PIDS+=($!)
wait_port "$NGINX_PORT"

echo "redis: redis://127.0.0.1:$REDIS_PORT"
echo "logs: $WORK"
echo
echo "Ferry behind nginx: http://127.0.0.1:$NGINX_PORT/mcp"
echo "Try: cargo run -q --bin ferry -- --url http://127.0.0.1:$NGINX_PORT/mcp call confirm_delete path=notes.txt --answers '{\"confirm\": true}'"
echo "Ctrl-C stops everything."
wait
