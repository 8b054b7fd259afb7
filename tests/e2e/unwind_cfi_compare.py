#!/usr/bin/env python3
"""unwind_cfi_compare.py PERF_SCRIPT OURS BINARY: the call chains of the
samples whose leaf is in BINARY, as perf's own DWARF unwinder printed them
(`perf script -F pid,ip,dso --no-inline`: frames of BINARY as offsets in the
file, callers as return address - 1) and as `pgokit dump --unwind BINARY`
listed them (link-time addresses, callers as return addresses, '-' for other
code); each chain cut at its first frame outside BINARY. Prints
"samples N same S perf_only P ours_only O depth D" (D: frames compared);
exit 0."""
import collections, re, subprocess, sys

script, ours, binary = sys.argv[1:4]
# file offset -> link-time address, through the PT_LOAD segments
segs = []
for line in subprocess.run(['llvm-readelf-19', '-lW', binary], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == 'LOAD':
        segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
def to_vaddr(off):
    for o, v, n in segs:
        if o <= off < o + n:
            return off - o + v
    return None

perf = collections.Counter()
chain, in_bin = [], True
def flush():
    global chain, in_bin
    if chain:
        perf[tuple(chain)] += 1
    chain, in_bin = [], True
leaf, at_leaf = False, False
for line in open(script, errors='replace'):
    s = line.strip()
    if not s:
        flush(); continue
    m = re.match(r'^([0-9a-f]+) \((.*)\)$', s)
    if not m:
        flush(); at_leaf = True; continue    # the pid line: a new sample
    first = at_leaf
    if at_leaf:
        leaf, at_leaf = m.group(2) == binary, False
    if not leaf or not in_bin:
        continue
    if m.group(2) != binary:
        in_bin = False; continue
    a = to_vaddr(int(m.group(1), 16))
    chain.append(a if first else a + 1)
flush()

mine = collections.Counter()
for line in open(ours):
    f = line.split()
    if len(f) < 3 or f[2] == '-':
        continue
    c = []
    for x in f[2:]:
        if x == '-':
            break
        c.append(int(x, 16))
    mine[tuple(c)] += 1

n = sum(perf.values())
same = sum((perf & mine).values())
print(f"samples {n} same {same} perf_only {sum((perf - mine).values())} ours_only {sum((mine - perf).values())} "
      f"depth {sum(len(k) * v for k, v in (perf & mine).items())}")
