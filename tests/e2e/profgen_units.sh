#!/usr/bin/env bash
# The pre-inliner keeps each callee in reach of its caller's compilation
# unit. units_step is defined in units_lib.c and called in units_main.c's hot
# loop: without LTO clang-19 cannot inline it there, and a profile that nests
# it under main (as llvm-profgen-19 does) leaves units_lib.c's compilation
# with no count for it. With ThinLTO (cross-unit inlining in the DWARF) it may
# be inlined, and is. The judge is clang-19 itself: the entry count it gives
# units_step when it compiles units_lib.c with the profile.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 llvm-profdata-19 perf qemu-x86_64
P=$PK_ROOT/tests/programs
CF=(-O2 -g -fpseudo-probe-for-profiling)
clang-19 "${CF[@]}" -c "$P/units_main.c" -o "$T/m.o" && clang-19 "${CF[@]}" -c "$P/units_lib.c" -o "$T/l.o" &&
    clang-19 "$T/m.o" "$T/l.o" -o "$T/u" || fail "build without LTO"
check "the binary calls units_step (no LTO: not inlined)" bash -c "objdump -d '$T/u' | grep -q 'call.*<units_step>'"
check "record (emulated LBR + stacks)" "$PGOKIT" record --emulate -q -o "$T/u.data" -- "$T/u" 200000
"$PGOKIT" profgen --binary "$T/u" --perf "$T/u.data" -o "$T/u.prof" --format text 2> "$T/u.log"
check "profgen: a CSSPGO profile" test -s "$T/u.prof"
check "profgen names the units it kept apart" grep -Eq '2 compilation units: 1 callees not inlined, their bodies are in another unit' "$T/u.log"
check "units_step: a top-level profile of its own" grep -q '^units_step:' "$T/u.prof"
# an inlinee under main is " LINE: units_step:TOTAL"; a call " LINE: N units_step:CALLS"
inlined_in_main() { awk '/^main:/ {on = 1; next} /^[^ ]/ {on = 0} on' "$1" | grep -Eq '^ +[0-9.]+: units_step:'; }
check "units_step not nested under main" bash -c "$(declare -f inlined_in_main); ! inlined_in_main '$T/u.prof'"
check "main calls it" bash -c "awk '/^main:/ {on = 1; next} /^[^ ]/ {on = 0} on' '$T/u.prof' | grep -Eq '^ +[0-9.]+: [0-9]+ units_step:[1-9]'"
# llvm-profgen's semantics, through the drop-in and llvm-profgen-19 itself
perf script --show-mmap-events -F ip,brstack -i "$T/u.data" > "$T/u.script" 2>/dev/null
llvm-profgen-19 --binary "$T/u" --perfscript "$T/u.script" --format=text -o "$T/u.llvm" 2>/dev/null
check "llvm-profgen-19 nests units_step under main" bash -c "$(declare -f inlined_in_main); inlined_in_main '$T/u.llvm'"
check "--preinline-across-units does as llvm-profgen-19" \
    "$PGOKIT" profgen -q --binary "$T/u" --perf "$T/u.data" -o "$T/ux.prof" --format text --preinline-across-units
check "... units_step nested under main" bash -c "$(declare -f inlined_in_main); inlined_in_main '$T/ux.prof'"
# clang-19 compiling units_lib.c: the entry count units_step gets
entry() {
    clang-19 "${CF[@]}" -fprofile-sample-use="$1" -S -emit-llvm "$P/units_lib.c" -o "$T/l.ll" 2>/dev/null &&
        awk '/^define.*@units_step\(/ {match($0, /!prof ![0-9]+/); id = substr($0, RSTART + 7, RLENGTH - 7)}
             id != "" && $1 == "!" id {match($0, /i64 -?[0-9]+/); print substr($0, RSTART + 4, RLENGTH - 4)}' "$T/l.ll"
}
e_pk=$(entry "$T/u.prof") e_llvm=$(entry "$T/u.llvm")
check "clang-19 finds units_step's calls in pgokit's profile (entry count $e_pk)" test "${e_pk:-0}" -gt 0
check "... and none in llvm-profgen-19's (entry count ${e_llvm:-none})" test "${e_llvm:--1}" -le 0
# ThinLTO: units_lib.c's body reaches main's unit, and the DWARF says so
if command -v ld.lld-19 >/dev/null || command -v ld.lld >/dev/null; then
    lld=$(command -v ld.lld-19 >/dev/null && echo --ld-path="$(command -v ld.lld-19)" || echo -fuse-ld=lld)
    clang-19 "${CF[@]}" -flto=thin -c "$P/units_main.c" -o "$T/tm.o" && clang-19 "${CF[@]}" -flto=thin -c "$P/units_lib.c" -o "$T/tl.o" &&
        clang-19 -flto=thin "$lld" -O2 "$T/tm.o" "$T/tl.o" -o "$T/t" || fail "build with ThinLTO"
    check "ThinLTO: units_step inlined into main" bash -c "! objdump -d '$T/t' | grep -q 'call.*<units_step>'"
    check "ThinLTO: record" "$PGOKIT" record --emulate -q -o "$T/t.data" -- "$T/t" 200000
    "$PGOKIT" profgen --binary "$T/t" --perf "$T/t.data" -o "$T/t.prof" --format text 2> "$T/t.log"
    check "ThinLTO: profgen sees the units inline across each other" grep -q 'inlined across each other (LTO)' "$T/t.log"
else
    echo "skipped: ThinLTO part (no ld.lld)"
fi
finish
