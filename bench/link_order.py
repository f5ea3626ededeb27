"""A linker symbol-ordering file from callgrind profiles of one binary.

    python3 link_order.py BINARY OUT PROFILE.out...

The profiles must have been written with `--demangle=no`, so that they name each function
by its symbol. OUT lists every function of BINARY that ran in any of the profiles, one
symbol a line, the most instructions first: what LLD's `--symbol-ordering-file` takes to
place those functions side by side (crates/ferry-everything/build.rs passes it). Used by
link-order.sh.
"""

import os
import re
import sys

# `ob=(3) /path`, `fn=(12) name`, `cfn=(12)`: a name is given once, then its number alone.
NAMED = re.compile(r"^(ob|fn|cob|cfn|fl|fi|fe|cfi|cfl)=\((\d+)\)(?: (.*))?$")


def costs(path, binary):
    """{symbol: self instructions} of BINARY's functions in one callgrind profile."""
    names = {"ob": {}, "fn": {}}
    out = {}
    current = None  # the symbol whose costs the lines that follow give, if it is BINARY's
    in_call = False  # the next cost line is a call's inclusive cost, not a self cost
    obj = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = NAMED.match(line)
            if m:
                kind, num, name = m.groups()
                table = "ob" if kind in ("ob", "cob") else "fn" if kind in ("fn", "cfn") else None
                if table and name:
                    names[table][num] = name
                if kind == "ob":
                    obj = names["ob"].get(num)
                elif kind == "fn":
                    symbol = names["fn"].get(num)
                    mine = obj is not None and os.path.basename(obj) == os.path.basename(binary)
                    current = re.sub(r"'\d+$", "", symbol) if mine and symbol else None
                    in_call = False
                continue
            if line.startswith("calls="):
                in_call = True
                continue
            if current and line[:1] in "0123456789+-*":
                if in_call:
                    in_call = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and parts[1].isdigit():
                    out[current] = out.get(current, 0) + int(parts[1])
    return out


def main():
    binary, target, profiles = sys.argv[1], sys.argv[2], sys.argv[3:]
    total = {}
    for path in profiles:
        for symbol, cost in costs(path, binary).items():
            total[symbol] = total.get(symbol, 0) + cost
    # Functions without a symbol show as their address (0x...): nothing to name to the linker.
    ranked = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))
    symbols = [s for s, _ in ranked if not s.startswith("0x") and " " not in s]
    with open(target, "w") as f:
        f.write("".join(f"{s}\n" for s in symbols))
    print(f"{target}: {len(symbols)} functions")


if __name__ == "__main__":
    main()
