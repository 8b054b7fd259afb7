#!/usr/bin/env python3
"""entry_pages.py BINARY TRACE_TXT -- what a start-up pass that patches every
function entry (the -fpatchable-function-entry alternative to self-patching
-pg hooks) would write, next to what the start-up itself executes.

BINARY: unstripped ELF (function symbols from `nm`); TRACE_TXT: output of
`rt-temporal-tool show --binary BINARY RAW` (lines `rec N count mod 0xADDR ...`,
link-time addresses of the hooks run during the start-up).
Prints: functions, 4 KiB pages holding a function entry, .text pages, traced
functions and the distinct 4 KiB pages holding their entries."""
import subprocess
import sys

binary, trace = sys.argv[1], sys.argv[2]
entries = set()
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3 and f[1] in "tTwW" and not f[2].startswith("."):
        entries.add(int(f[0], 16))
text_lo = text_hi = 0
for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".text":
        text_lo = int(f[3], 16)
        text_hi = text_lo + int(f[5], 16)
entries = {a for a in entries if text_lo <= a < text_hi}
traced = set()
with open(trace) as fh:
    for line in fh:
        f = line.split()
        if len(f) >= 5 and f[0] == "rec" and f[3] == "0":
            traced.add(int(f[4], 16))
pages = {a >> 12 for a in entries}
tpages = {a >> 12 for a in traced}
print(f"{len(entries)} {len(pages)} {((text_hi - 1) >> 12) - (text_lo >> 12) + 1} {len(traced)} {len(tpages)}")
