#!/usr/bin/env bash
# What AutoFDO loses without the build clang's manual asks for. The
# scoreboard trains its AutoFDO variants (pgokit's, llvm-profgen's and
# AutoFDO's; LBR and IP) on `afdo`, -O2 -g with -fdebug-info-for-profiling
# -funique-internal-linkage-names ("Using Sampling Profilers"), and applies
# them to builds with the same flags. Without -fdebug-info-for-profiling
# clang writes no DWARF discriminators: the blocks of a source line (a
# loop's test and increment, an `if` and its body) share one count, the
# largest, and the profile-use build, whose blocks do have discriminators,
# finds a count for one of them. This trains the same kinds on the plain
# -O2 -g build (`base`), recorded as the scoreboard records (one emulated
# LBR run per training command; SB_IP_RUNS cpu-clock runs), applies them to
# -O2, and counts them beside the scoreboard's (cachegrind, as the
# scoreboard counts).
#
#   bench/afdo_debug_info.sh WORKLOAD...
#     after `bench/scoreboard.sh` ran WORKLOAD (its base, afdo and AutoFDO
#     builds are counted again beside the new ones; builds it lacks are left
#     out)
#   Environment as for the scoreboard: PGOKIT, PK_BENCH_WORK, PK_BENCH_TAG,
#   SB_IP_RUNS, SB_IP_FREQ.
#   Prints a Markdown table per workload: instructions vs -O2.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PK_ROOT
source "$PK_ROOT/bench/lib/workloads.sh"
source "$PK_ROOT/bench/lib/variants.sh"
workloads=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "afdo_debug_info: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || { echo "usage: bench/afdo_debug_info.sh WORKLOAD..." >&2; exit 2; }
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
[ -x "$PGOKIT" ] || { echo "afdo_debug_info: $PGOKIT not built (run make)" >&2; exit 2; }
WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}
WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir)
export WL_DIR
die() { echo "afdo_debug_info: FAILED: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

for w in "${workloads[@]}"; do
  D=$WORK/$w SB_DIR=$WORK/$w X=$WORK/$w/plain
  for v in base afdo; do
    [ -x "$(sb_bin "$w" "$v")" ] || die "$w: no $v build (run bench/scoreboard.sh $w first)"
  done
  mkdir -p "$X"
  bin=$(sb_bin "$w" base)
  rm -f "$X"/*.data "$X"/*.script "$X"/*.exact
  sb_record_lbr_runs "$w" base "$X/lbr"
  cat "$X"/lbr-*.script > "$X/lbr.script"
  sb_record_ip_runs "$w" base "$X/ip"
  lbr=() ip=()
  for f in "$X"/lbr-*.data; do lbr+=(--perf "$f"); done
  for f in "$X"/ip-*.data; do ip+=(--perf "$f"); done
  "$PGOKIT" profgen -q --binary "$bin" "${lbr[@]}" -o "$X/afdo-pgokit.prof" || die "$w: profgen (LBR) failed"
  "$PGOKIT" profgen -q --binary "$bin" "${ip[@]}" -o "$X/afdo-ip-pgokit.prof" || die "$w: profgen (IP) failed"
  llvm-profgen-19 --binary "$bin" --perfscript "$X/lbr.script" --ignore-stack-samples -o "$X/afdo-llvm.prof" \
    > "$X/llvm-profgen.log" 2>&1 || die "$w: llvm-profgen-19 failed: $(tail -n 1 "$X/llvm-profgen.log")"
  specs=()
  for p in afdo-pgokit afdo-llvm afdo-ip-pgokit; do
    sb_check_profile "plain-$p" "$X/$p.prof"
    specs+=("plain-$p|$SB_AFDO_SAMPLE_USE=$X/$p.prof|$X/$p.prof")
  done
  sb_build_all "$w" "" "${specs[@]}"
  names=(base afdo)
  for v in afdo-pgokit afdo-llvm afdo-ip-pgokit; do
    names+=("plain-$v")
    [ -x "$(sb_bin "$w" "$v")" ] && names+=("$v")
  done
  sb_count "$w" "$X" "${names[@]}"
  python3 - "$w" "$X/counts.tsv" "$SB_IP_RUNS" <<'EOF2'
import sys
w, path, runs = sys.argv[1], sys.argv[2], sys.argv[3]
c = {l.split("\t")[0]: int(l.split("\t")[1]) for l in open(path) if l.strip()}
pct = lambda v: "%+.2f%%" % (100 * (c[v] / c["base"] - 1)) if v in c else "(not built)"
print(f"\n### {w}: instructions vs -O2 (-O2 -g with the manual's flags and no profile: {pct('afdo')})\n")
print("| AutoFDO from | trained on -O2 -g, applied to -O2 | trained on and applied to the manual's build (scoreboard) |")
print("|---|---:|---:|")
for label, v in (("LBR, pgokit", "afdo-pgokit"), ("LBR, llvm-profgen-19", "afdo-llvm"),
                 (f"IP (cpu-clock, {runs} runs), pgokit", "afdo-ip-pgokit")):
    print(f"| {label} | {pct('plain-' + v)} | {pct(v)} |")
EOF2
done
