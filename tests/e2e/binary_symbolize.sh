#!/usr/bin/env bash
# `pgokit symbolize` equals `llvm-symbolizer-19 --inlines --no-demangle` on
# every instruction of a test program with static inline helpers on several
# levels, loops with discriminators and a gcc .cold split, built with clang-19
# (DWARF 5 and 4), gcc-12 (DWARF 5 and 4), compressed debug sections (zlib,
# zstd), LTO (cross-unit origins), split DWARF (.dwo, DWARF 5 and GNU 4) and a
# separate debug file; corrupt inputs get an error, not a crash.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 llvm-symbolizer-19 llvm-objdump-19 objcopy
SRC=$PK_ROOT/tests/programs/binary_inline.c

compare() { # label binary [extra pgokit args]  ($REF: binary for llvm-symbolizer)
    local label=$1 bin=$2; shift 2
    local ref=${REF:-$bin}
    llvm-objdump-19 -d --no-show-raw-insn "$bin" | awk '/^ +[0-9a-f]+:/ { a=$1; sub(":", "", a); print "0x" a }' \
        > "$T/$label.addrs"
    local n; n=$(wc -l < "$T/$label.addrs")
    "$PGOKIT" symbolize --binary "$bin" "$@" --output-style=JSON < "$T/$label.addrs" > "$T/$label.ours"
    local rc=$?
    llvm-symbolizer-19 --obj="$ref" --inlines --no-demangle --output-style=JSON < "$T/$label.addrs" |
        sed "s|\"ModuleName\":\"$ref\"|\"ModuleName\":\"$bin\"|" > "$T/$label.llvm"
    local bad; bad=$(diff "$T/$label.ours" "$T/$label.llvm" | grep -c '^<')
    local inl; inl=$(grep -c '},{' "$T/$label.llvm")
    echo "$label: $n addresses ($inl with inline frames), $bad mismatching"
    [ "$bad" -gt 0 ] && diff "$T/$label.ours" "$T/$label.llvm" | head -4
    check "$label: exit status" [ $rc -eq 0 ]
    check "$label: equal to llvm-symbolizer on $n addresses" [ "$bad" -eq 0 -a "$n" -gt 100 ]
    check "$label: has inline frames" [ "$inl" -ge 5 ]
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
    check "$label: DWARF function ranges equal llvm-dwarfdump's ($n)" [ "$bad" -eq 0 -a "$n" -ge 5 ]
}

clang-19 -O2 -g "$SRC" -o "$T/c5" && compare clang-dwarf5 "$T/c5"
clang-19 -O2 -gdwarf-4 "$SRC" -o "$T/c4" && compare clang-dwarf4 "$T/c4"
gcc-12 -O2 -g "$SRC" -o "$T/g5" && compare gcc-dwarf5 "$T/g5"
gcc-12 -O2 -gdwarf-4 "$SRC" -o "$T/g4" && compare gcc-dwarf4 "$T/g4"
check "gcc split checked_div into .cold" grep -q "checked_div.cold" "$T/gcc-dwarf5.llvm"
compare_funcs funcs-clang-dwarf5 "$T/c5"
compare_funcs funcs-clang-dwarf4 "$T/c4"
compare_funcs funcs-gcc-dwarf5 "$T/g5"
compare_funcs funcs-gcc-dwarf4 "$T/g4"
check "two ranges for checked_div (gcc .cold)" [ "$(grep -c ' checked_div$' "$T/funcs-gcc-dwarf5.fours")" -eq 2 ]
# -fno-inline-small... keeps discriminators visible: loops at -O2 get some
check "gcc: discriminators present" grep -q '"Discriminator":[1-9]' "$T/gcc-dwarf5.llvm"
# clang adds discriminators (with duplication factors) for AutoFDO builds
clang-19 -O2 -g -fdebug-info-for-profiling -funroll-loops "$SRC" -o "$T/cp" && compare clang-for-profiling "$T/cp"
check "clang: discriminators present" grep -q '"Discriminator":[1-9]' "$T/clang-for-profiling.llvm"
clang-19 -O2 -g -gz=zlib "$SRC" -o "$T/cz" && compare clang-zlib "$T/cz"
gcc-12 -O2 -g -gz=zlib "$SRC" -o "$T/gz" && compare gcc-zlib "$T/gz"
if clang-19 -O2 -g -gz=zstd "$SRC" -o "$T/czs" 2>/dev/null; then
    check "zstd sections are compressed" sh -c "readelf -SW '$T/czs' | grep -q 'debug_info.* C '"
    compare clang-zstd "$T/czs"
else
    echo "note: -gz=zstd not supported by this toolchain"
fi

# LTO: inlining across units, abstract origins through DW_FORM_ref_addr
if command -v ld.lld-19 >/dev/null || command -v ld.lld >/dev/null; then
    printf 'int helper_add(int a, int b) { int s = 0; for (int i = 0; i < a; i++) s += i * b; return s; }\n' > "$T/lto2.c"
    printf '#include <stdio.h>\nint helper_add(int, int);\nint main(int c, char **v) { printf("%%d\\n", helper_add(c * 100, 3)); return 0; }\n' > "$T/lto1.c"
    lld=$(command -v ld.lld-19 >/dev/null && echo --ld-path=$(command -v ld.lld-19) || echo -fuse-ld=lld)
    if clang-19 -O2 -g -flto $lld "$T/lto1.c" "$T/lto2.c" -o "$T/lto" 2>"$T/lto.err"; then
        compare lto-cross-unit "$T/lto"
    else
        fail "LTO build: $(head -2 "$T/lto.err")"
    fi
fi

# split DWARF 5: inline trees read from the .dwo files
(cd "$T" && clang-19 -O2 -g -gsplit-dwarf "$SRC" -o split-clang) && compare split-clang "$T/split-clang"
(cd "$T" && gcc-12 -O2 -g -gsplit-dwarf "$SRC" -o split-gcc) && compare split-gcc "$T/split-gcc"
# and the GNU DWARF 4 flavour (DW_AT_GNU_dwo_id, GNU_addr_base, GNU_ranges_base)
(cd "$T" && clang-19 -O2 -gdwarf-4 -gsplit-dwarf "$SRC" -o split-clang4) && compare split-clang4 "$T/split-clang4"
(cd "$T" && gcc-12 -O2 -gdwarf-4 -gsplit-dwarf "$SRC" -o split-gcc4) && compare split-gcc4 "$T/split-gcc4"
mv "$T/split-clang-binary_inline.dwo" "$T/moved.dwo"
main_addr=$(nm "$T/split-clang" | awk '$3 == "main" { print "0x" $1 }')
"$PGOKIT" symbolize --binary "$T/split-clang" "$main_addr" > /dev/null 2> "$T/split.err"
check "split DWARF, .dwo missing: clear error" grep -q "split-clang-binary_inline.dwo" "$T/split.err"

# separate debug file: stripped binary + .gnu_debuglink, and --debug-binary
objcopy --only-keep-debug "$T/c5" "$T/c5.debug"
objcopy --strip-debug --add-gnu-debuglink="$T/c5.debug" "$T/c5" "$T/c5.stripped"
compare debuglink "$T/c5.stripped"
mkdir -p "$T/elsewhere"; cp "$T/c5.stripped" "$T/elsewhere/prog"
REF=$T/c5.stripped compare debug-binary "$T/elsewhere/prog" --debug-binary "$T/c5.debug"

# DWARF-only names (what profgen uses): the outermost frame of a gcc .cold
# part is the DWARF function, not the .cold symbol
addr=$(awk '/checked_div.cold>:/ { print "0x" $1; exit }' <(llvm-objdump-19 -d "$T/g5") | sed 's/^0x0*/0x/')
out=$("$PGOKIT" symbolize --binary "$T/g5" --dwarf-only "$addr" | head -1)
check_eq "--dwarf-only names the .cold part by its function" "checked_div" "$out"

# corrupt inputs, under the sanitizers: an error with the file name, no crash
for cut in 100 4000 9000 13000; do
    head -c $cut "$T/c5" > "$T/cut$cut"
    "$PGOKIT_SAN" symbolize --binary "$T/cut$cut" 0x1000 > /dev/null 2> "$T/err$cut"
    rc=$?
    check "truncated at $cut: exit 1 with a message" [ $rc -eq 1 -a -s "$T/err$cut" ]
    check "truncated at $cut: names the file" grep -q "cut$cut" "$T/err$cut"
done
"$PGOKIT" symbolize --binary /bin/true 0x1000 > /dev/null 2> "$T/nodwarf"
check "no DWARF: message" grep -q "DWARF" "$T/nodwarf"
finish
