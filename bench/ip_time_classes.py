#!/usr/bin/env python3
"""Can a static model of what instructions cost undo cpu-clock's time weighting?

A cpu-clock sample lands on an instruction in proportion to the time spent
there; profgen estimates a block's count as the mean of its instructions'
hits, which is right only if every instruction costs the same. This study
measures, on real recordings with the exact counts of the same runs, how
many hits each kind of x86-64 instruction draws per execution (its own kind,
and the kind of the instruction before it, which catches a skid of one), fits
those ratios on one program and scores the block estimates they give on the
others: does a model learnt on one program make the block counts of another
closer to the exact ones than the plain mean does?

  bench/ip_time_classes.py collect NAME BINARY --exact F.exact... --perf F.data... -o NAME.json
      per instruction of BINARY (objdump -d): its kind, its exact execution count
      (the exact-count files of the recorded runs, pgokit record --exact-counts,
      read through `pgokit record --print-exact`) and its cpu-clock hits (the
      perf.data files, read by `perf script`)
  bench/ip_time_classes.py evaluate NAME.json...
      a Markdown table: hits per execution by kind in each program, and each
      program's block overlap (blocks of the same function, weighted by
      instructions, per-function normalised) of the mean and of the models fit
      on every program

Environment: PGOKIT (default build/pgokit), OBJDUMP (default objdump).
The scoreboard leaves what collect needs in its work directory:
rec/ipx-afdo-*.exact and rec/ip-afdo-*.data for the afdo build.
"""
import bisect
import collections
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PGOKIT = os.environ.get("PGOKIT", os.path.join(ROOT, "build", "pgokit"))
OBJDUMP = os.environ.get("OBJDUMP", "objdump")
ENDS_BLOCK = {"jcc", "jmp", "jmp*", "ret"}


def kind(mnem, ops):
    """A coarse class of an instruction (Intel syntax operands)."""
    mem = "[" in ops
    if mnem.startswith("j"):
        if mnem != "jmp":
            return "jcc"
        return "jmp" if re.match(r"^[0-9a-f]+ <", ops) else "jmp*"
    if mnem.startswith("call"):
        return "call"
    if mnem.startswith("ret"):
        return "ret"
    if mnem in ("div", "idiv"):
        return "div"
    if mnem in ("imul", "mul"):
        return "mul"
    if mnem.startswith(("push", "pop")):
        return "push/pop"
    if mnem == "lea":
        return "lea"
    if mnem.startswith("cmov"):
        return "cmov"
    if mnem.startswith("nop") or mnem in ("endbr64", "xchg"):
        return "nop"
    if mem:
        dst_mem = "[" in ops.split(",")[0]
        if mnem in ("cmp", "test"):
            return "cmp mem"
        if mnem.startswith("mov"):
            return "store" if dst_mem else "load"
        return "rmw" if dst_mem else "alu mem"
    if mnem.startswith("mov"):
        return "mov"
    if mnem.startswith("v") or "xmm" in ops:
        return "simd"
    return "alu"


def run(argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def collect(name, binary, exacts, datas, out):
    insns = []  # (address, kind, function, direct target or -1)
    func = None
    for line in run([OBJDUMP, "-d", "--no-show-raw-insn", "-M", "intel", binary]).splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            func = m.group(2)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and func:
            k = kind(m.group(2), m.group(3))
            t = re.match(r"^([0-9a-f]+) <", m.group(3))
            target = int(t.group(1), 16) if t and k in ("jcc", "jmp") else -1
            insns.append((int(m.group(1), 16), k, func, target))
    insns.sort()
    addrs = [i[0] for i in insns]
    base = os.path.basename(binary)
    # exact counts: a difference array over the ranges' instructions
    diff = [0] * (len(insns) + 1)
    for ex in exacts:
        mine = False
        for line in run([PGOKIT, "record", "--print-exact", ex]).splitlines():
            if line.startswith("binary "):
                mine = os.path.basename(line.split()[1]) == base
                continue
            m = re.match(r"^\s+([0-9a-f]+)-([0-9a-f]+):(\d+)$", line)
            if mine and m:
                i = bisect.bisect_left(addrs, int(m.group(1), 16))
                j = bisect.bisect_right(addrs, int(m.group(2), 16))
                if i < j:
                    diff[i] += int(m.group(3))
                    diff[j] -= int(m.group(3))
    executed, s = [], 0
    for k in range(len(insns)):
        s += diff[k]
        executed.append(s)
    hits = [0] * len(insns)
    for d in datas:
        maps = []
        text = run(["perf", "script", "-i", d, "-G", "--show-mmap-events", "-F", "ip,dso"])
        for line in text.splitlines():
            m = re.search(r"MMAP2? .*\[0x([0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: r-xp (\S+)", line)
            if m:
                if os.path.basename(m.group(4)) == base:
                    maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
                continue
            m = re.match(r"^\s*([0-9a-f]+) \((.*)\)$", line)
            if not m or os.path.basename(m.group(2)) != base:
                continue
            ip = int(m.group(1), 16)
            for start, length, pgoff in maps:
                if start <= ip < start + length:
                    # the file offset; this equals the link-time address
                    # for the binaries here (segments at vaddr == offset)
                    k = bisect.bisect_left(addrs, ip - start + pgoff)
                    if k < len(addrs) and addrs[k] == ip - start + pgoff:
                        hits[k] += 1
                    break
    json.dump({"name": name, "addr": addrs, "kind": [i[1] for i in insns], "func": [i[2] for i in insns],
               "target": [i[3] for i in insns], "executed": executed, "hits": hits}, open(out, "w"))
    print(f"{name}: {len(insns)} instructions, {sum(hits)} hits on them, "
          f"{sum(executed) / 1e6:.1f} M executions", file=sys.stderr)


def blocks(p):
    n = len(p["addr"])
    index = {a: i for i, a in enumerate(p["addr"])}
    lead = [False] * n
    for i in range(n):
        if i == 0 or p["func"][i] != p["func"][i - 1]:
            lead[i] = True
        if p["kind"][i] in ENDS_BLOCK and i + 1 < n:
            lead[i + 1] = True
        if p["target"][i] in index:
            lead[index[p["target"][i]]] = True
    out, cur = [], []
    for i in range(n):
        if lead[i] and cur:
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def ratios(ps, model):
    """Hits per execution of each kind (model "own": the instruction's kind;
    "after": the kind of the instruction before it), relative to the
    program's average."""
    num, den = collections.Counter(), collections.Counter()
    for p in ps:
        e, h = p["executed"], p["hits"]
        th, te = sum(x for x, y in zip(h, e) if y), sum(e)
        for i in range(1, len(e)):
            if e[i]:
                k = p["kind"][i] if model == "own" else p["kind"][i - 1]
                num[k] += h[i] / th
                den[k] += e[i] / te
    return {k: (num[k] / den[k] if num[k] > 0 else 0.05) for k in den}


def overlap(p, weight):
    """Block overlap of hits / (summed instruction weights) against the exact
    counts, per function, weighted by the function's executed instructions."""
    e, h = p["executed"], p["hits"]
    per_func = collections.defaultdict(list)
    for b in blocks(p):
        exact = sum(e[i] for i in b) / len(b)
        w = sum(weight(p, i) for i in b)
        per_func[p["func"][b[0]]].append((len(b), exact, sum(h[i] for i in b) / w if w > 0 else 0))
    acc = tot = 0
    for rows in per_func.values():
        te = sum(n * x for n, x, _ in rows)
        ts = sum(n * y for n, _, y in rows)
        if te and ts:
            acc += te * sum(n * min(x / te, y / ts) for n, x, y in rows)
            tot += te
    return acc / tot if tot else 0


def evaluate(files):
    ps = [json.load(open(f)) for f in files]
    own = {p["name"]: ratios([p], "own") for p in ps}
    after = {p["name"]: ratios([p], "after") for p in ps}
    kinds = collections.Counter()
    for p in ps:
        for k, x in zip(p["kind"], p["executed"]):
            kinds[k] += x
    print("Hits per execution by kind, relative to the program's mean (own kind / kind of the previous instruction):\n")
    print("| kind | " + " | ".join(p["name"] for p in ps) + " |")
    print("|---|" + "---:|" * len(ps))
    for k, _ in kinds.most_common():
        cells = [f"{own[p['name']].get(k, 0):.2f} / {after[p['name']].get(k, 0):.2f}" for p in ps]
        print(f"| {k} | " + " | ".join(cells) + " |")
    print("\nBlock overlap against the exact counts before flow inference (rows: the estimator; a model's"
          " ratios fit on the program named):\n")
    print("| estimator | " + " | ".join(p["name"] for p in ps) + " |")
    print("|---|" + "---:|" * len(ps))
    rows = [("mean of the hits (profgen's)", lambda q, i: 1.0)]
    for t in ps:
        o, a = own[t["name"]], after[t["name"]]
        rows.append((f"own kind, fit on {t['name']}", lambda q, i, o=o: o.get(q["kind"][i], 1.0)))
        rows.append((f"previous kind, fit on {t['name']}",
                     lambda q, i, a=a: a.get(q["kind"][i - 1], 1.0) if i else 1.0))
        rows.append((f"own x previous, fit on {t['name']}",
                     lambda q, i, o=o, a=a: o.get(q["kind"][i], 1.0) * (a.get(q["kind"][i - 1], 1.0) if i else 1.0)))
    for label, fn in rows:
        print(f"| {label} | " + " | ".join(f"{overlap(p, fn):.4f}" for p in ps) + " |")


def main(argv):
    if len(argv) >= 2 and argv[1] == "collect":
        args = argv[2:]
        if len(args) < 2:
            sys.exit(__doc__)
        name, binary, exacts, datas, out, lst = args[0], args[1], [], [], None, None
        i = 2
        while i < len(args):
            if args[i] == "--exact":
                lst = exacts
            elif args[i] == "--perf":
                lst = datas
            elif args[i] == "-o" and i + 1 < len(args):
                out = args[i + 1]
                i += 1
            elif lst is not None:
                lst.append(args[i])
            else:
                sys.exit(f"ip_time_classes: unexpected '{args[i]}'")
            i += 1
        if not exacts or not datas or not out:
            sys.exit("ip_time_classes collect: needs --exact, --perf and -o")
        collect(name, binary, exacts, datas, out)
    elif len(argv) >= 3 and argv[1] == "evaluate":
        evaluate(argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
