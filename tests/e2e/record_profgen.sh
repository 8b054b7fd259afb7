#!/usr/bin/env bash
# Downstream consumers accept emulated recordings: llvm-profgen-19 builds a
# context-sensitive probe profile from a stack+LBR recording of a clang-19
# -fpseudo-probe-for-profiling program; create_llvm_prof (AutoFDO) builds a
# profile from an LBR-only recording of a -gdwarf-4 program.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 perf clang-19 llvm-profgen-19 llvm-profdata-19
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
SRC=$PK_ROOT/tests/programs/record_exact.c

clang-19 -O2 -g -fpseudo-probe-for-profiling -fno-omit-frame-pointer -o "$T/cs" "$SRC" || { fail "build"; finish; exit; }
"$PGOKIT" record --emulate -q --period 4001 -o "$T/cs.data" -- "$T/cs" 200000 >/dev/null
perf script -i "$T/cs.data" --show-mmap-events -F ip,brstack > "$T/cs.script" 2>/dev/null
check "main binary's MMAP2 comes first, at the text segment's offset" \
    bash -c "grep -m1 PERF_RECORD_MMAP2 '$T/cs.script' | grep -q '@ 0x1000 .* $T/cs\$'"
llvm-profgen-19 --binary "$T/cs" --perfscript "$T/cs.script" --output "$T/cs.prof" --format=text \
    --gen-cs-nested-profile=0 > "$T/pg.log" 2>&1
check "llvm-profgen-19 accepts the stack+LBR script" test -s "$T/cs.prof"
check "llvm-profgen found the binary's mmap" bash -c "! grep -q 'No relevant mmap' '$T/pg.log'"
check "context-sensitive profile has [main:...] contexts" grep -q '^\[main:[0-9]* @ classify\]' "$T/cs.prof"
check "contexts carry probe checksums" grep -q 'CFGChecksum' "$T/cs.prof"
check "llvm-profdata-19 reads the profile" llvm-profdata-19 show --sample "$T/cs.prof" -o /dev/null

if command -v create_llvm_prof >/dev/null; then
    clang-19 -O2 -gdwarf-4 -o "$T/af" "$SRC"
    "$PGOKIT" record --emulate -q --period 4001 --no-callchain -o "$T/af.data" -- "$T/af" 200000 >/dev/null
    create_llvm_prof --binary="$T/af" --profile="$T/af.data" --out="$T/af.prof" --format=text > "$T/af.log" 2>&1
    check "create_llvm_prof accepts the LBR-only recording" test -s "$T/af.prof"
    check "AutoFDO profile has main and classify with samples" \
        bash -c "grep -qE '^main:[1-9]' '$T/af.prof' && grep -qE '^classify:[1-9]' '$T/af.prof'"
    check "call targets recovered from branch stacks" grep -qE '^ [0-9.]+: [0-9]+ classify:[1-9]' "$T/af.prof"
else
    echo "note: create_llvm_prof not installed; AutoFDO part skipped"
fi
finish
