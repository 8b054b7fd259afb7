#!/usr/bin/env bash
# `pgokit record` (emulated LBR under QEMU) on a PIE program with a loop, direct
# and indirect calls, recursion and a shared library: perf reads the file
# without warnings; every branch-stack entry is a real taken branch of the
# binary (llvm-objdump-19); call chains agree with the branch stacks; PIE and
# .so addresses resolve to symbols; pgokit dump sees the same entries as perf.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 perf clang-19 llvm-objdump-19 python3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

P=$PK_ROOT/tests/programs
clang-19 -O2 -g -fPIC -shared -o "$T/librecord_lib.so" "$P/record_lib.c" &&
clang-19 -O2 -g -fPIE -pie -fno-omit-frame-pointer -o "$T/prog" "$P/record_prog.c" \
    -L"$T" -lrecord_lib -Wl,-rpath,"$T" || { fail "build test program"; finish; exit; }
native=$("$T/prog" 30000)
out=$("$PGOKIT" record --emulate -q --period 997 -o "$T/p.data" -- "$T/prog" 30000)
check_eq "program output unchanged under the recorder" "$native" "$out"
check "perf.data written" test -s "$T/p.data"

# (a) perf reads it cleanly
perf script -i "$T/p.data" -F ip,brstack > "$T/script.txt" 2> "$T/script.err"
check "perf script prints no warnings" test ! -s "$T/script.err"
nbr=$(grep -oE '0x[0-9a-f]+/0x[0-9a-f]+/' "$T/script.txt" | wc -l)
check "perf script prints branch stacks ($nbr entries)" test "$nbr" -gt 1000
perf report -D -i "$T/p.data" > "$T/report.txt" 2>&1
check "perf report -D has no warnings" bash -c "! grep -qiwE 'warning|error|unprocessable|bad' '$T/report.txt'"
check "perf report -D shows 32-deep branch stacks" grep -q 'branch stack: nr:32' "$T/report.txt"
check "perf report -D shows call chains" grep -q 'FP chain: nr:' "$T/report.txt"
perf script -i "$T/p.data" --show-mmap-events -F ip > "$T/mmaps.txt" 2>/dev/null
check "MMAP2 of the PIE carries its build-id" \
    grep -q "<$(llvm-readelf-19 -n "$T/prog" | awk '/Build ID/{print $3}')>.* $T/prog\$" "$T/mmaps.txt"
check "MMAP2 of the shared library" grep -q " $T/librecord_lib.so\$" "$T/mmaps.txt"

# (a') our reader returns the same branch pairs as perf, in the same order
if "$PGOKIT" dump "$T/p.data" > "$T/dump.txt" 2> "$T/dump.err"; then
    grep -oE '0x[0-9a-f]+/0x[0-9a-f]+' "$T/script.txt" > "$T/pairs.perf"
    grep -oE '0x[0-9a-f]+/0x[0-9a-f]+' "$T/dump.txt" > "$T/pairs.dump"
    check "pgokit dump and perf script list the same branch pairs" cmp -s "$T/pairs.perf" "$T/pairs.dump"
else
    echo "note: pgokit dump unavailable: $(head -c 200 "$T/dump.err")"
fi

# (b) real taken branches, (c) call chains consistent with branch stacks
llvm-objdump-19 -d --no-show-raw-insn "$T/prog" > "$T/prog.dis"
llvm-objdump-19 -d --no-show-raw-insn "$T/librecord_lib.so" > "$T/lib.dis"
perf script -i "$T/p.data" -F ip,dso,brstack > "$T/script_dso.txt" 2>/dev/null
python3 - "$T" > "$T/check.txt" <<'PY'
import re, struct, sys
T = sys.argv[1]
def loads(path):
    d = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", d, 32); phentsize, phnum = struct.unpack_from("<HH", d, 54)
    out = []
    for i in range(phnum):
        t, fl, off, va, pa, fs, ms = struct.unpack_from("<IIQQQQQ", d, phoff + i * phentsize)
        if t == 1: out.append((off, va, fs))
    return out
def disasm(path):
    ins, order = {}, []
    for line in open(path):
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m:
            a = int(m.group(1), 16); ins[a] = (m.group(2), m.group(3)); order.append(a)
    nxt = {order[i]: order[i + 1] for i in range(len(order) - 1)}
    prv = {order[i + 1]: order[i] for i in range(len(order) - 1)}
    return ins, nxt, prv
bins = {f"{T}/prog": disasm(f"{T}/prog.dis"), f"{T}/librecord_lib.so": disasm(f"{T}/lib.dis")}
segs = {p: loads(p) for p in bins}
maps = []
for line in open(f"{T}/mmaps.txt"):
    m = re.search(r"PERF_RECORD_MMAP2 \S+ \[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: \S+ (\S+)$", line)
    if m: maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4)))
def resolve(a):
    for start, ln, pgoff, path in maps:
        if start <= a < start + ln and path in bins:
            off = a - start + pgoff
            for o, va, fs in segs[path]:
                if o <= off < o + fs: return path, off - o + va
    return None, None
BR = ("j", "call", "ret", "bnd", "notrack")
def resolve_rel(rel, path):
    # perf prints call-chain frames map-relative: ip - map start + pgoff (a file offset)
    if path not in bins: return None, None
    for o, va, fs in segs[path]:
        if o <= rel < o + fs: return path, rel - o + va
    return None, None
samples, checked, bad, chains, callchk = 0, 0, 0, 0, 0
block = []
ENT = re.compile(r"(0x[0-9a-f]+)\((.*?)\)/(0x[0-9a-f]+)\((.*?)\)/[^/ ]*/[^/ ]*/[^/ ]*/\d+/(\w*)")
def do_block(lines):
    global samples, checked, bad, chains, callchk
    chain = []
    for l in lines:
        m = re.match(r"^\s+([0-9a-f]+) \((.*)\)$", l)
        if m: chain.append(resolve_rel(int(m.group(1), 16), m.group(2)))
    brl = [l for l in lines if "/0x" in l]
    if not brl: return
    ents = [(int(f, 16), int(t, 16), ty) for f, _, t, _, ty in ENT.findall(brl[0])]
    samples += 1
    for f, t, ty in ents:
        pf, vf = resolve(f)
        if not pf: continue
        ins, nxt, prv = bins[pf]
        checked += 1
        if vf not in ins or not ins[vf][0].startswith(BR):
            bad += 1; print("not a branch: %s %x %s" % (pf, vf, ins.get(vf))); continue
        mn, ops = ins[vf]
        pt, vt = resolve(t)
        if pt == pf and pt is not None and vt not in ins:
            bad += 1; print("target not an instruction: %x->%x" % (vf, vt)); continue
        m = re.match(r"^(0x)?([0-9a-f]+) <", ops)
        if m and mn.startswith(("j", "call")) and pt == pf and int(m.group(2), 16) != vt:
            bad += 1; print("wrong direct target: %x %s -> %x" % (vf, ops, vt))
        if ty == "COND" and (not mn.startswith("j") or mn.startswith("jmp")): bad += 1; print("type", ty, mn)
        if ty == "CALL" and not mn.startswith("call"): bad += 1; print("type", ty, mn)
        if ty == "RET" and not mn.startswith("ret"): bad += 1; print("type", ty, mn)
    if chain:
        chains += 1
        top = resolve(ents[0][1])
        if top[0] and chain[0] != top:
            bad += 1; print("chain ip %s != newest target %s" % (chain[0], top))
        f0, t0, ty0 = ents[0]
        pf, vf = resolve(f0)
        if ty0 in ("CALL", "IND_CALL") and len(chain) > 1 and pf:
            callchk += 1
            if chain[1] != (pf, bins[pf][1].get(vf)):
                bad += 1; print("call at %x: return address %s" % (vf, chain[1]))
        for pr, vr in chain[1:]:
            if pr:
                ins, nxt, prv = bins[pr]
                if vr not in prv or not ins[prv[vr]][0].startswith("call"):
                    bad += 1; print("chain entry %x does not follow a call" % vr)
for line in open(f"{T}/script_dso.txt"):
    if line.strip() == "":
        do_block(block); block = []
    else:
        block.append(line.rstrip("\n"))
do_block(block)
print("samples", samples, "checked", checked, "chains", chains, "callchk", callchk)
print("bad", bad)
PY
tail -n 2 "$T/check.txt"; grep -v '^samples\|^bad' "$T/check.txt" | head -5
check "entries of prog/lib were checked" grep -qE '^samples [1-9][0-9]* checked [0-9]{3,} chains [1-9]' "$T/check.txt"
check_eq "every entry is a real taken branch; chains agree with stacks" "bad 0" "$(tail -n 1 "$T/check.txt")"

# (d) PIE and shared-library addresses resolve to symbols
perf script -i "$T/p.data" -F ip,sym,dso > "$T/sym.txt" 2>/dev/null
for s in main work fib leaf_add leaf_sub; do
    check "PIE symbol $s resolves" grep -qE "[0-9a-f]+ $s\+?.*\(\S*/prog\)" "$T/sym.txt"
done
check "shared-library symbol resolves" grep -qE "record_lib_mix.*librecord_lib.so" "$T/sym.txt"
check "no unresolved PIE or library frames" bash -c "! grep -E '\[unknown\] \((.*/prog|.*librecord_lib.so)\)' '$T/sym.txt'"

# LBR-only recording, depth option
"$PGOKIT" record --emulate -q --no-callchain --lbr-depth 8 -o "$T/n.data" -- "$T/prog" 3000 >/dev/null
perf report -D -i "$T/n.data" > "$T/n.txt" 2>&1
check "--lbr-depth 8 gives 8-entry stacks" grep -q 'branch stack: nr:8' "$T/n.txt"
check "--no-callchain writes no call chains" bash -c "! grep -q 'chain: nr:' '$T/n.txt'"

# usage errors and hardware mode on a machine without a PMU
check "--hardware fails clearly without a branch-stack PMU" \
    bash -c "! '$PGOKIT' record --hardware -o '$T/h.data' -- true 2>'$T/hw.err' && grep -q 'branch stacks' '$T/hw.err'"
check "missing command is a usage error" bash -c "'$PGOKIT' record -o x 2>/dev/null; [ \$? -eq 2 ]"
check "exit status of the program is passed through" bash -c "'$PGOKIT' record --emulate -q -o '$T/f.data' -- sh -c 'exit 3'; [ \$? -eq 3 ]"
finish
