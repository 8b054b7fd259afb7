#!/usr/bin/env python3
"""leaf_not_prologue.py BINARY BIAS SCRIPT: the samples of perf script text
(stack + LBR form) whose leaf frame is not where llvm-profgen takes a stack
to be unreliable: the first two instructions of a function, a return and
the instruction before it (its prologue/epilogue heuristic, which drops such
a sample; pgokit keeps it). BIAS (hex): runtime address - link-time
address. Instructions from llvm-objdump-19; mmap lines kept."""
import re, subprocess, sys

binary, bias, script = sys.argv[1], int(sys.argv[2], 16), sys.argv[3]
dis = subprocess.run(["llvm-objdump-19", "-d", "--no-show-raw-insn", binary],
                     capture_output=True, text=True, check=True).stdout
skip, func = set(), []


def close(insns):
    for i, (addr, mnem) in enumerate(insns):
        if i < 2:
            skip.add(addr)
        if mnem.startswith("ret"):
            skip.add(addr)
            if i:
                skip.add(insns[i - 1][0])


for line in dis.splitlines():
    if re.match(r"^[0-9a-f]+ <.*>:$", line):
        close(func)
        func = []
        continue
    m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)", line)
    if m:
        func.append((int(m.group(1), 16), m.group(2)))
close(func)
out, block = [], []
for line in open(script):
    if line.startswith("PERF_RECORD"):
        out.append(line)
    elif line.startswith("\t"):
        block.append(line)
    elif line.startswith(" 0x"):
        if block and int(block[0].split()[0], 16) - bias not in skip:
            out.extend(block + [line, "\n"])
        block = []
sys.stdout.write("".join(out))
