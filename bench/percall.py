"""Per-call cost of each function, from two callgrind profiles of the same server: one
that only started and answered the readiness check, one that then served N more calls.

    python3 percall.py BASE.out RUN.out N [TOP]

Prints the TOP (default 25) functions by instructions per call (self cost, not inclusive).
Used by profile.sh; needs callgrind_annotate.
"""

import re
import subprocess
import sys

LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.+?)\s*$")


def costs(path):
    """{function: self instructions} of one profile."""
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", "--tree=none", path],
        check=True, capture_output=True, text=True,
    ).stdout
    out = {}
    for line in text.splitlines():
        match = LINE.match(line)
        # Function lines only: not the totals, nor call-graph or source lines.
        if match and ":" in match.group(2) and not match.group(2).startswith(("=>", "<", "*")) \
                and "PROGRAM TOTALS" not in match.group(2):
            # Drop the object file in brackets: the same function, wherever it was inlined from.
            name = re.sub(r" \[[^\]]*\]$", "", match.group(2))
            # Shorter paths: crates by name and version, the standard library as std/.
            name = re.sub(r"^/.*?/registry/src/[^/]+/", "", name)
            name = re.sub(r"^/rustc/[0-9a-f]+/library/", "std/", name)
            out[name] = out.get(name, 0) + int(match.group(1).replace(",", ""))
    return out


def main():
    base, run, n = costs(sys.argv[1]), costs(sys.argv[2]), int(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 25
    delta = {name: (run.get(name, 0) - base.get(name, 0)) / n for name in run}
    total = sum(delta.values())
    print(f"{total:,.0f} instructions per call, by function (self cost)\n")
    for name, cost in sorted(delta.items(), key=lambda item: -item[1])[:top]:
        print(f"{cost:10,.0f}  {100 * cost / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
