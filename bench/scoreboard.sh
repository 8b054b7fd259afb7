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
#               runs left in bench/work/, so one stage can be rerun alone)
#     --reps:   interleaved timing rounds (default 10)
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
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "scoreboard: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || workloads=(sqlite lua bzip2 zstd)

PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
[ -x "$PGOKIT" ] || { echo "scoreboard: $PGOKIT not built (run make)" >&2; exit 2; }
WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}
mkdir -p "$WORK"
"$PK_ROOT/scripts/workloads.sh" obtain
WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir)
export WL_DIR

has_stage() { [[ ",$stages," == *",$1,"* ]]; }
die() { echo "scoreboard: FAILED: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

for w in "${workloads[@]}"; do
  D=$WORK/$w; mkdir -p "$D"/{rec,prof,gen,meas}
  SB_DIR=$D
  has_stage build    && sb_stage_build "$w" "$D"
  has_stage record   && sb_stage_record "$w" "$D"
  has_stage profiles && sb_stage_profiles "$w" "$D"
  has_stage variants && sb_stage_variants "$w" "$D"
  has_stage measure  && sb_stage_measure "$w" "$D" "$reps"
done
if has_stage report; then
  python3 "$PK_ROOT/bench/lib/report.py" --work "$WORK" --out "$PK_ROOT/bench/results" "${workloads[@]}"
fi
