#!/usr/bin/env bash
# Throughput of `ferry lint`: lines per second over a source tree, release build, on one
# thread and on all cores. The tree is read once first so that the figures measure parsing
# and matching, not the disk. Lines per CPU-second is shown too: it holds when other work
# shares the machine, while the wall-clock figure does not.
#
#   bench/lint-throughput.sh                 # the crates in ~/.cargo/registry/src
#   bench/lint-throughput.sh PATH [PATH...]  # any tree (never commit a fetched one)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p ferry-cli >&2
if [ $# -eq 0 ]; then
  set -- "${CARGO_HOME:-$HOME/.cargo}/registry/src"
fi
python3 - "$PWD/target/release/ferry" "$@" <<'PY'
import json, resource, subprocess, sys, time

ferry, paths = sys.argv[1], sys.argv[2:]

def run(threads):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([ferry, "lint", "--warn", "--format", "json", "--threads", str(threads), *paths],
                         check=True, capture_output=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out)["summary"], wall, cpu

run(0)  # warm the page cache
for threads in (1, 0):
    s, wall, cpu = run(threads)
    label = "all cores" if threads == 0 else "1 thread"
    print(f"{label:>9}: {s['filesScanned']} files, {s['linesScanned']:,} lines in {wall:.2f} s wall"
          f" ({cpu:.2f} s CPU) = {s['linesScanned'] / wall:,.0f} lines/s,"
          f" {s['linesScanned'] / cpu:,.0f} lines per CPU-second;"
          f" {s['findings']} findings, {s['filesSkipped']} files skipped")
PY
