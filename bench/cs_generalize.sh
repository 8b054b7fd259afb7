#!/usr/bin/env bash
# CSSPGO on programs nobody tuned for: pgokit's profile against a fairly fed
# llvm-profgen-19 and instrumentation PGO, on Duktape (a JavaScript
# interpreter), tcc (a C compiler) and expat's xmlwf (an XML parser), each
# trained on one input and measured on a different, longer one.
#
#   bench/cs_generalize.sh [--seeds N] [--out FILE] [--variant TAG] [WORKLOAD...]
#     WORKLOAD: duktape tcc expat (default: all three); also sqlite and lua,
#               the main scoreboard's programs (its sources, scripts/workloads.sh),
#               to see that a pre-inliner change holds there too
#     --seeds N: N emulated recordings per program (record --seed 1..N),
#                each giving one pgokit and one llvm-profgen profile (default 3)
#     --variant TAG: reuse an earlier run's recordings and builds (same
#                PK_BENCH_WORK) and measure only a pgokit variant's profiles
#                (PGOKIT, PK_CSGEN_PROFGEN_ARGS) as column TAG beside the
#                earlier pgokit and llvm-profgen ones: an A/B of a pre-inliner
#                change in minutes
#   Environment: PGOKIT (default build/pgokit), PK_BENCH_WORK (default
#   bench/work), PK_CSGEN_PROFGEN_ARGS (extra pgokit profgen options, for
#   trying a change against the same recordings), PGOKIT_BEFORE (another
#   pgokit build, e.g. of the previous commit: its profiles from the same
#   recordings are measured too, as the column "before").
#
# Per recording: `pgokit record --emulate --seed S` of the training runs ->
# `pgokit profgen` (CSSPGO) and, from the same perf.data, `pgokit dump
# --perfscript` (absolute call chains, what llvm-profgen needs for CSSPGO)
# -> `llvm-profgen-19`. Every profile is applied by clang-19 to the same
# source paths as the profiled binary (the .__uniq suffixes of static
# functions hash the path), and the measured run's instructions are counted
# with cachegrind (deterministic). Prints a Markdown table: instructions
# against -O2 per profile (mean over the recordings, and each one), .text
# sizes, and instrumentation PGO; writes the inline-decision comparison
# (bench/inline_diff.py) of the first recording of each program beside it.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
seeds=3
out=
variant=
workloads=()
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --variant) variant=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "cs_generalize: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || workloads=(duktape tcc expat)
[ -x "$PGOKIT" ] || { echo "cs_generalize: $PGOKIT not built (run make)" >&2; exit 2; }
CSGEN_NAME=cs_generalize
source "$PK_ROOT/bench/lib/csgen_workloads.sh"
# (xargs runs the counts two at a time through this script)
if [ "${workloads[0]}" = count_one ]; then count "${workloads[1]}" "${workloads[2]}"; exit; fi

obtain

# ---- a variant over an earlier run's recordings ----
if [ -n "$variant" ]; then
  for w in "${workloads[@]}"; do
    D=$WORK/$w; b=$(bin_name "$w")
    [ -f "$D/counts.txt" ] || die "$w: no earlier run in $D (run without --variant first)"
    for s in $(seq "$seeds"); do
      R=$D/rec$s; perfs=(); for f in "$R"/t*.data; do perfs+=(--perf "$f"); done
      # shellcheck disable=SC2086
      "$PGOKIT" profgen -q --binary "$D/probe/$b" "${perfs[@]}" -o "$R/$variant.prof" \
        --trace-preinline "$R/$variant.preinline.tsv" ${PK_CSGEN_PROFGEN_ARGS:-} || die "$w: pgokit profgen failed"
      mkdir -p "$D/$variant$s"
      build "$w" "$D/$variant$s/$b" -fpseudo-probe-for-profiling -fprofile-sample-use="$R/$variant.prof" &
    done
    wait
    for s in $(seq "$seeds"); do echo "$variant$s"; done |
      xargs -P 2 -I{} bash -c 'echo "{} $(bash "$0" count_one "$1/{}" "$2")"' "$0" "$D" "$w" > "$D/counts-$variant.txt"
    python3 - "$w" "$D" "$seeds" "$variant" <<'PY'
import sys, subprocess
w, D, seeds, v = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
c = {}
for f in (f'{D}/counts.txt', f'{D}/counts-{v}.txt'):
    c.update({l.split()[0]: int(l.split()[1]) for l in open(f)})
base = c['base']
b = {'duktape': 'duk', 'tcc': 'tcc', 'expat': 'xmlwf', 'sqlite': 'speedtest1', 'lua': 'lua'}[w]
def text(k):
    out = subprocess.run(['size', '-A', f'{D}/{k}/{b}'], capture_output=True, text=True).stdout
    return int(next(l.split()[1] for l in out.splitlines() if l.startswith('.text ')))
for tag in ('pgokit', 'llvm', v):
    p = [100.0 * (c[f'{tag}{s}'] - base) / base for s in range(1, seeds + 1)]
    t = sum(text(f'{tag}{s}') for s in range(1, seeds + 1)) / seeds
    print(f'{w:8s} {tag:12s} mean {sum(p) / len(p):+.2f} %  ({", ".join(f"{x:+.2f}" for x in p)})  .text {t:,.0f}')
PY
  done
  exit 0
fi

for w in "${workloads[@]}"; do
  D=$WORK/$w; rm -rf "$D"; mkdir -p "$D"/{base,probe,igen,instr}
  prepare_inputs "$w"
  b=$(bin_name "$w")
  log "$w: building -O2, probe, instrumented"
  build "$w" "$D/base/$b" & build "$w" "$D/probe/$b" -fpseudo-probe-for-profiling & wait
  build "$w" "$D/igen/$b" -fprofile-instr-generate
  # the training runs must work natively before they are recorded
  while read -r cmd; do $cmd >/dev/null || die "$w: training run failed: $cmd"; done < <(train_cmds "$w" "$D/base/$b")
  mkdir -p "$D/raw"
  while read -r cmd; do LLVM_PROFILE_FILE="$D/raw/%p.profraw" $cmd >/dev/null; done < <(train_cmds "$w" "$D/igen/$b")
  llvm-profdata-19 merge -o "$D/instr.profdata" "$D"/raw/*.profraw
  build "$w" "$D/instr/$b" -fprofile-instr-use="$D/instr.profdata" &
  for s in $(seq "$seeds"); do
    R=$D/rec$s; mkdir -p "$R"
    i=0
    while read -r cmd; do
      i=$((i + 1))
      # shellcheck disable=SC2086
      "$PGOKIT" record --emulate -q --seed "$s" -o "$R/t$i.data" -- $cmd >/dev/null || die "$w: record failed: $cmd"
    done < <(train_cmds "$w" "$D/probe/$b")
    perfs=(); for f in "$R"/t*.data; do perfs+=(--perf "$f"); done
    # shellcheck disable=SC2086
    "$PGOKIT" profgen --binary "$D/probe/$b" "${perfs[@]}" -o "$R/pgokit.prof" \
      --trace-preinline "$R/pgokit.preinline.tsv" ${PK_CSGEN_PROFGEN_ARGS:-} 2> "$R/pgokit.log" ||
      { tail -n 5 "$R/pgokit.log" >&2; die "$w: pgokit profgen failed"; }
    if [ -n "${PGOKIT_BEFORE:-}" ]; then
      "$PGOKIT_BEFORE" profgen -q --binary "$D/probe/$b" "${perfs[@]}" -o "$R/before.prof" ||
        die "$w: $PGOKIT_BEFORE profgen failed"
      mkdir -p "$D/before$s"
      build "$w" "$D/before$s/$b" -fpseudo-probe-for-profiling -fprofile-sample-use="$R/before.prof" &
    fi
    for f in "$R"/t*.data; do "$PGOKIT" dump --perfscript "$f"; done > "$R/all.abs-script"
    llvm-profgen-19 --binary "$D/probe/$b" --perfscript "$R/all.abs-script" -o "$R/llvm.prof" 2> "$R/llvm.log" ||
      { tail -n 5 "$R/llvm.log" >&2; die "$w: llvm-profgen-19 failed"; }
    mkdir -p "$D/pgokit$s" "$D/llvm$s"
    build "$w" "$D/pgokit$s/$b" -fpseudo-probe-for-profiling -fprofile-sample-use="$R/pgokit.prof" &
    build "$w" "$D/llvm$s/$b" -fpseudo-probe-for-profiling -fprofile-sample-use="$R/llvm.prof"
    wait
    log "$w: recording $s: $(grep -o 'from [0-9]* contexts' "$R/pgokit.log" | head -n 1); profiles built"
  done
  wait
  python3 "$PK_ROOT/bench/inline_diff.py" "$D/rec1/pgokit.prof" "$D/rec1/llvm.prof" --names pgokit,llvm-profgen-19 \
    > "$D/inline-diff.txt" || die "$w: inline_diff failed"
  log "$w: counting instructions (cachegrind, two at a time)"
  dirs=(base instr); for s in $(seq "$seeds"); do dirs+=("pgokit$s" "llvm$s"); done
  [ -z "${PGOKIT_BEFORE:-}" ] || for s in $(seq "$seeds"); do dirs+=("before$s"); done
  printf '%s\n' "${dirs[@]}" | xargs -P 2 -I{} bash -c 'echo "{} $(bash "$0" count_one "$1/{}" "$2")"' "$0" "$D" "$w" \
    > "$D/counts.txt"
  python3 - "$w" "$D" "$seeds" <<'PY' >> "$WORK/table.$$"
import sys, subprocess
w, D, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = dict(l.split() for l in open(f'{D}/counts.txt'))
c = {k: int(v) for k, v in c.items()}
base = c['base']
def pct(k): return 100.0 * (c[k] - base) / base
def text(k):
    out = subprocess.run(['size', '-A', f'{D}/{k}/' + {'duktape': 'duk', 'tcc': 'tcc', 'expat': 'xmlwf', 'sqlite': 'speedtest1', 'lua': 'lua'}[w]],
                         capture_output=True, text=True).stdout
    return int(next(l.split()[1] for l in out.splitlines() if l.startswith('.text ')))
pg = [pct(f'pgokit{s}') for s in range(1, seeds + 1)]
lv = [pct(f'llvm{s}') for s in range(1, seeds + 1)]
tp = sum(text(f'pgokit{s}') for s in range(1, seeds + 1)) / seeds
tl = sum(text(f'llvm{s}') for s in range(1, seeds + 1)) / seeds
m = lambda v: sum(v) / len(v)
bf = [pct(f'before{s}') for s in range(1, seeds + 1)] if 'before1' in c else []
before = f'{m(bf):+.2f} % ({", ".join(f"{x:+.2f}" for x in bf)})' if bf else 'n/a'
print(f'| {w} | {base:,} | {m(pg):+.2f} % | {m(lv):+.2f} % | {m(pg) - m(lv):+.2f} | {pct("instr"):+.2f} % | '
      f'{", ".join(f"{x:+.2f}" for x in pg)} | {", ".join(f"{x:+.2f}" for x in lv)} | {100 * (tp - tl) / tl:+.1f} % | {before} |')
PY
done
out=${out:-$WORK/table.md}
{
  echo "CSSPGO on programs outside the scoreboard: instructions of the measured run against -O2"
  echo "(cachegrind; mean of $seeds emulated recordings, each giving one pgokit and one llvm-profgen-19 profile)."
  echo
  echo "| program | -O2 instructions | pgokit CSSPGO | llvm-profgen-19 CSSPGO | pgokit - llvm (points; < 0: pgokit ahead) | instr. PGO | pgokit per recording | llvm-profgen per recording | pgokit .text vs llvm | pgokit before (PGOKIT_BEFORE) |"
  echo "|---|---:|---:|---:|---:|---:|---|---|---:|---|"
  cat "$WORK/table.$$"
} > "$out"
cat "$out"
rm -f "$WORK/table.$$"
