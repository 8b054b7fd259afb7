#!/usr/bin/env python3
"""leaf_in_binary.py LO HI SCRIPT: the samples of perf script text (stack +
LBR form) whose leaf frame lies in [LO, HI) (hex), mmap lines kept.
llvm-profgen drops a sample whose leaf is outside the binary; tests that
compare with it byte for byte give it only the others."""
import sys

lo, hi = int(sys.argv[1], 16), int(sys.argv[2], 16)
out, block = [], []
for line in open(sys.argv[3]):
    if line.startswith("PERF_RECORD"):
        out.append(line)
    elif line.startswith("\t"):
        block.append(line)
    elif line.startswith(" 0x"):
        if block and lo <= int(block[0].split()[0], 16) < hi:
            out.extend(block + [line, "\n"])
        block = []
sys.stdout.write("".join(out))
