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
# the no-PIE offsets are not the vaddrs (base 0x401000 taken off)
check "nopie: offsets below the first executable segment's vaddr" \
    bash -c "! grep -q '^40[0-9a-f]\{4\}-' '$T/nopie.1.pk.raw' && grep -q '^40[0-9a-f]\{4\}-' '$T/nopie.0.pk.raw'"
# samples with call stacks would give llvm-profgen's context text: refused, nothing written
clang-19 -O2 -g "$src" -o "$T/cs"
"$PGOKIT" record --emulate -q -o "$T/cs.data" -- "$T/cs" 2000 >/dev/null
"$PGOKIT" llvm-profgen --binary="$T/cs" --perfdata="$T/cs.data" --output="$T/cs.raw" --skip-symbolization 2> "$T/cs.err"
check "stacks: the context text is refused by what it lacks" grep -q "context-sensitive unsymbolized text is not supported" "$T/cs.err"
check "stacks: nothing written" test ! -e "$T/cs.raw"
check "stacks, --ignore-stack-samples: the flat text" \
    "$PGOKIT" llvm-profgen --binary="$T/cs" --perfdata="$T/cs.data" --output="$T/cs.raw" --skip-symbolization --ignore-stack-samples -q
# damaged text: the line is named, nothing written
printf '2\n10-20:3\nzz-30:1\n0\n' > "$T/bad.raw"
"$PGOKIT" llvm-profgen --binary="$T/cs" --unsymbolized-profile="$T/bad.raw" --output="$T/bad.prof" 2> "$T/bad.err"
check "damaged text: line 3 named" grep -q "bad.raw: line 3: 'zz-30:1' is not" "$T/bad.err"
printf '[main:1 @ foo]\n0\n0\n' > "$T/ctx.raw"
"$PGOKIT" llvm-profgen --binary="$T/cs" --unsymbolized-profile="$T/ctx.raw" --output="$T/bad.prof" 2> "$T/ctx.err"
check "context text as input: refused, line named" grep -q "ctx.raw: line 1: a calling context" "$T/ctx.err"
check "nothing written" test ! -e "$T/bad.prof"
finish
