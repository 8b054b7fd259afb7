#!/usr/bin/env python3
"""profgen_synth.py — synthesize LBR samples in `perf script` form from a
binary's real control flow, for testing and benchmarking profile generators
where no PMU (and no emulated recording) is at hand.

A random walk over the disassembly (llvm-objdump-19): conditional branches are
taken with a fixed per-branch bias, calls push a return address and returns pop
it, calls into the PLT leave the binary and come back, indirect calls pick an
address-taken function, indirect jumps pick a block of the same function.
Every P-th taken branch (jittered) emits a sample with the last N taken
branches, newest first, in the text form `perf script -F ip,brstack` prints,
with a PERF_RECORD_MMAP2 line placing the binary at --load-base (so PIE
relocation is exercised when the base is not the link address).

usage: profgen_synth.py BINARY OUT --samples N [--depth 32] [--period 53]
                        [--seed 1] [--load-base HEX] [--pid 4242]
"""
import argparse
import random
import re
import subprocess
import sys

EXT_CALLEE = 0x7f0000001000
EXT_RET = 0x7f0000002000


def disassemble(binary):
    out = subprocess.run(["llvm-objdump-19", "-d", "--no-show-raw-insn", binary],
                         check=True, capture_output=True, text=True).stdout
    insns = {}  # addr -> (mnemonic, operands, section)
    order = []
    funcs = {}  # name -> addr
    sec = None
    cur = None
    for line in out.splitlines():
        m = re.match(r"^Disassembly of section (\S+):", line)
        if m:
            sec = m.group(1)
            continue
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:", line)
        if m:
            cur = m.group(2)
            funcs[cur] = int(m.group(1), 16)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if not m or sec is None:
            continue
        addr = int(m.group(1), 16)
        text = m.group(2).strip()
        parts = text.split(None, 1)
        while parts and parts[0] in ("notrack", "bnd", "rep", "repz", "repne", "lock", "data16", "cs", "ds"):
            parts = parts[1].split(None, 1) if len(parts) > 1 else []
        mn = parts[0] if parts else "?"
        ops = parts[1] if len(parts) > 1 else ""
        insns[addr] = (mn, ops, sec, cur)
        order.append(addr)
    order.sort()
    nxt = {order[i]: order[i + 1] for i in range(len(order) - 1)}
    return insns, nxt, funcs


def target_of(ops):
    m = re.match(r"^(?:0x)?([0-9a-f]+)(?:\s|$)", ops)
    return int(m.group(1), 16) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("out")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--depth", type=int, default=32)
    ap.add_argument("--period", type=int, default=53)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--load-base", type=lambda s: int(s, 16), default=None)
    ap.add_argument("--pid", type=int, default=4242)
    ap.add_argument("--entry", default="main")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    insns, nxt, funcs = disassemble(a.binary)
    text = {ad for ad, v in insns.items() if v[2] == ".text"}
    if a.entry not in funcs:
        sys.exit("no function %s" % a.entry)
    entry = funcs[a.entry]
    text_funcs = [ad for n, ad in funcs.items() if ad in text]
    # blocks per function: direct branch targets and fall-throughs of branches
    blocks = {}
    for ad in sorted(text):
        mn, ops, _, fn = insns[ad]
        if mn.startswith("j"):
            t = target_of(ops)
            if t in text and insns[t][3] == fn:
                blocks.setdefault(fn, []).append(t)
    bias = {}

    # The executable PT_LOAD is "mapped" page-aligned at load_base + (vaddr - preferred
    # base), as the kernel maps it; runtime address = vaddr + rel.
    segs = []
    ph = subprocess.run(["llvm-readelf-19", "-lW", a.binary], check=True, capture_output=True,
                        text=True).stdout
    for line in ph.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            off, va, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            segs.append((off, va, memsz, "E" in line[line.index(f[6]):]))
    pref = min(va - off for off, va, _, _ in segs) & ~0xfff
    base = a.load_base if a.load_base is not None else pref
    rel = base - pref

    def rt(x):
        return x + rel if x < 0x7f0000000000 else x

    lbr = []
    stack = []
    ip = entry
    until = a.period
    taken = 0
    out = open(a.out, "w")
    for off, va, memsz, x in segs:
        if not x:
            continue
        pva, poff = va & ~0xfff, off & ~0xfff
        length = (va + memsz - pva + 0xfff) & ~0xfff
        out.write(" synth %d [000]     0.000000: PERF_RECORD_MMAP2 %d/%d: [0x%x(0x%x) @ 0x%x 00:00 0 0]: r-xp %s\n"
                  % (a.pid, a.pid, a.pid, rt(pva), length, poff, a.binary))
    emitted = 0
    steps = 0

    def branch(frm, to):
        nonlocal taken, until, emitted
        lbr.append((frm, to))
        if len(lbr) > a.depth:
            del lbr[0]
        taken += 1
        if taken >= until and len(lbr) == a.depth:
            ents = " ".join("0x%x/0x%x/P/-/-/0" % (rt(f), rt(t)) for f, t in reversed(lbr))
            out.write("%x %s\n" % (rt(to), ents))
            emitted += 1
            until = taken + rnd.randint(a.period // 2, a.period * 3 // 2)

    def restart(frm):
        nonlocal ip
        stack.clear()
        branch(frm, EXT_CALLEE)
        branch(EXT_RET, entry)
        ip = entry

    while emitted < a.samples:
        steps += 1
        if ip not in insns or ip not in text:
            restart(EXT_RET - 0x10)
            continue
        mn, ops, _, fn = insns[ip]
        n = nxt.get(ip)
        if mn.startswith("j"):
            t = target_of(ops)
            if mn == "jmp" or mn == "jmpq":
                if t is None:  # indirect: some block of this function
                    cands = blocks.get(fn) or [funcs.get(fn, entry)]
                    t = rnd.choice(cands)
                if t not in text:
                    restart(ip)
                    continue
                branch(ip, t)
                ip = t
            else:
                p = bias.get(ip)
                if p is None:
                    p = bias[ip] = rnd.choice([0.05, 0.2, 0.5, 0.8, 0.95])
                if t is not None and rnd.random() < p:
                    branch(ip, t)
                    ip = t
                else:
                    ip = n
        elif mn.startswith("call"):
            t = target_of(ops)
            if t is None:
                t = rnd.choice(text_funcs)
            if t in text and len(stack) < 200:
                branch(ip, t)
                stack.append(n)
                ip = t
            else:  # PLT / other DSO: out and back, unless it never returns
                nm = insns[n][0] if n in insns else "?"
                if ("exit" in ops or "abort" in ops or nm in ("nop", "nopw", "nopl", "int3", "ud2")
                        or n not in insns or insns[n][3] != fn):
                    restart(ip)
                    continue
                branch(ip, EXT_CALLEE)
                branch(EXT_RET, n)
                ip = n
        elif mn.startswith("ret"):
            if stack:
                r = stack.pop()
                branch(ip, r)
                ip = r
            else:
                restart(ip)
        elif mn in ("ud2", "hlt", "int3", "?") or mn.startswith("(bad"):
            restart(EXT_RET - 0x10)
        else:
            ip = n
    out.close()


if __name__ == "__main__":
    main()
