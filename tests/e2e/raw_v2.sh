#!/usr/bin/env bash
# Raw profiles of version 2: generation after the merge. For every kind of
# samples, a profile made from the raw profiles of two recordings
# (profgen --raw-only of each, then --raw a.raw --raw b.raw) is byte for
# byte the profile made from the two recordings themselves (--perf a --perf
# b), and so is one made from `pgokit merge` of the raw profiles:
#   - LBR + stacks of a pseudo-probe binary: CSSPGO (unwound contexts,
#     tail-call frames, pre-inliner, nesting);
#   - LBR of a plain -O2 -g binary: AutoFDO;
#   - IP + stacks (emulated IP mode) of both: CSSPGO and AutoFDO, flow
#     inference run once on the summed observations;
#   - a pseudo-probe binary with a depth limit (--csprof-max-context-depth):
#     the raw profile keeps every frame, contexts are trimmed at generation.
# The generated profiles are checked with llvm-profdata-19 (it reads them,
# CSSPGO ones have contexts and probe checksums). Version-1 raw profiles are
# still read (a flat profile from them equals the one from version 2) and,
# where contexts are asked for, stderr says once that they have none. A
# truncated or corrupt version-2 file is an error naming the file and
# offset, with no output left behind. Deep mutual recursion (3000 frames)
# keeps the raw profile as small as shallow recursion does.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 clang-19 llvm-profdata-19
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: the QEMU plugin is not built"; exit 77; }
P=$PK_ROOT/tests/programs
cd "$T" || exit 1

CF="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
clang-19 $CF -fpseudo-probe-for-profiling "$P/profgen_recurse.c" -o probe &&
    clang-19 $CF "$P/profgen_recurse.c" -o plain &&
    clang-19 $CF -fpseudo-probe-for-profiling "$P/raw_deep_recursion.c" -o deep ||
    { fail "build fixtures"; finish; exit 1; }

# rec NAME BIN MODE(lbr|ip) PERIOD ARGS...
rec() {
    local name=$1 bin=$2 mode=$3 period=$4; shift 4
    "$PGOKIT" record --emulate ${mode/lbr/} -q --period "$period" -o "$name.data" -- "./$bin" "$@" >/dev/null 2>&1 &&
        "$PGOKIT" profgen -q --binary "$bin" --perf "$name.data" --raw-only -o "$name.raw"
}
ok=1
for b in probe plain; do
    rec "$b.lbr.a" $b lbr 997 300 && rec "$b.lbr.b" $b lbr 1009 200 &&
        rec "$b.ip.a" $b --ip 997 300 && rec "$b.ip.b" $b --ip 1009 200 || ok=0
done
check "recorded (LBR + stacks, IP + stacks; probe and plain binaries) and raw profiles written" test $ok = 1
for f in probe.lbr.a plain.ip.b; do
    check "$f.raw is version 2" test "$(od -An -tu4 -j8 -N4 "$f.raw" | tr -d ' ')" = 2
done

# same KIND BIN SET [profgen options...]: perf inputs vs raw inputs vs merged raw
same() {
    local kind=$1 bin=$2 set=$3; shift 3
    "$PGOKIT" profgen --binary "$bin" --perf "$set.a.data" --perf "$set.b.data" -o "$set.x.prof" "$@" 2>"$set.x.log" &&
        "$PGOKIT" profgen --binary "$bin" --raw "$set.a.raw" --raw "$set.b.raw" -o "$set.y.prof" "$@" 2>"$set.y.log" &&
        "$PGOKIT" profgen -q --binary "$bin" --raw "$set.b.raw" --raw "$set.a.raw" -o "$set.r.prof" "$@" &&
        "$PGOKIT" merge "$set.a.raw" "$set.b.raw" -o "$set.m.raw" &&
        "$PGOKIT" profgen -q --binary "$bin" --raw "$set.m.raw" -o "$set.z.prof" "$@"
    check "$set ($kind): profiles made" test $? -eq 0 -a -s "$set.x.prof"
    check "$set ($kind): the summary names the kind" grep -q "wrote $set.y.prof (extbinary, $kind" "$set.y.log"
    check "$set ($kind): --perf a --perf b == --raw a.raw --raw b.raw (cmp)" cmp "$set.x.prof" "$set.y.prof"
    check "$set ($kind): ... == --raw b.raw --raw a.raw" cmp "$set.x.prof" "$set.r.prof"
    check "$set ($kind): ... == --raw of \`pgokit merge a.raw b.raw\`" cmp "$set.x.prof" "$set.z.prof"
    llvm-profdata-19 show --sample --all-functions "$set.y.prof" >"$set.y.show" 2>&1
    check "$set ($kind): llvm-profdata-19 reads it, with samples" grep -qE "(^|: )[1-9][0-9]*, [0-9]+, [0-9]+ sampled lines" "$set.y.show"
}
same CSSPGO probe probe.lbr
llvm-profdata-19 merge --sample --text probe.lbr.y.prof -o probe.lbr.y.txt 2>/dev/null
check "probe.lbr: the CSSPGO profile has probe checksums and inlined contexts (llvm-profdata-19 --text)" \
    bash -c "grep -q '!CFGChecksum' probe.lbr.y.txt && grep -qE '^ +[0-9]+: [a-z_]+:[0-9]+' probe.lbr.y.txt"
same "line-based AutoFDO" plain plain.lbr
same CSSPGO probe probe.ip
check "probe.ip: the summary says flow inference made it" grep -q "IP" probe.ip.y.log
same "line-based AutoFDO" plain plain.ip
# trimming after the merge: the raw profile kept the deep contexts
"$PGOKIT" profgen --binary probe --perf probe.lbr.a.data --perf probe.lbr.b.data --csprof-max-context-depth 1 \
    --format text -o d.x.txt 2>/dev/null &&
    "$PGOKIT" profgen -q --binary probe --raw probe.lbr.a.raw --raw probe.lbr.b.raw --csprof-max-context-depth 1 \
        --format text -o d.y.txt
check "depth-limited CSSPGO: from perf == from raw (contexts trimmed after the merge)" cmp d.x.txt d.y.txt
check "... and differs from the unlimited profile" \
    bash -c "\"$PGOKIT\" profgen -q --binary probe --raw probe.lbr.a.raw --format text -o d.u.txt && ! cmp -s d.u.txt d.y.txt"

# contexts where none are wanted: summed into flat counts, and said so
"$PGOKIT" profgen --binary probe --raw probe.lbr.a.raw --ignore-stack-samples -o flat.prof 2>flat.err
check "contexts with --ignore-stack-samples: a flat probe profile, the summing said" \
    bash -c "test -s flat.prof && grep -q 'probe.lbr.a.raw: its calling contexts are summed into flat counts' flat.err &&
             grep -q 'wrote flat.prof (extbinary, probe-based' flat.err"

# ---- version 1 ----
"$PGOKIT" profgen -q --binary plain --perf plain.lbr.a.data --raw-only --raw-version 1 -o v1.plain.raw &&
    "$PGOKIT" profgen -q --binary probe --perf probe.lbr.a.data --raw-only --raw-version 1 -o v1.a.raw &&
    "$PGOKIT" profgen -q --binary probe --perf probe.lbr.b.data --raw-only --raw-version 1 -o v1.b.raw
check "version-1 raw profiles written (--raw-version 1)" test $? -eq 0 -a "$(od -An -tu4 -j8 -N4 v1.a.raw | tr -d ' ')" = 1
"$PGOKIT" profgen -q --binary plain --raw v1.plain.raw -o v1.plain.prof &&
    "$PGOKIT" profgen -q --binary plain --raw plain.lbr.a.raw -o v2.plain.prof
check "a flat profile from version 1 == from version 2 of the same recording" cmp v1.plain.prof v2.plain.prof
"$PGOKIT" profgen --binary probe --raw v1.a.raw --raw v1.b.raw -o v1.prof 2>v1.err
check "version-1 inputs of a probe binary: a (flat probe) profile is made" test $? -eq 0 -a -s v1.prof
check_eq "... and stderr says once that they have no contexts" 1 "$(grep -c 'version 1 hold no calling contexts' v1.err)"
"$PGOKIT" profgen --binary probe --raw probe.lbr.a.raw --raw v1.b.raw -o mix.prof 2>mix.err
check "version 1 mixed with version 2: CSSPGO, and its counts said to be left out" \
    grep -q "version 1 holds no calling contexts: their counts are not in the context-sensitive profile" mix.err

# ---- bad input ----
size=$(stat -c %s probe.lbr.a.raw)
head -c $((size - 100)) probe.lbr.a.raw >trunc.raw
"$PGOKIT" profgen -q --binary probe --raw trunc.raw -o bad.prof 2>bad.err; rc=$?
check_eq "truncated version-2 raw profile: exit 1" 1 $rc
check "... naming the file and the offset" grep -q "trunc.raw: offset [0-9]*:" bad.err
check "... and no output" test ! -e bad.prof
"$PGOKIT" show probe.lbr.a.raw >show.txt
check "show: version 2 with its calling contexts" \
    bash -c "grep -q '^Format: pgokit raw profile, version 2' show.txt && grep -q '^Contexts: [1-9][0-9]* calling contexts' show.txt"
"$PGOKIT" show probe.ip.a.raw >show.ip.txt
check "show: IP observations" grep -q "^IP samples: [1-9][0-9]* used" show.ip.txt

# ---- the ASan+UBSan build: the same raw profiles, the same profiles ----
if [ -x "${PGOKIT_SAN:-}" ]; then
    "$PGOKIT_SAN" profgen -q --binary probe --perf probe.ip.a.data --raw-only -o san.ip.raw &&
        "$PGOKIT_SAN" merge probe.lbr.a.raw probe.lbr.b.raw -o san.m.raw &&
        "$PGOKIT_SAN" profgen -q --binary probe --raw san.m.raw -o san.lbr.prof &&
        "$PGOKIT_SAN" profgen -q --binary probe --raw san.ip.raw --raw probe.ip.b.raw -o san.ip.prof &&
        "$PGOKIT_SAN" show san.m.raw >/dev/null
    check "sanitizer build: raw profiles written, merged, shown and generated from" test $? -eq 0
    check "sanitizer build: the same raw profile" cmp san.ip.raw probe.ip.a.raw
    check "sanitizer build: the same CSSPGO profiles (LBR, IP)" \
        bash -c "cmp san.lbr.prof probe.lbr.x.prof && cmp san.ip.prof probe.ip.x.prof"
fi

# ---- deep recursion: the raw profile stays bounded ----
ok=1
for d in 30 3000; do
    it=$((120000 / d))
    rec deep.lbr.$d deep lbr 997 $d $it && rec deep.ip.$d deep --ip 997 $d $it || ok=0
done
check "deep recursion recorded" test $ok = 1
for k in lbr ip; do
    s30=$(stat -c %s deep.$k.30.raw) s3000=$(stat -c %s deep.$k.3000.raw)
    echo "raw profile size, $k: recursion depth 30: $s30 bytes, depth 3000: $s3000 bytes"
    check "deep recursion ($k): depth 3000 raw profile within 2x of depth 30 and under 64 KiB" \
        test "$s3000" -le $((2 * s30)) -a "$s3000" -lt 65536
done
"$PGOKIT" profgen -q --binary deep --perf deep.lbr.3000.data -o deep.x.prof &&
    "$PGOKIT" profgen -q --binary deep --raw deep.lbr.3000.raw -o deep.y.prof
check "deep recursion: CSSPGO from perf == from raw" cmp deep.x.prof deep.y.prof
finish
