#!/usr/bin/env bash
# record_a64.sh — the loop for aarch64 programs on this x86 machine: clang-19
# cross builds run under `pgokit record --emulate`, which picks qemu-aarch64
# from the ELF header (dynamic: -L /usr/aarch64-linux-gnu; static). Checked:
# perf (x86 host) reads the perf.data as aarch64; every branch-stack entry of
# the program is a real A64 branch of the right kind (llvm-objdump-19) with a
# nonzero exact count; the exact call counts equal QEMU's own `-d
# exec,nochain` block log and the program's arithmetic; forks and execs are
# followed; IP mode. Then profgen: AutoFDO (line), probe-only, CSSPGO
# (pre-inlined and flat) and line-based CS profiles, their block overlap with
# the exact counts; clang-19 --target=aarch64-linux-gnu applies them (probe
# build: no hash mismatch) and the rebuilt programs compute the same under
# qemu-aarch64. clang-19 puts no call-site probes into an aarch64
# .pseudo_probe: pgokit recovers them from DWARF, checked against the x86
# build's. Last, `order` (C3) on an lld-linked aarch64 program.
source "$(dirname "$0")/../lib.sh"
need qemu-aarch64 clang-19 llvm-objdump-19 llvm-readelf-19 llvm-profdata-19 perf python3
SYSROOT=/usr/aarch64-linux-gnu
[ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ] || { echo "skipped: no aarch64 sysroot in $SYSROOT"; exit 77; }
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
unset QEMU_LD_PREFIX
P=$PK_ROOT/tests/programs
A="--target=aarch64-linux-gnu"
# With the host's own arm64 libc (libc6:arm64) installed, record uses it and
# no -L (pk_record_cross_sysroot): its loader and libc are the guest's then.
if [ -e /lib/ld-linux-aarch64.so.1 ]; then
    QEMU_L=(); GUEST_LOADER=$(realpath /lib/ld-linux-aarch64.so.1); GUEST_LIBC=$(realpath /lib/aarch64-linux-gnu/libc.so.6)
else
    QEMU_L=(-L "$SYSROOT"); GUEST_LOADER=$SYSROOT/lib/ld-linux-aarch64.so.1; GUEST_LIBC=$SYSROOT/lib/libc.so.6
fi
run_a64() { qemu-aarch64 "${QEMU_L[@]}" "$@"; }
# the share printed by `pgokit overlap --exact`
block_overlap() { "$PGOKIT" overlap --exact "$1" --binary "$2" "$3" | sed -n 's/.*block overlap \([0-9.]*\).*/\1/p'; }
at_least() { python3 -c "import sys; sys.exit(0 if float('${1:-0}') >= $2 else 1)"; }

# ---- 1. record: a dynamic non-PIE program (absolute addresses everywhere) ----
clang-19 $A -O1 -g -fno-pie -no-pie -fno-optimize-sibling-calls -o "$T/ex" "$P/record_exact.c" ||
    { fail "cross build"; finish; exit; }
check "the program is an aarch64 ELF" bash -c "llvm-readelf-19 -h '$T/ex' | grep -q AArch64"
native=$(run_a64 "$T/ex" 20000)
out=$("$PGOKIT" record --emulate --period 101 --exact-counts "$T/ex.exact" -o "$T/ex.data" -- "$T/ex" 20000 \
      2>"$T/rec.err")
check_eq "program output unchanged under the recorder" "$native" "$out"
check "record chose qemu-aarch64" grep -q 'qemu-aarch64' "$T/rec.err"
"$PGOKIT" record --print-exact "$T/ex.exact" > "$T/ex.txt"
check "print-exact lists the program with its build-id" grep -q "^binary $T/ex build-id [0-9a-f]\{40\}" "$T/ex.txt"
check "print-exact lists the guest's libc ($GUEST_LIBC)" grep -q "^binary $GUEST_LIBC " "$T/ex.txt"

perf script -i "$T/ex.data" --header-only > "$T/hdr.txt" 2>&1
check "perf reads the arch header as aarch64" grep -q '^# arch : aarch64' "$T/hdr.txt"
perf script -i "$T/ex.data" -F ip,brstack > "$T/script.txt" 2> "$T/script.err"
check "perf script prints no warnings" test ! -s "$T/script.err"
perf report -D -i "$T/ex.data" > "$T/report.txt" 2>&1
check "perf report -D has no warnings" bash -c "! grep -qiwE 'warning|error|unprocessable|bad' '$T/report.txt'"
check "perf report -D shows 32-deep branch stacks" grep -q 'branch stack: nr:32' "$T/report.txt"
check "perf report -D shows call chains" grep -q 'FP chain: nr:' "$T/report.txt"
perf script -i "$T/ex.data" --show-mmap-events -F ip > "$T/mmaps.txt" 2>/dev/null
check "MMAP2 of the program carries its build-id" \
    grep -q "<$(llvm-readelf-19 -n "$T/ex" | awk '/Build ID/{print $3}')>.* $T/ex\$" "$T/mmaps.txt"
check "MMAP2 of the guest's loader ($GUEST_LOADER)" grep -q " $GUEST_LOADER\$" "$T/mmaps.txt"
perf script -i "$T/ex.data" -F ip,sym > "$T/chains.txt" 2>/dev/null
check "call chains resolve depth <- depth <- main" python3 - "$T/chains.txt" <<'PY'
import sys
# a sample is its ip line then its caller lines, separated by blank lines
blocks = open(sys.argv[1]).read().split("\n\n")
ok = any(b.split()[1:2] == ["depth"] and "depth" in b.split()[3:] and "main" in b.split() for b in blocks if b.strip())
sys.exit(0 if ok else 1)
PY

# every branch-stack entry inside the program: an A64 branch of the kind the
# record says, its direct target, and a pair the exact counts saw
llvm-objdump-19 -d --no-show-raw-insn "$T/ex" > "$T/ex.dis"
perf script -i "$T/ex.data" -F brstack > "$T/brs.txt" 2>/dev/null
python3 - "$T" > "$T/check.txt" <<'PY'
import re, sys
T = sys.argv[1]
ins = {}
for line in open(f"{T}/ex.dis"):
    m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(\S*)", line)
    if m:
        ins[int(m.group(1), 16)] = (m.group(2), m.group(3))
lo, hi = min(ins), max(ins) + 4
exact, inbin = {}, False
for line in open(f"{T}/ex.txt"):
    if line.startswith("binary "):
        inbin = line.split()[1] == f"{T}/ex"; continue
    m = re.match(r"^\s+([0-9a-f]+)->([0-9a-f]+):(\d+)$", line)
    if inbin and m:
        exact[(int(m.group(1), 16), int(m.group(2), 16))] = int(m.group(3))
def kind(mn):
    if mn == "bl": return "CALL"
    if mn.startswith("blr"): return "IND_CALL"
    if mn.startswith("ret"): return "RET"
    if mn.startswith(("b.", "cbz", "cbnz", "tbz", "tbnz")): return "COND"
    if mn == "b": return "UNCOND"
    if mn.startswith("br"): return "IND"
    return None
checked, bad, kinds = 0, 0, set()
for m in re.finditer(r"0x([0-9a-f]+)/0x([0-9a-f]+)/\w/\S*/\S*/\d+/(\w+)", open(f"{T}/brs.txt").read()):
    s, d, typ = int(m.group(1), 16), int(m.group(2), 16), m.group(3)
    if not lo <= s < hi:
        continue
    checked += 1
    mn, op = ins.get(s, ("?", ""))
    k = kind(mn)
    kinds.add(typ)
    # perf prints an indirect call as IND_CALL, an indirect jump as IND
    want = {"IND_CALL": ("IND_CALL", "CALL"), "IND": ("IND",)}.get(k, (k,))
    if typ not in want:
        bad += 1; print("kind %x %s: %s" % (s, mn, typ)); continue
    if k in ("CALL", "COND", "UNCOND"):
        t = re.findall(r"[0-9a-f]{6,}", op)
        if t and int(t[-1], 16) != d and not (k == "COND" and False):
            bad += 1; print("target %x %s %s -> %x" % (s, mn, op, d)); continue
    if exact.get((s, d), 0) <= 0 and lo <= d < hi:
        bad += 1; print("not in the exact counts: %x->%x" % (s, d))
print("checked", checked, "kinds", " ".join(sorted(kinds)))
print("bad", bad)
PY
head -n 3 "$T/check.txt"
check "branch-stack entries of the program were checked (calls, returns, conditionals)" \
    grep -qE '^checked [0-9]{4,} kinds .*CALL.*COND.*RET' "$T/check.txt"
check_eq "every entry is a real A64 branch of its kind, seen by the exact counts" "bad 0" "$(tail -n 1 "$T/check.txt")"

# exact counts against a second source: QEMU's own log of every executed
# block (-d exec with chaining off), and the program's arithmetic
qemu-aarch64 "${QEMU_L[@]}" -d exec,nochain -D "$T/exec.log" "$T/ex" 20000 > /dev/null
llvm-nm-19 "$T/ex" > "$T/ex.nm" 2>/dev/null || nm "$T/ex" > "$T/ex.nm"
python3 - "$T" > "$T/calls.txt" <<'PY'
import re, sys
T = sys.argv[1]
sym = {l.split()[2]: int(l.split()[0], 16) for l in open(f"{T}/ex.nm") if len(l.split()) == 3}
tb = {}
for line in open(f"{T}/exec.log"):
    m = re.match(r"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/", line)
    if m:
        pc = int(m.group(1), 16); tb[pc] = tb.get(pc, 0) + 1
exact, inbin = {}, False
for line in open(f"{T}/ex.txt"):
    if line.startswith("binary "):
        inbin = line.split()[1] == f"{T}/ex"; continue
    m = re.match(r"^\s+(\w+)->([0-9a-f]+):(\d+)$", line)
    if inbin and m:
        d = int(m.group(2), 16); exact[d] = exact.get(d, 0) + int(m.group(3))
n = 20000
want = {"classify": n, "depth": sum(i % 13 + 1 for i in range(0, n, 100))}
for f, w in want.items():
    print(f, "program", w, "qemu", tb.get(sym[f], 0), "exact", exact.get(sym[f], 0))
PY
cat "$T/calls.txt"
check "exact call counts = QEMU's block log = the program's arithmetic" \
    bash -c "awk '\$3 != \$5 || \$3 != \$7 {bad=1} END {exit bad || NR != 2}' '$T/calls.txt'"

# a static program (no sysroot needed) and a PIE (the default build)
clang-19 $A -O1 -g -static -o "$T/exs" "$P/record_exact.c"
out=$("$PGOKIT" record --emulate -q --exact-counts "$T/exs.exact" -o "$T/exs.data" -- "$T/exs" 3000)
check_eq "static program: output unchanged" "$(run_a64 "$T/exs" 3000)" "$out"
check "static program: exact counts of the program" \
    bash -c "'$PGOKIT' record --print-exact '$T/exs.exact' | grep -q '^binary $T/exs '"
clang-19 $A -O1 -g -o "$T/exp" "$P/record_exact.c"
out=$("$PGOKIT" record --emulate -q -o "$T/exp.data" -- "$T/exp" 3000)
check_eq "PIE: output unchanged" "$(run_a64 "$T/exp" 3000)" "$out"
check "PIE: perf resolves its symbols" bash -c "perf script -i '$T/exp.data' -F ip,sym 2>/dev/null | grep -qw main"

# fork and exec under the emulator: an exec'd aarch64 program is relaunched
# under qemu-aarch64 (with the sysroot) and recorded; its fork child too
clang-19 $A -O1 -g -o "$T/rf" "$P/record_fork.c" && clang-19 $A -O1 -g -o "$T/rx" "$P/record_exec.c"
"$PGOKIT" record --emulate --period 997 --exact-counts "$T/x.exact" -o "$T/x.data" -- "$T/rx" 100000 "$T/rf" rf 200000 \
    > "$T/x.out" 2> "$T/x.err"
check "exec + fork: the program ran to its end" grep -q 'child status exit 7' "$T/x.out"
check "exec + fork: rx, rf and rf's child recorded" \
    grep -qE 'rf\[[0-9]+\] [1-9][0-9]*, rx\[[0-9]+\] [1-9][0-9]*, rf\[[0-9]+\] [1-9]' "$T/x.err"
check "exec + fork: exact counts of the exec'd program" \
    bash -c "'$PGOKIT' record --print-exact '$T/x.exact' | grep -q '^binary $T/rf '"
check_eq "exec: argv[0] and signal dispositions carried over" "argv0 renamed, SIGUSR1 ignored 1, SIGUSR2 blocked 1" \
    "$("$PGOKIT" record --emulate -q -o "$T/sig.data" -- "$T/rx" 1000 "$T/rx" renamed signals | tail -n 1)"

# IP mode under emulation
out=$("$PGOKIT" record --emulate --ip --period 997 -q --exact-counts "$T/ip.exact" -o "$T/ip.data" -- "$T/ex" 20000)
check_eq "IP mode: output unchanged" "$native" "$out"
perf script -i "$T/ip.data" -F event,ip,sym > "$T/ip.txt" 2>"$T/ip.err"
check "IP mode: perf reads instruction samples" grep -q 'instructions' "$T/ip.txt"
check "IP mode: samples land in classify" grep -q 'classify' "$T/ip.txt"
check "IP mode: exact counts written too" test -s "$T/ip.exact"
check "IP mode: profgen (flow inference over the A64 CFG)" \
    "$PGOKIT" profgen -q --binary "$T/ex" --perf "$T/ip.data" -o "$T/ip.prof"
q=$(block_overlap "$T/ip.exact" "$T/ex" "$T/ip.prof")
echo "aarch64 IP mode (flow inference): block overlap ${q:-?}"
check "IP-mode profile block overlap with the exact counts >= 0.9 (${q:-none})" at_least "$q" 0.9

# ---- 2. profgen: AutoFDO (line) ----
CF="-O2 -g -fdebug-info-for-profiling"
clang-19 $A $CF "$P/profgen_demo.c" -o "$T/demo"
check "record the line build" "$PGOKIT" record --emulate -q -o "$T/d.data" --exact-counts "$T/d.exact" -- "$T/demo" 8
check "profgen AutoFDO (text)" "$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/d.data" -o "$T/line.txt" --format text
check "profgen AutoFDO (extbinary)" "$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/d.data" -o "$T/line.prof"
check "llvm-profdata-19 reads it" llvm-profdata-19 show --sample "$T/line.prof" -o /dev/null
q=$(block_overlap "$T/d.exact" "$T/demo" "$T/line.prof")
echo "aarch64 line: block overlap ${q:-?}"
check "line profile block overlap with the exact counts >= 0.9 (${q:-none})" at_least "$q" 0.9
clang-19 $A $CF -fprofile-sample-use="$T/line.prof" -S -emit-llvm "$P/profgen_demo.c" -o "$T/line.ll" 2>"$T/line.err"
check "clang-19 (aarch64) applies it: function_entry_count" grep -q 'function_entry_count' "$T/line.ll"
check "clang-19 (aarch64) applies it: branch_weights" grep -q 'branch_weights' "$T/line.ll"
clang-19 $A $CF -fprofile-sample-use="$T/line.prof" "$P/profgen_demo.c" -o "$T/demo.pgo" 2>>"$T/line.err"
check "no clang warnings with the line profile" test ! -s "$T/line.err"
check_eq "the line-PGO build computes the same" "$(run_a64 "$T/demo" 8 | md5sum)" "$(run_a64 "$T/demo.pgo" 8 | md5sum)"

# ---- 3. profgen: probes (probe-only, CSSPGO pre-inlined and flat) ----
src="$P/cs_scalarop.c"
PF="-O2 -g -fpseudo-probe-for-profiling"
clang-19 $A $PF -DPROFILED_BUILD "$src" -o "$T/so"
check "record the probe build" "$PGOKIT" record --emulate -q -o "$T/so.data" --exact-counts "$T/so.exact" -- "$T/so" 2000
"$PGOKIT" profgen --binary "$T/so" --perf "$T/so.data" -o "$T/cs.prof" --format text 2>"$T/cs.log"
check "profgen CSSPGO" test -s "$T/cs.prof"
check "CSSPGO: probe checksums" grep -q '!CFGChecksum:' "$T/cs.prof"
# clang-19's AArch64 back end writes no call-site probes into .pseudo_probe
# (x86 does): pgokit recovers them from the calls' DWARF discriminators. The
# oracle is the x86 build of the same source: every call probe it has (GUID,
# index, type, inline chain) is recovered; aarch64 may have more (x86 drops
# the probe of a conditional tail call, which aarch64 makes unconditional).
clang-19 --target=x86_64-linux-gnu $PF -DPROFILED_BUILD "$src" -o "$T/so.x86"
"$PGOKIT" probes --binary "$T/so" --no-desc | grep 'Call' | sed 's/^[0-9a-f]*: //' | sort > "$T/calls.a64"
"$PGOKIT" probes --binary "$T/so.x86" --no-desc | grep 'Call' | sed 's/^[0-9a-f]*: //' | sort > "$T/calls.x86"
echo "call-site probes: aarch64 (recovered) $(wc -l < "$T/calls.a64"), x86-64 $(wc -l < "$T/calls.x86")"
check "every x86 call-site probe is recovered in the aarch64 build" \
    bash -c "test -s '$T/calls.x86' && test -z \"\$(comm -13 '$T/calls.a64' '$T/calls.x86')\""
# and on the probe fixtures built without -DPROFILED_BUILD (inlining, tail
# calls into the PLT): the same call-site probes as the x86 build, exactly
cbad=0; ctot=0
for p in probe_inline cs_sizes profgen_calls cs_scalarop; do
    clang-19 $A $PF "$P/$p.c" -o "$T/ca-$p" && clang-19 $PF "$P/$p.c" -o "$T/cx-$p" || { cbad=$((cbad + 1)); continue; }
    "$PGOKIT" probes --binary "$T/ca-$p" --no-desc | grep 'Call' | sed 's/^[0-9a-f]*: //' | sort > "$T/ca-$p.k"
    "$PGOKIT" probes --binary "$T/cx-$p" --no-desc | grep 'Call' | sed 's/^[0-9a-f]*: //' | sort > "$T/cx-$p.k"
    ctot=$((ctot + $(wc -l < "$T/ca-$p.k")))
    cmp -s "$T/ca-$p.k" "$T/cx-$p.k" || { cbad=$((cbad + 1)); diff "$T/ca-$p.k" "$T/cx-$p.k" | head -5; }
done
echo "recovered call-site probes on 4 fixtures: $ctot, $cbad fixtures differ from x86-64"
check "recovered call-site probes equal the x86 build's on 4 fixtures ($ctot)" test "$cbad" -eq 0 -a "$ctot" -gt 10
check "CSSPGO: no context cut for want of a call probe" grep -q '(0 truncated at a call without probe)' "$T/cs.log"
check "CSSPGO: pre-inlined contexts" grep -q '!Attributes: 2' "$T/cs.prof"
# the payoff of contexts: the copies of scalarOp clang inlines into
# addVectorHead and subVectorHead get opposite branch biases (the same check
# as cs_profgen.sh on x86)
clang-19 $A $PF -fprofile-sample-use="$T/cs.prof" -S -emit-llvm "$src" -o "$T/cs.ll"
check "CSSPGO: context-specific branch weights after inlining (aarch64)" python3 - "$T/cs.ll" <<'PY'
import re, sys
ir = open(sys.argv[1]).read()
md = {k: (int(a), int(b)) for k, a, b in
      re.findall(r'^(![0-9]+) = !\{!"branch_weights", i32 ([0-9]+), i32 ([0-9]+)\}$', ir, re.M)}
def weights(fn):
    m = re.search(r'define [^\n]*@' + fn + r'[^(]*\(.*?\n}\n', ir, re.S)
    return [md[x] for x in re.findall(r'!prof (![0-9]+)', m.group(0)) if x in md] if m else []
add, sub = weights('_ZL13addVectorHead'), weights('_ZL13subVectorHead')
ok = any(a > 10 * max(b, 1) and d > 10 * max(c, 1) for a, b in add for c, d in sub) or \
     any(b > 10 * max(a, 1) and c > 10 * max(d, 1) for a, b in add for c, d in sub)
print("add:", add, "sub:", sub)
sys.exit(0 if ok else 1)
PY
check "profgen flat CS" "$PGOKIT" profgen -q --binary "$T/so" --perf "$T/so.data" -o "$T/flat.prof" --format text --no-preinline
# tail-call inference, checked where the pre-inliner's choices (which move
# with the samples) do not enter: scalarOp tail-calls scalarAdd on aarch64
check "CSSPGO (flat): scalarAdd's context under addVectorHead's scalarOp (tail call re-inserted)" \
    grep -qE '^\[main:[0-9]+ @ _ZL13addVectorHead[^ ]*:5 @ _ZL8scalarOp[^ ]*:3 @ _ZL9scalarAdd[^]]*\]:' "$T/flat.prof"
check "profgen probe-only" "$PGOKIT" profgen -q --binary "$T/so" --perf "$T/so.data" -o "$T/po.prof" --format text \
    --ignore-stack-samples
check "probe-only: no contexts" bash -c "! grep -q '^\[' '$T/po.prof'"
native=$(run_a64 "$T/so" 2000)
for p in cs flat po; do
    check "$p: llvm-profdata-19 reads it" llvm-profdata-19 show --sample "$T/$p.prof" -o /dev/null
    q=$(block_overlap "$T/so.exact" "$T/so" "$T/$p.prof")
    echo "aarch64 $p: block overlap ${q:-?}"
    check "$p: block overlap with the exact counts >= 0.9 (${q:-none})" at_least "$q" 0.9
    clang-19 $A $PF -fprofile-sample-use="$T/$p.prof" -mllvm -report-profile-staleness "$src" -o "$T/so.$p" \
        2>"$T/$p.err"
    # (clang reports context-sensitive profiles as 0/0)
    check "$p: clang-19 (aarch64) finds no hash mismatch" grep -q "^(0/[0-9]*) of functions' profile are invalid" "$T/$p.err"
    check "$p: no clang warnings" bash -c "! grep -qi 'warning' '$T/$p.err'"
    clang-19 $A $PF -fprofile-sample-use="$T/$p.prof" -S -emit-llvm "$src" -o "$T/so.$p.ll" 2>/dev/null
    check "$p: clang-19 (aarch64) applies it: function_entry_count" grep -q 'function_entry_count' "$T/so.$p.ll"
    check_eq "$p: the rebuilt program computes the same" "$native" "$(run_a64 "$T/so.$p" 2000)"
done
# ---- 4. line-based CSSPGO (--cs) for the DWARF-only build, against x86 ----
# (the overlap of line CS profiles is lower than that of the line profile on
# both: the measure is the same for the x86 build of the same source)
for arch in aarch64 x86_64; do
    clang-19 --target=$arch-linux-gnu -O2 -g "$src" -o "$T/sl.$arch"
    "$PGOKIT" record --emulate -q -o "$T/sl.$arch.data" --exact-counts "$T/sl.$arch.exact" -- "$T/sl.$arch" 2000 \
        > /dev/null
    "$PGOKIT" profgen -q --cs --binary "$T/sl.$arch" --perf "$T/sl.$arch.data" -o "$T/sl.$arch.prof" --format text
done
check "line CS: pre-inlined contexts" grep -q '!Attributes: 2' "$T/sl.aarch64.prof"
qa=$(block_overlap "$T/sl.aarch64.exact" "$T/sl.aarch64" "$T/sl.aarch64.prof")
qx=$(block_overlap "$T/sl.x86_64.exact" "$T/sl.x86_64" "$T/sl.x86_64.prof")
echo "line CS: block overlap aarch64 ${qa:-?}, x86-64 ${qx:-?}"
check "line CS: aarch64 block overlap within 0.02 of x86-64's (${qa:-none} vs ${qx:-none})" \
    python3 -c "import sys; sys.exit(0 if float('${qa:-0}') >= float('${qx:-1}') - 0.02 else 1)"
clang-19 $A -O2 -g -fprofile-sample-use="$T/sl.aarch64.prof" "$src" -o "$T/sl.pgo" 2>"$T/sl.err"
check_eq "line CS: the rebuilt program computes the same" "$native" "$(run_a64 "$T/sl.pgo" 2000)"
# ---- 5. order: an lld-linked aarch64 program, C3 from its sample profile ----
if command -v ld.lld-19 >/dev/null || command -v ld.lld >/dev/null; then
    python3 "$P/layout_gen.py" 300 200 40 20 4 > "$T/lay.c"
    LF="-O1 -g -fdebug-info-for-profiling -ffunction-sections -fuse-ld=lld"
    clang-19 $A $LF "$T/lay.c" -o "$T/lay"
    "$PGOKIT" record --emulate -q --period 97 -o "$T/lay.data" -- "$T/lay" 0 > /dev/null
    "$PGOKIT" profgen -q --binary "$T/lay" --perf "$T/lay.data" -o "$T/lay.prof"
    check "order --c3 on the aarch64 binary" "$PGOKIT" order -q --c3 "$T/lay.prof" --binary "$T/lay" -o "$T/lay.order"
    check "order --compression-utilities reads the aarch64 ELF" "$PGOKIT" order -q --c3 "$T/lay.prof" \
        --binary "$T/lay" --compression-utilities "$T/lay" -o "$T/lay.bp.order"
    clang-19 $A $LF -Wl,--symbol-ordering-file="$T/lay.order" -Wl,--no-warn-symbol-ordering "$T/lay.c" -o "$T/lay.ord"
    check_eq "the ordered program computes the same" "$(run_a64 "$T/lay" 0)" "$(run_a64 "$T/lay.ord" 0)"
    llvm-nm-19 -n "$T/lay.ord" | awk '$2 ~ /^[tT]$/ {print $3}' > "$T/lay.nm"
    check "ld.lld placed the ordered functions in that order" python3 - "$T/lay.nm" "$T/lay.order" <<'PY'
import sys
pos = {n.strip(): i for i, n in enumerate(open(sys.argv[1]))}
want = [l.strip() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
p = [pos[w] for w in want if w in pos]
print("ordered", len(want), "placed", len(p))
sys.exit(0 if len(p) >= 10 and p == sorted(p) else 1)
PY
fi
finish
