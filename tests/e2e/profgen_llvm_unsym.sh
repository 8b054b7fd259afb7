#!/usr/bin/env bash
# llvm-profgen's unsymbolized profile text: --skip-symbolization writes it,
# --unsymbolized-profile reads it, with addresses as offsets from the first
# executable segment (llvm-profgen's default) or as vaddrs (--use-offset=0);
# and --fill-zero-for-all-funcs, which gives every function a profile.
# Compared byte for byte with llvm-profgen-19 on a recording of our own
# fixture (emulated LBR, no call stacks: the flat text).
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 qemu-x86_64
src="$PK_ROOT/tests/programs/profgen_recurse.c"
for pie in pie nopie; do
    flags=; [ $pie = nopie ] && flags="-fno-pie -no-pie"
    clang-19 -O2 -g $flags "$src" -o "$T/$pie"
    "$PGOKIT" record --emulate --no-callchain -q -o "$T/$pie.data" -- "$T/$pie" 20000 >/dev/null
    "$PGOKIT" dump --perfscript "$T/$pie.data" > "$T/$pie.script"
    for off in 1 0; do
        base=(--binary="$T/$pie" --use-offset=$off --format=text)
        check "$pie --use-offset=$off: --skip-symbolization" \
            "$PGOKIT" llvm-profgen "${base[@]}" --perfscript="$T/$pie.script" --output="$T/$pie.$off.pk.raw" --skip-symbolization
        llvm-profgen-19 "${base[@]}" --perfscript="$T/$pie.script" --output="$T/$pie.$off.ll.raw" --skip-symbolization 2>/dev/null
        check "$pie --use-offset=$off: the text llvm-profgen-19 writes (PLT stubs left out)" \
            cmp "$T/$pie.$off.ll.raw" "$T/$pie.$off.pk.raw"
        check "$pie --use-offset=$off: --unsymbolized-profile (llvm-profgen-19's text)" \
            "$PGOKIT" llvm-profgen "${base[@]}" --unsymbolized-profile="$T/$pie.$off.ll.raw" --output="$T/$pie.$off.pk.prof"
        llvm-profgen-19 "${base[@]}" --unsymbolized-profile="$T/$pie.$off.ll.raw" --output="$T/$pie.$off.ll.prof" 2>/dev/null
        check "$pie --use-offset=$off: the profile llvm-profgen-19 makes of it" \
            cmp "$T/$pie.$off.ll.prof" "$T/$pie.$off.pk.prof"
    done
done
# no branch counted (--leading-ip-only): an empty list written cleanly
# (the sanitizer build: no sort of a null array), as llvm-profgen-19 writes it
check "--leading-ip-only --skip-symbolization (sanitizer build)" "$PGOKIT_SAN" llvm-profgen -q --format=text \
    --binary="$T/pie" --perfscript="$T/pie.script" --output="$T/ip.pk.raw" --skip-symbolization --leading-ip-only
llvm-profgen-19 --format=text --binary="$T/pie" --perfscript="$T/pie.script" --output="$T/ip.ll.raw" \
    --skip-symbolization --leading-ip-only 2>/dev/null
check "--leading-ip-only --skip-symbolization: llvm-profgen-19's text" cmp "$T/ip.ll.raw" "$T/ip.pk.raw"
# --fill-zero-for-all-funcs: every function, sampled or not (an empty text: all at 0)
printf '0\n0\n' > "$T/zero.raw"
for in in zero.raw pie.1.ll.raw; do
    check "--fill-zero-for-all-funcs on $in" "$PGOKIT" llvm-profgen -q --format=text --binary="$T/pie" \
        --unsymbolized-profile="$T/$in" --output="$T/$in.pk.fz" --fill-zero-for-all-funcs
    llvm-profgen-19 --format=text --binary="$T/pie" --unsymbolized-profile="$T/$in" --output="$T/$in.ll.fz" \
        --fill-zero-for-all-funcs 2>/dev/null
    check "--fill-zero-for-all-funcs on $in: llvm-profgen-19's profile" cmp "$T/$in.ll.fz" "$T/$in.pk.fz"
done
check "--fill-zero-for-all-funcs: an unsampled function is there" grep -q '^odd:0:0' "$T/zero.raw.pk.fz"
# duplicated LBR entries make a "range" across a call (main's call to sorter,
# then sorter's call to qsort without the leafwork call between): llvm-profgen
# leaves it out of the text, and so does pgokit
sym() { nm "$T/nopie" | awk -v s="$1" '$3 == s {print $1}'; }
dis() { objdump -d --no-show-raw-insn "$T/nopie" | awk -v f="<$1>:" '$0 ~ f {on = 1; next} on && /^$/ {exit} on'; }
first() { dis "$1" | awk -v p="$2" '$0 ~ p {sub(":", "", $1); print $1; exit}'; }
S=$(sym sorter) L=$(sym leafwork) C1=$(first sorter 'call.*<leafwork>') C2=$(first sorter 'call.*<qsort@plt>')
LR=$(first leafwork '\tret') M=$(first main 'call.*<sorter>') PLT=$(dis sorter | awk '/call.*<qsort@plt>/ {print $(NF-1); exit}')
R1=$(printf '%x' $((0x$C1 + 5)))
{
    for i in 1 2 3; do echo " 0x$C2/0x$PLT/P/-/-/0  0x$LR/0x$R1/P/-/-/0  0x$C1/0x$L/P/-/-/0  0x$M/0x$S/P/-/-/0"; done
    for i in 1 2 3 4 5; do echo " 0x$C2/0x$PLT/P/-/-/0  0x$M/0x$S/P/-/-/0"; done
} > "$T/dup.script"
check "duplicated LBR entries: --skip-symbolization" "$PGOKIT" llvm-profgen -q --format=text --binary="$T/nopie" \
    --perfscript="$T/dup.script" --output="$T/dup.pk.raw" --skip-symbolization
llvm-profgen-19 --format=text --binary="$T/nopie" --perfscript="$T/dup.script" --output="$T/dup.ll.raw" --skip-symbolization 2>/dev/null
check "duplicated LBR entries: the text llvm-profgen-19 writes" cmp "$T/dup.ll.raw" "$T/dup.pk.raw"
check "duplicated LBR entries: no range from sorter's entry across its call" \
    bash -c "! grep -q '^$(printf '%x' $((0x$S - 0x401000)))-$(printf '%x' $((0x$C2 - 0x401000))):' '$T/dup.pk.raw'"
# an unsymbolized text states its ranges: each is counted as given, every
# instruction of a function in it, also when it starts outside the code,
# between two instructions or in another function, or holds jumps (not LBR
# pairs to check); only the function it starts in is written whole (at 0
# where nothing ran), as llvm-profgen-19 reads it
M=$(sym main) LW=$(sym leafwork)
printf '4\n%x-%x:7\n%x-%x:5\n%x-%x:3\n10-20:2\n0\n' $((0x$M - 0x20)) $((0x$M + 0x10)) $((0x$S + 1)) $((0x$S + 0x30)) \
    $((0x$LW)) $((0x$LW + 0x40)) > "$T/given.raw"
check "ranges as given: a profile" "$PGOKIT" llvm-profgen -q --format=text --binary="$T/nopie" --use-offset=0 \
    --unsymbolized-profile="$T/given.raw" --output="$T/given.pk"
llvm-profgen-19 --format=text --binary="$T/nopie" --use-offset=0 --unsymbolized-profile="$T/given.raw" \
    --output="$T/given.ll" 2>/dev/null
check "ranges as given: llvm-profgen-19's profile" cmp "$T/given.ll" "$T/given.pk"
# the no-PIE offsets are not the vaddrs (base 0x401000 taken off)
check "nopie: offsets below the first executable segment's vaddr" \
    bash -c "! grep -q '^40[0-9a-f]\{4\}-' '$T/nopie.1.pk.raw' && grep -q '^40[0-9a-f]\{4\}-' '$T/nopie.0.pk.raw'"
# a pseudo-probe binary and samples with stacks: llvm-profgen's context text
# ("[0xSITE @ 0xSITE]" per context, offsets as the options say; branches
# from outside the binary, such as qsort calling the comparator, in the root
# context "[]"). Byte for byte on llvm-profgen's own inputs
# (bench/compat_llvm_profgen.sh: noinline-cs-pseudoprobe,
# recursion-compression-pseudoprobe, inline-cs-pseudoprobe) and on this
# recording, the samples llvm-profgen drops left out (leaf outside the
# binary, or in its prologue/epilogue heuristic: pgokit keeps those).
clang-19 -O2 -g -fpseudo-probe-for-profiling "$src" -o "$T/probe"
"$PGOKIT" record --emulate -q -o "$T/probe.data" -- "$T/probe" 20000 >/dev/null
"$PGOKIT" dump --perfscript "$T/probe.data" > "$T/probe.all.script"
map=$(awk '/PERF_RECORD_MMAP2/ && / r-xp / && $NF ~ /\/probe$/ {print $3, $5; exit}' "$T/probe.all.script")
lo=${map%% *}; lo=${lo#[0x}; lo=${lo%%(*}; len=${map#*(0x}; len=${len%%)*}; pgoff=${map##* }
python3 "$PK_ROOT/tests/e2e/leaf_in_binary.py" "$lo" "$(printf '%x' $((0x$lo + 0x$len)))" "$T/probe.all.script" \
    > "$T/probe.in.script"
python3 "$PK_ROOT/tests/e2e/leaf_not_prologue.py" "$T/probe" "$(printf '%x' $((0x$lo - pgoff)))" "$T/probe.in.script" \
    > "$T/probe.script"
check "probe, stacks: some samples kept" grep -q '^ 0x' "$T/probe.script"
for extra in --use-offset=1 --use-offset=0 --use-first-loadable-segment-as-base; do
    check "probe, stacks $extra: --skip-symbolization" "$PGOKIT" llvm-profgen -q --format=text --binary="$T/probe" \
        --perfscript="$T/probe.script" --output="$T/probe.pk.raw" --skip-symbolization $extra
    llvm-profgen-19 --format=text --binary="$T/probe" --perfscript="$T/probe.script" --output="$T/probe.ll.raw" \
        --skip-symbolization $extra 2>/dev/null
    check "probe, stacks $extra: llvm-profgen-19's text" cmp "$T/probe.ll.raw" "$T/probe.pk.raw"
done
# the newest LBR entry of every sample doubled (as some Intel parts record
# it): where the "range" between the two copies cannot have run, the stack
# of the older entries is unknown, and llvm-profgen counts them in the root
# context; pgokit too (byte for byte)
awk '/^ 0x/ {print " " $1 "  " substr($0, 2); next} {print}' "$T/probe.script" > "$T/dup2.script"
"$PGOKIT" llvm-profgen --format=text --binary="$T/probe" --perfscript="$T/dup2.script" --output="$T/dup2.pk.raw" \
    --skip-symbolization 2>/dev/null
llvm-profgen-19 --format=text --binary="$T/probe" --perfscript="$T/dup2.script" --output="$T/dup2.ll.raw" \
    --skip-symbolization 2>/dev/null
check "doubled newest LBR entries, stacks: llvm-profgen-19's context text" cmp "$T/dup2.ll.raw" "$T/dup2.pk.raw"
"$PGOKIT" profgen --binary "$T/probe" --perfscript "$T/dup2.script" -o "$T/dup2.prof" 2> "$T/dup2.err"
check "doubled newest LBR entries: entries counted without context, in the summary" \
    grep -q '; [1-9][0-9]* LBR entries at or before a range that cannot have run' "$T/dup2.err"
# a probe-only text's ranges as given too: every probe in them counts (one
# holding calls, one starting between two instructions, one outside code)
psym() { nm "$T/probe" | awk -v s="$1" '$3 == s {print $1}'; }
PS=$(psym sorter) PL=$(psym leafwork)
printf '3\n%x-%x:5\n%x-%x:3\n10-20:2\n0\n' $((0x$PS)) $((0x$PS + 0x60)) $((0x$PL + 1)) $((0x$PL + 0x40)) > "$T/pgiven.raw"
check "probe ranges as given: a profile" "$PGOKIT" llvm-profgen -q --format=text --binary="$T/probe" --use-offset=0 \
    --unsymbolized-profile="$T/pgiven.raw" --output="$T/pgiven.pk"
llvm-profgen-19 --format=text --binary="$T/probe" --use-offset=0 --unsymbolized-profile="$T/pgiven.raw" \
    --output="$T/pgiven.ll" 2>/dev/null
check "probe ranges as given: llvm-profgen-19's profile" cmp "$T/pgiven.ll" "$T/pgiven.pk"
awk '/^\[/ {root = $0 == "[]"} root && /->/' "$T/probe.pk.raw" > "$T/probe.root.br"
check "probe, stacks: branches from outside the binary, in the root context" grep -q . "$T/probe.root.br"
check "probe, stacks: contexts of two callers and more" grep -q '^\[0x[0-9a-f]* @ 0x' "$T/probe.pk.raw"
# (samples with call stacks on a binary without probes: llvm-profgen's
# line-based context text, tests/e2e/profgen_llvm_unsym_line_cs.sh)
clang-19 -O2 -g "$src" -o "$T/cs"
# damaged text: the line is named, nothing written
printf '2\n10-20:3\nzz-30:1\n0\n' > "$T/bad.raw"
"$PGOKIT" llvm-profgen --binary="$T/cs" --unsymbolized-profile="$T/bad.raw" --output="$T/bad.prof" 2> "$T/bad.err"
check "damaged text: line 3 named" grep -q "bad.raw: line 3: 'zz-30:1' is not" "$T/bad.err"
printf '[0x10 @ 0x20]\n0\n0\n' > "$T/ctx.raw"
"$PGOKIT" llvm-profgen --binary="$T/cs" --unsymbolized-profile="$T/ctx.raw" --output="$T/bad.prof" 2> "$T/ctx.err"
check "probe context text as input: refused, line named" grep -q "ctx.raw: line 1: '\[0x10 @ 0x20\]': llvm-profgen's context text of a binary with pseudo-probes" "$T/ctx.err"
check "nothing written" test ! -e "$T/bad.prof"
finish
