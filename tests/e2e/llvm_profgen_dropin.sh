#!/usr/bin/env bash
# `pgokit llvm-profgen ARGS...` and pgokit run through a link named
# llvm-profgen take llvm-profgen's command lines verbatim (the same words
# as in llvm-profgen's own tests) and give llvm-profgen-19's profiles on
# the same input; what pgokit does not support is refused by name.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profdata-19 llvm-profgen-19 qemu-x86_64 python3
src="$PK_ROOT/tests/programs/profgen_recurse.c"
similarity() { llvm-profdata-19 overlap --sample "$1" "$2" 2>/dev/null | sed -n 's/.*Whole program profile similarity: *\([0-9.]*\)%.*/\1/p' | head -n 1; }
flat() { llvm-profdata-19 merge --sample --text --convert-sample-profile-layout=flat "$1" -o "$1.flat" 2>/dev/null; }
atleast() { python3 -c "import sys; sys.exit(0 if float('${1:-0}') >= $2 else 1)"; }
ln -s "$PGOKIT" "$T/llvm-profgen"
for kind in probe dwarf; do
    flags=; [ $kind = probe ] && flags=-fpseudo-probe-for-profiling
    clang-19 -O2 -g $flags "$src" -o "$T/$kind"
    "$PGOKIT" record --emulate -q -o "$T/$kind.data" -- "$T/$kind" 20000 >/dev/null
    "$PGOKIT" dump --perfscript "$T/$kind.data" > "$T/$kind.script"
    # the command line of llvm-profgen's tests, word for word
    args=(--format=text --perfscript="$T/$kind.script" --binary="$T/$kind" --output="$T/$kind.pk")
    check "$kind: pgokit llvm-profgen ${args[0]} --perfscript=... --binary=... --output=..." "$PGOKIT" llvm-profgen "${args[@]}" 2>/dev/null
    llvm-profgen-19 --format=text --perfscript="$T/$kind.script" --binary="$T/$kind" --output="$T/$kind.ll" 2>/dev/null
    flat "$T/$kind.pk"; flat "$T/$kind.ll"
    ov=$(similarity "$T/$kind.ll" "$T/$kind.pk"); ovf=$(similarity "$T/$kind.ll.flat" "$T/$kind.pk.flat")
    echo "$kind: similarity with llvm-profgen-19 ${ov:-?}% (nested), ${ovf:-?}% (flattened)"
    check "$kind: a nested context-sensitive profile, as llvm-profgen-19 writes" \
        bash -c "grep -q '^ [0-9.]*: [a-z_A-Z]*:[0-9]*\$' '$T/$kind.pk' && ! grep -q '^\[' '$T/$kind.pk'"
    check "$kind: similarity >= 90% (nested: the two pre-inliners decide apart)" atleast "$ov" 90
    check "$kind: similarity >= 97% (flattened)" atleast "$ovf" 97
    # the same through a link named llvm-profgen, with LLVM's other spellings
    check "$kind: through a link named llvm-profgen, -opt and 'opt value'" \
        "$T/llvm-profgen" -format text -perfscript "$T/$kind.script" -binary="$T/$kind" -o "$T/$kind.link.pk" 2>/dev/null
    check "$kind: the same profile" cmp -s "$T/$kind.pk" "$T/$kind.link.pk"
done
# --perfdata (llvm-profgen runs perf script itself; pgokit reads the file)
check "--perfdata" "$PGOKIT" llvm-profgen --format=text --perfdata="$T/probe.data" --binary="$T/probe" --output="$T/pd.pk" 2>/dev/null
check "--perfdata: the profile of the same samples" cmp -s "$T/probe.pk" "$T/pd.pk"
# extbinary by default, as llvm-profgen
check "default format: extbinary" "$PGOKIT" llvm-profgen --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/eb.prof" 2>/dev/null
check "default format: llvm-profdata-19 sees extbinary sections" grep -q 'LBRProfileSection' <(llvm-profdata-19 show --sample --show-sec-info-only "$T/eb.prof")
# --ignore-stack-samples: the probe-only (flat) profile
"$PGOKIT" llvm-profgen --format=text --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/ign.pk" --ignore-stack-samples 2>/dev/null
llvm-profgen-19 --format=text --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/ign.ll" --ignore-stack-samples 2>/dev/null
check "--ignore-stack-samples: no contexts" bash -c "! grep -q '^\[' '$T/ign.pk'"
check "--ignore-stack-samples: similarity >= 97%" atleast "$(similarity "$T/ign.ll" "$T/ign.pk")" 97
# llvm-profgen reads the stacks before it ignores them, and leaves out the
# samples whose leaf is in a prologue or epilogue (emulated LBR samples at a
# taken branch: a callee's first instruction is a common leaf); the drop-in
# does too. Line-based: llvm-profgen-19's profile; probe-based: the same
# counts (the function totals are computed apart)
"$PGOKIT" llvm-profgen --format=text --perfscript="$T/dwarf.script" --binary="$T/dwarf" --output="$T/ignd.pk" --ignore-stack-samples 2> "$T/ignd.err"
llvm-profgen-19 --format=text --perfscript="$T/dwarf.script" --binary="$T/dwarf" --output="$T/ignd.ll" --ignore-stack-samples 2>/dev/null
check "--ignore-stack-samples: samples with the leaf in a prologue or epilogue are left out" \
    grep -q '[1-9][0-9]* left out with the leaf in a prologue or epilogue' "$T/ignd.err"
check "--ignore-stack-samples (line-based): llvm-profgen-19's profile" cmp "$T/ignd.ll" "$T/ignd.pk"
check "--ignore-stack-samples (probe-based): llvm-profgen-19's counts" \
    diff <(grep -v '^[^ ]' "$T/ign.ll") <(grep -v '^[^ ]' "$T/ign.pk")
# pgokit's own flat profile keeps them: their branch stacks are right
"$PGOKIT" profgen --ignore-stack-samples --perf "$T/dwarf.data" --binary "$T/dwarf" -o "$T/ignd.own" 2> "$T/ignd.own.err"
check "pgokit profgen --ignore-stack-samples keeps them" bash -c "! grep -q 'left out with the leaf' '$T/ignd.own.err'"
# --dwp: the split-DWARF package of a binary built with -gsplit-dwarf (its
# .dwo files gone: only the package has the functions)
mkdir "$T/split"
(cd "$T/split" && clang-19 -O2 -g -gsplit-dwarf "$src" -o split && llvm-dwp-19 -e split -o split.dwp && rm -f ./*.dwo)
"$PGOKIT" record --emulate --no-callchain -q -o "$T/split.data" -- "$T/split/split" 20000 >/dev/null
"$PGOKIT" dump --perfscript "$T/split.data" > "$T/split.script"
sargs=(--format=text --perfscript="$T/split.script" --binary="$T/split/split" --dwp="$T/split/split.dwp")
check "--dwp: a profile" "$PGOKIT" llvm-profgen "${sargs[@]}" --output="$T/split.pk" 2>/dev/null
llvm-profgen-19 "${sargs[@]}" --output="$T/split.ll" 2>/dev/null
check "--dwp: llvm-profgen-19's profile" cmp "$T/split.ll" "$T/split.pk"
check "--dwp: the functions are named" grep -q '^main:' "$T/split.pk"
# refused by name, nothing written
for o in --color --print-options; do
    "$PGOKIT" llvm-profgen --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/no.prof" "$o" 2> "$T/no.err"
    rc=$?
    name=${o%%=*}
    check "$name: refused (exit 2), by name" bash -c "[ $rc -eq 2 ] && grep -q \"option $name is not supported\" '$T/no.err'"
done
check "nothing written when refused" test ! -e "$T/no.prof"
# --show-pseudo-probe lists probes only with --show-disassembly-only (see
# profgen_llvm_disasm.sh): alone it is refused, not ignored; the listing
# goes to stdout, no profile is written
"$PGOKIT" llvm-profgen --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/no.prof" --show-pseudo-probe 2> "$T/no.err"
check "--show-pseudo-probe alone: refused (exit 2), by name" bash -c "[ $? -eq 2 ] && grep -q -- '--show-pseudo-probe should work together with --show-disassembly-only' '$T/no.err'"
"$PGOKIT" llvm-profgen --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/no.prof" --show-disassembly-only > "$T/dis.out"
check "--show-disassembly-only: a listing, no profile" bash -c "grep -q '^<main>:' '$T/dis.out' && test ! -e '$T/no.prof'"
"$PGOKIT" llvm-profgen --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/no.prof" "$T/stray" 2> "$T/no.err"
check "a stray argument is refused" grep -q "unexpected argument" "$T/no.err"
finish
