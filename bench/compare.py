"""The report of an interleaved two-arm HTTP echo comparison (bench/lib.sh `echo_rounds`).

    python3 bench/compare.py RAW MODE COMMIT TITLE RATIO_NAME TARGET BASE=LABEL OTHER=LABEL \
        [--added-p50] [--capacity] [--reference NAME=LABEL]...

Prints each arm's median calls/s and p50 as a markdown table, then OTHER ÷ BASE against
TARGET, and for each reference arm its ratio to BASE and OTHER's ratio to it; exits
non-zero when BASE or OTHER made no calls or any of their calls failed.

When the rows carry the server's CPU time (`server_cpu_s`, from `echo_rounds` with
SERVER_PID set), the table adds each arm's median server CPU per call, and the report
adds the ratio of calls per server CPU second: what the server can do on a core of its
own, whatever else shares the machine. With --capacity that ratio is the one held
against TARGET.
"""
import json
import statistics
import sys


def main(argv):
    added_p50 = "--added-p50" in argv
    capacity = "--capacity" in argv
    args, references = [], []
    rest = iter(argv)
    for a in rest:
        if a == "--reference":
            references.append(next(rest).split("=", 1))
        elif a not in ("--added-p50", "--capacity"):
            args.append(a)
    raw, mode, commit, title, ratio_name, target = args[:6]
    (base, base_label), (other, other_label) = (a.split("=", 1) for a in args[6:8])
    target = float(target)
    rows = [json.loads(line) for line in open(raw) if line.strip()]
    by = {base: [], other: [], **{name: [] for name, _ in references}}
    errors = 0
    for r in rows:
        data = dict(r["data"])
        if "server_cpu_s" in r:
            data["server_cpu_s"] = r["server_cpu_s"]
        by[r["arm"]].append(data)
        # A reference arm's failures are reported, but only the measured arms fail the run.
        if r["arm"] in (base, other):
            errors += r["data"].get("errors", 0)
    med = {k: statistics.median(d["calls_per_s"] for d in v) for k, v in by.items()}
    p50 = {k: statistics.median((d.get("p50_ms") or 0) for d in v) for k, v in by.items()}
    ratio = med[other] / med[base] if med[base] else 0.0
    # Server CPU microseconds per call, when every row of the arm has it.
    cpu = {
        k: statistics.median(1e6 * d["server_cpu_s"] / d["calls"] for d in v)
        for k, v in by.items()
        if v and all("server_cpu_s" in d and d["calls"] > 0 for d in v)
    }
    with_cpu = base in cpu and other in cpu
    if with_cpu:
        print(f"| {title} | HTTP echo calls/s (median) | p50 (ms) | server CPU per call (µs) |")
        print("| --- | ---: | ---: | ---: |")
    else:
        print(f"| {title} | HTTP echo calls/s (median) | p50 (ms) |")
        print("| --- | ---: | ---: |")
    for k, label in ((base, base_label), (other, other_label), *references):
        cell = f" {cpu[k]:.2f} |" if with_cpu and k in cpu else (" — |" if with_cpu else "")
        print(f"| {label} | {med[k]:.0f} | {p50[k]:.3f} |{cell}")
    per_cpu = cpu[base] / cpu[other] if with_cpu and cpu[other] else None
    held = per_cpu if capacity and per_cpu is not None else ratio
    met = "yes" if held >= target else "no"
    added = f"added p50: {p50[other] - p50[base]:.3f} ms; " if added_p50 else ""
    if per_cpu is None:
        print(f"\n{ratio_name}: **{ratio:.2f}x** (target ≥ {target:g}x: {met}); {added}"
              f"rounds: {len(by[base])}, errors: {errors}, commit {commit}, mode {mode}")
    else:
        on = "calls per server CPU second" if capacity else "calls/s"
        print(f"\n{ratio_name}: **{ratio:.2f}x** in calls/s, **{per_cpu:.2f}x** in calls per "
              f"server CPU second (target ≥ {target:g}x in {on}: {met}); {added}"
              f"rounds: {len(by[base])}, errors: {errors}, commit {commit}, mode {mode}")
    for name, _ in references:
        to_base = med[name] / med[base] if med[base] else 0.0
        to_ref = med[other] / med[name] if med[name] else 0.0
        failed = sum(d.get("errors", 0) for d in by[name])
        print(f"reference {name}: {to_base:.2f}x of {base}; {other} is {to_ref:.2f}x of {name}"
              f"; errors: {failed}")
    ok = all(d["calls"] > 0 for k in (base, other) for d in by[k]) and errors == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
