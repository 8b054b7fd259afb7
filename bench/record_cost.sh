#!/usr/bin/env bash
# Cost of emulated LBR recording on SQLite speedtest1 (--size 50 --memdb):
# native vs plain qemu-x86_64 vs qemu-x86_64 + pgokit plugin (default
# options), and + --exact-counts; and the plugin's IP mode (ip=N: a sample
# every N instructions, call chains on), run through qemu-x86_64 directly
# with the arguments `pgokit record` builds plus ip=N. Runs are interleaved
# (one of each per round) and medians reported, so machine noise hits every
# variant alike.
# Also reports taken branches per native CPU-second (from the exact counts),
# which sets the default sampling period.
#   bench/record_cost.sh [ROUNDS]        (BUILD=build-xxx to pick the build)
# BASE_PLUGIN=/path/to/other/pgokit-lbr.so adds that plugin (default options)
# to every round, for interleaved A/B comparisons of plugin changes.
# IP_PERIOD=N sets the IP mode's period (default 100003 instructions).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${1:-5}
PGOKIT=$PWD/$BUILD/pgokit
PLUGIN=$PWD/$BUILD/pgokit-lbr.so
[ -x "$PGOKIT" ] && [ -f "$PLUGIN" ] || { echo "build first: make BUILD=$BUILD all" >&2; exit 1; }
W=$(scripts/workloads.sh dir)
B=$W/out/record-base/speedtest1
[ -x "$B" ] || scripts/workloads.sh build record-base sqlite >/dev/null
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
ARGS=(--size 50 --memdb)

t() { # prints user+sys CPU seconds of the command
    /usr/bin/time -o "$T/time" -f '%U %S' "$@" >/dev/null 2>&1
    awk '{printf "%.3f\n", $1 + $2}' "$T/time"
}
BASE=${BASE_PLUGIN:-}
IP_PERIOD=${IP_PERIOD:-100003}
# IP mode, as pgokit record would run it (seed 0, call chains on)
IPSPEC="$PLUGIN,period=20011,depth=32,callchain=on,seed=0,comm=speedtest1,exe=$B,ip=$IP_PERIOD"
declare -a nat qemu rec exact base ip ipx
for r in $(seq "$ROUNDS"); do
    nat+=("$(t "$B" "${ARGS[@]}")")
    qemu+=("$(t qemu-x86_64 "$B" "${ARGS[@]}")")
    rec+=("$(t env PGOKIT_LBR_PLUGIN="$PLUGIN" "$PGOKIT" record --emulate -q -o "$T/p.data" -- "$B" "${ARGS[@]}")")
    [ -z "$BASE" ] || base+=("$(t env PGOKIT_LBR_PLUGIN="$BASE" "$PGOKIT" record --emulate -q -o "$T/b.data" -- "$B" "${ARGS[@]}")")
    exact+=("$(t env PGOKIT_LBR_PLUGIN="$PLUGIN" "$PGOKIT" record --emulate -q -o "$T/e.data" --exact-counts "$T/e.exact" -- "$B" "${ARGS[@]}")")
    ip+=("$(t qemu-x86_64 -plugin "$IPSPEC,out=$T/i.data" "$B" "${ARGS[@]}")")
    ipx+=("$(t qemu-x86_64 -plugin "$IPSPEC,out=$T/ix.data,exact=$T/ix.exact" "$B" "${ARGS[@]}")")
    echo "round $r: native ${nat[-1]} qemu ${qemu[-1]} record ${rec[-1]}${BASE:+ base ${base[-1]}} record+exact ${exact[-1]} ip ${ip[-1]} ip+exact ${ipx[-1]}" >&2
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
mn=$(med "${nat[@]}"); mq=$(med "${qemu[@]}"); mr=$(med "${rec[@]}"); me=$(med "${exact[@]}")
mi=$(med "${ip[@]}"); mx=$(med "${ipx[@]}")
rng() { printf '%s\n' "$@" | sort -n | sed -n '1p;$p' | paste -sd- ; }
samples=$(perf report -D -i "$T/p.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE' || true)
taken=$("$PGOKIT" record --print-exact "$T/e.exact" | awk '/->/{split($1, a, ":"); n += a[2]} END {print n}')
echo "SQLite speedtest1 --size 50 --memdb, $ROUNDS interleaved rounds, CPU seconds (user+sys), median [min-max]"
printf '  native        %7.3f [%s]\n' "$mn" "$(rng "${nat[@]}")"
printf '  qemu          %7.3f [%s]  %.2fx native\n' "$mq" "$(rng "${qemu[@]}")" "$(bc -l <<<"$mq/$mn")"
printf '  qemu+pgokit   %7.3f [%s]  %.2fx qemu\n' "$mr" "$(rng "${rec[@]}")" "$(bc -l <<<"$mr/$mq")"
[ -z "$BASE" ] || { mb=$(med "${base[@]}"); printf '  qemu+base     %7.3f [%s]  %.2fx qemu  (%s)\n' "$mb" "$(rng "${base[@]}")" "$(bc -l <<<"$mb/$mq")" "$BASE"; }
printf '  +exact-counts %7.3f [%s]  %.2fx qemu\n' "$me" "$(rng "${exact[@]}")" "$(bc -l <<<"$me/$mq")"
printf '  qemu+pgokit ip=%s %7.3f [%s]  %.2fx qemu  %.2fx LBR mode\n' "$IP_PERIOD" "$mi" "$(rng "${ip[@]}")" "$(bc -l <<<"$mi/$mq")" "$(bc -l <<<"$mi/$mr")"
printf '  ip+exact      %7.3f [%s]  %.2fx qemu  %.2fx LBR+exact\n' "$mx" "$(rng "${ipx[@]}")" "$(bc -l <<<"$mx/$mq")" "$(bc -l <<<"$mx/$me")"
echo "  samples $samples ($(bc -l <<<"$samples/$mn" | cut -d. -f1) per native CPU-second)"
echo "  taken branches $taken ($(bc -l <<<"$taken/$mn/1000000" | cut -c1-6) M per native CPU-second)"
echo "  perf.data $(stat -c %s "$T/p.data") bytes"
ipsamples=$(perf report -D -i "$T/i.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE' || true)
echo "  IP mode: samples $ipsamples, perf.data $(stat -c %s "$T/i.data") bytes"
