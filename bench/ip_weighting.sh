#!/usr/bin/env bash
# What cpu-clock's time weighting costs an IP profile. A cpu-clock sample
# lands on an instruction in proportion to the time it takes; a profile
# counts how often it runs. Here the scoreboard's training commands are
# recorded again with samples every N retired instructions (the emulator's
# IP mode, `pgokit record --emulate --ip`: what `pgokit record --ip` gets
# from a PMU that counts instructions), N chosen so that they hold as many
# samples as the scoreboard's cpu-clock recordings of the same binary, and
# the same profiles are made, built and counted as the scoreboard's IP rows.
#
#   bench/ip_weighting.sh [--seeds K] WORKLOAD...
#     after `bench/scoreboard.sh` ran the IP variants of WORKLOAD (its
#     cpu-clock recordings and builds are reused; nothing of it is changed)
#     --seeds K: emulated recordings per training binary (default 3), each
#                with its own sampling jitter
#   Environment as for the scoreboard: PGOKIT, PK_BENCH_WORK, PK_BENCH_TAG.
#   Prints a Markdown table per workload: instructions vs -O2 of the
#   cpu-clock profile (the scoreboard's) and of each emulated recording's.
#
# The emulator's samples also carry exact call stacks (frame pointers can
# lose a frame): the probe-only and AutoFDO rows, which use no stacks,
# isolate the weighting.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PK_ROOT
source "$PK_ROOT/bench/lib/workloads.sh"
source "$PK_ROOT/bench/lib/variants.sh"
seeds=3
workloads=()
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "ip_weighting: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || { echo "ip_weighting: name a workload" >&2; exit 2; }
[[ $seeds =~ ^[1-9][0-9]?$ ]] || { echo "ip_weighting: --seeds wants 1..99" >&2; exit 2; }
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}
WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir)
export WL_DIR
die() { echo "ip_weighting: FAILED: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
source "$PK_ROOT/bench/lib/ip_density.sh"

for w in "${workloads[@]}"; do
  D=$WORK/$w SB_DIR=$WORK/$w
  [ -f "$D/gen/ip-runs.txt" ] || die "$w: no IP recordings in $D (run bench/scoreboard.sh first)"
  M=$D/iw
  rm -rf "$M"; mkdir -p "$M"
  specs=() names=(base afdo-ip-pgokit probe-ip-pgokit cs-ip-pgokit)
  for v in afdo-ip-pgokit probe-ip-pgokit cs-ip-pgokit; do
    [ -x "$(sb_bin "$w" "$v")" ] || die "$w/$v: not built by the scoreboard"
  done
  for kind in afdo probe; do
    bin_dir=$(sb_dir "$kind")
    target=$(samples_in "$D"/rec/ip-"$kind"-*.data)
    [ "$target" -gt 0 ] || die "$w/$kind: the cpu-clock recordings hold no samples"
    # instructions per training run, from a first emulated recording: the
    # period that gives as many samples as the cpu-clock runs hold
    insns=$(wl_train "$w" "$bin_dir" | emulated_insns "$M/first-$kind.data")
    [ "${insns:-0}" -gt 0 ] || die "$w/$kind: no instructions counted (emulated recording)"
    period=$(period_for "$insns" "$target")
    log "$w/$kind: $target cpu-clock samples, ~$insns instructions per run: a sample every $period instructions"
    echo "$target $insns $period" > "$M/density-$kind.txt"
    for ((s = 1; s <= seeds; s++)); do
      data=() i=0
      while read -r cmd; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        "$PGOKIT" record -q --emulate --ip --period "$period" --seed "$s" -o "$M/$kind-$s-$i.data" -- $cmd \
          >/dev/null || die "$w/$kind: emulated recording failed on: $cmd"
        data+=(--perf "$M/$kind-$s-$i.data")
      done < <(wl_train "$w" "$bin_dir")
      if [ "$kind" = afdo ]; then
        made=("afdo-ip-pgokit|")
      else
        made=("probe-ip-pgokit|--ignore-stack-samples" "cs-ip-pgokit|")
      fi
      for m in "${made[@]}"; do
        v=${m%%|*} opt=${m#*|}
        prof="$M/$v-$s.prof"
        # shellcheck disable=SC2086
        "$PGOKIT" profgen -q --binary "$(sb_bin "$w" "$kind")" "${data[@]}" $opt -o "$prof" ||
          die "$w/$v from emulated recording $s: profgen failed"
        flags=$(sb_variant_field "$v" 3)
        specs+=("iw$s-$v|${flags//@P/$prof}|$prof")
        names+=("iw$s-$v")
      done
    done
  done
  log "$w: ${#specs[@]} builds"
  sb_build_all "$w" "" "${specs[@]}"
  sb_count "$w" "$M" "${names[@]}"
  python3 - "$M/counts.tsv" "$w" "$seeds" <<'PY'
import statistics, sys
counts = {}
for line in open(sys.argv[1]):
    v, ir, _ = line.rstrip("\n").split("\t")
    counts[v] = int(ir)
w, seeds = sys.argv[2], int(sys.argv[3])
pct = lambda v: (counts[v] / counts["base"] - 1) * 100
print(f"\n### {w}: instructions vs -O2, cpu-clock samples against instruction samples at the same density\n")
print("| variant | cpu-clock (scoreboard) | instruction samples: mean | each recording |")
print("|---|---:|---:|---|")
for v in ("afdo-ip-pgokit", "probe-ip-pgokit", "cs-ip-pgokit"):
    each = [pct(f"iw{s}-{v}") for s in range(1, seeds + 1)]
    print(f"| {v} | {pct(v):+.2f}% | {statistics.mean(each):+.2f}% | " + ", ".join(f"{x:+.2f}" for x in each) + " |")
PY
done
