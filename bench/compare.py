"""The report of an interleaved two-arm HTTP echo comparison (bench/lib.sh `echo_rounds`).

    python3 bench/compare.py RAW MODE COMMIT TITLE RATIO_NAME TARGET BASE=LABEL OTHER=LABEL [--added-p50]

Prints each arm's median calls/s and p50 as a markdown table, then OTHER ÷ BASE against
TARGET; exits non-zero when an arm made no calls or any call failed.
"""
import json
import statistics
import sys


def main(argv):
    added_p50 = "--added-p50" in argv
    args = [a for a in argv if a != "--added-p50"]
    raw, mode, commit, title, ratio_name, target = args[:6]
    (base, base_label), (other, other_label) = (a.split("=", 1) for a in args[6:8])
    target = float(target)
    rows = [json.loads(line) for line in open(raw) if line.strip()]
    by = {base: [], other: []}
    errors = 0
    for r in rows:
        by[r["arm"]].append(r["data"])
        errors += r["data"].get("errors", 0)
    med = {k: statistics.median(d["calls_per_s"] for d in v) for k, v in by.items()}
    p50 = {k: statistics.median((d.get("p50_ms") or 0) for d in v) for k, v in by.items()}
    ratio = med[other] / med[base] if med[base] else 0.0
    print(f"| {title} | HTTP echo calls/s (median) | p50 (ms) |")
    print("| --- | ---: | ---: |")
    for k, label in ((base, base_label), (other, other_label)):
        print(f"| {label} | {med[k]:.0f} | {p50[k]:.3f} |")
    met = "yes" if ratio >= target else "no"
    added = f"added p50: {p50[other] - p50[base]:.3f} ms; " if added_p50 else ""
    print(f"\n{ratio_name}: **{ratio:.2f}x** (target ≥ {target:g}x: {met}); {added}"
          f"rounds: {len(by[base])}, errors: {errors}, commit {commit}, mode {mode}")
    ok = all(d["calls"] > 0 for v in by.values() for d in v) and errors == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
