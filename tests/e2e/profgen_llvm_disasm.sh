#!/usr/bin/env bash
# llvm-profgen's --show-disassembly-only through the drop-in (`pgokit
# llvm-profgen`, which runs `pgokit disasm`): on fixtures we build (inlining,
# pseudo-probes; clang-19 -O2, clang-19 -O2 -march=x86-64-v4 for AVX-512,
# gcc-12 -O2 for x87, string stores and .part clones), in AT&T and Intel
# syntax, with source locations, pseudo-probes, canonical names and a
# function filter, the text must be byte-identical to llvm-profgen-19's.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 llvm-profgen-19

: > "$T/empty.script"
mix="$PK_ROOT/tests/programs/disasm_mix.c"
clang-19 -O2 -g -fpseudo-probe-for-profiling "$PK_ROOT/tests/programs/probe_inline.c" -o "$T/inline"
clang-19 -O2 -g -fpseudo-probe-for-profiling "$mix" -o "$T/mix"
clang-19 -O2 -g -march=x86-64-v4 -fpseudo-probe-for-profiling "$mix" -o "$T/mix_avx512"
gcc-12 -O2 -g "$mix" -o "$T/mix_gcc"

# same NAME BINARY OPTIONS...: both tools, the same command line
same() {
    local name=$1 bin=$2; shift 2
    llvm-profgen-19 --perfscript="$T/empty.script" --binary="$bin" --output="$T/unused" "$@" \
        > "$T/$name.want" 2> "$T/$name.want.err"
    local wrc=$?
    "$PGOKIT" llvm-profgen --perfscript="$T/empty.script" --binary="$bin" --output="$T/unused" "$@" \
        > "$T/$name.got" 2> "$T/$name.got.err"
    local grc=$?
    check_eq "$name: exit status" "$wrc" "$grc"
    local ninsn; ninsn=$(grep -c '^ *[0-9a-f]*:	' "$T/$name.want")
    if cmp -s "$T/$name.want" "$T/$name.got"; then
        pass "$name: identical to llvm-profgen-19 ($ninsn instructions)"
    else
        fail "$name: differs from llvm-profgen-19 ($(diff "$T/$name.want" "$T/$name.got" | grep -c '^<') lines)"
        diff "$T/$name.want" "$T/$name.got" | head -n 10
    fi
}

att=(--show-disassembly-only --show-source-locations --show-pseudo-probe)
intel=(--show-disassembly-only -x86-asm-syntax=intel --show-source-locations --show-pseudo-probe --show-canonical-fname)
for b in inline mix mix_avx512 mix_gcc; do
    same "$b-att" "$T/$b" "${att[@]}"
    same "$b-intel" "$T/$b" "${intel[@]}"
done
same inline-plain "$T/inline" --show-disassembly-only
same inline-only "$T/inline" --show-disassembly-only --show-pseudo-probe --disassemble-functions=main,top
same mix_gcc-only "$T/mix_gcc" --show-disassembly-only -x86-asm-syntax intel --disassemble-functions main \
    --disassemble-functions=bump,slow_path
same mix_gcc-canonical "$T/mix_gcc" --show-disassembly-only --show-canonical-fname --show-source-locations

# The acceptance workloads, larger programs (cached builds, as probe_decode.sh
# makes them; skipped without ../shared)
if W=$("$PK_ROOT/scripts/workloads.sh" dir 2>/dev/null) && [ -d "$PK_ROOT/../shared/workloads" ]; then
    if PK_WORKLOADS_CACHE=1 XFLAGS="-fpseudo-probe-for-profiling" "$PK_ROOT/scripts/workloads.sh" build test-probe lua sqlite >/dev/null 2>&1; then
        same lua-att "$W/out/test-probe/lua" "${att[@]}"
        same sqlite-intel "$W/out/test-probe/speedtest1" "${intel[@]}"
    else
        fail "building lua and sqlite with probes"
    fi
fi

# The comparisons above are not vacuous: the listings hold what the
# fixtures are for.
has() { grep -q -e "$2" "$T/$1"; }
check "probes listed (inlined ones too)" has inline-att.want '^ \[Probe\]:	FUNC: _ZL2l3i[^ ]* Index: 1  Type: Block  Inlined: @ top:[0-9]* @ '
check "descriptors listed" has inline-att.want '^Pseudo Probe Desc:$'
check "source locations (inline frames)" has inline-intel.want ' @ top:'
check "intel syntax" has mix-intel.want 'qword ptr \[rip + '
check "lock prefix" has mix-att.want ':	lock\( \|$\)'
check "64-bit constant" has mix-att.want '	movabsq	\$-'
check "jump table" has mix-att.want '	jmpq	\*'
check "x87" has mix_gcc-att.want '	fldt	'
check "AVX-512 (zmm/ymm/k registers)" has mix_avx512-att.want '%k[1-7]\|%[yz]mm'
check "function filter" test "$(grep -c '^<' "$T/inline-only.want")" -eq 2
nmn=$(cat "$T"/*-att.want | awk -F'\t' '/^ *[0-9a-f]+:\t/ {print $2}' | sort -u | wc -l)
check "many instruction kinds ($nmn distinct AT&T mnemonics)" test "$nmn" -ge 60
# a check that can tell the syntaxes apart
differ() { ! cmp -s "$1" "$2"; }
check "AT&T and Intel listings differ" differ "$T/mix-att.want" "$T/mix-intel.want"

# pgokit's own command prints the same text
"$PGOKIT" disasm --binary "$T/mix" --source-locations --pseudo-probes > "$T/disasm.out"
check "pgokit disasm = the drop-in" cmp -s "$T/disasm.out" "$T/mix-att.got"

# --show-source-locations alone is refused, as llvm-profgen refuses it
"$PGOKIT" llvm-profgen --perfscript="$T/empty.script" --binary="$T/mix" --output="$T/unused" \
    --show-source-locations > /dev/null 2> "$T/alone.err"
check "--show-source-locations alone refused" test $? -ne 0
check "refusal says why" grep -q 'should work together with --show-disassembly-only' "$T/alone.err"

# AArch64: llvm-profgen-19 disassembles it; pgokit refuses it by name
if command -v aarch64-linux-gnu-gcc-12 >/dev/null &&
    clang-19 --target=aarch64-linux-gnu -fuse-ld=lld -O2 "$mix" -o "$T/mix_a64" 2>/dev/null; then
    "$PGOKIT" llvm-profgen --perfscript="$T/empty.script" --binary="$T/mix_a64" --output="$T/unused" \
        --show-disassembly-only > "$T/a64.out" 2> "$T/a64.err"
    check "aarch64 refused" test $? -ne 0
    check "aarch64 refusal names the machine" grep -q 'x86-64 binaries only (this one is aarch64)' "$T/a64.err"
    check "aarch64: nothing half-written" test ! -s "$T/a64.out"
fi
finish
