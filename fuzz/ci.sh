#!/usr/bin/env bash
# The fuzz step of CI (.ci/run), runnable on its own from anywhere in the repository:
#   bash fuzz/ci.sh            every target
#   bash fuzz/ci.sh h1_head    the named targets only
# Builds every target, then runs each, two at a time, for a fixed number of inputs from a
# fixed seed over its seed corpus (fuzz/corpus); a crash fails the run and its input is
# written under fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
# cargo-fuzz from crates.io, installed once per machine.
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --quiet
# Ferry's code is #![forbid(unsafe_code)], so AddressSanitizer would only watch the
# dependencies' unsafe code while building and running several times slower: without a
# sanitizer (debug assertions and overflow checks stay on, cargo fuzz's default) a panic
# or failed assertion is the crash, and the fuzz step stays within a few minutes.
# Sixteen codegen units (cargo fuzz's default is one) build several times faster for
# somewhat slower runs. All targets are built at once, then each runs from its seeds; the inputs it finds go to
# a scratch directory, never into fuzz/corpus.
cargo +nightly fuzz build --sanitizer none --codegen-units 16
FUZZ_WORK=$(mktemp -d)
# Each target runs a fixed number of inputs from a fixed seed, about 15 s of work here, so a
# run is repeatable: what CI runs is what `bash fuzz/ci.sh TARGET` runs on a developer's machine,
# and a crash CI finds, it finds every time. The time limit is only a backstop (a slower
# machine runs a prefix of the same inputs). Longer, open-ended runs are fuzz/README.md's.
declare -A FUZZ_RUNS=(
  [form_validate]=2000000 [h1_chunked]=500000 [h1_head]=1500000 [header_value]=3000000
  [jsonrpc_envelope]=1500000 [jwt]=15000 [request_decode]=1000000 [request_state]=500000
  [sse]=400000 [uri_template]=100000
)
fuzz_one() {  # fuzz_one TARGET: runs it, prints its executions; fails with its log on a crash
  local target=$1
  mkdir -p "$FUZZ_WORK/$target"
  if ! cargo +nightly fuzz run --sanitizer none --codegen-units 16 "$target" "$FUZZ_WORK/$target" "fuzz/corpus/$target" -- \
    -seed=1 -runs="${FUZZ_RUNS[$target]:-100000}" -max_total_time=60 \
    -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    2>"$FUZZ_WORK/$target.log"; then
    tail -n 60 "$FUZZ_WORK/$target.log"
    echo "fuzz target $target failed: its crashing input is under fuzz/artifacts/$target/" >&2
    return 1
  fi
  grep -h "stat::number_of_executed_units" "$FUZZ_WORK/$target.log" | sed "s/^/$target: /"
}
if (($#)); then FUZZ_TARGETS=("$@"); else mapfile -t FUZZ_TARGETS < <(cargo +nightly fuzz list); fi
for ((i = 0; i < ${#FUZZ_TARGETS[@]}; i += 2)); do
  pids=()
  for target in "${FUZZ_TARGETS[@]:i:2}"; do
    fuzz_one "$target" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
done
rm -rf "$FUZZ_WORK"
