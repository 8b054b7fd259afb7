#!/usr/bin/env bash
# Flow inference over real binaries: the CFG of every function symbol of
# libc, qemu-x86_64, pgokit itself and libLLVM-19 (blocks, edges, indirect
# jumps resolved as jump tables or not, CFG build time), and flow inference
# time per method with random weights (the solver's worst case) on all of
# them but libLLVM (there: the functions of 2,000 blocks or more). The accuracy measurements are in the unit tests
# (tests/unit/test_infer_noise.c, test_infer_cfg.c: they print them).
# Usage: bench/infer_bench.sh [-v]   (-v lists functions with unresolved
#                                      indirect jumps)   BUILD=... picks the library
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
lib=$root/$BUILD/libpgokit.a
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -f "$lib" ] || { echo "build $lib first (make BUILD=$BUILD)"; exit 1; }
${CC:-gcc} -O2 -g -I"$root/src" -o "$tmp/drv" "$root/bench/infer_bench.c" "$lib" -lZydis -lzstd -lz -lpthread -lm
files=/lib/x86_64-linux-gnu/libc.so.6
for f in /usr/bin/qemu-x86_64 "$root/$BUILD/pgokit"; do [ -f "$f" ] && files="$files $f"; done
"$tmp/drv" ${1:-} -flow $files
llvm=/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1
# libLLVM: every CFG, and flow inference on its functions of 2,000+ blocks
[ -f "$llvm" ] && "$tmp/drv" ${1:-} -flowmin=2000 "$llvm"
exit 0
