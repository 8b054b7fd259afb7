#!/usr/bin/env bash
# The PGO scoreboard: for each workload, build the baseline and every PGO
# variant from ONE emulated recording per binary kind, measure run time
# (interleaved with the baseline), instruction counts, .text size, generator
# time and memory, and write a Markdown table + SVG chart to bench/results/.
#
#   bench/scoreboard.sh [--reps N] [--stages LIST] [--variants LIST] [WORKLOAD...]
#     WORKLOAD: sqlite lua bzip2 zstd (default: all four)
#     --stages: comma list of build,record,profiles,variants,measure,report
#               (default: all, in that order; each stage reuses what earlier
#               runs left in bench/work/, so one stage can be rerun alone);
#               record-ip re-records only the IP variants' perf runs (record
#               includes them)
#     --reps:   interleaved timing rounds (default 10)
#     --rebuild: rebuild every binary (default: a binary whose compiler, flags
#               and profile bytes are unchanged since it was built is kept)
#   Environment: PGOKIT (default build/pgokit; the record plugin is the
#   pgokit-lbr.so beside it), PK_BENCH_WORK (work dir, default bench/work),
#   PK_BENCH_TAG (binaries in <workloads>/out/TAG-VARIANT, default sb),
#   PK_BENCH_RESULTS (default bench/results), SB_JOBS (parallel builds, 2).
#   Every stage's duration is logged and appended to WORK/stage-times.tsv.
#
# Fails loudly (non-zero exit, a message naming the variant) when a variant
# cannot be built, a profile is empty, or a profile-use build comes out
# identical to the baseline (a silently ignored profile must never show up as
# a "0% gain" row).
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PK_ROOT
source "$PK_ROOT/bench/lib/workloads.sh"
source "$PK_ROOT/bench/lib/variants.sh"

reps=10
stages=build,record,profiles,variants,measure,report
only_variants=
workloads=()
while [ $# -gt 0 ]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --stages) stages=$2; shift 2 ;;
    --variants) only_variants=$2; shift 2 ;;
    --rebuild) export SB_REBUILD=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "scoreboard: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || workloads=(sqlite lua bzip2 zstd)

PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
[ -x "$PGOKIT" ] || { echo "scoreboard: $PGOKIT not built (run make)" >&2; exit 2; }
# pgokit record loads the QEMU plugin from beside the binary (or one level up)
# unless PGOKIT_LBR_PLUGIN names it: check before an hour of work, not after.
if [ -z "${PGOKIT_LBR_PLUGIN:-}" ] && [ ! -f "$(dirname "$PGOKIT")/pgokit-lbr.so" ] && [ ! -f "$(dirname "$PGOKIT")/../pgokit-lbr.so" ]; then
  echo "scoreboard: no pgokit-lbr.so beside $PGOKIT (make $(dirname "$PGOKIT")/pgokit-lbr.so)" >&2; exit 2
fi
WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}
mkdir -p "$WORK"
"$PK_ROOT/scripts/workloads.sh" obtain
WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir)
export WL_DIR

t_all=$SECONDS
has_stage() { [[ ",$stages," == *",$1,"* ]]; }
die() { echo "scoreboard: FAILED: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
# CPU seconds used so far by this script's finished children (cutime+cstime):
# on a shared machine, wall time depends on the neighbours, CPU time less so.
cpu_s() { awk -v t="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); printf "%.0f", ($14 + $15) / t}' /proc/$$/stat; }

for w in "${workloads[@]}"; do
  D=$WORK/$w; mkdir -p "$D"/{rec,prof,gen,meas}
  SB_DIR=$D
  for st in build record record-ip profiles variants measure; do
    has_stage $st || continue
    t0=$SECONDS c0=$(cpu_s)
    case $st in
      measure) sb_stage_measure "$w" "$D" "$reps" ;;
      record-ip) has_stage record || sb_stage_record_ip "$w" "$D" ;;
      *) "sb_stage_$st" "$w" "$D" ;;
    esac
    c1=$(cpu_s)
    log "stage $st $w: $((SECONDS - t0)) s wall, $((c1 - c0)) s CPU (load $(cut -d' ' -f1 /proc/loadavg))"
    echo -e "$(date +%FT%T)\t$w\t$st\t$((SECONDS - t0))\t$((c1 - c0))\treps=$reps\tload=$(cut -d' ' -f1 /proc/loadavg)" >> "$WORK/stage-times.tsv"
  done
done
log "all stages: $((SECONDS - t_all)) s"
if has_stage report; then
  python3 "$PK_ROOT/bench/lib/report.py" --work "$WORK" --out "${PK_BENCH_RESULTS:-$PK_ROOT/bench/results}" \
    ${only_variants:+--variants "$only_variants"} "${workloads[@]}"
fi
