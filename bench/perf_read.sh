#!/usr/bin/env bash
# perf_read.sh — our perf.data reader against `perf script` on one large file
# (synthesized with our writer: 32-entry branch stacks + call chains, like
# `pgokit record` output), interleaved runs, medians of wall time and peak RSS.
#   bench/perf_read.sh [SIZE_MB (default 600)] [RUNS (default 5)]
# Then the same on a real `perf record -z` recording (zstd, call chains).
# Uses BUILD (default build) for the pgokit binary and library. Not a test.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MB=${1:-600}; RUNS=${2:-5}
PGOKIT=$PWD/$BUILD/pgokit
W=$(mktemp -d "${TMPDIR:-/tmp}/pkbench.XXXXXX"); trap 'rm -rf "$W"' EXIT
gcc -O2 -g -fno-omit-frame-pointer -no-pie -pthread tests/programs/perf_loop.c -o "$W/loop"
gcc -D_GNU_SOURCE -Isrc -O2 tests/programs/perf_synth.c "$BUILD/libpgokit.a" -lzstd -lz -lpthread -lm -o "$W/synth"
read -r off vaddr <<<"$(readelf -lW "$W/loop" | awk '$1 == "LOAD" && $8 == "E" {print $2, $3}')"
bid=$(readelf -n "$W/loop" | awk '/Build ID/ {print $3}')
pairs=$(objdump -d --no-show-raw-insn "$W/loop" | awk '
    /^[0-9a-f]+ <(leaf|mid|work|main|thread_main)>:/ {f = 1} /^$/ {f = 0}
    f && $2 ~ /^(j[a-z]+|call)$/ && $3 ~ /^[0-9a-f]+$/ {sub(":", "", $1); printf "0x%s:0x%s ", $1, $3}')
n=$((MB * 1024 * 1024 / 800))   # ~800 bytes per sample (32 x 24-byte entries + chain)
# shellcheck disable=SC2086
/usr/bin/time -f "%e %M" -o "$W/wt" "$W/synth" "$W/big.data" "$W/loop" "$vaddr" 0x1000 "$off" "$bid" "$n" c $pairs
size=$(stat -c %s "$W/big.data")
read -r wt wm <"$W/wt"
echo "file: $((size / 1048576)) MB, $n samples"
awk -v t="$wt" -v n="$n" -v m="$wm" 'BEGIN {printf "writer: %.2f s, %.0f samples/s, %d KB peak RSS\n", t, n / (t > 0 ? t : 0.01), m}'

declare -A T M
run() { # name cmd...
    local name=$1; shift
    sync; /usr/bin/time -f "%e %M" -o "$W/t" "$@" >/dev/null 2>"$W/err" || { echo "$name failed: $(cat "$W/err")"; exit 1; }
    read -r t m <"$W/t"; T[$name]+="$t "; M[$name]+="$m "
}
for ((i = 0; i < RUNS; i++)); do
    run stats "$PGOKIT" dump --stats "$W/big.data"
    run dump "$PGOKIT" dump "$W/big.data"
    run perf perf script -F ip,brstack -i "$W/big.data"
done
med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
printf '%-44s %10s %12s   %s\n' "reader (median of $RUNS)" "wall s" "peak RSS KB" "all runs"
for k in stats dump perf; do
    case $k in
    stats) d="pgokit dump --stats (decode every sample)";;
    dump) d="pgokit dump (full text listing)";;
    perf) d="perf script -F ip,brstack";;
    esac
    printf '%-44s %10s %12s   %s\n' "$d" "$(med <<<"${T[$k]}")" "$(med <<<"${M[$k]}")" "${T[$k]}"
done
p=$(med <<<"${T[perf]}"); s=$(med <<<"${T[stats]}"); d=$(med <<<"${T[dump]}")
awk -v p="$p" -v s="$s" -v d="$d" 'BEGIN {printf "speed-up vs perf script: decode %.1fx, text listing %.1fx\n", p / (s > 0 ? s : 0.01), p / (d > 0 ? d : 0.01)}'

# A real compressed recording: frame-pointer call chains, cpu-clock at 50 kHz.
perf record -q -z -e cpu-clock -c 20000 --call-graph fp -o "$W/z.data" "$W/loop" 200000 >/dev/null 2>&1
echo
echo "perf record -z file: $(($(stat -c %s "$W/z.data") / 1048576)) MB compressed, $("$PGOKIT" dump --stats "$W/z.data" | awk '/^# samples:/ {print $3}') samples"
unset T M; declare -A T M
for ((i = 0; i < RUNS; i++)); do
    run stats "$PGOKIT" dump --stats "$W/z.data"
    run perf perf script -F ip -i "$W/z.data"
done
printf '%-44s %10s %12s   %s\n' "reader (median of $RUNS)" "wall s" "peak RSS KB" "all runs"
printf '%-44s %10s %12s   %s\n' "pgokit dump --stats" "$(med <<<"${T[stats]}")" "$(med <<<"${M[stats]}")" "${T[stats]}"
printf '%-44s %10s %12s   %s\n' "perf script -F ip" "$(med <<<"${T[perf]}")" "$(med <<<"${M[perf]}")" "${T[perf]}"
p=$(med <<<"${T[perf]}"); s=$(med <<<"${T[stats]}")
awk -v p="$p" -v s="$s" 'BEGIN {printf "speed-up vs perf script: %.1fx\n", p / (s > 0 ? s : 0.01)}'
