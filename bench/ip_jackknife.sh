#!/usr/bin/env bash
# How much of an IP profile's gain is the profile's, and how much the
# compiler's reaction to sampling noise. The scoreboard's IP profiles are
# made again from every leave-one-run-out subset of its SB_IP_RUNS perf
# recordings (a jackknife: each subset 4/5 of the samples), built and
# counted as the scoreboard counts (cachegrind, fixed time, fixed paths,
# Lua with a fixed hash seed), beside -O2 and the full-set profile.
#
#   bench/ip_jackknife.sh [--variants LIST] WORKLOAD...
#     after `bench/scoreboard.sh` ran the IP variants of WORKLOAD (its
#     recordings and builds are reused; nothing of it is changed)
#     --variants: comma list of afdo-ip-pgokit,probe-ip-pgokit,cs-ip-pgokit
#                 (default: all three), and of dw-afdo-ip,dw-probe-ip,dw-cs-ip
#                 (the same kinds from bench/ip_dwarf.sh's stack copies)
#   Environment as for the scoreboard: PGOKIT, PK_BENCH_WORK, PK_BENCH_TAG.
#   Prints a Markdown table per workload: instructions vs -O2 of the full
#   set, and the subsets' mean, minimum and maximum.
#
# Why: on Lua one set of five recordings gave CSSPGO -5.7 % while each of its
# five 4-run subsets gave -7.2 to -8.0 %; taking two of luaV_execute's own
# probe counts from a subset moved the full set's build by 1.3 points. An
# interpreter's loop is laid out from small count differences; one profile's
# figure is one draw.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PK_ROOT
source "$PK_ROOT/bench/lib/workloads.sh"
source "$PK_ROOT/bench/lib/variants.sh"
vars=afdo-ip-pgokit,probe-ip-pgokit,cs-ip-pgokit
workloads=()
while [ $# -gt 0 ]; do
  case $1 in
    --variants) vars=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "ip_jackknife: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || { echo "ip_jackknife: name a workload" >&2; exit 2; }
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}
WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir)
export WL_DIR
die() { echo "ip_jackknife: FAILED: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
IFS=, read -r -a want <<<"$vars"

for w in "${workloads[@]}"; do
  D=$WORK/$w SB_DIR=$WORK/$w
  runs=$(cat "$D/gen/ip-runs.txt" 2>/dev/null) || die "$w: no IP recordings in $D (run bench/scoreboard.sh first)"
  mkdir -p "$D/jk"
  names=(base) specs=()
  for v in "${want[@]}"; do
    # the recordings: the scoreboard's (the chains record chose), or
    # bench/ip_dwarf.sh's stack copies of the builds the profiles are for
    rec="$D/rec/ip-"
    case $v in
      afdo-ip-pgokit) kind=afdo opts=() ;;
      probe-ip-pgokit) kind=probe opts=(--ignore-stack-samples) ;;
      cs-ip-pgokit) kind=probe opts=() ;;
      dw-afdo-ip) kind=afdo opts=() rec="$D/dwarf/" ;;
      dw-probe-ip) kind=probe opts=(--ignore-stack-samples) rec="$D/dwarf/" ;;
      dw-cs-ip) kind=probe opts=() rec="$D/dwarf/" ;;
      *) die "unknown variant $v" ;;
    esac
    [ -x "$(sb_bin "$w" "$v")" ] || die "$w/$v: not built (by the scoreboard, or by bench/ip_dwarf.sh for dw-*)"
    names+=("$v")
    case $v in
      dw-afdo-ip) flags="$SB_AFDO_FLAGS $SB_AFDO_SAMPLE_USE=@P" ;;
      dw-*) flags="-fpseudo-probe-for-profiling -fprofile-sample-use=@P" ;;
      *) flags=$(sb_variant_field "$v" 3) ;;
    esac
    for ((k = 1; k <= runs; k++)); do
      data=()
      for f in "$rec"$kind-*.data; do [[ $f == *-$k.data ]] || data+=(--perf "$f"); done
      prof="$D/jk/$v-$k.prof"
      "$PGOKIT" profgen -q --binary "$(sb_bin "$w" "$kind")" "${data[@]}" "${opts[@]}" -o "$prof" ||
        die "$w/$v without run $k: profgen failed"
      specs+=("jk$k-$v|${flags//@P/$prof}|$prof")
      names+=("jk$k-$v")
    done
  done
  log "$w: ${#specs[@]} builds"
  sb_build_all "$w" "" "${specs[@]}"
  sb_count "$w" "$D/jk" "${names[@]}"
  python3 - "$D/jk/counts.tsv" "$w" "$runs" "${want[@]}" <<'PY'
import statistics, sys
counts = {}
for line in open(sys.argv[1]):
    v, ir, _ = line.rstrip("\n").split("\t")
    counts[v] = int(ir)
w, runs, want = sys.argv[2], int(sys.argv[3]), sys.argv[4:]
base = counts["base"]
pct = lambda v: (counts[v] / base - 1) * 100
print(f"\n### {w}: instructions vs -O2, full set of {runs} runs and the {runs} subsets without one\n")
print("| variant | full set | subsets: mean | min | max | each |")
print("|---|---:|---:|---:|---:|---|")
for v in want:
    sub = [pct(f"jk{k}-{v}") for k in range(1, runs + 1)]
    print(f"| {v} | {pct(v):+.2f}% | {statistics.mean(sub):+.2f}% | {min(sub):+.2f}% | {max(sub):+.2f}% | "
          + ", ".join(f"{s:+.2f}" for s in sub) + " |")
PY
done
