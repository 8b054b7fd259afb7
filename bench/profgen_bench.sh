#!/usr/bin/env bash
# profgen_bench.sh — `pgokit profgen` vs llvm-profgen-19 on a real workload
# (SQLite speedtest1 by default), same recording:
#   1. build the workload (-O2 -g), record it with `pgokit record` (emulated LBR);
#   2. time and peak RSS of: pgokit profgen on perf.data; perf script (the text
#      llvm-profgen needs); llvm-profgen-19 on that text (--ignore-stack-samples:
#      the AutoFDO profile); llvm-profgen-19 --perfdata (runs perf itself);
#   3. profile overlap (llvm-profdata-19 overlap --sample);
#   4. with BENCH_E2E=1: rebuild with each profile and time the workload
#      interleaved (median CPU time), the end-to-end check that our profile
#      builds a program as fast as llvm-profgen's.
# Environment: BUILD (default build), BENCH_RUNS (default 3), BENCH_SIZE
# (speedtest1 --size while recording, default 20), BENCH_PERIOD (record
# period, default 10007), BENCH_E2E, BENCH_KEEP=1 (keep the work dir).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
PGOKIT=$ROOT/$BUILD/pgokit
RUNS=${BENCH_RUNS:-3}
SIZE=${BENCH_SIZE:-20}
PERIOD=${BENCH_PERIOD:-10007}
D=$(mktemp -d "${TMPDIR:-/tmp}/pgokit-profgen-bench.XXXXXX")
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$D"' EXIT
WL=$(scripts/workloads.sh dir)

echo "== build sqlite (variant profgen-base)"
PK_WORKLOADS_CACHE=1 scripts/workloads.sh build profgen-base sqlite
BIN=$WL/out/profgen-base/speedtest1

echo "== record: speedtest1 --size $SIZE --memdb (emulated, period $PERIOD)"
"$PGOKIT" record --emulate -q --period "$PERIOD" -o "$D/sqlite.data" -- "$BIN" --size "$SIZE" --memdb >/dev/null
ls -la "$D/sqlite.data" | awk '{print "perf.data: " $5 " bytes"}'

measure() { # label, command...: prints wall seconds and peak RSS (KiB) per run
    local label=$1; shift
    local all=()
    for ((r = 0; r < RUNS; r++)); do
        /usr/bin/time -f '%e %M' -o "$D/time.out" "$@" >/dev/null 2>"$D/err.out" || {
            echo "$label: failed"; tail -3 "$D/err.out"; return 1; }
        all+=("$(cat "$D/time.out")")
    done
    printf '%-44s' "$label"
    printf '%s\n' "${all[@]}" | sort -g | awk -v n="$RUNS" '
        {w[NR] = $1; m[NR] = $2}
        END {med = w[int((n + 1) / 2)]; printf "median %7.3f s  (min %.3f, max %.3f)  peak RSS %7.1f MiB\n",
             med, w[1], w[n], m[int((n + 1) / 2)] / 1024}'
}

echo "== profile generation ($RUNS runs each)"
measure "pgokit profgen (perf.data)" "$PGOKIT" profgen -q --binary "$BIN" --perf "$D/sqlite.data" -o "$D/ours.prof"
measure "pgokit profgen --raw-only (perf.data)" "$PGOKIT" profgen -q --binary "$BIN" --perf "$D/sqlite.data" --raw-only -o "$D/ours.raw"
measure "pgokit profgen (raw profile)" "$PGOKIT" profgen -q --binary "$BIN" --raw "$D/ours.raw" -o "$D/ours2.prof"
measure "perf script -F ip,brstack" sh -c "perf script -F ip,brstack --show-mmap-events -i '$D/sqlite.data' > '$D/sqlite.script'"
ls -la "$D/sqlite.script" | awk '{print "perf script text: " $5 " bytes"}'
measure "pgokit profgen (perf script text)" "$PGOKIT" profgen -q --binary "$BIN" --perfscript "$D/sqlite.script" -o "$D/ours3.prof"
measure "llvm-profgen-19 (perf script text)" llvm-profgen-19 --binary "$BIN" --perfscript "$D/sqlite.script" \
    --output "$D/ref.prof" --ignore-stack-samples
measure "llvm-profgen-19 --perfdata" llvm-profgen-19 --binary "$BIN" --perfdata "$D/sqlite.data" \
    --output "$D/ref2.prof" --ignore-stack-samples

echo "== overlap (base: llvm-profgen-19, test: pgokit)"
llvm-profdata-19 overlap --sample "$D/ref.prof" "$D/ours.prof" | sed -n '2,12p'
"$PGOKIT" profgen --binary "$BIN" --perf "$D/sqlite.data" -o "$D/ours.txt" --format text 2>&1 | sed 's/^/  /'

if [ -n "${BENCH_E2E:-}" ]; then
    echo "== end to end: rebuild with each profile, speedtest1 --size 100 --memdb"
    XFLAGS="-fprofile-sample-use=$D/ours.prof" scripts/workloads.sh build profgen-pgokit sqlite
    XFLAGS="-fprofile-sample-use=$D/ref.prof" scripts/workloads.sh build profgen-llvm sqlite
    declare -A t
    for ((r = 0; r < 5; r++)); do
        for v in profgen-base profgen-pgokit profgen-llvm; do
            t[$v]+="$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f" % (r.ru_utime + r.ru_stime))' "$WL/out/$v/speedtest1" --size 100 --memdb) "
        done
    done
    for v in profgen-base profgen-pgokit profgen-llvm; do
        m=$(tr ' ' '\n' <<<"${t[$v]}" | grep . | sort -g | sed -n 3p)
        printf '%-16s median %s s  runs: %s\n' "$v" "$m" "${t[$v]}"
    done
fi
echo "work directory: $D${BENCH_KEEP:+ (kept)}"
