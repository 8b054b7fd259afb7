#!/usr/bin/env bash
# fuzz_long.sh [MINUTES] [HARNESS...] — the nightly-length fuzzing run: every
# libFuzzer harness of tests/fuzz/ (or the ones named) for MINUTES minutes of
# its own CPU time each (default 10), one process per harness, as many
# harnesses at once as the machine has CPUs (FUZZ_JOBS overrides). Each
# harness stops on CPU time, not wall time, so other load on the machine only
# makes the run longer (wall-clock cap: 4x MINUTES). The corpus is kept in
# build/fuzz/corpus/ across runs and findings go to build/fuzz/findings/.
# Writes bench/results/fuzz_long-<date>.txt: per harness the executions, the
# coverage (edges, features), the corpus size, the CPU seconds and what was
# found. Not part of `make test` (that runs tests/e2e/fuzz_smoke.sh: seconds
# each).
set -u
cd "$(dirname "$0")/.."
MIN=${1:-10}
shift $(($# > 0 ? 1 : 0))
make -s fuzz-build || exit 1
BUILD=${PK_BUILD:-$PWD/build}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for b in "$BUILD"/fuzz/fuzz_*; do [ -x "$b" ] && names+=("$(basename "$b" | sed 's/^fuzz_//')"); done
fi
jobs=${FUZZ_JOBS:-$(nproc)}
mkdir -p bench/results
out=bench/results/fuzz_long-$(date +%Y%m%d-%H%M).txt
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzzlong.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Seeds once, shared by the parallel groups (run.sh would remake them each).
bash tests/fuzz/seeds.sh "$BUILD/fuzz/seeds" >"$BUILD/fuzz/seeds.log" 2>&1 \
    || { echo "seeds.sh failed: $BUILD/fuzz/seeds.log"; exit 1; }
t0=$(date +%s)
touch "$tmp/start"
# what is fuzzed: the harnesses are built from the working tree as it is now
rev=$(git rev-parse --short HEAD 2>/dev/null)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || rev="$rev+uncommitted"
pids=()
for ((g = 0; g < jobs; g++)); do
    group=()
    for ((i = g; i < ${#names[@]}; i += jobs)); do group+=("${names[$i]}"); done
    [ ${#group[@]} -gt 0 ] || continue
    FUZZ_KEEP_SEEDS=1 FUZZ_CPU_SECONDS=$((MIN * 60)) \
        bash tests/fuzz/run.sh fuzz $((MIN * 240)) "${group[@]}" >"$tmp/group$g.txt" 2>&1 &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
{
    echo "# fuzz_long: $MIN CPU-min per harness, $jobs at once on $(nproc) CPUs, $(date -u '+%F %T') UTC, tree $rev at the start, wall $(( $(date +%s) - t0 )) s"
    echo "# limits: -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10"
    grep -hE '^(ok|FAIL) |^    \|' "$tmp"/group*.txt | sort -k2
    grep -h '^fuzz: ' "$tmp"/group*.txt | awk '{p += $2; f += $4} END {printf "fuzz: %d passed, %d failed\n", p, f}'
    echo "# findings of this run (crash-*, leak-*, timeout-*, oom-* files):"
    find "$BUILD/fuzz/findings" -type f -newer "$tmp/start" 2>/dev/null | sed 's/^/#   /'
} | tee "$out"
echo "results: $out"
exit "$rc"
