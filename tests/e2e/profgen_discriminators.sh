#!/usr/bin/env bash
# profgen_discriminators.sh — an AutoFDO profile of a clang build without
# -fdebug-info-for-profiling (no DWARF discriminators: the blocks of a line
# share one count) is written with one warning naming the flag; builds that
# have discriminators (clang with the flag, gcc by default) get none, and
# their profiles keep the blocks of a line apart (line.discriminator keys).
# llvm-dwarfdump-19's line table is the oracle for which builds have them.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 qemu-x86_64 llvm-dwarfdump-19 llvm-profdata-19
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
SRC=$PK_ROOT/tests/programs/profgen_demo.c

# rows of the line table with a nonzero discriminator (column 6)
discriminated_rows() {
    llvm-dwarfdump-19 --debug-line "$1" | awk '/^0x[0-9a-f]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+/ && $6 != 0 {n++} END {print n + 0}'
}

build() { # name compiler flags...
    local name=$1; shift
    "$@" -o "$T/$name" "$SRC" || { fail "$name: build"; return 1; }
    "$PGOKIT" record --emulate -q -o "$T/$name.data" -- "$T/$name" >/dev/null || { fail "$name: record"; return 1; }
    "$PGOKIT" record --emulate --ip -q -o "$T/$name.ip.data" -- "$T/$name" >/dev/null || { fail "$name: record --ip"; return 1; }
    "$PGOKIT" profgen --binary "$T/$name" --perf "$T/$name.data" -o "$T/$name.prof" --format text 2>"$T/$name.err" ||
        { fail "$name: profgen"; return 1; }
    "$PGOKIT" profgen --binary "$T/$name" --perf "$T/$name.ip.data" -o "$T/$name.ip.prof" --format text \
        2>"$T/$name.ip.err" || { fail "$name: profgen (IP)"; return 1; }
}

if build plain clang-19 -O2 -g; then
    check_eq "clang -O2 -g: no discriminator in the line table (llvm-dwarfdump)" 0 "$(discriminated_rows "$T/plain")"
    check_eq "clang -O2 -g: one warning naming -fdebug-info-for-profiling" 1 \
        "$(grep -c 'warning: none of the [0-9]* sampled instructions has a DWARF discriminator: .*-fdebug-info-for-profiling' "$T/plain.err")"
    check_eq "clang -O2 -g, IP samples: the same warning" 1 \
        "$(grep -c 'warning: .*has a DWARF discriminator: .*-fdebug-info-for-profiling' "$T/plain.ip.err")"
    check "clang -O2 -g: the profile is written all the same" llvm-profdata-19 show --sample "$T/plain.prof" -o /dev/null
    check "clang -O2 -g: its lines have no discriminator" bash -c "! grep -qE '^ +[0-9]+\.[0-9]+:' '$T/plain.prof'"
fi
if build difp clang-19 -O2 -g -fdebug-info-for-profiling; then
    check "clang -fdebug-info-for-profiling: discriminators in the line table (llvm-dwarfdump)" \
        test "$(discriminated_rows "$T/difp")" -gt 0
    check "clang -fdebug-info-for-profiling: no warning" bash -c "! grep -q 'discriminator' '$T/difp.err' '$T/difp.ip.err'"
    check "clang -fdebug-info-for-profiling: the blocks of a line apart (line.discriminator keys)" \
        grep -qE '^ +[0-9]+\.[0-9]+:' "$T/difp.prof"
fi
if build gcc gcc-12 -O2 -g; then
    check "gcc -O2 -g: discriminators in the line table (llvm-dwarfdump)" test "$(discriminated_rows "$T/gcc")" -gt 0
    check "gcc -O2 -g: no warning" bash -c "! grep -q 'discriminator' '$T/gcc.err' '$T/gcc.ip.err'"
fi
finish
