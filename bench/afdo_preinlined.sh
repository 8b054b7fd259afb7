#!/usr/bin/env bash
# AutoFDO profiles marked pre-inlined. clang-19 reads a profile
# that is context-sensitive, probe-based or pre-inlined with the profile-use
# pipeline it has for CSSPGO: profi's count inference, iterative block
# frequencies, ext-TSP block layout, the priority-ordered sample inliner
# without function size limits. A line-based AutoFDO profile gets it when
# marked (`pgokit profgen` / `pgokit convert` --mark-preinlined: the flag
# alone; --mark-all-context-preinlined: every profile and inlinee also
# ContextShouldBeInlined, the profiled binary's inlining replayed). This
# bench builds each AutoFDO profile three ways (unmarked, flagged, every
# context marked) and counts the measured runs' instructions against -O2.
#
#   bench/afdo_preinlined.sh WORKLOAD...
#     sqlite, lua, bzip2, zstd: after `bench/scoreboard.sh` ran their AutoFDO
#       variants (afdo-pgokit, afdo-llvm, afdo-ip-pgokit: its profiles and
#       builds are reused, its counting machinery used; nothing of it is
#       changed)
#     duktape, tcc, expat (programs nobody tuned for; bench/lib/csgen_workloads.sh):
#       built -O2 -gdwarf-4 (base) and with the AutoFDO flags the scoreboard
#       trains on; per training command one emulated LBR recording and
#       AFP_IP_RUNS (5) `perf record -e cpu-clock:u -F 4999 --call-graph fp`
#       runs; profiles by pgokit (LBR, IP) and llvm-profgen-19 (LBR,
#       --ignore-stack-samples)
#   Environment: PGOKIT, PK_BENCH_WORK, PK_BENCH_TAG, SB_AFDO_USE as for the
#   scoreboard; AFP_IP_RUNS (5).
#   Prints a Markdown table per workload.
#
# Anchors get the same marks: llvm-profgen-19's profile is marked by `pgokit
# convert`, as llvm-profgen's own --mark-all-context-preinlined (newer than
# 19) would mark it.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PK_ROOT
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
IP_RUNS=${AFP_IP_RUNS:-5}
workloads=()
for a in "$@"; do
  case $a in
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "afdo_preinlined: unknown option $a" >&2; exit 2 ;;
    *) workloads+=("$a") ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || { echo "afdo_preinlined: name a workload" >&2; exit 2; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() { echo "afdo_preinlined: FAILED: $*" >&2; exit 1; }

# mark IN OUT-PREFIX: OUT-PREFIX-no.prof (unmarked, whatever marks the
# profile came with), OUT-PREFIX-flag.prof, OUT-PREFIX-all.prof
mark() {
  "$PGOKIT" convert -q "$1" --mark-preinlined=no -o "$2-no.prof" || die "convert --mark-preinlined=no $1"
  "$PGOKIT" convert -q "$1" --mark-preinlined -o "$2-flag.prof" || die "convert --mark-preinlined $1"
  "$PGOKIT" convert -q "$1" --mark-all-context-preinlined -o "$2-all.prof" ||
    die "convert --mark-all-context-preinlined $1"
}

# table WORKLOAD TSV: rows "name<TAB>instructions"; base first
table() {
  python3 - "$1" "$2" <<'PY'
import sys
w, path = sys.argv[1], sys.argv[2]
counts = {}
for line in open(path):
    f = line.rstrip("\n").split("\t")
    counts[f[0]] = int(f[1])
base = counts["base"]
pct = lambda v: f"{(counts[v] / base - 1) * 100:+.2f} %" if v in counts else "-"
print(f"\n### {w}: instructions vs -O2\n")
print("| profile | unmarked | flagged pre-inlined | every context ShouldBeInlined |")
print("|---|---:|---:|---:|")
for v, label in (("lbr", "LBR, pgokit"), ("llvm", "LBR, llvm-profgen-19"), ("ip", "IP (cpu-clock), pgokit")):
    print(f"| {label} | {pct(v)} | {pct(v + '-flag')} | {pct(v + '-all')} |")
PY
}

scoreboard_workload() {
  local w=$1
  source "$PK_ROOT/bench/lib/workloads.sh"
  source "$PK_ROOT/bench/lib/variants.sh"
  WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}
  WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir)
  export WL_DIR
  local D=$WORK/$w v k flags specs=() names=(base)
  SB_DIR=$D
  mkdir -p "$D/pre"
  for v in afdo-pgokit afdo-llvm afdo-ip-pgokit; do
    [ -s "$D/prof/$v.prof" ] || die "$w: no $v profile in $D (run bench/scoreboard.sh first)"
    mark "$D/prof/$v.prof" "$D/pre/$v"
    flags=$(sb_variant_field "$v" 3)
    # unmarked built here too, beside the marked ones: the scoreboard's own
    # build may be of other flags (SB_AFDO_USE)
    for k in no flag all; do
      specs+=("pre-$k-$v|${flags//@P/$D/pre/$v-$k.prof}|$D/pre/$v-$k.prof")
      names+=("pre-$k-$v")
    done
  done
  log "$w: ${#specs[@]} builds"
  SB_REBUILD=1 sb_build_all "$w" "" "${specs[@]}"
  sb_count "$w" "$D/pre" "${names[@]}"
  awk -F'\t' -v OFS='\t' '{
      n = $1; f = ($1 ~ /^pre-flag-/) ? "-flag" : ($1 ~ /^pre-all-/) ? "-all" : ""
      sub(/^pre-(no|flag|all)-/, "", n)
      m = (n == "afdo-pgokit") ? "lbr" : (n == "afdo-llvm") ? "llvm" : (n == "afdo-ip-pgokit") ? "ip" : n
      print m f, $2 }' "$D/pre/counts.tsv" > "$D/pre/table.tsv"
  table "$w" "$D/pre/table.tsv"
}

general_workload() {
  local w=$1
  local workloads=("$w") CSGEN_NAME=afdo_preinlined
  source "$PK_ROOT/bench/lib/csgen_workloads.sh"
  source "$PK_ROOT/bench/lib/variants.sh"   # SB_AFDO_FLAGS, as the scoreboard trains
  obtain
  local D=$WORK/afdo-preinlined-$w b i k cmd p pr v
  b=$(bin_name "$w")
  prepare_inputs "$w"
  mkdir -p "$D/base" "$D/afdo"
  log "$w: builds"
  [ -x "$D/base/$b" ] || build "$w" "$D/base/$b"
  [ -x "$D/afdo/$b" ] || build "$w" "$D/afdo/$b" $SB_AFDO_FLAGS
  if [ ! -f "$D/rec.done" ]; then
    log "$w: recordings"
    i=0
    while read -r cmd; do
      i=$((i + 1))
      # shellcheck disable=SC2086
      "$PGOKIT" record -q --emulate -o "$D/lbr-$i.data" -- $cmd >/dev/null || die "$w: record --emulate: $cmd"
      perf script -F ip,brstack --show-mmap-events -i "$D/lbr-$i.data" > "$D/lbr-$i.script" 2>/dev/null ||
        die "$w: perf script of lbr-$i.data"
      for ((k = 1; k <= IP_RUNS; k++)); do
        # shellcheck disable=SC2086
        perf record -q -e cpu-clock:u -F 4999 --call-graph fp -o "$D/ip-$i-$k.data" -- $cmd >/dev/null 2>&1 ||
          die "$w: perf record: $cmd"
      done
    done < <(train_cmds "$w" "$D/afdo/$b")
    touch "$D/rec.done"
  fi
  p=(); for f in "$D"/lbr-*.data; do p+=(--perf "$f"); done
  "$PGOKIT" profgen -q --binary "$D/afdo/$b" "${p[@]}" -o "$D/lbr.prof" || die "$w: profgen (LBR)"
  p=(); for f in "$D"/ip-*.data; do p+=(--perf "$f"); done
  "$PGOKIT" profgen -q --binary "$D/afdo/$b" "${p[@]}" -o "$D/ip.prof" || die "$w: profgen (IP)"
  cat "$D"/lbr-*.script > "$D/all.script"
  llvm-profgen-19 --binary "$D/afdo/$b" --perfscript "$D/all.script" --ignore-stack-samples -o "$D/llvm.prof" \
    > "$D/llvm.log" 2>&1 || die "$w: llvm-profgen-19 (see $D/llvm.log)"
  for pr in lbr llvm ip; do mark "$D/$pr.prof" "$D/$pr"; done
  log "$w: profile-use builds"
  for pr in lbr llvm ip; do
    for v in "$pr-no" "$pr-flag" "$pr-all"; do
      mkdir -p "$D/$v"
      # shellcheck disable=SC2086
      build "$w" "$D/$v/$b" $SB_AFDO_FLAGS $SB_AFDO_SAMPLE_USE="$D/$v.prof"
    done
  done
  log "$w: counts"
  for v in base lbr-no lbr-flag lbr-all llvm-no llvm-flag llvm-all ip-no ip-flag ip-all; do
    printf '%s\t%s\n' "${v%-no}" "$(count "$D/$v" "$w")"
  done > "$D/table.tsv"
  table "$w" "$D/table.tsv"
}

for w in "${workloads[@]}"; do
  case $w in
    sqlite|lua|bzip2|zstd) (scoreboard_workload "$w") ;;
    duktape|tcc|expat) (general_workload "$w") ;;
    *) die "unknown workload $w (sqlite, lua, bzip2, zstd; duktape, tcc, expat)" ;;
  esac
done
