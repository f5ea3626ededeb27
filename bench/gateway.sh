#!/usr/bin/env bash
# HTTP tools/call echo through `ferry gateway` against echo sent directly to the same
# ferry-everything upstream, interleaved round-robin, as calls per second, their ratio
# (target: at least 0.45x, since a proxy parses, checks and serialises every message a
# second time and holds a second connection), and the p50 latency the gateway adds.
# The upstream and the gateway share one core, the load generator has the other, so both
# arms have the same CPU for serving. When nginx is installed, a third arm sends the same
# load through nginx (one worker on that core, proxy_pass to the same upstream over
# keep-alive connections) as a reference: what a plain HTTP reverse proxy, which parses
# no JSON and checks nothing of MCP, reaches on this machine.
#
#   bench/gateway.sh            3 rounds x 10 s
#   bench/gateway.sh --smoke    1 round x 1 s: checks that both answer and the ratio comes out
#
# Options: --rounds N, --duration SECS, --connections N (default 32), --load-cpu N,
# --server-cpu N.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
HELP_LINES="2,13"
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
parse_options "$@"

build_servers
say "build ($FERRY_PROFILE): ferry (the gateway)"
(cd "$ROOT" && cargo build --profile "$FERRY_PROFILE" --quiet -p ferry-cli --bin ferry)
FERRY="$FERRY_BIN/ferry"

PORT[direct]="$(free_port)"
PORT[gateway]="$(free_port)"
UPSTREAM="http://127.0.0.1:${PORT[direct]}/mcp"
taskset -c "$SERVER_CPU" "$BIN" --http "127.0.0.1:${PORT[direct]}" >"$WORK/upstream.log" 2>&1 &
PIDS+=($!)
"$LOADGEN" check --url "$UPSTREAM" --wait 30 >/dev/null \
  || { echo "gateway.sh: the upstream failed its check"; cat "$WORK/upstream.log"; exit 1; }
taskset -c "$SERVER_CPU" "$FERRY" gateway --listen "127.0.0.1:${PORT[gateway]}" \
  --upstream "$UPSTREAM" >"$WORK/gateway.log" 2>&1 &
PIDS+=($!)
"$LOADGEN" check --url "http://127.0.0.1:${PORT[gateway]}/mcp" --wait 30 >/dev/null \
  || { echo "gateway.sh: the gateway failed its check"; cat "$WORK/gateway.log"; exit 1; }

ARMS=(direct gateway)
REFERENCE=()
if command -v nginx >/dev/null 2>&1; then
  PORT[nginx]="$(free_port)"
  mkdir -p "$WORK/nginx/logs"
  cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  upstream mcp { server 127.0.0.1:${PORT[direct]}; keepalive 128; }
  server {
    listen 127.0.0.1:${PORT[nginx]};
    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1;
    }
  }
}
CONF
  taskset -c "$SERVER_CPU" nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" \
    >"$WORK/nginx/out.log" 2>&1 &
  PIDS+=($!)
  if "$LOADGEN" check --url "http://127.0.0.1:${PORT[nginx]}/mcp" --wait 30 >/dev/null; then
    ARMS+=(nginx)
    REFERENCE=(--reference "nginx=through nginx (reference: HTTP only)")
  else
    echo "gateway.sh: nginx did not start; no reference arm" >&2
    cat "$WORK/nginx/out.log" "$WORK/nginx/logs/error.log" >&2 || true
  fi
fi

echo_rounds "$WORK/raw.jsonl" "${ARMS[@]}"
echo_report "$WORK/raw.jsonl" path "gateway ÷ direct" 0.45 "direct=direct to ferry-everything" \
  "gateway=through ferry gateway" --added-p50 "${REFERENCE[@]}"
