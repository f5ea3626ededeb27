# Shared by bench/redis.sh, auth.sh, gateway.sh and otel.sh (sourced, not run): logging,
# free loopback ports, the processes a script starts (stopped on exit, with its work
# directory), the build of ferry-everything and the load generator, and the interleaved
# rounds of a two-arm echo comparison with their report.
#
# Needs ROOT and BENCH set. `parse_options` reads the options every comparison script
# takes; `build_servers` sets FERRY_PROFILE, FERRY_BIN, BIN and LOADGEN; sourcing sets WORK
# and PIDS.

say() { printf '\n==> %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" >&2; }

# `parse_options "$@"`: --smoke, --rounds N, --duration SECS, --connections N, --load-cpu N,
# --server-cpu N and -h/--help (the script's header, lines HELP_LINES, e.g. "2,14"), into
# MODE, ROUNDS, DURATION, WARMUP, CONNECTIONS, LOAD_CPU and SERVER_CPU. A script's own
# valued options are named in the associative array EXTRA_OPTIONS (option -> variable).
# On one CPU, load and servers share CPU 0.
if ! declare -p EXTRA_OPTIONS >/dev/null 2>&1; then declare -A EXTRA_OPTIONS=(); fi
parse_options() {
  local script
  script=$(basename "$0")
  MODE=full; ROUNDS=3; DURATION=10; WARMUP=1; CONNECTIONS=32; LOAD_CPU=0; SERVER_CPU=1
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --smoke) MODE=smoke; ROUNDS=1; DURATION=1; WARMUP=0; shift ;;
      --rounds) ROUNDS="$2"; shift 2 ;;
      --duration) DURATION="$2"; shift 2 ;;
      --connections) CONNECTIONS="$2"; shift 2 ;;
      --load-cpu) LOAD_CPU="$2"; shift 2 ;;
      --server-cpu) SERVER_CPU="$2"; shift 2 ;;
      -h|--help) sed -n "${HELP_LINES}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
      *)
        if [[ -n "${EXTRA_OPTIONS[$1]:-}" && $# -ge 2 ]]; then
          printf -v "${EXTRA_OPTIONS[$1]}" '%s' "$2"
          shift 2
        else
          echo "$script: unknown option $1" >&2
          exit 2
        fi ;;
    esac
  done
  if (( $(nproc) < 2 )); then LOAD_CPU=0; SERVER_CPU=0; fi
}

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

# Figures come from the fully optimised `dist` profile (the bench workspace's `release`);
# smoke mode checks the harness, not the figures, and uses debug builds, which CI has
# already made by then. Sets FERRY_BIN, the directory of the main workspace's binaries.
build_servers() {
  local bench_profile=release
  FERRY_PROFILE=dist
  [[ $MODE == smoke ]] && { FERRY_PROFILE=dev; bench_profile=dev; }
  say "build ($FERRY_PROFILE): ferry-everything and loadgen"
  (cd "$ROOT" && cargo build --profile "$FERRY_PROFILE" --quiet -p ferry-everything)
  (cd "$BENCH" && cargo build --profile "$bench_profile" --quiet --locked -p loadgen)
  FERRY_BIN="$ROOT/target/$(out_dir "$FERRY_PROFILE")"
  LOADGEN="$BENCH/target/$(out_dir "$bench_profile")/loadgen"
  BIN="$FERRY_BIN/ferry-everything"
}

# `out_dir PROFILE`: the directory under target/ a profile builds into.
out_dir() { if [[ $1 == dev ]]; then echo debug; else echo "$1"; fi; }

# The arms of a comparison: each arm's port, the bearer token its requests carry (none
# when unset), and the pid of its server process when its CPU time is to be measured.
declare -A PORT=()
declare -A BEARER=()
declare -A SERVER_PID=()

# `cpu_ticks PID`: the user plus system time of process PID, all its threads, in clock
# ticks (fields 14 and 15 of /proc/PID/stat; the name in field 2 has no spaces here).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# `echo_rounds RAW ARM...`: ROUNDS interleaved rounds of `loadgen echo` with CONNECTIONS
# connections on each arm in turn (WARMUP s unrecorded, then DURATION s), from LOAD_CPU;
# one JSON line per arm and round into RAW, with the CPU seconds the arm's server used
# during the round when SERVER_PID names it.
echo_rounds() {
  local raw=$1 round name url out before cpu
  local tck
  tck="$(getconf CLK_TCK)"
  shift
  : >"$raw"
  for round in $(seq "$ROUNDS"); do
    for name in "$@"; do
      say "round $round of $ROUNDS: $name, $CONNECTIONS connections, ${DURATION}s"
      url="http://127.0.0.1:${PORT[$name]}/mcp"
      if (( WARMUP > 0 )); then
        LOADGEN_BEARER="${BEARER[$name]:-}" taskset -c "$LOAD_CPU" "$LOADGEN" echo --url "$url" \
          --connections "$CONNECTIONS" --duration "$WARMUP" >/dev/null
      fi
      before=""
      [[ -n "${SERVER_PID[$name]:-}" ]] && before="$(cpu_ticks "${SERVER_PID[$name]}")"
      out="$(LOADGEN_BEARER="${BEARER[$name]:-}" taskset -c "$LOAD_CPU" "$LOADGEN" echo --url "$url" \
        --connections "$CONNECTIONS" --duration "$DURATION")"
      cpu=""
      if [[ -n "$before" ]]; then
        cpu="$(( $(cpu_ticks "${SERVER_PID[$name]}") - before ))"
        cpu=",\"server_cpu_s\":$(awk -v t="$cpu" -v h="$tck" 'BEGIN {printf "%.2f", t / h}')"
      fi
      printf '{"arm":"%s","round":%s,"data":%s%s}\n' "$name" "$round" "$out" "$cpu" >>"$raw"
    done
  done
}

# `echo_report RAW TITLE RATIO_NAME TARGET BASE=LABEL OTHER=LABEL [--added-p50]`: the table
# and the ratio (bench/compare.py); fails when an arm made no calls or a call failed.
echo_report() {
  python3 "$BENCH/compare.py" "$1" "$MODE" \
    "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" "${@:2}"
}
