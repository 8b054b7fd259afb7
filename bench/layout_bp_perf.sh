#!/usr/bin/env bash
# bench/layout_bp_perf.sh — Balanced Partitioning speed and quality against
# `llvm-profdata-19 order` on the same synthetic temporal traces (an LLVM
# text profile with F functions and T traces; each trace = a shared core in
# a random order + its own random tail, scattered over the index space).
# Quality: distinct pages and fault-curve area with every function 512 bytes
# (8 per 4 KiB page), on the training traces.
# usage: bench/layout_bp_perf.sh [F T L]   (default 20000 100 4000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGOKIT=${PGOKIT:-$ROOT/build/pgokit}
F=${1:-20000}; T=${2:-100}; L=${3:-4000}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W"
python3 - "$F" "$T" "$L" <<'EOF'
import random, sys
F, T, L = map(int, sys.argv[1:4])
rng = random.Random(1)
core = rng.sample(range(F), L // 2)
traces = []
for t in range(T):
    c = core[:]
    # the core keeps its rough order (start-up is mostly deterministic), with local noise
    for i in range(0, len(c) - 8, 8):
        seg = c[i:i + 8]; rng.shuffle(seg); c[i:i + 8] = seg
    tail = rng.sample(range(F), L // 2)
    seen, tr = set(), []
    for f in c[: len(c) * 3 // 4] + tail[: L // 4] + c[len(c) * 3 // 4:] + tail[L // 4:]:
        if f not in seen:
            seen.add(f); tr.append(f)
    traces.append(tr)
with open("p.proftext", "w") as o:
    o.write(":ir\n:temporal_prof_traces\n# Num Temporal Profile Traces:\n%d\n" % T)
    o.write("# Temporal Profile Trace Stream Size:\n%d\n" % T)
    for tr in traces:
        o.write("# Weight:\n1\n" + ", ".join("f%d" % f for f in tr) + "\n")
    for f in range(F):
        o.write("f%d\n1\n1\n1\n\n" % f)
with open("plain.txt", "w") as o:
    for tr in traces:
        o.write(" ".join("f%d" % f for f in tr) + "\n")
EOF
llvm-profdata-19 merge p.proftext -o p.profdata
# wall and CPU (user+sys) seconds; the machine is shared, CPU time is the steadier figure
tm() { local TIMEFORMAT='wall %3R s, cpu %3U+%3S s'; { time "$@" > /dev/null 2>&1; } 2>&1; }
echo "F=$F functions, T=$T traces of <= $L"
echo "llvm-profdata-19 order:     $(tm llvm-profdata-19 order p.profdata -o llvm.order)"
echo "pgokit order (1 thread):    $(tm "$PGOKIT" order -q --threads 1 --temporal plain.txt -o ours1.order)"
echo "pgokit order (2 threads):   $(tm "$PGOKIT" order -q --threads 2 --temporal plain.txt -o ours.order)"
cmp -s ours1.order ours.order && echo "1 and 2 threads: identical orders"
python3 - <<'EOF'
def load(p):
    return [l.strip() for l in open(p) if l.strip() and not l.startswith("#")]
traces = [l.split() for l in open("plain.txt")]
for name in ("llvm.order", "ours.order"):
    pos = {f: i for i, f in enumerate(load(name))}
    union, area = set(), 0
    for tr in traces:
        seen = set()
        for f in tr:
            pg = pos.get(f, 10**9) // 8
            seen.add(pg); union.add(pg)
            area += len(seen)
    print(f"{name:12s} pages {len(union)}  area {area}")
EOF
