#!/usr/bin/env bash
# profgen_cs_bench.sh — context-sensitive (CSSPGO) profile generation:
# `pgokit profgen` vs llvm-profgen-19 on the same stack + LBR recordings of
# SQLite speedtest1 built with -fpseudo-probe-for-profiling, at several
# sample counts (issue #4's benchmark: ~10k, ~100k, ~1M samples).
#
# For each recording: wall time and peak RSS (median of BENCH_RUNS runs,
# interleaved pgokit / llvm-profgen so load drifts hit both) of
#   pgokit profgen --perf DATA            (reads perf.data itself)
#   llvm-profgen-19 --perfscript TEXT     (on `perf script` text, made once)
# plus the one-off cost of `perf script` (what llvm-profgen's --perfdata
# mode runs first), and the ratios. Both write pre-inlined extbinary.
#
# Environment: BUILD (default build), BENCH_RUNS (default 3),
#   BENCH_POINTS (default "10:20011:15 100:20011:9 100:2000": speedtest1
#   --size, record --period and, optionally, the number of runs per
#   recording: about 10k, 100k and 1M samples; short runs get more of them,
#   since this machine's run-to-run spread is 10-20 %),
#   BENCH_KEEP=1 keeps the work directory (recordings are large: ~1 GB at 1M).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
PGOKIT=$ROOT/$BUILD/pgokit
RUNS=${BENCH_RUNS:-3}
POINTS=${BENCH_POINTS:-10:20011:15 100:20011:9 100:2000}
D=$(mktemp -d "${TMPDIR:-/tmp}/pgokit-cs-bench.XXXXXX")
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$D"' EXIT
[ -x "$PGOKIT" ] || { echo "build pgokit first (make BUILD=$BUILD)" >&2; exit 2; }
WL=$(scripts/workloads.sh dir)

echo "# CS profgen benchmark $(date -u +%FT%TZ), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(llvm-profgen-19 --version 2>&1 | grep -m1 -i 'version' | sed 's/^ *//')"
XFLAGS="-fpseudo-probe-for-profiling" PK_WORKLOADS_CACHE=1 scripts/workloads.sh build csbench-probe sqlite >/dev/null
BIN=$WL/out/csbench-probe/speedtest1

# one timed run: appends "seconds KiB" to the file $1
# (wall time from bash's microsecond clock: GNU time's %e has 10 ms steps,
# a tenth of pgokit's run at 10k samples; peak RSS from GNU time)
timed() {
    local out=$1; shift
    local t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$D/t" "$@" >/dev/null 2>"$D/err" || {
        echo "failed: $*" >&2; tail -3 "$D/err" >&2; return 1; }
    local t1=$EPOCHREALTIME
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}') $(cat "$D/t")" >> "$out"
}
median() { sort -g -k"$2","$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {print v[int((NR + 1) / 2)]}'; }

printf '| samples | perf.data MB | pgokit s | pgokit MiB | llvm-profgen s | llvm-profgen MiB | perf script s | time ratio | time ratio incl. perf script | memory ratio |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for pt in $POINTS; do
    IFS=: read -r size period runs <<< "$pt"
    runs=${runs:-$RUNS}
    data=$D/s$size-p$period.data script=$D/s$size-p$period.script
    "$PGOKIT" record --emulate -q --period "$period" -o "$data" -- "$BIN" --size "$size" --memdb >/dev/null
    rm -f "$D/ps.t"
    timed "$D/ps.t" sh -c "perf script -F ip,brstack --show-mmap-events -i '$data' > '$script' 2>/dev/null"
    rm -f "$D/pg.t" "$D/lp.t"
    # the recording and its text were just written: flush them, and run each
    # tool once untimed, so that no timed run pays for writeback or a cold
    # page cache (the first run after recording measured up to 2x slower)
    sync
    "$PGOKIT" profgen -q --binary "$BIN" --perf "$data" -o "$D/pg.prof" --format extbinary
    llvm-profgen-19 --binary "$BIN" --perfscript "$script" -o "$D/lp.prof" 2>/dev/null
    for ((r = 0; r < runs; r++)); do
        timed "$D/pg.t" "$PGOKIT" profgen -q --binary "$BIN" --perf "$data" -o "$D/pg.prof" --format extbinary
        timed "$D/lp.t" llvm-profgen-19 --binary "$BIN" --perfscript "$script" -o "$D/lp.prof"
    done
    n=$("$PGOKIT" profgen --binary "$BIN" --perf "$data" -o "$D/pg.prof" --format extbinary 2>&1 |
        sed -n 's/^profgen: samples: \([0-9]*\) read.*/\1/p')
    pgs=$(median "$D/pg.t" 1) pgm=$(median "$D/pg.t" 2) lps=$(median "$D/lp.t" 1) lpm=$(median "$D/lp.t" 2)
    pss=$(median "$D/ps.t" 1)
    awk -v n="$n" -v mb="$(stat -c %s "$data")" -v pgs="$pgs" -v pgm="$pgm" -v lps="$lps" -v lpm="$lpm" -v pss="$pss" 'BEGIN {
        printf "| %d | %.0f | %.4f | %.1f | %.3f | %.1f | %.2f | %.2fx | %.1fx | %.2fx |\n", n, mb / 1e6,
            pgs, pgm / 1024, lps, lpm / 1024, pss, lps / pgs, (lps + pss) / pgs, pgm / lpm }'
    # the two profiles must agree: flattened overlap as in the acceptance test
    for p in pg lp; do
        llvm-profdata-19 merge --sample --text --convert-sample-profile-layout=flat -o "$D/$p.flat" "$D/$p.prof"
    done
    echo "  flattened similarity (llvm-profgen base): $(llvm-profdata-19 overlap --sample "$D/lp.flat" "$D/pg.flat" |
        sed -n 's/^ *Whole program profile similarity: *//p')"
    rm -f "$data" "$script"
done
echo "(medians of interleaved runs: $POINTS as size:period:runs, default runs $RUNS; wall seconds, peak RSS; ratios = llvm-profgen / pgokit time, pgokit / llvm-profgen memory)"
