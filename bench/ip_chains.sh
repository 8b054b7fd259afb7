#!/usr/bin/env bash
# How many bytes of stack an IP profile needs: profiles made from the same
# stack-copy recordings (bench/ip_dwarf.sh's, 8 KiB per sample) unwinding
# only the first N bytes of each copy (`profgen --stack-copy-bytes N`: what
# a recording with `--call-graph dwarf,N` would have kept; 0: the sampled
# addresses alone), draw by draw. The size `pgokit record --ip` takes by
# itself from a build without frame pointers (PK_RECORD_AUTO_STACK, 1 KiB)
# was chosen from this.
#
#   bench/ip_chains.sh [--draw-runs R] [--bytes LIST] [--kinds LIST] [--fp DIR] WORKLOAD...
#     after `bench/ip_dwarf.sh --runs N WORKLOAD` (its recordings in
#     WORK/WORKLOAD/dwarf are reused; draw d takes runs (d-1)*R+1 .. d*R)
#     --draw-runs  runs per draw (default 5, the scoreboard's)
#     --bytes      copy sizes (default 0,128,1024,full; full: the whole copy)
#     --kinds      afdo,probe,cs (default afdo)
#     --fp DIR     also frame-pointer recordings of as many runs, in
#                  WORK/WORKLOAD/DIR, named as the scoreboard named them
#                  before it trained the probe kinds on copies of probe
#                  (ip-afdo-I-K.data of afdo, ip-probe-fp-I-K.data of
#                  probe-fp: probe + -fno-omit-frame-pointer, built here
#                  if missing, whose probe profiles apply to the probe
#                  build; `pgokit record --ip --call-graph fp` records
#                  them): a row "fp" of the same draws (other recordings)
#     --args ARGS  more profgen arguments for every profile of this run (a
#                  setting to measure, e.g. "--sample-profile-hot-inline-threshold
#                  150"), word-split
#     --label L    this run's profiles in WORK/WORKLOAD/chains-L and its
#                  builds named chL-KIND-dD-SIZE, beside an unlabelled run's
#     --lbr-seeds N  the LBR side as draws too: besides the scoreboard's
#                  profile (the emulator's seed 1), profiles of emulated
#                  recordings with seeds 2..N of every training command
#                  (kept in WORK/WORKLOAD/lbr-seeds), made as the
#                  scoreboard makes them; shares are then of their mean
#   Environment as for the scoreboard: PGOKIT, PK_BENCH_WORK, PK_BENCH_TAG.
#   Prints a Markdown table per workload: instructions vs -O2 of every
#   size and draw, the mean over the draws, and the share of the LBR
#   profile's gain (the scoreboard's afdo-pgokit / probe-pgokit / cs-pgokit,
#   counted again in the same run), and how many chains stopped before the
#   sampled function's caller.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PK_ROOT
source "$PK_ROOT/bench/lib/workloads.sh"
source "$PK_ROOT/bench/lib/variants.sh"
draw_runs=5 sizes=0,128,1024,full kinds=afdo fp_dir='' extra_args='' label='' lbr_seeds=1
workloads=()
while [ $# -gt 0 ]; do
  case $1 in
    --draw-runs) draw_runs=$2; shift 2 ;;
    --bytes) sizes=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    --fp) fp_dir=$2; shift 2 ;;
    --args) extra_args=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --lbr-seeds) lbr_seeds=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "ip_chains: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || { echo "ip_chains: name a workload" >&2; exit 2; }
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}
WL_DIR=$("$PK_ROOT/scripts/workloads.sh" dir)
export WL_DIR
die() { echo "ip_chains: FAILED: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
IFS=, read -r -a size_list <<<"$sizes"
[ -z "$fp_dir" ] || sizes+=",fp"
IFS=, read -r -a kind_list <<<"$kinds"
read -r -a extra <<<"$extra_args"
[[ "$label" =~ ^[A-Za-z0-9]*$ ]] || die "--label: letters and digits only, not '$label'"
prefix=ch$label
[[ "$lbr_seeds" =~ ^[1-9][0-9]?$ ]] || die "--lbr-seeds: 1 to 99, not '$lbr_seeds'"

for w in "${workloads[@]}"; do
  D=$WORK/$w SB_DIR=$WORK/$w
  R=$D/dwarf C=$D/chains${label:+-$label}
  [ -d "$R" ] || die "$w: no stack-copy recordings in $R (run bench/ip_dwarf.sh --runs N $w first)"
  runs=$(find "$R" -name 'afdo-1-*.data' | wc -l)
  draws=$((runs / draw_runs))
  [ "$draws" -ge 1 ] || die "$w: $runs runs in $R, fewer than one draw of $draw_runs"
  rm -rf "$C"; mkdir -p "$C"
  if [ -n "$fp_dir" ] && [[ ",$kinds," == *,probe,* || ",$kinds," == *,cs,* ]]; then
    sb_build_all "$w" "" "probe-fp|-fpseudo-probe-for-profiling -fno-omit-frame-pointer|"
  fi
  specs=() names=() lbrs=()
  for kind in "${kind_list[@]}"; do
    case $kind in
      afdo) bin_kind=afdo flags="$SB_AFDO_FLAGS $SB_AFDO_SAMPLE_USE=" opt=() lbr=afdo-pgokit ;;
      probe) bin_kind=probe flags="-fpseudo-probe-for-profiling -fprofile-sample-use=" opt=(--ignore-stack-samples) lbr=probe-pgokit ;;
      cs) bin_kind=probe flags="-fpseudo-probe-for-profiling -fprofile-sample-use=" opt=() lbr=cs-pgokit ;;
      *) die "unknown kind $kind (afdo, probe, cs)" ;;
    esac
    [ -x "$(sb_bin "$w" "$lbr")" ] || die "$w/$lbr: not built by the scoreboard"
    lbrs+=("$lbr")
    # the LBR profile's other draws: emulated recordings with other seeds
    for ((s = 2; s <= lbr_seeds; s++)); do
      L=$D/lbr-seeds p=() i=0
      mkdir -p "$L"
      while read -r cmd; do
        i=$((i + 1))
        f=$L/$bin_kind-$s-$i.data
        if [ ! -f "$f" ]; then
          log "record $w/$bin_kind #$i, seed $s"
          # shellcheck disable=SC2086
          "$PGOKIT" record --emulate -q --seed "$s" -o "$f" -- $cmd >/dev/null || die "$w/$bin_kind: record failed on: $cmd"
        fi
        p+=(--perf "$f")
      done < <(wl_train "$w" "$(sb_dir "$bin_kind")")
      name=$prefix-lbr-$kind-s$s
      "$PGOKIT" profgen -q --binary "$(sb_bin "$w" "$bin_kind")" "${p[@]}" "${opt[@]}" -o "$C/$name.prof" ||
        die "$w/$name: profgen failed"
      specs+=("$name|$flags$C/$name.prof|$C/$name.prof")
      names+=("$name")
    done
    for ((d = 1; d <= draws; d++)); do
      p=()
      for ((k = (d - 1) * draw_runs + 1; k <= d * draw_runs; k++)); do
        for f in "$R"/$bin_kind-*-"$k".data; do p+=(--perf "$f"); done
      done
      for s in "${size_list[@]}"; do
        name=$prefix-$kind-d$d-$s
        lim=(); [ "$s" = full ] || lim=(--stack-copy-bytes "$s")
        log "profile $w/$name"
        "$PGOKIT" profgen --binary "$(sb_bin "$w" "$bin_kind")" "${p[@]}" "${opt[@]}" "${lim[@]}" "${extra[@]}" -o "$C/$name.prof" \
          2> "$C/$name.log" || { cat "$C/$name.log" >&2; die "$w/$name: profgen failed"; }
        specs+=("$name|$flags$C/$name.prof|$C/$name.prof")
        names+=("$name")
      done
      [ -n "$fp_dir" ] || continue
      # the same draw of frame-pointer recordings
      fp_kind=$bin_kind; [ "$bin_kind" = probe ] && fp_kind=probe-fp
      p=()
      for ((k = (d - 1) * draw_runs + 1; k <= d * draw_runs; k++)); do
        for f in "$D/$fp_dir"/ip-$fp_kind-*-"$k".data; do
          [ -f "$f" ] || die "$w: no frame-pointer recording $f"
          p+=(--perf "$f")
        done
      done
      name=$prefix-$kind-d$d-fp
      log "profile $w/$name"
      "$PGOKIT" profgen --binary "$(sb_bin "$w" "$fp_kind")" "${p[@]}" "${opt[@]}" "${extra[@]}" -o "$C/$name.prof" \
        2> "$C/$name.log" || { cat "$C/$name.log" >&2; die "$w/$name: profgen failed"; }
      specs+=("$name|$flags$C/$name.prof|$C/$name.prof")
      names+=("$name")
    done
  done
  log "$w: ${#specs[@]} builds"
  sb_build_all "$w" "" "${specs[@]}"
  sb_count "$w" "$C" base "${lbrs[@]}" "${names[@]}"
  python3 - "$C" "$w" "$draws" "$draw_runs" "$sizes" "$kinds" "$prefix" "$extra_args" "$lbr_seeds" <<'PY'
import re, sys
C, w, draws, draw_runs, sizes, kinds, prefix, extra, seeds = sys.argv[1:10]
draws, seeds = int(draws), int(seeds)
counts = {}
for line in open(f"{C}/counts.tsv"):
    v, ir, _ = line.rstrip("\n").split("\t")
    counts[v] = int(ir)
base = counts["base"]
pct = lambda v: (counts[v] / base - 1) * 100
lbr = {"afdo": "afdo-pgokit", "probe": "probe-pgokit", "cs": "cs-pgokit"}
label = {"afdo": "AutoFDO", "probe": "probe-only", "cs": "CSSPGO"}
def leaf_share(name):
    t = open(f"{C}/{name}.log").read()
    u = re.search(r"(\d+) chains unwound", t)
    l = re.search(r"(\d+) before the leaf's caller", t)
    if not u:
        return None
    return 100.0 * (int(l.group(1)) if l else 0) / int(u.group(1))
print(f"\n### {w}: instructions vs -O2, {draws} draws of {draw_runs} runs (the same recordings at every size)"
      + (f"; profgen {extra}" if extra else "") + "\n")
of_lbr = "LBR's gain" if seeds == 1 else f"the mean gain of {seeds} LBR draws"
print("| kind | bytes unwound | " + " | ".join(f"draw {d}" for d in range(1, draws + 1)) +
      f" | mean | share of {of_lbr} | copies without the caller |")
print("|---|---:|" + "---:|" * draws + "---:|---:|---:|")
for k in kinds.split(","):
    # the scoreboard's LBR profile (seed 1) and the other seeds' draws
    lbr_draws = [pct(lbr[k])] + [pct(f"{prefix}-lbr-{k}-s{s}") for s in range(2, seeds + 1)]
    g = -sum(lbr_draws) / len(lbr_draws)
    for s in sizes.split(","):
        vals = [pct(f"{prefix}-{k}-d{d}-{s}") for d in range(1, draws + 1)]
        mean = sum(vals) / len(vals)
        shares = [leaf_share(f"{prefix}-{k}-d{d}-{s}") for d in range(1, draws + 1)]
        shares = [x for x in shares if x is not None]
        leaf = f"{sum(shares) / len(shares):.1f} %" if shares else "(no copies unwound)"
        share = f"{-mean / g * 100:.0f} %" if g >= 0.5 else "n/a (LBR gains < 0.5 points)"
        what = {"full": "whole copy", "fp": "frame pointers"}.get(s, s)
        print(f"| {label[k]} | {what} | " + " | ".join(f"{v:+.2f}%" for v in vals) +
              f" | **{mean:+.2f}%** | {share} | {leaf} |")
    print(f"| {label[k]} | LBR ({lbr[k]}) | " + " | ".join("" for _ in range(draws)) + f" | {pct(lbr[k]):+.2f}% | " +
          (f"{-pct(lbr[k]) / g * 100:.0f} %" if g >= 0.5 else "") + " | |")
    if seeds > 1:
        print(f"| {label[k]} | LBR, seeds 1..{seeds} | " + " | ".join("" for _ in range(draws)) +
              f" | **{-g:+.2f}%** ({', '.join(f'{v:+.2f}' for v in lbr_draws)}) | 100 % | |")
PY
done
