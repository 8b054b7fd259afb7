#!/usr/bin/env bash
# x86-64 decoder speed: the table-driven fast path (pk_x86_decode) against
# Zydis alone (pk_x86_decode_zydis), over every function symbol of libc,
# qemu-x86_64 and libLLVM-19: agreement + fast-path share, wall-clock
# instructions/second (best of REPS) and valgrind Ir per instruction (libc).
# Usage: bench/x86_decode.sh [REPS]     (BUILD=build-x86 to pick the library)
#        bench/x86_decode.sh gen        regenerate src/binary/x86_tables{,_evex}.c (Zydis' answers)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
lib=$root/$BUILD/libpgokit.a
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -f "$lib" ] || { echo "build $lib first (make BUILD=$BUILD)"; exit 1; }
cc=${CC:-gcc}
libs="-lZydis -lzstd -lz -lpthread -lm"
if [ "${1:-}" = gen ]; then
    # The generator links the library for pk_x86_decode_zydis only.
    $cc -O2 -I"$root/src" -o "$tmp/gen" "$root/bench/x86_gen_tables.c" "$lib" $libs
    "$tmp/gen" "$tmp/x86_tables.c" "$tmp/x86_tables_evex.c"
    mv "$tmp/x86_tables.c" "$tmp/x86_tables_evex.c" "$root/src/binary/"
    echo "wrote src/binary/x86_tables.c, x86_tables_evex.c: rebuild, then run tests/unit/test_binary_x86"
    exit 0
fi
REPS=${1:-5}
$cc -O2 -g -I"$root/src" -o "$tmp/drv" "$root/bench/x86_decode.c" "$lib" $libs
libc=/lib/x86_64-linux-gnu/libc.so.6
files="$libc"
for f in /usr/bin/qemu-x86_64 /usr/lib/x86_64-linux-gnu/libLLVM.so.19.1; do
    [ -f "$f" ] && files="$files $f"
done
echo "== agreement and fast-path share"
"$tmp/drv" diff $files
echo "== speed (best of $REPS runs; includes the sweep loop; machine shared, so noisy)"
for f in $files; do
    for mode in fast zydis; do
        # "FILE: MODE: N instructions in S s: R M insn/s": keep the best R
        for r in $(seq "$REPS"); do "$tmp/drv" "$mode" 1 "$f"; done | sort -k8 -g | tail -1
    done
done
if command -v valgrind > /dev/null; then
    echo "== valgrind Ir per decoded instruction ($libc, inclusive)"
    n=$("$tmp/drv" fast 1 "$libc" | awk '{print $3}')
    for fn in pk_x86_decode pk_x86_decode_zydis; do
        mode=fast; [ "$fn" = pk_x86_decode_zydis ] && mode=zydis
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$mode" --toggle-collect="$fn" \
            "$tmp/drv" "$mode" 1 "$libc" > /dev/null 2>&1
        ir=$(callgrind_annotate "$tmp/cg.$mode" 2> /dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
        echo "$fn: $ir Ir / $n instructions = $(awk -v a="$ir" -v b="$n" 'BEGIN { printf "%.1f", a / b }') Ir/insn"
    done
fi
