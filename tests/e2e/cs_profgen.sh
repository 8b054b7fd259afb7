#!/usr/bin/env bash
# CSSPGO end to end on the CSSPGO paper's scalarOp example: an emulated
# stack + LBR recording of a -fpseudo-probe-for-profiling binary becomes
# (1) a pre-inlined nested context-sensitive profile that llvm-profdata-19
# reads and clang-19 applies with different branch weights in the copies of
# scalarOp inlined into each caller; (2) a flat context-sensitive profile;
# (3) a probe-only profile. Each is compared with llvm-profgen-19's profile of
# the same recording (through perf script) by llvm-profdata-19 overlap.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profdata-19 llvm-profgen-19 perf qemu-x86_64 python3
src="$PK_ROOT/tests/programs/cs_scalarop.c"
# "Whole program profile similarity" of llvm-profdata-19 overlap --sample, in %.
similarity() { llvm-profdata-19 overlap --sample "$1" "$2" 2>/dev/null | sed -n 's/.*Whole program profile similarity: *\([0-9.]*\)%.*/\1/p' | head -n 1; }
clang-19 -O2 -g -fpseudo-probe-for-profiling -DPROFILED_BUILD "$src" -o "$T/so"
check "record (emulated LBR + stacks)" "$PGOKIT" record --emulate -q -o "$T/so.data" --exact-counts "$T/so.exact" -- "$T/so" 2000
perf script --show-mmap-events -F ip,brstack -i "$T/so.data" > "$T/so.script" 2>/dev/null

# 1. full CSSPGO (the default for probe binaries with stacks)
check "profgen CSSPGO" "$PGOKIT" profgen -q --binary "$T/so" --perf "$T/so.data" -o "$T/cs.prof" --format text
check "llvm-profdata reads it" llvm-profdata-19 show --sample "$T/cs.prof" -o /dev/null
# walking on a worker thread (and under the sanitizers) changes nothing
check "profgen --threads 2 (ASan+UBSan build)" "$PGOKIT_SAN" profgen -q --threads 2 --binary "$T/so" --perf "$T/so.data" \
    -o "$T/cs2.prof" --format text
check_eq "same profile with a worker thread" "$(md5sum < "$T/cs.prof")" "$(md5sum < "$T/cs2.prof")"
# one thread, and both threads walking (the reading one every other sample,
# its contexts merged into the worker's at the end): the same profile
check "profgen --threads 1" "$PGOKIT" profgen -q --threads 1 --binary "$T/so" --perf "$T/so.data" -o "$T/cs1.prof" --format text
check_eq "same profile on one thread" "$(md5sum < "$T/cs.prof")" "$(md5sum < "$T/cs1.prof")"
PGOKIT_WALK_HERE_EVERY=2 "$PGOKIT_SAN" profgen --threads 2 --binary "$T/so" --perf "$T/so.data" -o "$T/cs3.prof" \
    --format text 2> "$T/cs3.log"
check "both threads walked (ASan+UBSan build)" grep -Eq 'walks \([1-9][0-9]* on the reading thread' "$T/cs3.log"
check_eq "same profile when both threads walk" "$(md5sum < "$T/cs.prof")" "$(md5sum < "$T/cs3.prof")"
check "profgen --threads 0 is refused" bash -c "! '$PGOKIT' profgen --threads 0 --binary '$T/so' --perf '$T/so.data' -o '$T/x.prof' 2>/dev/null"
check "profgen --threads 65 is refused" bash -c "! '$PGOKIT' profgen --threads 65 --binary '$T/so' --perf '$T/so.data' -o '$T/x.prof' 2>/dev/null"
check "profgen --threads 2x is refused" bash -c "! '$PGOKIT' profgen --threads 2x --binary '$T/so' --perf '$T/so.data' -o '$T/x.prof' 2>/dev/null"
check "profgen --threads 3 (ASan+UBSan build)" "$PGOKIT_SAN" profgen -q --threads 3 --binary "$T/so" --perf "$T/so.data" -o "$T/cs4.prof" --format text
check_eq "same profile on three threads" "$(md5sum < "$T/cs1.prof")" "$(md5sum < "$T/cs4.prof")"
check "pre-inlined contexts are marked" grep -q '!Attributes: 2' "$T/cs.prof"
check "probe checksums present" grep -q '!CFGChecksum:' "$T/cs.prof"
clang-19 -O2 -g -fpseudo-probe-for-profiling -fprofile-sample-use="$T/cs.prof" -S -emit-llvm "$src" -o "$T/cs.ll"
# The copies of scalarOp inlined into addVectorHead and subVectorHead must
# carry opposite branch biases: add's copy hot toward scalarAdd, sub's toward
# scalarSub (a context-insensitive profile gives both copies the same ratio).
check "context-specific branch weights after inlining" python3 - "$T/cs.ll" <<'PY'
import re, sys
ir = open(sys.argv[1]).read()
md = dict(re.findall(r'^(![0-9]+) = !\{!"branch_weights", i32 ([0-9]+), i32 ([0-9]+)\}$', ir, re.M) and
          [(k, (int(a), int(b))) for k, a, b in re.findall(r'^(![0-9]+) = !\{!"branch_weights", i32 ([0-9]+), i32 ([0-9]+)\}$', ir, re.M)])
def weights(fn):
    m = re.search(r'define [^\n]*@' + fn + r'[^(]*\(.*?\n}\n', ir, re.S)
    return [md[x] for x in re.findall(r'!prof (![0-9]+)', m.group(0)) if x in md] if m else []
add, sub = weights('_ZL13addVectorHead'), weights('_ZL13subVectorHead')
ok = any(a > 10 * max(b, 1) and d > 10 * max(c, 1) for a, b in add for c, d in sub) or \
     any(b > 10 * max(a, 1) and c > 10 * max(d, 1) for a, b in add for c, d in sub)
print("add:", add, "sub:", sub)
sys.exit(0 if ok else 1)
PY
llvm-profgen-19 --binary "$T/so" --perfscript "$T/so.script" -o "$T/cs.llvm.prof" --format=text 2>/dev/null
# Nested profiles depend on each pre-inliner's decisions, and llvm-profgen's
# contexts are cut short by perf 6.1's DSO-relative call-chain addresses:
# compare both flattened the same way (llvm-profdata's flat layout).
for p in cs cs.llvm; do
    llvm-profdata-19 merge --sample --text --convert-sample-profile-layout=flat "$T/$p.prof" -o "$T/$p.flat" 2>/dev/null
done
ov=$(similarity "$T/cs.llvm.flat" "$T/cs.flat")
echo "CSSPGO (flattened) overlap with llvm-profgen-19: ${ov:-?}"
check "CSSPGO overlap with llvm-profgen-19 >= 95%" python3 -c "import sys; sys.exit(0 if float('${ov:-0}') >= 95 else 1)"

# 2. flat contexts, no pre-inliner
check "profgen flat CS" "$PGOKIT" profgen -q --binary "$T/so" --perf "$T/so.data" -o "$T/flat.prof" --format text --no-preinline
check "flat profile has contexts" grep -q '^\[main' "$T/flat.prof"
check "flat profile readable" llvm-profdata-19 show --sample "$T/flat.prof" -o /dev/null

# 3. probe-only
check "profgen probe-only" "$PGOKIT" profgen -q --binary "$T/so" --perf "$T/so.data" -o "$T/po.prof" --format text --ignore-stack-samples
check "probe-only has no contexts" bash -c "! grep -q '^\[' '$T/po.prof'"
llvm-profgen-19 --binary "$T/so" --perfscript "$T/so.script" --ignore-stack-samples -o "$T/po.llvm.prof" --format=text 2>/dev/null
ov=$(similarity "$T/po.llvm.prof" "$T/po.prof")
echo "probe-only overlap with llvm-profgen-19: ${ov:-?}"
check "probe-only overlap with llvm-profgen-19 >= 95%" python3 -c "import sys; sys.exit(0 if float('${ov:-0}') >= 95 else 1)"
# 4. line-based CSSPGO (--cs) for a binary without probes
clang-19 -O2 -g -DPROFILED_BUILD "$src" -o "$T/sl"
# (in a fixed environment: the guest's stack, and so the samples, move with it)
check "record the DWARF-only build" env -i PATH=/usr/bin:/bin "$PGOKIT" record --emulate -q -o "$T/sl.data" -- "$T/sl" 2000
check "profgen --cs (pre-inlined, nested)" "$PGOKIT" profgen -q --cs --binary "$T/sl" --perf "$T/sl.data" -o "$T/sl.prof" --format text
check "line CS profile readable" llvm-profdata-19 show --sample "$T/sl.prof" -o /dev/null
check "line CS profile has pre-inlined contexts" grep -q '!Attributes: 2' "$T/sl.prof"
check "clang-19 applies the line CS profile" clang-19 -O2 -g -fprofile-sample-use="$T/sl.prof" -S -emit-llvm "$src" -o "$T/sl.ll"
check "IR carries entry counts from it" grep -q 'function_entry_count' "$T/sl.ll"
# llvm-profgen-19's line-based CS profile of the same samples (absolute call
# chains), both dropping the samples taken in prologues and epilogues
"$PGOKIT" dump --perfscript "$T/sl.data" > "$T/sl.script"
llvm-profgen-19 --binary "$T/sl" --perfscript "$T/sl.script" -o "$T/sl.llvm.prof" 2>/dev/null
# llvm-profgen infers no tail-call frames for line-based contexts: compare without ours
"$PGOKIT" profgen -q --cs --no-infer-missing-frames --binary "$T/sl" --perf "$T/sl.data" -o "$T/sl.noinf.prof"
for p in sl.llvm sl.noinf; do
    llvm-profdata-19 merge --sample --text --convert-sample-profile-layout=flat "$T/$p.prof" -o "$T/$p.flat" 2>/dev/null
done
ov=$(similarity "$T/sl.llvm.flat" "$T/sl.noinf.flat")
echo "line CS (flattened) similarity with llvm-profgen-19: ${ov:-?}"
check "line CS flattened similarity with llvm-profgen-19 >= 90%" python3 -c "import sys; sys.exit(0 if float('${ov:-0}') >= 90 else 1)"

# 5. quality: block overlap against the exact counts of the same run
for p in cs flat po; do
    q=$("$PGOKIT" overlap --exact "$T/so.exact" --binary "$T/so" "$T/$p.prof" | sed -n 's/.*block overlap \([0-9.]*\).*/\1/p')
    echo "$p: block overlap ${q:-?}"
    check "$p profile block overlap with the exact counts >= 0.95" python3 -c "import sys; sys.exit(0 if float('${q:-0}') >= 0.95 else 1)"
done
# the reference the block overlap is measured against, written out: the
# profile a perfect sampler would give (bench/scoreboard.sh builds with it)
check "overlap --write-reference" "$PGOKIT" overlap --exact "$T/so.exact" --binary "$T/so" "$T/po.prof" \
    --write-reference "$T/ref.prof"
check "the reference: a probe profile llvm-profdata-19 reads" bash -c "llvm-profdata-19 show --sample '$T/ref.prof' | grep -q 'CFG checksum'"
q=$("$PGOKIT" overlap --exact "$T/so.exact" --binary "$T/so" "$T/ref.prof" | sed -n 's/.*block overlap \([0-9.]*\).*/\1/p')
check_eq "the reference's own block overlap" 1.0000 "$q"
check "clang-19 builds with the reference" clang-19 -O2 -g -fpseudo-probe-for-profiling -fprofile-sample-use="$T/ref.prof" \
    -c "$src" -o "$T/ref.o"
# a probe binary without DWARF: the pre-inliner's code sizes cannot be had;
# a clear error, no output, and its half-started job ended cleanly (ASan)
clang-19 -O2 -fpseudo-probe-for-profiling -DPROFILED_BUILD "$src" -o "$T/sog0"
"$PGOKIT" record --emulate -q -o "$T/sog0.data" -- "$T/sog0" 500 > /dev/null
"$PGOKIT_SAN" profgen --threads 2 --binary "$T/sog0" --perf "$T/sog0.data" -o "$T/sog0.prof" 2> "$T/sog0.log"
check_eq "no DWARF: exit status 1" 1 "$?"
check "no DWARF: the error says so" grep -q "no DWARF debug information" "$T/sog0.log"
check "no DWARF: no profile written" test ! -e "$T/sog0.prof"
finish
