#!/usr/bin/env bash
# AArch64 decoder choice: pgokit's own table-driven A64 decoder against
# Debian's capstone (libcapstone-dev 4.0.2) on the same .text (the cross
# libc, and SQLite's speedtest1 when bench/../ workloads hold an aarch64
# build): agreement, words capstone cannot decode (it predates the PAC
# branches RETAA/BRAA..., BTI and BC.cond), wall-clock instructions/second
# (best of REPS) and valgrind Ir per instruction (noise-free).
# Usage: bench/a64_decode.sh [REPS]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
lib=$root/$BUILD/libpgokit.a
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -f "$lib" ] || { echo "build $lib first (make BUILD=$BUILD)"; exit 1; }
[ -f /usr/include/capstone/capstone.h ] || { echo "libcapstone-dev is not installed (scripts/setup.sh)"; exit 1; }
REPS=${1:-5}
${CC:-gcc} -O2 -g -I"$root/src" -o "$tmp/drv" "$root/bench/a64_decode.c" "$lib" -lcapstone -lZydis -lzstd -lz -lpthread -lm
files=/usr/aarch64-linux-gnu/lib/libc.so.6
sq=$("$root/scripts/workloads.sh" dir 2>/dev/null)/out/a64-clang/speedtest1
[ -f "$sq" ] && files="$files $sq"
# a PAC build with RETAA/RETAB (armv8.3+): capstone's gap
clang-19 --target=aarch64-linux-gnu -fuse-ld=lld -O2 -march=armv8.5-a -mbranch-protection=standard \
    "$root/tests/programs/profgen_calls.c" -o "$tmp/pac" && files="$files $tmp/pac"
echo "== agreement (capstone's class/target vs ours on the words it decodes)"
"$tmp/drv" diff $files
echo "== speed (best of $REPS runs; machine shared, so noisy)"
for f in $files; do
    [ "$f" = "$tmp/pac" ] && continue
    for mode in ours:200 capstone:2 capstone-nodetail:2; do
        for r in $(seq "$REPS"); do "$tmp/drv" "${mode%:*}" "${mode#*:}" "$f"; done | sort -k10 -g | tail -1
    done
done
if command -v valgrind > /dev/null; then
    echo "== valgrind Ir per instruction (libc .text; the ELF open is subtracted: run with 0 and N reps)"
    f=/usr/aarch64-linux-gnu/lib/libc.so.6
    n=$("$tmp/drv" ours 1 "$f" | awk '{print $3}')
    ir() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$tmp/drv" "$@" 2>&1 |
           awk '/I *refs/ { gsub(",", "", $NF); print $NF }'; }
    for mode in ours:20 capstone:1 capstone-nodetail:1; do
        m=${mode%:*} k=${mode#*:}
        a=$(ir "$m" 0 "$f"); b=$(ir "$m" "$k" "$f")
        echo "$m: $(( (b - a) / (n * k) )) Ir/insn"
    done
fi
