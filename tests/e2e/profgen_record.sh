#!/usr/bin/env bash
# profgen_record.sh — `pgokit record` (emulated LBR) → `pgokit profgen`,
# against llvm-profgen-19 fed `perf script` of the same perf.data (with
# --ignore-stack-samples: the AutoFDO profile); a shared library profiled
# through its build-id; a stale binary (other build-id) refused; --pid;
# truncated perf.data fails cleanly under the sanitizers.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 llvm-profdata-19 perf qemu-x86_64
PROG=$PK_ROOT/tests/programs
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

CF="-O2 -g -fdebug-info-for-profiling"
clang-19 $CF "$PROG/profgen_demo.c" -o "$T/demo"
"$PGOKIT" record --emulate -q -o "$T/perf.data" -- "$T/demo" 8 >"$T/rec.out" 2>"$T/rec.err"
check "record (emulated) wrote perf.data" test -s "$T/perf.data"

overlap_ok() { # ref ours label
    llvm-profdata-19 overlap --sample "$1" "$2" >"$T/ov.$3" 2>&1
    local sim ovl
    sim=$(awk -F: '/Whole program profile similarity/ {gsub(/[ %]/, "", $2); print $2}' "$T/ov.$3")
    ovl=$(awk -F: '/Whole program sample overlap/ {gsub(/[ %]/, "", $2); print $2}' "$T/ov.$3")
    echo "$3: similarity ${sim:-?}%, sample overlap ${ovl:-?}%"
    check "$3: similarity >= 95% (${sim:-none})" awk -v x="${sim:-0}" 'BEGIN{exit !(x >= 95)}'
    check "$3: sample overlap >= 95% (${ovl:-none})" awk -v x="${ovl:-0}" 'BEGIN{exit !(x >= 95)}'
}

check "profgen from perf.data" "$PGOKIT" profgen --binary "$T/demo" --perf "$T/perf.data" -o "$T/ours.txt" --format text -q
perf script -F ip,brstack --show-mmap-events -i "$T/perf.data" >"$T/ps.txt" 2>/dev/null
llvm-profgen-19 --binary "$T/demo" --perfscript "$T/ps.txt" --output "$T/ref.txt" --format=text \
    --ignore-stack-samples >"$T/ref.log" 2>&1
check "llvm-profgen-19 produced a profile" test -s "$T/ref.txt"
overlap_ok "$T/ref.txt" "$T/ours.txt" demo
# our perf-script reader on perf's own text gives the same profile as our perf.data reader
"$PGOKIT" profgen --binary "$T/demo" --perfscript "$T/ps.txt" -o "$T/ours_ps.txt" --format text -q
check "perf.data and its perf script text give the same profile" cmp -s "$T/ours.txt" "$T/ours_ps.txt"

# the profile drives clang
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/perf.data" -o "$T/demo.prof" -q
clang-19 $CF -fprofile-sample-use="$T/demo.prof" -S -emit-llvm "$PROG/profgen_demo.c" -o "$T/pgo.ll" 2>/dev/null
check "clang-19 applies it (function_entry_count)" grep -q 'function_entry_count' "$T/pgo.ll"

# --pid: the recorded process vs another one
pid=$(perf script -F pid -i "$T/perf.data" 2>/dev/null | awk 'NF {print $1; exit}')
if [ -n "$pid" ]; then
    "$PGOKIT" profgen --binary "$T/demo" --perf "$T/perf.data" --pid "$pid" -o "$T/pid.txt" --format text -q
    check "--pid of the recorded process keeps everything" cmp -s "$T/ours.txt" "$T/pid.txt"
    "$PGOKIT" profgen --binary "$T/demo" --perf "$T/perf.data" --pid $((pid + 1)) -o "$T/nopid.txt" 2>"$T/nopid.err"
    check "--pid of another process: error, no output" test ! -e "$T/nopid.txt"
fi

# a stripped copy under another name: matched by build-id, DWARF from --debug-binary
cp "$T/demo" "$T/demo.stripped" && strip "$T/demo.stripped"
"$PGOKIT" profgen --binary "$T/demo.stripped" --debug-binary "$T/demo" --perf "$T/perf.data" \
    -o "$T/stripped.txt" --format text -q
check "stripped binary + --debug-binary: same profile" cmp -s "$T/ours.txt" "$T/stripped.txt"
"$PGOKIT" profgen --binary "$T/demo.stripped" --perf "$T/perf.data" -o "$T/nodwarf.prof" 2>"$T/nodwarf.err"
check "stripped binary alone: error about DWARF" grep -q 'DWARF' "$T/nodwarf.err"

# a stale binary: same name, other build-id
mkdir -p "$T/stale"
clang-19 $CF -DSTALE_VARIANT=1 -O1 "$PROG/profgen_demo.c" -o "$T/stale/demo"
"$PGOKIT" profgen --binary "$T/stale/demo" --perf "$T/perf.data" -o "$T/stale.prof" 2>"$T/stale.err"; rc=$?
check_eq "stale binary refused" 1 "$rc"
check "stale binary: the message says build-id" grep -q 'build-id' "$T/stale.err"

# a shared library, mapped at an emulator-chosen address, found by build-id
clang-19 $CF -fPIC -shared "$PROG/profgen_lib.c" -o "$T/libpgw.so"
clang-19 $CF "$PROG/profgen_libmain.c" -L"$T" -lpgw -Wl,-rpath,"$T" -o "$T/libmain"
"$PGOKIT" record --emulate -q -o "$T/lib.data" -- "$T/libmain" 60 >/dev/null 2>&1
check "profgen of a shared library" "$PGOKIT" profgen --binary "$T/libpgw.so" --perf "$T/lib.data" -o "$T/lib.txt" --format text -q
perf script -F ip,brstack --show-mmap-events -i "$T/lib.data" >"$T/lps.txt" 2>/dev/null
llvm-profgen-19 --binary "$T/libpgw.so" --perfscript "$T/lps.txt" --output "$T/libref.txt" --format=text \
    --ignore-stack-samples >/dev/null 2>&1
overlap_ok "$T/libref.txt" "$T/lib.txt" libpgw.so

# GCC: a gcc-12 build profiled into a .afdo that gcc-12 -fauto-profile uses
if command -v gcc-12 >/dev/null; then
    gcc-12 -O2 -g "$PROG/profgen_demo.c" -o "$T/gdemo"
    "$PGOKIT" record --emulate -q -o "$T/g.data" -- "$T/gdemo" 4 >/dev/null 2>&1
    check "profgen --format gcc" "$PGOKIT" profgen -q --binary "$T/gdemo" --perf "$T/g.data" -o "$T/g.afdo" --format gcc
    (cd "$T" && gcc-12 -O2 -g -fauto-profile="$T/g.afdo" -fdump-ipa-afdo "$PROG/profgen_demo.c" -o "$T/gdemo.afdo" 2>"$T/gcc.err")
    check "gcc-12 -fauto-profile accepts it" test -x "$T/gdemo.afdo"
    check "gcc-12 reads the indirect-call targets" grep -qs 'Indirect call counter' "$T"/gdemo.afdo-*afdo
fi

# several recordings: one without the binary only warns; the others count
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/lib.data" --perf "$T/perf.data" -o "$T/two.txt" \
    --format text 2>"$T/two.err"
check "an input without the binary is a warning when another has samples" cmp -s "$T/ours.txt" "$T/two.txt"
check "... and the warning names it" grep -q 'warning: .*lib.data' "$T/two.err"
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/perf.data" --perf "$T/perf.data" -o "$T/twice.txt" --format text -q
llvm-profdata-19 merge --sample --text --weighted-input=2,"$T/ours.txt" -o "$T/twice.ref" 2>/dev/null
llvm-profdata-19 merge --sample --text "$T/twice.txt" -o "$T/twice.norm" 2>/dev/null
check "the same recording twice doubles every count" cmp -s "$T/twice.ref" "$T/twice.norm"

# truncated perf.data: clear error, no output (sanitizer build)
PG=${PGOKIT_SAN:-$PGOKIT}; [ -x "$PG" ] || PG=$PGOKIT
size=$(stat -c %s "$T/perf.data")
head -c $((size / 2)) "$T/perf.data" >"$T/trunc.data"
"$PG" profgen --binary "$T/demo" --perf "$T/trunc.data" -o "$T/trunc.prof" 2>"$T/trunc.err"; rc=$?
check_eq "truncated perf.data exits 1" 1 "$rc"
check "truncated perf.data: message names the file" grep -q 'trunc.data' "$T/trunc.err"
check "truncated perf.data: no output" test ! -e "$T/trunc.prof"
finish
