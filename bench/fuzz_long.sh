#!/usr/bin/env bash
# fuzz_long.sh [MINUTES] [HARNESS...] — the nightly-length fuzzing run: every
# libFuzzer harness of tests/fuzz/ (or the ones named) for MINUTES CPU-minutes
# each (default 10; one harness at a time, one process each), with the corpus
# kept in build/fuzz/corpus/ across runs and findings in build/fuzz/findings/.
# Writes bench/results/fuzz_long-<date>.txt: per harness the executions, the
# coverage (edges, features), the corpus size and what was found.
# Not part of `make test` (that runs tests/e2e/fuzz_smoke.sh: seconds each).
set -u
cd "$(dirname "$0")/.."
MIN=${1:-10}
shift $(($# > 0 ? 1 : 0))
make -s fuzz-build || exit 1
mkdir -p bench/results
out=bench/results/fuzz_long-$(date +%Y%m%d-%H%M).txt
{
    echo "# fuzz_long: $MIN min per harness, $(nproc) CPUs, $(date -u '+%F %T') UTC, $(git rev-parse --short HEAD 2>/dev/null)"
    echo "# limits: -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10"
    bash tests/fuzz/run.sh fuzz $((MIN * 60)) "$@"
    rc=$?
    echo "# findings (crash-*, leak-*, timeout-*, oom-* files):"
    find build/fuzz/findings -type f 2>/dev/null | sed 's/^/#   /'
    exit $rc
} 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
echo "results: $out"
exit "$rc"
