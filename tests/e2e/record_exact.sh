#!/usr/bin/env bash
# `pgokit record --exact-counts`: the emulator's exact taken-branch counts of
# a deterministic program equal valgrind callgrind's jump counts (jump= and
# jcnd= lines, --collect-jumps=yes --dump-instr=yes) for the main binary, and
# its fall-through ranges are consistent with those branches.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 valgrind clang-19 llvm-objdump-19 python3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

clang-19 -O1 -gdwarf-4 -fno-pie -no-pie -fno-optimize-sibling-calls \
    -o "$T/ex" "$PK_ROOT/tests/programs/record_exact.c" || { fail "build"; finish; exit; }
native=$("$T/ex" 20000)
out=$("$PGOKIT" record --emulate -q --period 101 --exact-counts "$T/ex.exact" -o "$T/ex.data" -- "$T/ex" 20000)
check_eq "program output unchanged under the recorder" "$native" "$out"
check "exact-counts file written" test -s "$T/ex.exact"
"$PGOKIT" record --print-exact "$T/ex.exact" > "$T/ex.txt"
check "print-exact lists the main binary" grep -q "^binary $T/ex build-id [0-9a-f]\{40\}" "$T/ex.txt"

valgrind --tool=callgrind --collect-jumps=yes --dump-instr=yes --compress-pos=no \
    --compress-strings=no --callgrind-out-file="$T/cg.out" "$T/ex" 20000 >/dev/null 2>&1
llvm-objdump-19 -d --no-show-raw-insn "$T/ex" > "$T/ex.dis"

python3 - "$T" <<'PY' > "$T/cmp.txt"
import re, sys
T = sys.argv[1]
# instructions of the functions we compare: address -> mnemonic
funcs = {"main", "classify", "depth"}
ins, cur = {}, None
for line in open(f"{T}/ex.dis"):
    m = re.match(r"^([0-9a-f]+) <(\S+)>:", line)
    if m:
        cur = m.group(2)
        continue
    m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)", line)
    if m and cur in funcs:
        ins[int(m.group(1), 16)] = m.group(2)
# callgrind: a jump/jcnd line is followed by the source instruction's line
cg, fn, pending = {}, None, None
for line in open(f"{T}/cg.out"):
    line = line.rstrip("\n")
    if line.startswith("fn="):
        fn = line[3:].split("'")[0]
        continue
    m = re.match(r"^(jump|jcnd)=(\d+)(?:/\d+)? (0x[0-9a-f]+)", line)
    if m:
        pending = (int(m.group(2)), int(m.group(3), 16))
        continue
    if pending and re.match(r"^0x[0-9a-f]+", line):
        n, dst = pending
        src = int(line.split()[0], 16)
        if fn in funcs and n:
            cg[(src, dst)] = cg.get((src, dst), 0) + n
        pending = None
        continue
    pending = None
# ours
ours, in_bin = {}, False
for line in open(f"{T}/ex.txt"):
    if line.startswith("binary "):
        in_bin = line.split()[1] == f"{T}/ex"
        continue
    m = re.match(r"^\s+([0-9a-f]+)->([0-9a-f]+):(\d+)$", line)
    if in_bin and m:
        s, d = int(m.group(1), 16), int(m.group(2), 16)
        # callgrind records jumps, not calls and returns
        if s in ins and not ins[s].startswith(("call", "ret")):
            ours[(s, d)] = int(m.group(3))
print("callgrind", len(cg), "ours", len(ours), "total", sum(cg.values()), sum(ours.values()))
for k in sorted(set(cg) | set(ours)):
    if cg.get(k) != ours.get(k):
        print("DIFF %x->%x callgrind=%s ours=%s" % (k[0], k[1], cg.get(k), ours.get(k)))
PY
cat "$T/cmp.txt" | head -20
check "callgrind found jumps in main/classify/depth" grep -qE '^callgrind [1-9][0-9]* ours [1-9]' "$T/cmp.txt"
check_eq "exact branch counts equal callgrind's" 0 "$(grep -c '^DIFF' "$T/cmp.txt")"

# Ranges and branches agree: every range of the main binary ends at a branch
# source, and the count of arrivals at an address equals the ranges starting there.
python3 - "$T" <<'PY' > "$T/flow.txt"
import re, sys
T = sys.argv[1]
rng, br, in_bin = {}, {}, False
for line in open(f"{T}/ex.txt"):
    if line.startswith("binary "):
        in_bin = line.split()[1] == f"{T}/ex"; continue
    if not in_bin: continue
    m = re.match(r"^\s+([0-9a-f]+)-([0-9a-f]+):(\d+)$", line)
    if m: rng[(int(m.group(1), 16), int(m.group(2), 16))] = int(m.group(3)); continue
    m = re.match(r"^\s+(\w+)->(\w+):(\d+)$", line)
    if m: br[(m.group(1), m.group(2))] = int(m.group(3))
ends, begins = {}, {}
for (b, e), n in rng.items():
    ends[e] = ends.get(e, 0) + n; begins[b] = begins.get(b, 0) + n
out_of = {}; into = {}
for (s, d), n in br.items():
    if s != "external": out_of[int(s, 16)] = out_of.get(int(s, 16), 0) + n
    if d != "external": into[int(d, 16)] = into.get(int(d, 16), 0) + n
bad = 0
for e, n in ends.items():
    if out_of.get(e, 0) < n - 1: bad += 1; print("range end %x: %d ranges, %d branches" % (e, n, out_of.get(e, 0)))
for b, n in begins.items():
    if abs(into.get(b, 0) - n) > 1: bad += 1; print("range begin %x: %d ranges, %d arrivals" % (b, n, into.get(b, 0)))
print("bad", bad)
PY
tail -3 "$T/flow.txt"
check_eq "ranges and branches are consistent" "bad 0" "$(tail -n 1 "$T/flow.txt")"

# Corrupt exact-counts files are errors with offsets, under the sanitizers.
head -c 100 "$T/ex.exact" > "$T/trunc.exact"
check "truncated exact-counts file is an error" bash -c "! '$PGOKIT_SAN' record --print-exact '$T/trunc.exact' 2>'$T/err.txt'"
check "the error names file and offset" grep -q "trunc.exact: offset" "$T/err.txt"
finish
