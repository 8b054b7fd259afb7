#!/usr/bin/env bash
# Symbolization of real programs equals llvm-symbolizer-19's: SQLite
# (speedtest1) and Lua built with clang-19 -O2 -g (DWARF 5), clang-19 -O2
# -gdwarf-4 and gcc-12 -O2 -g; every Nth instruction of .text (N =
# $PK_BINARY_STEP, default 1: all of them) is symbolized by both, frame by frame (function,
# file, line, column, discriminator, start line/file/address, every inline
# frame), in llvm-symbolizer's JSON output.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 llvm-symbolizer-19 llvm-objdump-19
W=$("$PK_ROOT/scripts/workloads.sh" dir 2>/dev/null) || { echo "skipped: workloads unavailable"; exit 77; }
[ -d "$W/src/lua5.4-5.4.4" ] || "$PK_ROOT/scripts/workloads.sh" obtain >/dev/null 2>&1 ||
    { echo "skipped: workload sources unavailable"; exit 77; }
STEP=${PK_BINARY_STEP:-1}

build_clang() { # variant xflags
    local v=$1
    [ -x "$W/out/$v/speedtest1" ] && [ -x "$W/out/$v/lua" ] && return 0
    XFLAGS=$2 "$PK_ROOT/scripts/workloads.sh" build "$v" sqlite lua >/dev/null
}
build_gcc() {
    local out=$W/out/binary-gcc12
    [ -x "$out/speedtest1" ] && [ -x "$out/lua" ] && return 0
    mkdir -p "$out"
    local sq=$W/npm/better-sqlite3-12.11.1/package/deps/sqlite3
    gcc-12 -O2 -g -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I"$sq" \
        "$W/src/sqlite3-3.40.1/test/speedtest1.c" "$sq/sqlite3.c" -o "$out/speedtest1.tmp" -lm &&
        mv "$out/speedtest1.tmp" "$out/speedtest1" || return 1
    rm -rf "$out/lua-src"; cp -r "$W/src/lua5.4-5.4.4/src" "$out/lua-src"
    make -s -C "$out/lua-src" -j2 linux CC=gcc-12 MYCFLAGS=-g >/dev/null 2>&1 &&
        cp "$out/lua-src/lua" "$out/lua"
}

compare() { # label binary
    local label=$1 bin=$2
    llvm-objdump-19 -d --no-show-raw-insn --section=.text "$bin" |
        awk -v step="$STEP" '/^ +[0-9a-f]+:/ { if (n++ % step == 0) { a=$1; sub(":", "", a); print "0x" a } }' \
        > "$T/$label.addrs"
    local n; n=$(wc -l < "$T/$label.addrs")
    "$PGOKIT" symbolize --binary "$bin" --output-style=JSON < "$T/$label.addrs" > "$T/$label.ours" 2> "$T/$label.err"
    local rc=$?
    llvm-symbolizer-19 --obj="$bin" --inlines --no-demangle --output-style=JSON < "$T/$label.addrs" > "$T/$label.llvm"
    local bad; bad=$(diff "$T/$label.ours" "$T/$label.llvm" | grep -c '^<')
    local frames; frames=$(grep -o '"FunctionName"' "$T/$label.llvm" | wc -l)
    echo "$label: $n addresses, $frames frames, $bad mismatching addresses"
    [ "$bad" -gt 0 ] && diff "$T/$label.ours" "$T/$label.llvm" | head -6
    check "$label: pgokit symbolize succeeds" [ "$rc" -eq 0 ]
    check "$label: $n addresses equal to llvm-symbolizer" [ "$bad" -eq 0 -a "$n" -gt 1000 ]
}

# The DWARF function list (pk_dwarf_funcs: llvm-profgen's function boundaries,
# .cold parts included) equals the subprogram ranges llvm-dwarfdump shows.
compare_funcs() { # label binary
    local label=$1 bin=$2
    llvm-dwarfdump-19 --debug-info "$bin" | awk -f "$PK_ROOT/tests/e2e/binary_funcs.awk" | sort > "$T/$label.fref"
    "$PGOKIT" symbolize --binary "$bin" --functions | cut -d' ' -f1-3 | sort > "$T/$label.fours"
    local n; n=$(wc -l < "$T/$label.fref")
    local bad; bad=$(diff "$T/$label.fref" "$T/$label.fours" | grep -c '^[<>]')
    echo "$label: $n function ranges, $bad differences"
    check "$label: DWARF function ranges equal llvm-dwarfdump's ($n)" [ "$bad" -eq 0 -a "$n" -ge 100 ]
}

build_clang binary-d5 "" || fail "build clang-19 DWARF 5"
build_clang binary-d4 "-gdwarf-4" || fail "build clang-19 DWARF 4"
build_gcc || fail "build gcc-12"
for v in binary-d5 binary-d4 binary-gcc12; do
    for p in speedtest1 lua; do
        [ -x "$W/out/$v/$p" ] && compare "$v-$p" "$W/out/$v/$p" && compare_funcs "funcs-$v-$p" "$W/out/$v/$p"
    done
done
finish
