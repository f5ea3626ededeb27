"""Turns the harness's raw records into the markdown table.

    python3 report.py RAW.jsonl [--smoke]

RAW.jsonl has one record per line, written by run.sh:
    {"server": "ferry", "figure": "http_c32", "round": 1, "data": {...}}
where `data` is what the load tool printed (wrk's WRKJSON line or loadgen's JSON); a
record with figure "check" and data {"failed": "..."} marks a server that failed. A `meta` record carries the
settings. Throughput figures are the median over rounds; memory figures are measured once.

With --smoke, exits 1 unless every server has every figure and none failed or erred.
"""

import json
import statistics
import sys

SERVERS = ["ceiling", "ferry", "ferry-echo", "rmcp", "python"]

# (key, label, unit, higher_is_better, target) — the target is (text, check(ferry, ceiling,
# rmcp)), where check returns None when a figure it needs is missing.
FIGURES = [
    ("http_c32", "HTTP `tools/call` echo, {connections} connections", "req/s", True,
     ("≥ 0.6× ceiling, ≥ 3× rmcp", lambda f, c, r: None if None in (c, r) else f >= 0.6 * c and f >= 3 * r)),
    ("http_c32_p50", "… p50 latency", "ms", False, None),
    ("http_c32_p99", "… p99 latency", "ms", False, None),
    ("http_c1", "HTTP `tools/call` echo, 1 connection", "req/s", True, None),
    ("http_c1_p50", "… p50 latency", "ms", False, None),
    ("http_c1_p99", "… p99 latency", "ms", False, None),
    ("mrtr", "Two-round MRTR `tools/call`, {connections} connections (HTTP requests)", "req/s", True,
     ("≥ 0.45× ceiling's echo req/s", None)),
    ("mrtr_calls", "… complete MRTR calls", "calls/s", True, None),
    ("mrtr_p99", "… p99 latency of a whole call", "ms", False, None),
    ("http_many", "HTTP `tools/call` echo, {many} connections", "req/s", True, None),
    ("http_many_p99", "… p99 latency", "ms", False, None),
    ("mrtr_many", "Two-round MRTR `tools/call`, {many} connections (HTTP requests)", "req/s", True, None),
    ("mrtr_many_p99", "… p99 latency of a whole call", "ms", False, None),
    ("http_large", "HTTP `tools/call` echo of {text_kib} KiB of text, {connections} connections", "req/s",
     True, None),
    ("http_large_p99", "… p99 latency", "ms", False, None),
    ("stdio_pipelined", "stdio echo, pipelined ({window} in flight)", "req/s", True,
     ("≥ 2× rmcp", lambda f, c, r: None if r is None else f >= 2 * r)),
    ("stdio_sequential", "stdio echo, sequential", "req/s", True, None),
    ("idle_rss", "Idle RSS (HTTP server, after one call of each kind)", "MiB", False,
     ("≤ 8 MiB", lambda f, c, r: f <= 8)),
    ("idle_anon", "… of which anonymous (heap, stacks); the rest is mapped code and data", "MiB", False, None),
    ("flood_rss", "Peak RSS, stdio flood ({flood} s written unread, then drained)", "MiB", False,
     ("< 30 MiB", lambda f, c, r: f < 30)),
    ("listen_rss", "RSS with {streams} open `subscriptions/listen` streams", "MiB", False,
     ("< 100 MiB", lambda f, c, r: f < 100)),
]


def load(path):
    meta, records = {}, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            record = json.loads(line)
            if record.get("figure") == "meta":
                meta = {**meta, **record["data"]}
            elif record.get("figure") == "loadavg":
                meta.setdefault("round_loadavg", []).append(record["data"]["loadavg"])
            else:
                records.append(record)
    return meta, records


def values(record):
    """The figures one record yields: {figure key: (value, had_errors)}."""
    figure, data = record["figure"], record["data"]
    out = {}
    if figure in ("http_c32", "http_c1", "http_many", "http_large"):
        if "duration_us" in data:  # wrk
            errors = sum(v for k, v in data.items() if k.startswith("errors_"))
            out[figure] = (data["requests"] / (data["duration_us"] / 1e6), errors)
            out[figure + "_p50"] = (data["p50_us"] / 1000, errors)
            out[figure + "_p99"] = (data["p99_us"] / 1000, errors)
        else:  # loadgen echo
            errors = data["errors"]
            out[figure] = (data["calls_per_s"], errors)
            out[figure + "_p50"] = (data["p50_ms"], errors)
            out[figure + "_p99"] = (data["p99_ms"], errors)
    elif figure in ("mrtr", "mrtr_many"):
        errors = data["errors"]
        out[figure] = (data["http_per_s"], errors)
        out[figure + "_calls"] = (data["calls_per_s"], errors)
        out[figure + "_p99"] = (data["p99_ms"], errors)
    elif figure in ("stdio_pipelined", "stdio_sequential"):
        out[figure] = (data["requests_per_s"], data["errors"])
    elif figure == "idle_rss":
        out[figure] = (data["rss_mib"], 0)
        if data.get("anon_mib") is not None:
            out["idle_anon"] = (data["anon_mib"], 0)
    elif figure == "flood_rss":
        out[figure] = (data["peak_rss_mib"], 0 if data["all_answered"] else 1)
    elif figure == "listen_rss":
        out[figure] = (data["rss_mib"], data["streams"] - data["opened"])
    return out


def collect(records):
    """{(server, figure): {"rounds": [values], "errors": n}} and {server: failure}."""
    table, failed = {}, {}
    for record in records:
        server = record["server"]
        if record["figure"] == "check":
            failed.setdefault(server, record["data"]["failed"])
            continue
        for key, (value, errors) in values(record).items():
            cell = table.setdefault((server, key), {"rounds": [], "errors": 0, "first_error": None})
            if value is not None:
                cell["rounds"].append(value)
            cell["errors"] += errors or 0
            if errors and not cell["first_error"]:
                cell["first_error"] = record["data"].get("first_error")
    return table, failed


def median(table, server, key):
    cell = table.get((server, key))
    if not cell or not cell["rounds"]:
        return None
    return statistics.median(cell["rounds"])


class Settings(dict):
    """The run's settings for figure labels; `?` for one an older run did not record."""

    def __missing__(self, key):
        return "?"


def fmt(value, unit):
    if value is None:
        return "–"
    if unit in ("req/s", "calls/s"):
        return f"{value:,.0f}"
    if unit == "ms":
        return f"{value:.3f}" if value < 1 else f"{value:.2f}" if value < 100 else f"{value:.0f}"
    return f"{value:.1f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}×"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    smoke = "--smoke" in sys.argv
    meta, records = load(args[0])
    table, failed = collect(records)
    servers = [s for s in SERVERS if s in meta.get("servers", SERVERS)]
    problems = [f"{s}: {why}" for s, why in failed.items()]

    # ferry-echo (the benchmark's tools alone) set beside rmcp-echo (the same tools on rmcp).
    echo_col = "ferry-echo" in servers
    head = ["figure", "unit"] + servers + ["ferry ÷ ceiling", "ferry ÷ rmcp"]
    head += ["ferry-echo ÷ rmcp"] * echo_col + ["target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, label, unit, _higher, target in FIGURES:
        label = label.format_map(Settings(meta))
        row = [label, unit]
        for server in servers:
            value = median(table, server, key)
            cell = table.get((server, key))
            # A server that failed keeps the figures it produced before it failed.
            text = "fail" if value is None and server in failed else fmt(value, unit)
            if cell and cell["errors"]:
                text += " ⚠"
                if not key.endswith(("_p50", "_p99", "_calls")):
                    why = f" (first: {cell['first_error']})" if cell["first_error"] else ""
                    problems.append(f"{server} {key}: {cell['errors']} errors{why}")
            if value is None and server not in failed:
                problems.append(f"{server} {key}: no figure")
            row.append(text)
        f, c, r = (median(table, s, key) for s in ("ferry", "ceiling", "rmcp"))
        row += [ratio(f, c), ratio(f, r)] + [ratio(median(table, "ferry-echo", key), r)] * echo_col
        if target is None:
            row += ["", ""]
        else:
            text, check = target
            if key == "mrtr":  # counted against the ceiling's echo figure, in HTTP requests
                c_echo = median(table, "ceiling", "http_c32")
                met = None if f is None or c_echo is None else f >= 0.45 * c_echo
                text += f" ({ratio(f, c_echo)})"
            else:
                met = None if f is None else check(f, c, r)
            ferry_cell = table.get(("ferry", key))
            if ferry_cell and ferry_cell["errors"]:
                met = "errors"
            row += [text, "–" if met is None else met if isinstance(met, str) else ("yes" if met else "no")]
        lines.append("| " + " | ".join(row) + " |")

    print("\n".join(lines))
    print()
    ferry_args = f"ferry-everything {meta['ferry_args']}. " if meta.get("ferry_args") else ""
    print(
        f"Median of {meta.get('rounds')} interleaved round(s) of {meta.get('duration')} s per figure; "
        f"memory figures measured once. Load on CPU {meta.get('load_cpu')}, servers on CPU "
        f"{meta.get('server_cpu')}; HTTP echo load: {meta.get('http_tool')}. {ferry_args}"
        f"{meta.get('date', '')}, {meta.get('git', '')}, {meta.get('rustc', '')}; "
        f"load average {meta.get('loadavg_start', '?')} at start, {meta.get('loadavg_end', '?')} at end."
    )
    if meta.get("rounds", 1) > 1:
        print()
        print("<details><summary>Every round</summary>\n")
        print("| figure | server | rounds |")
        print("|---|---|---|")
        for key, label, unit, _h, _t in FIGURES:
            for server in servers:
                cell = table.get((server, key))
                if cell and len(cell["rounds"]) > 1:
                    print(f"| {key} | {server} | " + ", ".join(fmt(v, unit) for v in cell["rounds"]) + " |")
        if meta.get("round_loadavg"):
            print("\nLoad average at the start of each round: " + "; ".join(meta["round_loadavg"]) + ".")
        print("\n</details>")
    if problems:
        print()
        print("Problems: " + "; ".join(problems))
    if smoke and problems:
        sys.exit(1)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
