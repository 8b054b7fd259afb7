#!/usr/bin/env bash
# bench/layout_startup.sh — start-up cost of CPython 3.11 (Debian's sources)
# running `python -c pass`, linked with ld.lld-19 in three layouts: default,
# `llvm-profdata-19 order`, `pgokit order` (same temporal traces, from clang-19's
# temporal instrumentation). Reports distinct 4 KiB / 64 KiB pages of .text
# touched (offline, from the trace and the symbol table), fault-curve area,
# and minor/major faults warm and from a cold page cache (posix_fadvise
# DONTNEED on the binary before each run).
#
# usage: bench/layout_startup.sh            (stages are skipped when done)
# env:   PGOKIT (default build/pgokit), WORK (default ~/.cache/pgokit/layout-bench),
#        JOBS (2), RUNS (20)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGOKIT=${PGOKIT:-$ROOT/build/pgokit}
WORK=${WORK:-$HOME/.cache/pgokit/layout-bench}
JOBS=${JOBS:-2}
RUNS=${RUNS:-20}
mkdir -p "$WORK"
cd "$WORK"
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# ---- 1. sources (through the workloads' private deb-src APT configuration)
# shellcheck source=bench/lib/cpython.sh
source "$ROOT/bench/lib/cpython.sh"
cpython_src "$WORK" > /dev/null

# ---- 2. two in-tree builds (copies of the sources): instrumented and plain
build() { cpython_build "$1" clang-19 "$2" "$3"; } # dir, CFLAGS, LDFLAGS
build inst "-ffunction-sections -fprofile-generate -mllvm -pgo-temporal-instrumentation" "-fprofile-generate"
build plain "-ffunction-sections" ""

# ---- 3. training runs -> temporal traces
mkdir -p prof
if [ ! -f prof/train.profdata ]; then
    log "training runs"
    rm -f prof/*.profraw
    (cd inst &&
     LLVM_PROFILE_FILE=$WORK/prof/pass.profraw ./python -c pass &&
     LLVM_PROFILE_FILE=$WORK/prof/os.profraw ./python -c 'import os, sys' &&
     LLVM_PROFILE_FILE=$WORK/prof/isolated.profraw ./python -I -c pass &&
     LLVM_PROFILE_FILE=$WORK/prof/nosite.profraw ./python -S -c pass)
    llvm-profdata-19 merge prof/pass.profraw prof/os.profraw prof/isolated.profraw prof/nosite.profraw \
        -o prof/train.profdata
    llvm-profdata-19 merge prof/pass.profraw -o prof/eval.profdata
fi
llvm-profdata-19 show --temporal-profile-traces prof/train.profdata > traces.txt
llvm-profdata-19 show --temporal-profile-traces prof/eval.profdata > eval.txt

# ---- 4. orders
t0=$(date +%s.%N)
llvm-profdata-19 order prof/train.profdata -o llvm.order
t1=$(date +%s.%N)
"$PGOKIT" order -q --temporal traces.txt -o ours.order
t2=$(date +%s.%N)
log "order time: llvm-profdata $(python3 -c "print(round($t1 - $t0, 3))") s, pgokit $(python3 -c "print(round($t2 - $t1, 3))") s"

# ---- 5. relink the plain build in each layout
link() { # name, extra LDFLAGS
    rm -f plain/python
    (cd plain && make python LDFLAGS="-fuse-ld=lld $2" > ../link-"$1".log 2>&1)
    cp plain/python plain/python."$1"
}
link default ""
link llvm "-Wl,--symbol-ordering-file=$WORK/llvm.order -Wl,--no-warn-symbol-ordering"
link ours "-Wl,--symbol-ordering-file=$WORK/ours.order -Wl,--no-warn-symbol-ordering"

cc -O2 -o layout_faults "$ROOT/bench/layout_faults.c"
text=$(size -A plain/python.default | awk '$1 == ".text" { print $2 }')
nfun=$(grep -c '^    ' eval.txt)
echo "CPython 3.11.2 (clang-19 -O3 -ffunction-sections, ld.lld-19): .text $text bytes;" \
     "python -c pass runs $nfun instrumented functions"
ra=$(for f in /sys/block/*/queue/read_ahead_kb; do d=${f#/sys/block/}; d=${d%%/*}; case $d in loop*|ram*) ;; *) printf '%s=%s ' "$d" "$(cat "$f")";; esac; done)
echo "kernel: fault_around_bytes $(cat /sys/kernel/debug/fault_around_bytes 2>/dev/null || echo '?'), read_ahead_kb: $ra"
echo "RUNS=$RUNS per figure; minor/major faults are per run (avg); cold = binary evicted before each run"
printf '%-8s %8s %8s %10s %9s %9s %9s %9s %9s %10s\n' layout pages4K pages64K area4K \
    warm_min cold_min cold_maj cold_ms warm_ms read_KiB
for l in default llvm ours; do
    read -r p4 a4 < <(python3 "$ROOT/tests/programs/layout_pages.py" plain/python.$l eval.txt 4096 2>/dev/null)
    read -r p64 _ < <(python3 "$ROOT/tests/programs/layout_pages.py" plain/python.$l eval.txt 65536 2>/dev/null)
    (cd plain && ../layout_faults 3 ./python.$l -c pass > /dev/null) # warm up
    read -r wmin _ _ _ wms _ < <(cd plain && ../layout_faults "$RUNS" ./python.$l -c pass)
    read -r cmin cmaj _ _ cms _ < <(cd plain && ../layout_faults --cold "$RUNS" ./python.$l -c pass)
    read -r _ _ _ _ _ kib < <(cd plain && ../layout_faults --cold 1 ./python.$l -c pass)
    printf '%-8s %8s %8s %10s %9s %9s %9s %9s %9s %10s\n' $l "$p4" "$p64" "$a4" "$wmin" "$cmin" "$cmaj" "$cms" "$wms" "$kib"
done
