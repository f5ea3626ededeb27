#!/usr/bin/env bash
# Instructions per call of each variant of benches/layer.rs, counted by valgrind's
# callgrind: a figure that, unlike criterion's timings, does not move with whatever else
# the machine is doing. Each variant runs twice (N1 and N2 calls after the same set-up);
# the difference divided by N2 - N1 is the cost of one call.
#
#   crates/ferry-auth/benches/instructions.sh            # 200 and 2,200 calls
#   N1=100 N2=1100 crates/ferry-auth/benches/instructions.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
command -v valgrind >/dev/null 2>&1 || { echo "instructions.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
N1="${N1:-200}"
N2="${N2:-2200}"
BIN="$(cargo bench -p ferry-auth --bench layer --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -1)"
[[ -x "$BIN" ]] || { echo "instructions.sh: no bench binary" >&2; exit 1; }
count() {
  FERRY_AUTH_BENCH_COUNT="$1:$2" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" 2>&1 \
    | sed -n 's/.*Collected : //p'
}
printf '%-20s %s\n' variant instructions/call
for v in passthrough jwt_cached static_cached echo_passthrough echo_jwt_cached; do
  a="$(count "$v" "$N1")"
  b="$(count "$v" "$N2")"
  printf '%-20s %d\n' "$v" $(( (b - a) / (N2 - N1) ))
done
