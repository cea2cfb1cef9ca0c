#!/usr/bin/env python3
"""Static opcode mix per kernel from `cuobjdump -sass` output (stdin), for the functions whose
mangled name matches the regex argument: the multiply-add family with its modifiers (IMAD.WIDE.U32.X,
IMAD.HI.U32.X, ...; on sm_90 a .HI or .WIDE costs the multiply-add pipe twice a plain IMAD), the rest
by base opcode. Used by the device plans to check what ptxas made of a field multiply.

usage: cuobjdump -sass BINARY | scripts/sass_mix.py REGEX [TOP]
"""
import collections
import re
import sys

pat = re.compile(sys.argv[1])
top = int(sys.argv[2]) if len(sys.argv) > 2 else 14
funcs = {}
cur = None
for line in sys.stdin:
    m = re.match(r"\s*Function : (\S+)", line)
    if m:
        cur = funcs.setdefault(m.group(1), collections.Counter()) if pat.search(m.group(1)) else None
        continue
    if cur is None:
        continue
    m = re.match(r"\s+/\*[0-9a-f]{4,6}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
    if m:
        op = m.group(2)
        cur[op if op.startswith("IMAD") else op.split(".")[0]] += 1
for name, c in sorted(funcs.items()):
    imad = sum(v for k, v in c.items() if k.startswith("IMAD"))
    double = sum(v for k, v in c.items() if k.startswith("IMAD") and (".WIDE" in k or ".HI" in k))
    print(f"{name}\n  {sum(c.values())} instructions, IMAD family {imad} (pipe units ~{imad + double})")
    print("  " + ", ".join(f"{k} {v}" for k, v in c.most_common(top)))
