#!/usr/bin/env bash
# debuginfo_dwz.sh — debug files as distributions ship them: compressed by
# `dwz -m` into a shared supplementary file (.gnu_debugaltlink with
# DW_FORM_GNU_ref_alt / GNU_strp_alt; with -5, .debug_sup with DWARF 5's
# DW_FORM_ref_sup4 / strp_sup), found by build-id under --debug-dir, the
# supplementary file under the same root as dh_dwz lays it out
# (/usr/lib/debug/.dwz/...). For fully stripped gcc-12 -O2 -g binaries:
#  - `pgokit symbolize` equals llvm-symbolizer-19 on the unstripped binary on
#    every instruction address and every sampled address;
#  - profgen's profile equals the unstripped binary's;
#  - the summary names the supplementary file; a missing one is a clear error.
source "$(dirname "$0")/../lib.sh"
need gcc-12 dwz objcopy llvm-symbolizer-19 llvm-objdump-19 llvm-dwarfdump-19 perf qemu-x86_64
P=$PK_ROOT/tests/programs
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

CF="-O2 -g -fno-pie -no-pie -fno-omit-frame-pointer"
gcc-12 $CF "$P/profgen_demo.c" -o "$T/a" && gcc-12 $CF "$P/binary_inline.c" -o "$T/b" ||
    { fail "build fixtures"; finish; exit; }
mkdir -p "$T/bin"
for x in a b; do objcopy --strip-all "$T/$x" "$T/bin/$x"; done
"$PGOKIT" record --emulate -q -o "$T/a.data" -- "$T/bin/a" 8 >/dev/null 2>&1
check "recorded the stripped binary" test -s "$T/a.data"
"$PGOKIT" profgen --binary "$T/a" --perf "$T/a.data" -o "$T/ref.txt" --format text -q
perf script -F ip,brstack -i "$T/a.data" 2>/dev/null |
    awk '{ print $1; for (i = 2; i <= NF; i++) { split($i, f, "/"); print f[1]; print f[2] } }' |
    grep -E '^0x[0-9a-f]+$' | sort -u > "$T/a.sampled"
for x in a b; do
    llvm-objdump-19 -d --no-show-raw-insn "$T/$x" | awk '/^ +[0-9a-f]+:/ { a=$1; sub(":", "", a); print "0x" a }' \
        > "$T/$x.insn"
done

# layout MODE: a debug root as dh_dwz leaves it, under $T/MODE
layout() {
    local mode=$1 r=$T/$1/usr/lib/debug w=$T/$1/work
    mkdir -p "$r/.dwz" "$w"
    for x in a b; do objcopy --only-keep-debug "$T/$x" "$w/$x.debug"; done
    (cd "$w" && dwz $([ "$mode" = sup ] && echo -5) -m common.debug -M /usr/lib/debug/.dwz/common.debug \
        a.debug b.debug) || fail "$mode: dwz"
    mv "$w/common.debug" "$r/.dwz/common.debug"
    for x in a b; do
        local id; id=$(readelf -n "$T/$x" | awk '/Build ID/ {print $3}')
        mkdir -p "$r/.build-id/${id:0:2}"
        mv "$w/$x.debug" "$r/.build-id/${id:0:2}/${id:2}.debug"
    done
}

for mode in alt sup; do
    layout $mode
    root=$T/$mode/usr/lib/debug
    forms=$(llvm-dwarfdump-19 -v --debug-info "$root"/.build-id/*/*.debug 2>/dev/null |
        grep -oE 'DW_FORM_(GNU_ref_alt|GNU_strp_alt|ref_sup4|strp_sup)' | sort -u | tr '\n' ' ')
    echo "$mode: forms $forms"
    if [ $mode = alt ]; then
        check "alt: the debug files use GNU_ref_alt and GNU_strp_alt" \
            sh -c "echo '$forms' | grep -q GNU_ref_alt && echo '$forms' | grep -q GNU_strp_alt"
    else
        check "sup: the debug files use ref_sup4 and strp_sup" \
            sh -c "echo '$forms' | grep -q ref_sup4 && echo '$forms' | grep -q strp_sup"
    fi
    for x in a b; do
        for set in insn sampled; do
            [ -f "$T/$x.$set" ] || continue
            llvm-symbolizer-19 --obj="$T/$x" --inlines --no-demangle --output-style=JSON < "$T/$x.$set" |
                sed "s|\"ModuleName\":\"$T/$x\"|\"ModuleName\":\"$T/bin/$x\"|" > "$T/$x.$set.llvm"
            "$PGOKIT" symbolize --binary "$T/bin/$x" --debug-dir "$root" --output-style=JSON \
                < "$T/$x.$set" > "$T/$mode.$x.$set.ours" 2>"$T/$mode.$x.err"
            n=$(wc -l < "$T/$x.$set")
            bad=$(diff "$T/$mode.$x.$set.ours" "$T/$x.$set.llvm" | grep -c '^[<>]')
            [ "$bad" -gt 0 ] && { diff "$T/$mode.$x.$set.ours" "$T/$x.$set.llvm" | head -4; head -2 "$T/$mode.$x.err"; }
            check "$mode: symbolize $x ($set): equal to llvm-symbolizer-19 on $n addresses" \
                [ "$bad" -eq 0 -a "$n" -gt 20 ]
        done
    done
    check "$mode: symbolize names the supplementary file" grep -q "dwz supplementary file $root/.dwz/common.debug" \
        "$T/$mode.a.err"
    "$PGOKIT" profgen --binary "$T/bin/a" --debug-dir "$root" --perf "$T/a.data" -o "$T/$mode.txt" --format text \
        2>"$T/$mode.pg.err"
    check "$mode: profile from the stripped binary + dwz'd debug file equals the unstripped binary's" \
        cmp -s "$T/ref.txt" "$T/$mode.txt"
    check "$mode: profgen's summary names both debug files" \
        grep -q "debug info: $root/.build-id/.*\.debug (build-id), dwz supplementary file" "$T/$mode.pg.err"
done

# the supplementary file missing: a clear error naming it, no output
rm "$T/alt/usr/lib/debug/.dwz/common.debug"
"$PGOKIT" profgen --binary "$T/bin/a" --debug-dir "$T/alt/usr/lib/debug" --perf "$T/a.data" -o "$T/miss.txt" \
    2>"$T/miss.err"; rc=$?
check_eq "supplementary file missing: exit 1" 1 "$rc"
check "supplementary file missing: no output" test ! -e "$T/miss.txt"
check "supplementary file missing: the message names it" grep -q "/usr/lib/debug/.dwz/common.debug" "$T/miss.err"
finish
