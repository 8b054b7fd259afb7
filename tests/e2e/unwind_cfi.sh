#!/usr/bin/env bash
# Call chains from stack copies (perf record --call-graph dwarf), unwound
# with the binary's .eh_frame (src/binary/cfi.c, src/unwind/stack_cfi.c), on
# a fixture built without frame pointers (tests/programs/unwind_cfi.c):
#  - rows: `pgokit decode --cfi` agrees with readelf --debug-dump=frames-interp
#    on every row of every FDE of the fixture built by clang-19 and gcc-12 for
#    x86-64 and AArch64 (with pointer authentication too), and of the C
#    library (thousands of hand-written and compiled frames);
#  - chains: a real `pgokit record --call-graph dwarf` of the clang and gcc
#    builds; `pgokit dump --unwind` gives the chain perf's own unwinder gives
#    (perf script) for >= 99 % of the samples whose leaf is in the fixture,
#    and >= 90 % of the samples in uw_hot read uw_hot <- uw_frame <- uw_outer
#    <- main;
#  - profgen: every sample of that recording unwound, none with its direct
#    caller unknown, no frame-pointer warning; --stack-copy-bytes shows what
#    shorter copies keep (1 KiB: the target below; 8 bytes: the chains stop
#    right above the frameless leaf's caller); code built without unwind
#    tables gets one warning line; the AutoFDO profile has the
#    indirect call's target (uw_hot, called through a pointer in uw_frame),
#    which a frame-pointer recording of the same binary cannot name; the
#    same from a stripped copy with its debug info in the unstripped file;
#  - a corrupt .eh_frame: decode and profgen fail naming the file and the
#    section offset, and write no profile;
#  - record refuses --call-graph dwarf where it has no meaning (emulation)
#    and values it does not know, before running anything.
source "$(dirname "$0")/../lib.sh"
need perf clang-19 gcc readelf llvm-readelf-19 llvm-nm-19 llvm-profdata-19 python3
HERE=$(cd "$(dirname "$0")" && pwd)
SRC="$PK_ROOT/tests/programs/unwind_cfi.c"

# ---- rows against readelf ----
rows() { # BINARY -> "fdes N rows R same S"
    # (readelf exits 1 over a missing debug link, its table still whole)
    readelf --debug-dump=frames-interp "$1" > "$1.readelf" 2>/dev/null
    [ -s "$1.readelf" ] && "$PGOKIT" decode --binary "$1" --cfi > "$1.cfi" &&
        python3 "$HERE/cfi_rows.py" "$1.readelf" "$1.cfi" | tee "$1.rows" | head -n 4 >&2
    head -n 1 "$1.rows"
}
check_rows() { # NAME BINARY
    local r; r=$(rows "$2"); echo "$1: $r"
    local n s; n=$(awk '{print $4}' <<<"$r"); s=$(awk '{print $6}' <<<"$r")
    check "$1: readelf's rows, every one the same in pgokit ($s of $n)" test -n "$n" -a "${n:-0}" -gt 5 -a "$s" = "$n"
}
clang-19 -O2 -g -o "$T/uw_clang" "$SRC" || fail "build with clang-19"
gcc -O2 -g -o "$T/uw_gcc" "$SRC" || fail "build with gcc"
check_rows "x86-64 clang-19 -O2" "$T/uw_clang"
check_rows "x86-64 gcc -O2" "$T/uw_gcc"
if command -v aarch64-linux-gnu-gcc-12 >/dev/null; then
    aarch64-linux-gnu-gcc-12 -O2 -g -o "$T/uw_a64" "$SRC" && check_rows "AArch64 gcc-12 -O2" "$T/uw_a64"
    aarch64-linux-gnu-gcc-12 -O2 -g -mbranch-protection=standard -o "$T/uw_a64_pac" "$SRC" &&
        check_rows "AArch64 gcc-12 -O2 with PAC and BTI" "$T/uw_a64_pac"
    clang-19 --target=aarch64-linux-gnu -fuse-ld=lld -O2 -g -o "$T/uw_a64_clang" "$SRC" &&
        check_rows "AArch64 clang-19 -O2" "$T/uw_a64_clang"
else
    echo "note: no AArch64 cross compiler; its rows are skipped"
fi
LIBC=$(ldd "$T/uw_clang" | awk '/libc\.so/ {print $3}')
if [ -n "$LIBC" ] && cp "$LIBC" "$T/libc.so"; then
    check_rows "the C library ($LIBC)" "$T/libc.so"
else
    fail "find the C library the fixture links"
fi

# ---- a corrupt .eh_frame ----
cp "$T/uw_clang" "$T/uw_bad"
off=$((16#$(llvm-readelf-19 -SW "$T/uw_bad" | awk '$2 == ".eh_frame" {print $5}')))
# the first CIE's version byte (after length and CIE id) becomes 9
printf '\x09' | dd of="$T/uw_bad" bs=1 seek=$((off + 8)) conv=notrunc 2>/dev/null
"$PGOKIT" decode --binary "$T/uw_bad" --cfi > /dev/null 2> "$T/bad.err"
check "decode --cfi fails on a corrupt CIE" test $? -ne 0
check "... naming the file and the section offset" grep -q "uw_bad: .eh_frame offset 0: CIE version" "$T/bad.err"

# ---- record's option ----
"$PGOKIT" record --emulate --call-graph dwarf -o "$T/x.data" -- true > /dev/null 2> "$T/opt1.err"
check_eq "record --emulate --call-graph dwarf: a usage error" 2 $?
check "... saying the emulator's chains are exact" grep -q 'call-graph dwarf is for IP sampling with perf (--ip): the emulator records exact call chains' "$T/opt1.err"
"$PGOKIT" record --call-graph lbr -o "$T/x.data" -- true > /dev/null 2> "$T/opt2.err"
check_eq "record --call-graph lbr: a usage error" 2 $?
check "... naming the values it takes" grep -q "wants fp, dwarf or dwarf,BYTES" "$T/opt2.err"
check "no recording was made" test ! -e "$T/x.data"

# ---- chains against perf's unwinder ----
if ! perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1; then
    echo "skipped: perf record cannot sample here (perf_event_paranoid?)"
    finish; exit
fi
syms() { llvm-nm-19 --defined-only "$1" | awk '$2 ~ /[tT]/ {print $1, $3}'; }
for cc in clang gcc; do
    b="$T/uw_$cc"
    "$PGOKIT" record --call-graph dwarf -o "$b.data" -- "$b" 1 > "$b.out" 2> "$b.err"
    check_eq "$cc: record --call-graph dwarf exits with the program's status" 0 $?
    check "$cc: the mode line names the stack copies" grep -q 'call chains as 8192-byte stack copies (DWARF)' "$b.err"
    n=$(sed -nE 's/.*wrote .*: ([0-9]+) samples \(([0-9]+) with call chains.*/\1 \2/p' "$b.err")
    echo "$cc: $(grep 'wrote' "$b.err")"
    check "$cc: every sample carries its stack (${n:-none})" test -n "$n" -a "$(awk '{print ($1 == $2 && $1 > 1000)}' <<<"$n")" = 1
    perf script -i "$b.data" -F pid,ip,dso --no-inline > "$b.script" 2>/dev/null
    "$PGOKIT" dump --unwind "$b" "$b.data" > "$b.ours"
    check_eq "$cc: dump --unwind lists every sample" "$(awk '{print $1}' <<<"$n")" "$(wc -l < "$b.ours")"
    r=$(python3 "$HERE/unwind_cfi_compare.py" "$b.script" "$b.ours" "$b"); echo "$cc: $r"
    tot=$(awk '{print $2}' <<<"$r"); same=$(awk '{print $4}' <<<"$r")
    check "$cc: chains as perf unwinds them, >= 99 % ($same of $tot)" \
        test "${tot:-0}" -gt 1000 -a $((same * 100)) -ge $((tot * 99))
    # the hot loop's chains, by function names
    got=$(syms "$b" | python3 -c '
import bisect, sys
syms = sorted((int(a, 16), n) for a, n in (l.split() for l in open(sys.argv[1]) if len(l.split()) == 2))
addrs = [a for a, _ in syms]
def name(x):
    i = bisect.bisect_right(addrs, x) - 1
    return syms[i][1] if i >= 0 else "?"
hot = whole = 0
for line in open(sys.argv[2]):
    f = line.split()[2:]
    if not f or f[0] == "-" or name(int(f[0], 16)) != "uw_hot":
        continue
    hot += 1
    chain = [name(int(x, 16) - (i > 0)) for i, x in enumerate(f) if x != "-"]
    whole += chain[:4] == ["uw_hot", "uw_frame", "uw_outer", "main"]
print(hot, whole)' /dev/stdin "$b.ours")
    check "$cc: uw_hot <- uw_frame <- uw_outer <- main in >= 90 % of uw_hot's samples ($got)" \
        test "$(awk '{print ($1 > 500 && $2 * 10 >= $1 * 9)}' <<<"$got")" = 1
done

# ---- profgen: whole chains through code without frame pointers ----
b="$T/uw_clang"
"$PGOKIT" profgen --binary "$b" --perf "$b.data" -o "$T/dwarf.prof" 2> "$T/dwarf.err"
check "profgen writes a profile from the stack copies" test -s "$T/dwarf.prof"
cat "$T/dwarf.err"
used=$(sed -nE 's/.*: [0-9]+ read, ([0-9]+) used.*/\1/p' "$T/dwarf.err")
unw=$(sed -nE 's/.*; ([0-9]+) chains unwound from stack copies.*/\1/p' "$T/dwarf.err")
check "every used sample's chain unwound ($unw of ${used:-?} used)" test -n "$unw" -a "${unw:-0}" -ge "${used:-1}"
check "none with the direct caller unknown" grep -q ' 0 with the direct caller unknown' "$T/dwarf.err"
check "no frame-pointer warning" bash -c "! grep -q 'set up no frame pointer' '$T/dwarf.err'"
target() { llvm-profdata-19 show --sample --function=uw_frame "$1" 2>/dev/null | grep -c 'uw_hot:'; }
check "the indirect call in uw_frame names uw_hot as its target" test "$(target "$T/dwarf.prof")" -ge 1
# the same binary with frame-pointer chains: uw_hot keeps no frame, so its
# caller uw_frame drops out of the chains and the indirect call has no target
perf record -q -e cpu-clock:u --call-graph fp -o "$T/fp.data" -- "$b" 1 > /dev/null 2>&1
"$PGOKIT" profgen --binary "$b" --perf "$T/fp.data" -o "$T/fp.prof" 2> "$T/fp.err"
check "frame-pointer chains: the warning names --call-graph dwarf" grep -q 'call-graph dwarf' "$T/fp.err"
check_eq "frame-pointer chains: no target at the indirect call" 0 "$(target "$T/fp.prof")"

check "no warning about stack copies that stopped early" bash -c "! grep -q 'warning: .*stack copies' '$T/dwarf.err'"
# what shorter copies would have kept, from the same recording
leafonly() { sed -nE "s/.*; ([0-9]+) before the leaf's caller.*/\1/p" "$1"; }
"$PGOKIT" profgen --binary "$b" --perf "$b.data" --stack-copy-bytes 1024 -o "$T/k1024.prof" 2> "$T/k1024.err"
check "--stack-copy-bytes 1024: the indirect call's target" test "$(target "$T/k1024.prof")" -ge 1
check "... no warning about the copies" bash -c "! grep -q 'warning: .*stack copies' '$T/k1024.err'"
"$PGOKIT" profgen --binary "$b" --perf "$b.data" --stack-copy-bytes 8 -o "$T/k8.prof" 2> "$T/k8.err"
short8=$(sed -nE 's/.*\(([0-9]+) of them stopped inside the binary.*/\1/p' "$T/k8.err")
check "--stack-copy-bytes 8: nearly every chain stops inside the binary (${short8:-none} of $unw)" \
    test "$((${short8:-0} * 10))" -ge "$((unw * 9))"
check "... but uw_hot keeps no frame: its return address is the first word, and the target is named" \
    test "$(target "$T/k8.prof")" -ge 1
check "... chains without the leaf's caller are few ($(leafonly "$T/k8.err")): no warning" \
    bash -c "! grep -q 'warning: .*stack copies' '$T/k8.err'"
"$PGOKIT" profgen --binary "$b" --perf "$b.data" --stack-copy-bytes 65529 -o "$T/kbig.prof" 2> "$T/kbig.err"
check_eq "--stack-copy-bytes 65529 (more than perf copies): a usage error" 2 $?
# ---- code without unwind tables: the chains stop at the leaf, and profgen says so ----
gcc -O2 -g -fno-asynchronous-unwind-tables -o "$T/uw_nocfi" "$SRC"
"$PGOKIT" record -q --call-graph dwarf -o "$T/nocfi.data" -- "$T/uw_nocfi" 0.3 > /dev/null 2>&1
"$PGOKIT" profgen --binary "$T/uw_nocfi" --perf "$T/nocfi.data" -o "$T/nocfi.prof" 2> "$T/nocfi.err"
check "no unwind tables: a profile all the same" test -s "$T/nocfi.prof"
check "no unwind tables: one warning line naming the flag" \
    test "$(grep -c 'warning: .*stack copies .*stopped at code no FDE .*-fno-asynchronous-unwind-tables' "$T/nocfi.err")" = 1
check "... the IP line counts the chains stopped at code without an FDE" \
    grep -qE '; [1-9][0-9]* at code without an FDE' "$T/nocfi.err"

# ---- a stripped binary (its .eh_frame stays), debug info in the unstripped file ----
cp "$b" "$T/uw_strip" && strip "$T/uw_strip"
"$PGOKIT" record -q --call-graph dwarf -o "$T/strip.data" -- "$T/uw_strip" 0.5 > /dev/null 2>&1
"$PGOKIT" profgen --binary "$T/uw_strip" --debug-binary "$b" --perf "$T/strip.data" -o "$T/strip.prof" \
    2> "$T/strip.err"
check "stripped: profgen writes a profile" test -s "$T/strip.prof"
check "stripped: no caller unknown" grep -q ' 0 with the direct caller unknown' "$T/strip.err"
check "stripped: the chains unwound" grep -qE '; [1-9][0-9]* chains unwound from stack copies' "$T/strip.err"
check "stripped: the indirect call's target" test "$(target "$T/strip.prof")" -ge 1

# ---- profgen on the corrupt binary: an error, no profile ----
"$PGOKIT" profgen --binary "$T/uw_bad" --perf "$b.data" -o "$T/bad.prof" 2> "$T/badgen.err"
check "profgen fails on a corrupt .eh_frame" test $? -ne 0
check "... naming the file and offset" grep -q "uw_bad: .eh_frame offset 0" "$T/badgen.err"
check "... and writes no profile" test ! -e "$T/bad.prof"
finish
