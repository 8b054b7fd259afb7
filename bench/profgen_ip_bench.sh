#!/usr/bin/env bash
# profgen_ip_bench.sh — profile generation from IP + call-stack samples
# (no LBR): `pgokit profgen` against AutoFDO's `create_llvm_prof
# --use_lbr=false` on the SAME perf.data, recorded with stock perf
# (`perf record -e cpu-clock:u --call-graph fp`) from SQLite speedtest1 built
# -O2 -g -gdwarf-4 -fno-omit-frame-pointer (create_llvm_prof 0.19 reads no
# DWARF 5). Its text format is timed: Debian's 0.19 fails to write the
# binary format of these profiles ("Truncated function name table", inlined
# callee names read from freed memory, google/autofdo#95) after all the work
# is done, and its text output carries those garbled names: the time is the
# tool's, the profile is not usable. Issue 17's benchmark: ~1M samples, target >= 10x faster and
# <= 1/4 of the memory.
#
# For each point: wall time and peak RSS (medians of BENCH_RUNS interleaved
# runs) of pgokit's line-based AutoFDO profile and of create_llvm_prof's,
# and pgokit's CSSPGO profile of the same samples on the probe build (for
# scale; the anchor has no CS mode without LBR).
#
# Environment: BUILD (default build), BENCH_RUNS (default 5), BENCH_POINTS
#   (default "25:5000 100:20000 150:50000 500:50000": speedtest1 --size and
#   perf's sampling frequency: about 2k, 80k, 870k and 6M samples), BENCH_KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
PGOKIT=$ROOT/$BUILD/pgokit
RUNS=${BENCH_RUNS:-5}
POINTS=${BENCH_POINTS:-25:5000 100:20000 150:50000 500:50000}
D=$(mktemp -d "${TMPDIR:-/tmp}/pgokit-ip-bench.XXXXXX")
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$D"' EXIT
[ -x "$PGOKIT" ] || { echo "build pgokit first (make BUILD=$BUILD)" >&2; exit 2; }
WL=$(scripts/workloads.sh dir)

echo "# IP profgen benchmark $(date -u +%FT%TZ), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# anchor: create_llvm_prof (AutoFDO $(dpkg-query -W -f='${Version}' autofdo 2>/dev/null)) --use_lbr=false"
XFLAGS="-gdwarf-4 -fno-omit-frame-pointer" PK_WORKLOADS_CACHE=1 scripts/workloads.sh build ipbench-fp sqlite >/dev/null
XFLAGS="-gdwarf-4 -fno-omit-frame-pointer -fpseudo-probe-for-profiling" PK_WORKLOADS_CACHE=1 \
    scripts/workloads.sh build ipbench-fp-probe sqlite >/dev/null
BIN=$WL/out/ipbench-fp/speedtest1
PBIN=$WL/out/ipbench-fp-probe/speedtest1

timed() { # out-file cmd...: appends "seconds KiB cpu-seconds"
    local out=$1; shift
    local t0=$EPOCHREALTIME
    /usr/bin/time -f '%M %U %S' -o "$D/t" "$@" >/dev/null 2>"$D/err" || {
        echo "failed: $*" >&2; tail -3 "$D/err" >&2; return 1; }
    local t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" '{printf "%.4f %s %.3f\n", b - a, $1, $2 + $3}' "$D/t" >> "$out"
}
median() { sort -g -k"$2","$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {print v[int((NR + 1) / 2)]}'; }

printf '| samples | perf.data MB | pgokit AutoFDO s | CPU s | MiB | create_llvm_prof s | CPU s | MiB | time ratio | CPU ratio | memory ratio | pgokit CSSPGO s (probe build) | MiB |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for pt in $POINTS; do
    IFS=: read -r size freq <<< "$pt"
    data=$D/s$size.data pdata=$D/p$size.data
    perf record -q -e cpu-clock:u -F "$freq" --call-graph fp -o "$data" -- "$BIN" --size "$size" --memdb >/dev/null 2>&1
    perf record -q -e cpu-clock:u -F "$freq" --call-graph fp -o "$pdata" -- "$PBIN" --size "$size" --memdb >/dev/null 2>&1
    sync
    # one untimed run of each (page cache)
    "$PGOKIT" profgen -q --binary "$BIN" --perf "$data" -o "$D/pg.prof"
    create_llvm_prof --binary="$BIN" --profile="$data" --use_lbr=false --format=text --out="$D/cfp.prof" 2>/dev/null || true
    rm -f "$D/pg.t" "$D/cfp.t" "$D/cs.t"
    for ((r = 0; r < RUNS; r++)); do
        timed "$D/pg.t" "$PGOKIT" profgen -q --binary "$BIN" --perf "$data" -o "$D/pg.prof"
        timed "$D/cfp.t" create_llvm_prof --binary="$BIN" --profile="$data" --use_lbr=false --format=text --out="$D/cfp.prof"
        timed "$D/cs.t" "$PGOKIT" profgen -q --binary "$PBIN" --perf "$pdata" -o "$D/cs.prof"
    done
    n=$("$PGOKIT" profgen --binary "$BIN" --perf "$data" -o "$D/pg.prof" 2>&1 |
        sed -n 's/.*from IP samples (no branch stacks): \([0-9]*\) read.*/\1/p')
    awk -v n="$n" -v mb="$(stat -c %s "$data")" -v pgs="$(median "$D/pg.t" 1)" -v pgm="$(median "$D/pg.t" 2)" \
        -v pgc="$(median "$D/pg.t" 3)" -v cc="$(median "$D/cfp.t" 3)" \
        -v cs="$(median "$D/cfp.t" 1)" -v cm="$(median "$D/cfp.t" 2)" \
        -v xs="$(median "$D/cs.t" 1)" -v xm="$(median "$D/cs.t" 2)" 'BEGIN {
        printf "| %d | %.0f | %.3f | %.3f | %.1f | %.3f | %.3f | %.1f | %.1fx | %.1fx | %.2fx | %.3f | %.1f |\n", n, mb / 1e6,
            pgs, pgc, pgm / 1024, cs, cc, cm / 1024, cs / pgs, cc / pgc, pgm / cm, xs, xm / 1024 }'
    rm -f "$data" "$pdata"
done
echo "(medians of $RUNS interleaved runs; wall seconds, CPU seconds (user + sys) and peak RSS; time and CPU ratio = create_llvm_prof / pgokit, memory ratio = pgokit / create_llvm_prof; the CPU ratio is the one to trust on a loaded machine)"
