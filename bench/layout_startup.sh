#!/usr/bin/env bash
# bench/layout_startup.sh — start-up cost of CPython 3.11 (Debian's sources)
# running `python -c pass`, linked with ld.lld-19 in four layouts: default,
# `llvm-profdata-19 order`, `pgokit order` (same temporal traces, from clang-19's
# temporal instrumentation), and `pgokit order` fed by pgokit's own lightweight
# instrumentation (libpgokit_rt, -pg -mfentry) on the same training commands. Reports distinct 4 KiB / 64 KiB pages of .text
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
RT_A=$ROOT/${BUILD:-build}/libpgokit_rt.a
[ -f "$RT_A" ] || { echo "build the runtime first: make $RT_A" >&2; exit 1; }
PGOKIT_RT_MODE=off cpython_build rtinst clang-19 "-ffunction-sections" "" \
    EXTRA_CFLAGS="-pg -mfentry" LIBC="$RT_A -lpthread"

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
# the same commands under pgokit's runtime: raw profiles -> indexed -> order
rm -f prof/*.pgoraw
(cd rtinst &&
 PGOKIT_RT_FILE=$WORK/prof/pass.pgoraw ./python -c pass &&
 PGOKIT_RT_FILE=$WORK/prof/os.pgoraw ./python -c 'import os, sys' &&
 PGOKIT_RT_FILE=$WORK/prof/isolated.pgoraw ./python -I -c pass &&
 PGOKIT_RT_FILE=$WORK/prof/nosite.pgoraw ./python -S -c pass)
"$PGOKIT" merge --temporal --binary rtinst/python prof/pass.pgoraw prof/os.pgoraw prof/isolated.pgoraw \
    prof/nosite.pgoraw -o prof/rt.pgotemporal
# the evaluation run as pgokit's runtime saw it: out-of-line entries only
# (clang's IR-level trace also lists functions inlined at every call site)
"$PGOKIT" show --binary rtinst/python prof/pass.pgoraw | awk '$1 == "rec" { n = $6; sub(/^.*:/, "", n); printf "%s ", n } END { print "" }' > eval-rt.txt
llvm-profdata-19 show --temporal-profile-traces prof/train.profdata > traces.txt
llvm-profdata-19 show --temporal-profile-traces prof/eval.profdata > eval.txt

# ---- 4. orders
t0=$(date +%s.%N)
llvm-profdata-19 order prof/train.profdata -o llvm.order
t1=$(date +%s.%N)
"$PGOKIT" order -q --temporal traces.txt -o ours.order
t2=$(date +%s.%N)
"$PGOKIT" order -q --temporal prof/rt.pgotemporal -o rt.order
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
link rt "-Wl,--symbol-ordering-file=$WORK/rt.order -Wl,--no-warn-symbol-ordering"

cc -O2 -o layout_faults "$ROOT/bench/layout_faults.c"
text=$(size -A plain/python.default | awk '$1 == ".text" { print $2 }')
nfun=$(grep -c '^    ' eval.txt)
echo "CPython 3.11.2 (clang-19 -O3 -ffunction-sections, ld.lld-19): .text $text bytes;" \
     "python -c pass runs $nfun instrumented functions"
ra=$(for f in /sys/block/*/queue/read_ahead_kb; do d=${f#/sys/block/}; d=${d%%/*}; case $d in loop*|ram*) ;; *) printf '%s=%s ' "$d" "$(cat "$f")";; esac; done)
echo "kernel: fault_around_bytes $(cat /sys/kernel/debug/fault_around_bytes 2>/dev/null || echo '?'), read_ahead_kb: $ra"
echo "RUNS=$RUNS per figure; minor/major faults are per run (avg); cold = binary evicted before each run"
echo "pages4K/pages64K/area4K: offline, from clang-19's trace of -c pass; pages4K_rt: from pgokit's runtime trace of it"
printf '%-8s %8s %8s %10s %10s %9s %9s %9s %9s %9s %10s\n' layout pages4K pages64K area4K pages4K_rt \
    warm_min cold_min cold_maj cold_ms warm_ms read_KiB
for l in default llvm ours rt; do
    read -r p4 a4 < <(python3 "$ROOT/tests/programs/layout_pages.py" plain/python.$l eval.txt 4096 2>/dev/null)
    read -r p64 _ < <(python3 "$ROOT/tests/programs/layout_pages.py" plain/python.$l eval.txt 65536 2>/dev/null)
    read -r prt _ < <(python3 "$ROOT/tests/programs/layout_pages.py" plain/python.$l eval-rt.txt 4096 2>/dev/null)
    (cd plain && ../layout_faults 3 ./python.$l -c pass > /dev/null) # warm up
    read -r wmin _ _ _ wms _ < <(cd plain && ../layout_faults "$RUNS" ./python.$l -c pass)
    read -r cmin cmaj _ _ cms _ < <(cd plain && ../layout_faults --cold "$RUNS" ./python.$l -c pass)
    read -r _ _ _ _ _ kib < <(cd plain && ../layout_faults --cold 1 ./python.$l -c pass)
    printf '%-8s %8s %8s %10s %10s %9s %9s %9s %9s %9s %10s\n' $l "$p4" "$p64" "$a4" "$prt" "$wmin" "$cmin" "$cmaj" "$cms" "$wms" "$kib"
done
