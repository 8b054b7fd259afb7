#!/usr/bin/env bash
# IP profiles from whole stack copies (8 KiB) of the builds the profiles are
# for. The scoreboard's IP variants record what `pgokit record --ip` takes
# by itself: 1 KiB copies of AutoFDO's afdo build, which keeps no frame
# pointer, and frame-pointer chains of a second build with
# -fno-omit-frame-pointer for probe-only and CSSPGO (applied to the probe
# build without it). `perf record --call-graph dwarf` copies the top of the
# stack, and profgen unwinds it with the binary's .eh_frame, so every kind
# can be trained on the very build it is applied to; bench/ip_chains.sh
# unwinds these recordings at smaller sizes.
#
#   bench/ip_dwarf.sh [--runs N] [--bytes B] WORKLOAD...
#     after `bench/scoreboard.sh` ran the IP variants of WORKLOAD (its
#     builds and counts are reused: base, afdo, probe and the fp profiles' builds)
#     --runs   perf runs of every training command (default: the scoreboard's)
#     --bytes  stack bytes copied per sample (default 8192, perf's)
#   Environment as for the scoreboard: PGOKIT, PK_BENCH_WORK, PK_BENCH_TAG.
#   Prints a Markdown table per workload: instructions vs -O2 of the dwarf
#   profiles beside the scoreboard's frame-pointer ones (counted again in the
#   same run), the recordings' size, profgen's time and what it unwound.
#
# One set of recordings is one draw (bench/ip_jackknife.sh measures the
# spread of the frame-pointer ones).
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PK_ROOT
source "$PK_ROOT/bench/lib/workloads.sh"
source "$PK_ROOT/bench/lib/variants.sh"
runs='' bytes=8192
workloads=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "ip_dwarf: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || { echo "ip_dwarf: name a workload" >&2; exit 2; }
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}
WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir)
export WL_DIR
die() { echo "ip_dwarf: FAILED: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
FREQ=${SB_IP_FREQ:-4999}

for w in "${workloads[@]}"; do
  D=$WORK/$w SB_DIR=$WORK/$w
  n=${runs:-$(cat "$D/gen/ip-runs.txt" 2>/dev/null)} || die "$w: no IP recordings in $D (run bench/scoreboard.sh first)"
  for v in base afdo probe afdo-ip-pgokit probe-ip-pgokit cs-ip-pgokit; do
    [ -x "$(sb_bin "$w" "$v")" ] || die "$w/$v: not built by the scoreboard"
  done
  R=$D/dwarf; rm -rf "$R"; mkdir -p "$R"
  for kind in afdo probe; do
    for ((k = 1; k <= n; k++)); do
      i=0
      while read -r cmd; do
        i=$((i + 1))
        log "record (IP, cpu-clock, --call-graph dwarf,$bytes) $w/$kind #$i run $k"
        # shellcheck disable=SC2086
        perf record -q -e cpu-clock:u -F "$FREQ" --call-graph "dwarf,$bytes" -o "$R/$kind-$i-$k.data" -- $cmd \
          >/dev/null 2>"$R/$kind-$i-$k.log" || die "$w/$kind: perf record failed on: $cmd"
      done < <(wl_train "$w" "$(sb_dir "$kind")")
    done
  done
  gen() { # name kind profgen-options...
    local name=$1 kind=$2; shift 2
    local p=() f t0
    for f in "$R"/$kind-*.data; do p+=(--perf "$f"); done
    t0=$(date +%s.%N)
    "$PGOKIT" profgen --binary "$(sb_bin "$w" "$kind")" "${p[@]}" "$@" -o "$R/$name.prof" 2> "$R/$name.log" ||
      { cat "$R/$name.log" >&2; die "$w/$name: profgen failed"; }
    echo "$(date +%s.%N) $t0" | awk '{printf "%.2f\n", $1 - $2}' > "$R/$name.time"
  }
  gen dw-afdo afdo
  gen dw-probe probe --ignore-stack-samples
  gen dw-cs probe
  specs=("dw-afdo-ip|$SB_AFDO_FLAGS $SB_AFDO_SAMPLE_USE=$R/dw-afdo.prof|$R/dw-afdo.prof"
         "dw-probe-ip|-fpseudo-probe-for-profiling -fprofile-sample-use=$R/dw-probe.prof|$R/dw-probe.prof"
         "dw-cs-ip|-fpseudo-probe-for-profiling -fprofile-sample-use=$R/dw-cs.prof|$R/dw-cs.prof")
  log "$w: ${#specs[@]} builds"
  sb_build_all "$w" "" "${specs[@]}"
  sb_count "$w" "$R" base afdo-ip-pgokit dw-afdo-ip probe-ip-pgokit dw-probe-ip cs-ip-pgokit dw-cs-ip
  mb() { du -cm "$R"/$1-*.data | tail -n 1 | cut -f1; }
  python3 - "$R/counts.tsv" "$w" "$n" "$bytes" "$(mb afdo)" "$(mb probe)" "$R" <<'PY'
import re, sys
counts = {}
for line in open(sys.argv[1]):
    v, ir, _ = line.rstrip("\n").split("\t")
    counts[v] = int(ir)
w, n, nbytes, mb_base, mb_probe, R = sys.argv[2:8]
base = counts["base"]
pct = lambda v: (counts[v] / base - 1) * 100
def unwound(name):
    t = open(f"{R}/{name}.log").read()
    m = re.search(r": (\d+) read, (\d+) used", t)
    u = re.search(r"(\d+) chains unwound", t)
    c = re.search(r"(\d+) with the direct caller unknown", t)
    return f"{m.group(2) if m else '?'} used, {u.group(1) if u else 0} unwound, {c.group(1) if c else '?'} callers unknown"
print(f"\n### {w}: --call-graph dwarf,{nbytes} on the builds the profiles are for, {n} runs per training command\n")
print("| kind | dwarf: instructions vs -O2 | frame pointers (scoreboard's) | dwarf recordings | profgen s | samples |")
print("|---|---:|---:|---:|---:|---|")
for kind, dw, fp, mb in (("AutoFDO", "dw-afdo", "afdo-ip-pgokit", mb_base), ("probe-only", "dw-probe", "probe-ip-pgokit", mb_probe),
                         ("CSSPGO", "dw-cs", "cs-ip-pgokit", mb_probe)):
    t = open(f"{R}/{dw}.time").read().strip()
    print(f"| {kind} | {pct(dw + '-ip'):+.2f}% | {pct(fp):+.2f}% | {mb} MB | {t} | {unwound(dw)} |")
PY
done
