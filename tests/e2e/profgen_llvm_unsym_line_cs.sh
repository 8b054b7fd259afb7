#!/usr/bin/env bash
# llvm-profgen's line-based context text (a binary without pseudo-probes,
# samples with call stacks): --skip-symbolization writes contexts named by
# source frames ("[main:1 @ foo:3 @ bar]", the leaf's inline frames
# included), each range cut where the inline frames change; and
# --unsymbolized-profile reads such text back into a context-sensitive
# profile. Compared byte for byte with llvm-profgen-19 on recordings of our
# own fixtures (emulated LBR with call stacks), with inlining
# (probe_inline.c, built without probes) and without (profgen_recurse.c:
# mutual recursion, a qsort callback).
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 qemu-x86_64
for prog in probe_inline profgen_recurse; do
    clang-19 -O2 -g "$PK_ROOT/tests/programs/$prog.c" -o "$T/$prog"
    "$PGOKIT" record --emulate -q -o "$T/$prog.data" -- "$T/$prog" 20000 >/dev/null
    "$PGOKIT" dump --perfscript "$T/$prog.data" > "$T/$prog.all.script"
    # as llvm-profgen-19 sees them: samples whose leaf is outside the binary
    # or in its prologue/epilogue heuristic left out (llvm-profgen drops
    # them, pgokit keeps them)
    map=$(awk -v b="/$prog" '/PERF_RECORD_MMAP2/ && / r-xp / && substr($NF, length($NF) - length(b) + 1) == b {print $3, $5; exit}' \
        "$T/$prog.all.script")
    lo=${map%% *}; lo=${lo#[0x}; lo=${lo%%(*}; len=${map#*(0x}; len=${len%%)*}; pgoff=${map##* }
    python3 "$PK_ROOT/tests/e2e/leaf_in_binary.py" "$lo" "$(printf '%x' $((0x$lo + 0x$len)))" \
        "$T/$prog.all.script" > "$T/$prog.in.script"
    python3 "$PK_ROOT/tests/e2e/leaf_not_prologue.py" "$T/$prog" "$(printf '%x' $((0x$lo - pgoff)))" \
        "$T/$prog.in.script" > "$T/$prog.script"
    check "$prog: samples left" grep -q '^ 0x' "$T/$prog.script"
    check "$prog: --skip-symbolization with stacks" "$PGOKIT" llvm-profgen -q --format=text --binary="$T/$prog" \
        --perfscript="$T/$prog.script" --output="$T/$prog.pk.raw" --skip-symbolization
    llvm-profgen-19 --format=text --binary="$T/$prog" --perfscript="$T/$prog.script" --output="$T/$prog.ll.raw" \
        --skip-symbolization 2>/dev/null
    check "$prog: llvm-profgen-19's text" cmp "$T/$prog.ll.raw" "$T/$prog.pk.raw"
    # the profile of the samples (llvm-profgen 19 infers no tail-call frames
    # for line-based contexts; pgokit does unless told not to)
    pargs=(--format=text --binary="$T/$prog" --perfscript="$T/$prog.script" --csspgo-preinliner=0
           --gen-cs-nested-profile=0 --infer-missing-frames=false)
    check "$prog: the context profile" "$PGOKIT" llvm-profgen -q "${pargs[@]}" --output="$T/$prog.pk.cs"
    llvm-profgen-19 "${pargs[@]}" --output="$T/$prog.ll.cs" 2>/dev/null
    check "$prog: llvm-profgen-19's context profile" cmp "$T/$prog.ll.cs" "$T/$prog.pk.cs"
    check "$prog: the leaf's inline frames are in the contexts" grep -q '^\[[a-z_0-9]*:[0-9.]* @ ' "$T/$prog.pk.raw"
    for opts in "" "--csspgo-preinliner=0 --gen-cs-nested-profile=0" "--compress-recursion=0 --csprof-max-context-depth=1"; do
        check "$prog: --unsymbolized-profile (llvm-profgen-19's text) $opts" "$PGOKIT" llvm-profgen -q --format=text \
            --binary="$T/$prog" --unsymbolized-profile="$T/$prog.ll.raw" --output="$T/$prog.pk.prof" $opts
        llvm-profgen-19 --format=text --binary="$T/$prog" --unsymbolized-profile="$T/$prog.ll.raw" \
            --output="$T/$prog.ll.prof" $opts 2>/dev/null
        check "$prog: the profile llvm-profgen-19 makes of it $opts" cmp "$T/$prog.ll.prof" "$T/$prog.pk.prof"
    done
done
# the text read and written again (--unsymbolized-profile with
# --skip-symbolization): the same text
check "probe_inline: llvm-profgen-19's text read and written back" "$PGOKIT" llvm-profgen -q --format=text \
    --binary="$T/probe_inline" --unsymbolized-profile="$T/probe_inline.ll.raw" --skip-symbolization --output="$T/rt.raw"
check "probe_inline: the same text" cmp "$T/probe_inline.ll.raw" "$T/rt.raw"
check "probe_inline: contexts of inlined code" grep -q ' @ top:[0-9.]* @ l1:[0-9.]* @ ' "$T/probe_inline.pk.raw"
# a profile from our own text is the one pgokit makes from the samples
"$PGOKIT" llvm-profgen -q --format=text --binary="$T/probe_inline" --unsymbolized-profile="$T/probe_inline.pk.raw" \
    --output="$T/via_text.prof" --csspgo-preinliner=0 --gen-cs-nested-profile=0
"$PGOKIT" llvm-profgen -q --format=text --binary="$T/probe_inline" --perfscript="$T/probe_inline.script" \
    --output="$T/direct.prof" --csspgo-preinliner=0 --gen-cs-nested-profile=0
# (but for "was inlined": the text does not keep it, llvm-profgen's neither)
check "probe_inline: through the text or not, the same counts" \
    cmp <(grep -v '!Attributes' "$T/direct.prof") <(grep -v '!Attributes' "$T/via_text.prof")
check "probe_inline: inlined contexts marked from the samples" grep -q '!Attributes: 1' "$T/direct.prof"
# a context that is not a frame list: the line is named, nothing written
printf '[main:x @ foo]\n0\n0\n' > "$T/bad.raw"
"$PGOKIT" llvm-profgen --binary="$T/probe_inline" --unsymbolized-profile="$T/bad.raw" --output="$T/bad.prof" 2> "$T/bad.err"
check "damaged context: line 1 named" grep -q "bad.raw: line 1" "$T/bad.err"
check "damaged context: nothing written" test ! -e "$T/bad.prof"
printf '[main:1 @ foo\n0\n0\n' > "$T/open.raw"
"$PGOKIT" llvm-profgen --binary="$T/probe_inline" --unsymbolized-profile="$T/open.raw" --output="$T/bad.prof" 2> "$T/open.err"
check "a context without its ']': line 1 named" grep -q "open.raw: line 1: .* does not end with ']'" "$T/open.err"
# flat counts, then a context: the line is named, nothing written
printf '1\n10-20:3\n0\n[main:1 @ foo]\n0\n0\n' > "$T/mix.raw"
"$PGOKIT" llvm-profgen --binary="$T/probe_inline" --unsymbolized-profile="$T/mix.raw" --output="$T/bad.prof" 2> "$T/mix.err"
check "flat counts then a context: line 4 named" grep -q "mix.raw: line 4: a context after counts without one" "$T/mix.err"
check "nothing written" test ! -e "$T/bad.prof"
finish
