#!/usr/bin/env bash
# debuginfo_split.sh — split DWARF as builds ship it: a program of two
# objects compiled with -gsplit-dwarf (clang-19 and gcc-12, DWARF 5 and the
# GNU DWARF 4 flavour), its .dwo files beside the objects (found through
# DW_AT_comp_dir, also with the binary moved elsewhere), and the same units
# packed by llvm-dwp-19 into a .dwp read with --dwp F (or PROG.dwp beside
# the binary, llvm-symbolizer's default) after the .dwo files are gone.
# `pgokit symbolize` equals llvm-symbolizer-19 on every instruction address;
# a missing package unit is a clear error.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 llvm-dwp-19 llvm-symbolizer-19 llvm-objdump-19
SRC=$PK_ROOT/tests/programs/binary_inline.c
cat > "$T/extra.c" <<'EOF'
static inline int sq(int x) { return x * x; }
static inline int sum_sq(const int *v, int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(v[i]); return s; }
int extra_work(const int *v, int n) { return n > 3 ? sum_sq(v, n) - sq(v[0]) : sum_sq(v, n); }
EOF

# compare LABEL BIN REF [pgokit args]: every instruction address of REF's code
compare() {
    local label=$1 bin=$2 ref=$3; shift 3
    llvm-objdump-19 -d --no-show-raw-insn "$bin" | awk '/^ +[0-9a-f]+:/ { a=$1; sub(":", "", a); print "0x" a }' \
        > "$T/$label.addrs"
    local n; n=$(wc -l < "$T/$label.addrs")
    (cd "$T" && llvm-symbolizer-19 --obj="$ref" --inlines --no-demangle --output-style=JSON < "$T/$label.addrs") |
        sed "s|\"ModuleName\":\"$ref\"|\"ModuleName\":\"$bin\"|" > "$T/$label.llvm"
    "$PGOKIT" symbolize --binary "$bin" "$@" --output-style=JSON < "$T/$label.addrs" > "$T/$label.ours" \
        2>"$T/$label.err"
    local rc=$?
    local bad; bad=$(diff "$T/$label.ours" "$T/$label.llvm" | grep -c '^[<>]')
    local inl; inl=$(grep -c '},{' "$T/$label.llvm")
    echo "$label: $n addresses ($inl with inline frames), $bad mismatching"
    [ "$bad" -gt 0 ] && { diff "$T/$label.ours" "$T/$label.llvm" | head -4; head -3 "$T/$label.err"; }
    check "$label: exit status 0" [ $rc -eq 0 ]
    check "$label: equal to llvm-symbolizer-19 on $n addresses, $inl with inline frames" \
        [ "$bad" -eq 0 -a "$n" -gt 100 -a "$inl" -gt 5 ]
}

for v in clang5:clang-19: clang4:clang-19:-gdwarf-4 gcc5:gcc-12: gcc4:gcc-12:-gdwarf-4; do
    IFS=: read -r name cc flags <<< "$v"
    d=$T/$name; mkdir -p "$d/obj" "$d/moved"
    (cd "$d/obj" && $cc -O2 -g -gsplit-dwarf $flags -c "$SRC" -o main.o &&
        $cc -O2 -g -gsplit-dwarf $flags -c "$T/extra.c" -o extra.o && $cc main.o extra.o -o prog) ||
        { fail "$name: build"; continue; }
    check "$name: two .dwo files beside the objects" test -f "$d/obj/main.dwo" -a -f "$d/obj/extra.dwo"
    # the .dwo files, found through the skeletons' comp_dir, with the binary elsewhere
    cp "$d/obj/prog" "$d/moved/prog"
    compare "$name-dwo" "$d/moved/prog" "$d/obj/prog"
    # the package, the .dwo files gone. (llvm-dwp-19 does not finish on
    # gcc-12's DWARF 5 .dwo files: no package of those.)
    if [ $name = gcc5 ]; then
        echo "note: gcc5: no .dwp (llvm-dwp-19 hangs on gcc-12 DWARF 5 split units)"
        continue
    fi
    timeout 60 llvm-dwp-19 -e "$d/obj/prog" -o "$d/prog.dwp" 2>"$d/dwp.err" || { fail "$name: llvm-dwp-19: $(head -1 "$d/dwp.err")"; continue; }
    cp "$d/obj/prog" "$d/ref"; cp "$d/prog.dwp" "$d/ref.dwp"
    mkdir -p "$d/gone"; mv "$d"/obj/*.dwo "$d/gone/"
    compare "$name-dwp" "$d/moved/prog" "$d/ref" --dwp "$d/prog.dwp"
    check "$name-dwp: the stderr line names the package" grep -q "split-DWARF package $d/prog.dwp" "$T/$name-dwp.err"
    cp "$d/prog.dwp" "$d/moved/prog.dwp"
    compare "$name-dwp-beside" "$d/moved/prog" "$d/ref"
    rm "$d/moved/prog.dwp"
    # neither .dwo nor package: an error naming the .dwo
    "$PGOKIT" symbolize --binary "$d/moved/prog" < "$T/$name-dwo.addrs" > /dev/null 2>"$d/none.err"; rc=$?
    check_eq "$name: no .dwo, no package: exit 1" 1 "$rc"
    check "$name: no .dwo, no package: the message names the .dwo" grep -q "main.dwo" "$d/none.err"
done
# a package that does not hold the units: the message says so
"$PGOKIT" symbolize --binary "$T/clang5/moved/prog" --dwp "$T/gcc4/prog.dwp" < "$T/clang5-dwo.addrs" \
    > /dev/null 2>"$T/wrongdwp.err"; rc=$?
check_eq "another program's package: exit 1" 1 "$rc"
check "another program's package: the message names it and the DWO id" \
    grep -q "not in the split-DWARF package $T/gcc4/prog.dwp (DWO id" "$T/wrongdwp.err"
# corrupt packages, under the sanitizers when built: an error naming the file, no crash
SAN=$PGOKIT; [ -x "$PGOKIT_SAN" ] && SAN=$PGOKIT_SAN
pk=$T/clang5/prog.dwp
idx=$((16#$(readelf -SW "$pk" | awk '{ for (i = 1; i < NF; i++) if ($i == ".debug_cu_index") print $(i + 3) }')))
check "the package has a .debug_cu_index" [ "$idx" -gt 0 ]
for cut in 100 $(($(stat -c %s "$pk") - 8)); do
    head -c "$cut" "$pk" > "$T/cut$cut.dwp"
    "$SAN" symbolize --binary "$T/clang5/moved/prog" --dwp "$T/cut$cut.dwp" < "$T/clang5-dwo.addrs" \
        > /dev/null 2>"$T/cut$cut.err"; rc=$?
    check "package cut at $cut: exit 1, naming it" sh -c "[ $rc -eq 1 ] && grep -q 'cut$cut.dwp' '$T/cut$cut.err'"
done
# the unit index itself corrupt, in place: a slot count not a power of two,
# more units than slots, a contribution outside its section, rows out of range
python3 - "$pk" "$idx" "$T" <<'PY'
import struct, sys
path, idx, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
ver, ncols, nunits, nslots = struct.unpack_from("<IIII", data, idx)
offs = idx + 16 + nslots * 12 + ncols * 4
for name, at, val in [("slots", idx + 12, 3), ("units", idx + 8, nslots + 1),
                      ("offset", offs, 0xfffff000), ("row", idx + 16 + nslots * 8, 0)]:
    d = bytearray(data)
    if name == "row":  # every slot's row out of range
        for k in range(nslots):
            if struct.unpack_from("<I", d, at + 4 * k)[0]:
                struct.pack_into("<I", d, at + 4 * k, nunits + 7)
    else:
        struct.pack_into("<I", d, at, val)
    open(f"{out}/bad-{name}.dwp", "wb").write(d)
PY
for what in slots units offset row; do
    "$SAN" symbolize --binary "$T/clang5/moved/prog" --dwp "$T/bad-$what.dwp" < "$T/clang5-dwo.addrs" \
        > /dev/null 2>"$T/bad-$what.err"; rc=$?
    check "package with a corrupt index ($what): exit 1, naming it and .debug_cu_index" \
        sh -c "[ $rc -eq 1 ] && grep -q 'bad-$what.dwp: .debug_cu_index offset' '$T/bad-$what.err'"
done
finish
