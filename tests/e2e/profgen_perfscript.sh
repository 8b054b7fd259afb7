#!/usr/bin/env bash
# profgen_perfscript.sh — `pgokit profgen --perfscript` on `perf script` text
# gives byte for byte the profile `--perf` gives on the perf.data the text was
# printed from: AutoFDO (line-based), line-based CS, probe-only and CSSPGO,
# for a PIE, a non-PIE executable and a shared library, on the text of the
# installed perf (Debian's perf 6.1 prints call-chain addresses relative to
# their file, branch stacks absolute) in llvm-profgen's form and in perf's
# longer forms (pid header, sym, dso), and on absolute text written by
# `pgokit dump --perfscript`. llvm-profgen-19 reads that absolute text and
# builds contexts with callers, where perf 6.1's own text leaves it none.
# Addresses that cannot be placed are counted and reported.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 perf qemu-x86_64
PROG=$PK_ROOT/tests/programs
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

rec() { "$PGOKIT" record --emulate -q -o "$1" -- "${@:2}" >/dev/null; } # DATA CMD...
# the forms: llvm-profgen's documented one, perf's longer ones
FORMS=("ip,brstack" "pid,tid,ip,sym,dso,brstack" "comm,pid,time,event,ip,sym,symoff,dso,brstack")

# same BIN DATA LABEL PROFGEN-OPTIONS...: --perf vs every text form, cmp
same() {
    local bin=$1 data=$2 label=$3 i=0 f; shift 3
    "$PGOKIT" profgen -q --binary "$bin" --perf "$data" -o "$T/ref.prof" --format text "$@" \
        || { fail "$label: profgen --perf"; return; }
    for f in "${FORMS[@]}"; do
        i=$((i + 1))
        perf script --show-mmap-events -F "$f" -i "$data" > "$T/f$i.script" 2>/dev/null
        "$PGOKIT" profgen -q --binary "$bin" --perfscript "$T/f$i.script" -o "$T/f$i.prof" --format text "$@" \
            2>"$T/f$i.err"
        check "$label: perf script -F $f gives the --perf profile" cmp "$T/ref.prof" "$T/f$i.prof"
    done
    "$PGOKIT" dump --perfscript "$data" > "$T/abs.script"
    "$PGOKIT" profgen -q --binary "$bin" --perfscript "$T/abs.script" -o "$T/abs.prof" --format text "$@"
    check "$label: pgokit dump --perfscript (absolute) gives the --perf profile" cmp "$T/ref.prof" "$T/abs.prof"
}

# 1. a PIE with pseudo-probes: CSSPGO (pre-inlined and flat) and probe-only
clang-19 -O2 -g -fpseudo-probe-for-profiling -DPROFILED_BUILD "$PROG/cs_scalarop.c" -o "$T/so"
check "record the probe PIE (emulated LBR + stacks)" rec "$T/so.data" "$T/so" 600
same "$T/so" "$T/so.data" "CSSPGO"
same "$T/so" "$T/so.data" "CSSPGO flat" --no-preinline
same "$T/so" "$T/so.data" "probe-only" --ignore-stack-samples
# what perf printed: file-relative call chains (perf 6.1) or absolute ones
perf script --show-mmap-events -F ip,brstack -i "$T/so.data" > "$T/so.script" 2>/dev/null
"$PGOKIT" dump --script "$T/so.script" > "$T/so.dump"
rebased=$(sed -n 's/^# call-chain entries: [0-9]* (\([0-9]*\) file-relative.*/\1/p' "$T/so.dump")
echo "perf $(perf --version | cut -d' ' -f3): ${rebased:-?} call-chain entries were file-relative"
if perf --version | grep -q '^perf version 6\.1\.'; then
    check "perf 6.1 prints file-relative call chains, made absolute here (${rebased:-none})" test "${rebased:-0}" -gt 0
fi
"$PGOKIT" dump --script "$T/abs.script" > "$T/abs.dump"
check "pgokit dump --perfscript writes absolute call chains" grep -q '^# call-chain entries: [1-9][0-9]* (0 file-relative' "$T/abs.dump"
# the guess perf 6.1's -F ip,brstack forces is said; naming the files removes it
"$PGOKIT" profgen --binary "$T/so" --perfscript "$T/so.script" -o "$T/g.prof" 2>"$T/g.err"
if [ "${rebased:-0}" -gt 0 ]; then
    check "profgen warns about call-chain addresses placed by guess" grep -q 'warning: .*fit several mapped files' "$T/g.err"
fi
perf script --show-mmap-events -F ip,dso,brstack -i "$T/so.data" > "$T/dso.script" 2>/dev/null
"$PGOKIT" profgen --binary "$T/so" --perfscript "$T/dso.script" -o "$T/d.prof" 2>"$T/d.err"
check "no warning when each frame names its file" bash -c "! grep -q warning '$T/d.err'"

# 2. llvm-profgen-19 on the same recording: perf's text vs the absolute text
llvm-profgen-19 --binary "$T/so" --perfscript "$T/so.script" -o "$T/l61.prof" --format=text \
    --csspgo-preinliner=0 --gen-cs-nested-profile=0 >"$T/l61.log" 2>&1
llvm-profgen-19 --binary "$T/so" --perfscript "$T/abs.script" -o "$T/labs.prof" --format=text \
    --csspgo-preinliner=0 --gen-cs-nested-profile=0 >"$T/labs.log" 2>&1
echo "llvm-profgen-19 contexts under main: perf's text $(grep -c '^\[main:' "$T/l61.prof"), absolute text $(grep -c '^\[main:' "$T/labs.prof")"
check "llvm-profgen-19 reads the absolute text without leaf-external-frame warnings" \
    bash -c "! grep -q 'leaf external frame' '$T/labs.log'"
check "llvm-profgen-19 builds contexts with callers from it" grep -q '^\[main:[0-9]* @ ' "$T/labs.prof"

# 3. AutoFDO and line-based CS: a PIE and a non-PIE executable without probes
clang-19 -O2 -g -DPROFILED_BUILD "$PROG/cs_scalarop.c" -o "$T/sl"
check "record the DWARF-only PIE" rec "$T/sl.data" "$T/sl" 600
same "$T/sl" "$T/sl.data" "AutoFDO"
same "$T/sl" "$T/sl.data" "line-based CS" --cs
clang-19 -O2 -g -no-pie -fno-pie -DPROFILED_BUILD "$PROG/cs_scalarop.c" -o "$T/np"
check "record the non-PIE executable" rec "$T/np.data" "$T/np" 600
same "$T/np" "$T/np.data" "non-PIE AutoFDO"
same "$T/np" "$T/np.data" "non-PIE line-based CS" --cs

# 4. a shared library (mapped where the emulator chose) with its callers in the program
clang-19 -O2 -g -fPIC -shared "$PROG/profgen_lib.c" -o "$T/libpgw.so"
clang-19 -O2 -g "$PROG/profgen_libmain.c" -L"$T" -lpgw -Wl,-rpath,"$T" -o "$T/libmain"
check "record the program using the library" rec "$T/lib.data" "$T/libmain" 20
same "$T/libpgw.so" "$T/lib.data" "shared library AutoFDO"
same "$T/libpgw.so" "$T/lib.data" "shared library line-based CS" --cs

# 5. without mmap lines, relative call chains cannot be placed: said, with the count
perf script -F ip,brstack -i "$T/np.data" > "$T/nomm.script" 2>/dev/null
"$PGOKIT" profgen --cs --binary "$T/np" --perfscript "$T/nomm.script" -o "$T/nomm.prof" 2>"$T/nomm.err"
if [ "${rebased:-0}" -gt 0 ]; then
    check "no mmap lines: a warning counts the call-chain addresses left unplaced" \
        grep -Eq 'warning: .*: [1-9][0-9]* of [0-9]+ call-chain addresses .*could not be placed' "$T/nomm.err"
fi
finish
