#!/usr/bin/env bash
# format_bench.sh — sample-profile formats: `pgokit convert/overlap/show`
# against `llvm-profdata-19 merge/overlap/show` on one generated profile
# (tests/e2e/format_genprof.awk), interleaved runs, medians of wall time and
# peak RSS; checks the outputs are byte-identical first. Not a test.
#   bench/format_bench.sh [FUNCTIONS (default 60000)] [RUNS (default 3)]
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NF=${1:-60000}; RUNS=${2:-3}
P=$PWD/$BUILD/pgokit
W=$(mktemp -d "${TMPDIR:-/tmp}/pkbench.XXXXXX"); trap 'rm -rf "$W"' EXIT
awk -v seed=5 -v nf="$NF" -f tests/e2e/format_genprof.awk > "$W/p.txt"
awk -v seed=6 -v nf="$NF" -f tests/e2e/format_genprof.awk > "$W/q.txt"
echo "profile: $(($(stat -c %s "$W/p.txt") / 1048576)) MB text, $NF functions"
llvm-profdata-19 merge --sample --extbinary "$W/p.txt" -o "$W/l.ext"
"$P" convert "$W/p.txt" -o "$W/o.ext"
cmp "$W/l.ext" "$W/o.ext" || { echo "outputs differ"; exit 1; }

declare -A T M
run() { # name cmd...
    local name=$1; shift
    /usr/bin/time -f "%e %M" -o "$W/t" "$@" >/dev/null 2>"$W/err" || { echo "$name failed: $(cat "$W/err")"; exit 1; }
    read -r t m <"$W/t"; T[$name]+="$t "; M[$name]+="$m "
}
med() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for _ in $(seq "$RUNS"); do
    run "text->extbinary llvm" llvm-profdata-19 merge --sample --extbinary "$W/p.txt" -o "$W/x1"
    run "text->extbinary ours" "$P" convert "$W/p.txt" -o "$W/x2"
    run "extbinary->text llvm" llvm-profdata-19 merge --sample --text "$W/l.ext" -o "$W/x3"
    run "extbinary->text ours" "$P" convert "$W/l.ext" --format text -o "$W/x4"
    run "merge 2 llvm" llvm-profdata-19 merge --sample "$W/l.ext" "$W/q.txt" -o "$W/x5"
    run "merge 2 ours" "$P" merge "$W/l.ext" "$W/q.txt" -o "$W/x6"
    run "overlap llvm" llvm-profdata-19 overlap --sample "$W/l.ext" "$W/q.txt"
    run "overlap ours" "$P" overlap "$W/l.ext" "$W/q.txt"
done
printf '%-24s %10s %12s\n' task "median s" "peak RSS MB"
for k in "text->extbinary llvm" "text->extbinary ours" "extbinary->text llvm" "extbinary->text ours" \
         "merge 2 llvm" "merge 2 ours" "overlap llvm" "overlap ours"; do
    printf '%-24s %10s %12s\n' "$k" "$(med "${T[$k]}")" "$(( $(med "${M[$k]}") / 1024 ))"
done
