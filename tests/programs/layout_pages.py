#!/usr/bin/env python3
"""Offline start-up cost of a linked layout: for the functions of the traces
(plain text, one trace per line, or `llvm-profdata show
--temporal-profile-traces` output), map each to its [address, address+size)
from `nm -S` of BINARY and print "<distinct pages> <fault-curve area>" for
PAGE-byte pages (default 4096): pages touched by the union of the traces, and
Σ over traces and steps of the pages touched so far (lld's metric).
usage: layout_pages.py BINARY TRACES [PAGE]"""
import subprocess, sys

binary, tracef = sys.argv[1], sys.argv[2]
page = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
syms = {}
out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    p = line.split()
    if len(p) == 4 and p[2] in "tTW":
        syms.setdefault(p[3], (int(p[0], 16), int(p[1], 16)))

lines = open(tracef).read().splitlines(True)
for i, line in enumerate(lines):
    if line.startswith("Temporal Profile Traces"):
        lines = lines[i:]
        break
traces, cur, llvm = [], None, False
for line in lines:
    if line.startswith("Temporal Profile Traces"):
        llvm = True
        continue
    if llvm:
        if line.strip().startswith("Temporal Profile Trace "):
            cur = []
            traces.append(cur)
        elif line.startswith("    ") and cur is not None:
            cur.append(line.strip().split(";")[-1])
    elif line.strip() and not line.startswith("#"):
        traces.append([t for t in line.split() if not t.startswith("@")])

union, area, missing = set(), 0, set()
for tr in traces:
    seen = set()
    for name in tr:
        if name not in syms:
            missing.add(name)
            continue
        a, z = syms[name]
        for pg in range(a // page, (a + max(z, 1) - 1) // page + 1):
            seen.add(pg)
            union.add(pg)
        area += len(seen)
if missing:
    print(f"layout_pages: {len(missing)} trace functions not in {binary}: {sorted(missing)[:5]}", file=sys.stderr)
print(len(union), area)
