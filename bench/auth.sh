#!/usr/bin/env bash
# HTTP tools/call echo on ferry-everything protected by OAuth (--auth-issuer: every request
# carries a JWT access token, validated against the issuer's keys and cached by digest)
# against the same server without authorization, interleaved round-robin, as calls per
# second and their ratio (target: at least 0.8x). The issuer is a real authorization
# server, oidc-provider (tools/oidc-provider), on loopback; the token comes from its
# client credentials grant, as a service would get one.
#
#   bench/auth.sh            3 rounds x 10 s
#   bench/auth.sh --smoke    1 round x 1 s: checks that both answer and the ratio comes out
#
# Options: --rounds N, --duration SECS, --connections N (default 32), --load-cpu N,
# --server-cpu N. Needs Node.js and npm (the authorization server is installed with
# `npm ci --prefix tools/oidc-provider` when missing).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
HELP_LINES="2,14"
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
parse_options "$@"
command -v node >/dev/null || { echo "auth.sh: node is missing" >&2; exit 1; }

AS_DIR="$ROOT/tools/oidc-provider"
if [[ ! -d "$AS_DIR/node_modules/oidc-provider" ]]; then
  say "install the authorization server (npm ci --prefix tools/oidc-provider)"
  npm ci --prefix "$AS_DIR" --no-audit --no-fund --loglevel=error
fi
build_servers

SECRET="bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
# stdin stays open (a FIFO held by this script): the server stops when it closes.
mkfifo "$WORK/as.stdin"
sleep infinity >"$WORK/as.stdin" &
PIDS+=($!)
node "$AS_DIR/server.mjs" --scope files:read --scope files:delete --client "bench:$SECRET" \
  <"$WORK/as.stdin" >"$WORK/as.out" 2>"$WORK/as.log" &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^issuer ' "$WORK/as.out" 2>/dev/null && break; sleep 0.1; done
ISSUER="$(sed -n 's/^issuer //p' "$WORK/as.out")"
[[ -n "$ISSUER" ]] || { echo "auth.sh: the authorization server did not start"; cat "$WORK/as.log"; exit 1; }

PORT[none]="$(free_port)"
PORT[jwt]="$(free_port)"
RESOURCE="http://127.0.0.1:${PORT[jwt]}/mcp"
taskset -c "$SERVER_CPU" "$BIN" --http "127.0.0.1:${PORT[none]}" >"$WORK/none.log" 2>&1 &
PIDS+=($!)
taskset -c "$SERVER_CPU" "$BIN" --http "127.0.0.1:${PORT[jwt]}" --auth-issuer "$ISSUER" \
  >"$WORK/jwt.log" 2>&1 &
PIDS+=($!)

say "a token from the client credentials grant, for $RESOURCE"
TOKEN="$(python3 - "$ISSUER" "$RESOURCE" "$SECRET" <<'PY'
import base64, json, sys, urllib.parse, urllib.request
issuer, resource, secret = sys.argv[1:4]
body = urllib.parse.urlencode({"grant_type": "client_credentials", "resource": resource,
                               "scope": "files:read files:delete"}).encode()
req = urllib.request.Request(issuer + "/token", data=body, headers={
    "Authorization": "Basic " + base64.b64encode(f"bench:{secret}".encode()).decode(),
    "Content-Type": "application/x-www-form-urlencoded"})
print(json.load(urllib.request.urlopen(req, timeout=10))["access_token"])
PY
)"

"$LOADGEN" check --url "http://127.0.0.1:${PORT[none]}/mcp" --wait 30 >/dev/null \
  || { echo "auth.sh: the server without authorization failed its check"; cat "$WORK/none.log"; exit 1; }
# With the token the protected server answers; without it, it refuses.
LOADGEN_BEARER="$TOKEN" "$LOADGEN" check --url "$RESOURCE" --wait 30 >/dev/null \
  || { echo "auth.sh: the protected server refused the token"; cat "$WORK/jwt.log"; exit 1; }
if "$LOADGEN" check --url "$RESOURCE" --wait 1 >/dev/null 2>&1; then
  echo "auth.sh: the protected server answered without a token"; exit 1
fi

BEARER[jwt]="$TOKEN"
echo_rounds "$WORK/raw.jsonl" none jwt
echo_report "$WORK/raw.jsonl" authorization "JWT ÷ none" 0.8 none=none "jwt=JWT (oidc-provider)"
