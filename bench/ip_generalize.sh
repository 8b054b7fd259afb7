#!/usr/bin/env bash
# IP profiles on programs nobody tuned for: AutoFDO, probe-only and CSSPGO
# from real stock-perf `cpu-clock:u` samples with frame-pointer call stacks
# (what a machine without LBR records), against the same three kinds from
# emulated LBR recordings of the same training commands, on Duktape, tcc and
# expat's xmlwf (bench/cs_generalize.sh's programs, trained on one input and
# measured on another).
#
#   bench/ip_generalize.sh [--sets K] [--runs R] [--lbr-seeds N] [WORKLOAD...]
#     run after bench/cs_generalize.sh WORKLOAD (its -O2 and probe builds and
#     its emulated recordings of the probe build, rec1..N, are reused)
#     --sets K:      K independent IP recordings per binary (default 2), each
#                    R perf runs of every training command merged (default 5,
#                    as the scoreboard's IP variants): one IP profile of each
#                    kind per set
#     --lbr-seeds N: LBR profiles from the first N emulated recordings
#                    (default 2); AutoFDO's are of the -O2 build, recorded here
#     --dir NAME:    the run's folder inside the cs_generalize run (default
#                    ip; another name keeps a second run, e.g. with more --runs)
#     --emulated:    also, per IP set, the same training commands recorded
#                    with a sample every P retired instructions (`pgokit
#                    record --emulate --ip`, exact stacks), P chosen so the
#                    recording holds as many samples as the set's cpu-clock
#                    runs: tells "too few samples" from "samples weighted by
#                    time" (bench/ip_weighting.sh does this for the scoreboard)
#   Environment: PGOKIT, PK_BENCH_WORK as for cs_generalize.sh; IPG_FREQ
#   (default 4999, perf's rate in Hz, as `pgokit record --ip` without a PMU);
#   SB_AFDO_USE (extra flags of the AutoFDO profile-use builds, as for the
#   scoreboard: bench/lib/variants.sh).
#
# Training binaries as in the scoreboard (bench/lib/variants_ip.sh): AutoFDO
# from IP samples of the -O2 build itself; probe-only and CSSPGO from IP
# samples of a probe build with frame pointers (probe-fp), applied to the
# ordinary probe build. Prints a Markdown table per program: instructions of
# the measured run against -O2 for each profile, each kind's mean share of
# its LBR counterpart's gain, CSSPGO against probe-only from the same
# samples, block overlap against the emulator's exact counts of the training
# runs, profgen's sampling density (samples per hot instruction) and the
# samples each IP set holds.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
sets=2 runs=5 lbr_seeds=2 emulated=0 sub=ip
workloads=()
while [ $# -gt 0 ]; do
  case $1 in
    --sets) sets=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --lbr-seeds) lbr_seeds=$2; shift 2 ;;
    --emulated) emulated=1; shift ;;
    --dir) sub=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "ip_generalize: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || workloads=(duktape tcc expat)
[ -x "$PGOKIT" ] || { echo "ip_generalize: $PGOKIT not built (run make)" >&2; exit 2; }
FREQ=${IPG_FREQ:-4999}
CSGEN_NAME=ip_generalize
source "$PK_ROOT/bench/lib/csgen_workloads.sh"
# A profile-use build, kept when the profile's bytes are the ones it was
# built from (a rerun after a failure redoes only what changed).
build_from() { # workload dir profile flags...
  local w=$1 dir=$2 prof=$3 sum; shift 3
  sum=$(sha256sum < "$prof")
  [ -x "$dir/$(bin_name "$w")" ] && [ "$(cat "$dir/.profile-sha" 2>/dev/null)" = "$sum" ] && return 0
  mkdir -p "$dir"; rm -f "$dir/.profile-sha" "$dir/.count"
  build "$w" "$dir/$(bin_name "$w")" "$@" -fprofile-sample-use="$prof" || die "$w: build of $dir failed"
  printf '%s' "$sum" > "$dir/.profile-sha"
}
# The instructions of a binary's measured run, counted once per binary.
count_cached() { # workload dir
  local sum; sum="$(sha256sum < "$2/$(bin_name "$1")") reps=$(count_reps "$1")"
  if [ "$(head -n 1 "$2/.count" 2>/dev/null)" != "$sum" ]; then
    printf '%s\n%s\n' "$sum" "$(count "$2" "$1")" > "$2/.count.tmp" && mv "$2/.count.tmp" "$2/.count"
  fi
  sed -n 2p "$2/.count"
}
# (xargs runs the counts two at a time through this script)
if [ "${workloads[0]}" = count_cached ]; then count_cached "${workloads[2]}" "${workloads[1]}"; exit; fi
obtain
source "$PK_ROOT/bench/lib/ip_density.sh"
gen() { # name binary-kind profgen-options...: one profile of $w from $D's binaries
  local name=$1 kind=$2; shift 2
  "$PGOKIT" profgen --binary "$D/$kind/$b" "$@" -o "$I/$name.prof" 2> "$I/$name.log" ||
    { tail -n 5 "$I/$name.log" >&2; die "$w: profgen $name failed"; }
}

for w in "${workloads[@]}"; do
  D=$WORK/$w b=$(bin_name "$w"); I=$D/$sub
  [ -x "$D/base/$b" ] && [ -x "$D/probe/$b" ] && [ -f "$D/rec$lbr_seeds/t1.data" ] ||
    die "$w: no cs_generalize run with $lbr_seeds recordings in $D (run bench/cs_generalize.sh $w first)"
  mkdir -p "$I"
  prepare_inputs "$w"
  if [ ! -x "$D/probe-fp/$b" ]; then
    log "$w: building probe-fp (probe + frame pointers)"
    mkdir -p "$D/probe-fp"
    build "$w" "$D/probe-fp/$b" -fpseudo-probe-for-profiling -fno-omit-frame-pointer || die "$w: probe-fp build failed"
  fi

  # ---- recordings: emulated LBR of -O2 (AutoFDO's), exact counts, cpu-clock IP ----
  for ((s = 1; s <= lbr_seeds; s++)); do
    [ -f "$I/lbr-base-$s.done" ] && continue
    log "$w: emulated recording of -O2, seed $s"
    i=0
    while read -r cmd; do
      i=$((i + 1)); ex=()
      [ "$s" = 1 ] && ex=(--exact-counts "$I/exact-base-$i.exact")
      # shellcheck disable=SC2086
      "$PGOKIT" record --emulate -q --seed "$s" "${ex[@]}" -o "$I/lbr-base-$s-$i.data" -- $cmd >/dev/null ||
        die "$w: record failed: $cmd"
    done < <(train_cmds "$w" "$D/base/$b")
    touch "$I/lbr-base-$s.done"
  done
  if [ ! -f "$I/exact-probe-fp.done" ]; then
    log "$w: exact counts of probe-fp's training runs"
    i=0
    while read -r cmd; do
      i=$((i + 1))
      # shellcheck disable=SC2086
      "$PGOKIT" record --emulate -q --exact-counts "$I/exact-probe-fp-$i.exact" -o "$I/tmp.data" -- $cmd >/dev/null ||
        die "$w: record failed: $cmd"
      rm -f "$I/tmp.data"
    done < <(train_cmds "$w" "$D/probe-fp/$b")
    touch "$I/exact-probe-fp.done"
  fi
  for ((k = 1; k <= sets; k++)); do
    [ -f "$I/ip$k.done" ] && continue
    log "$w: IP set $k: $runs perf cpu-clock runs of every training command, -O2 and probe-fp"
    for kind in base probe-fp; do
      for ((r = 1; r <= runs; r++)); do
        i=0
        while read -r cmd; do
          i=$((i + 1))
          # shellcheck disable=SC2086
          perf record -q -e cpu-clock:u -F "$FREQ" --call-graph fp -o "$I/ip$k-$kind-$i-$r.data" -- $cmd \
            >/dev/null 2>"$I/ip$k-$kind-$i-$r.log" || die "$w: perf record failed: $cmd"
        done < <(train_cmds "$w" "$D/$kind/$b")
      done
    done
    touch "$I/ip$k.done"
  done
  declare -A insns=()
  for ((k = 1; emulated && k <= sets; k++)); do
    [ -f "$I/eip$k.done" ] && continue
    for kind in base probe-fp; do
      # instructions per training run (once per binary), from a first emulated recording
      [ -n "${insns[$kind]:-}" ] || insns[$kind]=$(train_cmds "$w" "$D/$kind/$b" | emulated_insns "$I/first.data")
      [ "${insns[$kind]:-0}" -gt 0 ] || die "$w/$kind: no instructions counted (emulated recording)"
      target=$(samples_in "$I"/ip$k-$kind-*.data)
      period=$(period_for "${insns[$kind]}" "$target")
      log "$w: set $k, $kind: $target cpu-clock samples; instruction samples every $period"
      echo "$target ${insns[$kind]} $period" > "$I/eip$k-$kind.density"
      i=0
      while read -r cmd; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        "$PGOKIT" record -q --emulate --ip --period "$period" --seed "$k" -o "$I/eip$k-$kind-$i.data" -- $cmd \
          >/dev/null || die "$w: emulated recording failed: $cmd"
      done < <(train_cmds "$w" "$D/$kind/$b")
    done
    touch "$I/eip$k.done"
  done

  # ---- profiles and their builds ----
  dirs=(base)
  for ((s = 1; s <= lbr_seeds; s++)); do
    p=(); for f in "$I"/lbr-base-$s-*.data; do p+=(--perf "$f"); done
    gen "afdo-lbr$s" base "${p[@]}"
    p=(); for f in "$D/rec$s"/t*.data; do p+=(--perf "$f"); done
    gen "probe-lbr$s" probe --ignore-stack-samples "${p[@]}"
    gen "cs-lbr$s" probe "${p[@]}"
  done
  for ((k = 1; k <= sets; k++)); do
    p=(); for f in "$I"/ip$k-base-*.data; do p+=(--perf "$f"); done
    gen "afdo-ip$k" base "${p[@]}"
    p=(); for f in "$I"/ip$k-probe-fp-*.data; do p+=(--perf "$f"); done
    gen "probe-ip$k" probe-fp --ignore-stack-samples "${p[@]}"
    gen "cs-ip$k" probe-fp "${p[@]}"
    grep -h -m 1 "from IP samples" "$I/cs-ip$k.log" > "$I/ip$k.samples" || true
    [ "$emulated" = 1 ] || continue
    p=(); for f in "$I"/eip$k-base-*.data; do p+=(--perf "$f"); done
    gen "afdo-eip$k" base "${p[@]}"
    p=(); for f in "$I"/eip$k-probe-fp-*.data; do p+=(--perf "$f"); done
    gen "probe-eip$k" probe-fp --ignore-stack-samples "${p[@]}"
    gen "cs-eip$k" probe-fp "${p[@]}"
  done
  log "$w: building the profiles' binaries (two at a time)"
  for f in "$I"/*.prof; do
    n=$(basename "$f" .prof)
    # shellcheck disable=SC2206
    case $n in afdo-*) fl=(${SB_AFDO_USE:-}) ;; *) fl=(-fpseudo-probe-for-profiling) ;; esac
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    build_from "$w" "$I/b-$n" "$f" "${fl[@]}" &
    dirs+=("$sub/b-$n")
  done
  wait
  for d in "${dirs[@]:1}"; do [ -x "$D/$d/$b" ] || die "$w: $d was not built"; done

  # ---- block overlap against the exact counts of the training runs ----
  ex=(); for f in "$I"/exact-base-*.exact; do ex+=(--exact "$f"); done
  "$PGOKIT" overlap "${ex[@]}" --binary "$D/base/$b" "$I"/afdo-*.prof > "$I/overlap.txt" || die "$w: overlap (-O2) failed"
  ex=(); for f in "$I"/exact-probe-fp-*.exact; do ex+=(--exact "$f"); done
  "$PGOKIT" overlap "${ex[@]}" --binary "$D/probe-fp/$b" "$I"/probe-*ip*.prof "$I"/cs-*ip*.prof >> "$I/overlap.txt" ||
    die "$w: overlap (probe-fp) failed"

  log "$w: counting instructions (cachegrind, two at a time)"
  printf '%s\n' "${dirs[@]}" | xargs -P 2 -I{} bash -c 'echo "{} $(bash "$0" count_cached "$1/{}" "$2")"' "$0" "$D" "$w" \
    > "$I/counts.txt"
  python3 - "$w" "$I" "$lbr_seeds" "$sets" <<'PY' | tee "$I/table.md"
import re, sys
w, I, nl, ns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = {}
for l in open(f'{I}/counts.txt'):
    k, v = l.split()
    c[k.split('/b-')[-1]] = int(v)
base = c['base']
pct = lambda k: 100.0 * (c[k] - base) / base
ov = {}
for l in open(f'{I}/overlap.txt'):
    m = re.match(r'(\S+)\.prof: block overlap ([0-9.]+)', l)
    if m: ov[m.group(1).rsplit('/', 1)[-1]] = float(m.group(2))
mean = lambda v: sum(v) / len(v)
def density(name):  # profgen's own figure (its summary line)
    try: m = re.search(r'; ([0-9.]+) samples per hot instruction', open(f'{I}/{name}.log').read())
    except OSError: m = None
    return m.group(1) if m else '?'
fmt = lambda v: ', '.join(f'{x:+.2f}' for x in v)
print(f'### {w} (-O2: {base:,} instructions)\n')
print('| kind, samples | from LBR: mean (each) | from IP: mean (each) | IP share of LBR gain | IP block overlap (each) | samples per hot instruction (each) |')
print('|---|---|---|---:|---|---|')
ipm = {}
for src, label in (('ip', 'cpu-clock'), ('eip', 'instruction samples, same density')):
    if f'cs-{src}1' not in c: continue
    for kind in ('afdo', 'probe', 'cs'):
        lb = [pct(f'{kind}-lbr{s}') for s in range(1, nl + 1)]
        ip = [pct(f'{kind}-{src}{k}') for k in range(1, ns + 1)]
        ipm[kind, src] = ip
        share = f'{100 * mean(ip) / mean(lb):.0f} %' if mean(lb) < 0 else 'n/a (LBR gains nothing)'
        o = ', '.join(f'{ov[f"{kind}-{src}{k}"]:.3f}' for k in range(1, ns + 1) if f'{kind}-{src}{k}' in ov)
        dn = ', '.join(density(f'{kind}-{src}{k}') for k in range(1, ns + 1))
        print(f'| {kind}, {label} | {mean(lb):+.2f} % ({fmt(lb)}) | {mean(ip):+.2f} % ({fmt(ip)}) | {share} | {o} | {dn} |')
print()
for src, label in (('ip', 'cpu-clock'), ('eip', 'instruction')):
    if ('cs', src) in ipm:
        d = [a - b for a, b in zip(ipm['cs', src], ipm['probe', src])]
        print(f'CSSPGO - probe-only from the same {label} samples: {fmt(d)} points (< 0: CSSPGO ahead).')
for k in range(1, ns + 1):
    try: print(f'IP set {k}: {open(f"{I}/ip{k}.samples").read().strip()}')
    except OSError: pass
print()
PY
done
