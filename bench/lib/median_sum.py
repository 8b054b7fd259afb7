#!/usr/bin/env python3
"""median_sum.py VARIANT < counts-parts.tsv: the sum over the variant's count
commands of the median of each command's counts (lines: variant, count,
command; a command counted several times has several lines)."""
import statistics
import sys

runs = {}
for line in sys.stdin:
    v, ir, cmd = line.rstrip("\n").split("\t", 2)
    if v == sys.argv[1]:
        runs.setdefault(cmd, []).append(int(ir))
print(round(sum(statistics.median(r) for r in runs.values())))
