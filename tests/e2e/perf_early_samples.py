#!/usr/bin/env python3
# perf_early_samples.py FILE: how many samples of FILE come, in file order,
# before the MMAP2 of the executable mapping their ip lies in (same pid), as
# `perf report -D` lists the records (file offsets). Prints the count.
import re
import subprocess
import sys

out = subprocess.run(["perf", "report", "-D", "-i", sys.argv[1]], capture_output=True, text=True).stdout
maps, samples = [], []
for line in out.splitlines():
    m = re.match(r"^(?:\d+ )?(0x[0-9a-f]+) \[0x[0-9a-f]+\]: PERF_RECORD_(MMAP2|SAMPLE)", line)
    if not m:
        continue
    off = int(m.group(1), 16)
    if m.group(2) == "MMAP2":
        mm = re.search(r"MMAP2 (\d+)/\d+: \[(0x[0-9a-f]+)\((0x[0-9a-f]+)\).*r-xp (\S+)$", line)
        if mm:
            maps.append((off, int(mm.group(1)), int(mm.group(2), 16), int(mm.group(3), 16)))
    else:
        sm = re.search(r": (\d+)/\d+: (0x[0-9a-f]+) ", line)
        if sm:
            samples.append((off, int(sm.group(1)), int(sm.group(2), 16)))
early = 0
for off, pid, ip in samples:
    for moff, mpid, start, length in maps:
        if mpid == pid and start <= ip < start + length:
            early += off < moff
            break
print(early)
