# Shared by bench/redis.sh and bench/auth.sh (sourced, not run): logging, free loopback
# ports, the processes a script starts (stopped on exit, with its work directory), and
# the build of ferry-everything and the load generator.
#
# Needs ROOT, BENCH and MODE set; sets WORK, PIDS, FERRY_PROFILE, BIN and LOADGEN.

say() { printf '\n==> %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" >&2; }

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
USED=""
# A free loopback port in 20000..30000 (below the ephemeral range), never the same twice.
free_port() {
  local p
  while :; do
    p=$(( 20000 + RANDOM % 10000 ))
    if ! port_taken "$p" && [[ " $USED " != *" $p "* ]]; then USED="$USED $p"; echo "$p"; return; fi
  done
}

# Figures come from the fully optimised `dist` profile; smoke mode checks the harness, not
# the figures, and builds the quicker `release` profile.
build_servers() {
  FERRY_PROFILE=dist
  [[ $MODE == smoke ]] && FERRY_PROFILE=release
  say "build ($FERRY_PROFILE): ferry-everything and loadgen"
  (cd "$ROOT" && cargo build --profile "$FERRY_PROFILE" --quiet -p ferry-everything)
  (cd "$BENCH" && cargo build --release --quiet --locked -p loadgen)
  LOADGEN="$BENCH/target/release/loadgen"
  BIN="$ROOT/target/$FERRY_PROFILE/ferry-everything"
}
