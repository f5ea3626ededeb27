#!/usr/bin/env bash
# Writes each Rust server's function layout, `link-order.txt` beside its Cargo.toml, from a
# traced run, then rebuilds the server with it (crates/ferry-everything/build.rs passes the
# file to LLD, for ferry-everything and for the benchmark's ceiling and rmcp-echo alike).
#
#   bench/link-order.sh                          ferry, ferry-echo, ceiling and rmcp
#   bench/link-order.sh --servers ferry
#
# Each server runs under callgrind (symbols kept mangled) while it answers the readiness
# check, 300 HTTP echo calls and 300 two-round MRTR calls on two connections, and then, as
# a second process, 300 echo calls over stdio. Every function that ran is listed, the most
# instructions first; LLD places them side by side at the start of the code. Symbols carry
# a hash of the build's settings, so the file is for the build it was traced from: the
# `dist` profile for ferry-everything (published binaries and bench/run.sh), the bench
# workspace's `release` for the others. Run it again when the request path has changed
# much; a stale file still lays out the functions it still names.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
SERVERS="ferry ferry-echo ceiling rmcp"
CALLS=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --servers) SERVERS="$2"; shift 2 ;;
    --calls) CALLS="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "link-order.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null 2>&1 || { echo "link-order.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill -9 "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

build() {
  # Built apart, as bench/run.sh builds them: one build would unify their features.
  (cd "$ROOT" && cargo build --profile dist --quiet --locked -p ferry-everything)
  (cd "$ROOT" && cargo build --profile dist --quiet --locked -p ferry-echo)
  (cd "$BENCH" && cargo build --release --quiet --locked)
}

# `package NAME`: the folder the server's link-order.txt goes in; `binary NAME`: its build.
package() {
  case "$1" in
    ferry) echo "$ROOT/crates/ferry-everything" ;;
    ferry-echo) echo "$ROOT/crates/ferry-echo" ;;
    ceiling) echo "$BENCH/ceiling" ;;
    rmcp) echo "$BENCH/rmcp-echo" ;;
    *) echo "link-order.sh: no server $1" >&2; exit 2 ;;
  esac
}
binary() {
  case "$1" in
    ferry) echo "$ROOT/target/dist/ferry-everything" ;;
    ferry-echo) echo "$ROOT/target/dist/ferry-echo" ;;
    ceiling) echo "$BENCH/target/release/ceiling" ;;
    rmcp) echo "$BENCH/target/release/rmcp-echo" ;;
  esac
}

build
LOADGEN="$BENCH/target/release/loadgen"
for name in $SERVERS; do
  bin="$(binary "$name")"
  port=$(( 20000 + RANDOM % 10000 ))
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/$name-http.out" \
    "$bin" --http "127.0.0.1:$port" >"$WORK/$name-http.log" 2>&1 &
  SERVER_PID=$!
  "$LOADGEN" check --url "http://127.0.0.1:$port/mcp" --wait 120 >/dev/null
  for kind in echo mrtr; do
    "$LOADGEN" "$kind" --url "http://127.0.0.1:$port/mcp" --connections 2 --calls "$CALLS" \
      --duration 600 >/dev/null
  done
  kill -TERM "$SERVER_PID"
  for _ in $(seq 600); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""

  meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
  for i in $(seq "$CALLS"); do
    printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},%s}}\n' "$i" "$meta"
  done >"$WORK/stdio.in"
  timeout 600 valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/$name-stdio.out" \
    "$bin" --stdio <"$WORK/stdio.in" >/dev/null 2>"$WORK/$name-stdio.log"

  python3 "$BENCH/link_order.py" "$bin" "$(package "$name")/link-order.txt" \
    "$WORK/$name-http.out" "$WORK/$name-stdio.out"
done
# Relink with the new layouts (the build scripts watch link-order.txt).
build
