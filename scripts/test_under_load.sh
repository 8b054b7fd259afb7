#!/usr/bin/env bash
# Runs the README's test command with two CPU-bound processes per core
# beside it (stress-ng), as a shared CI machine can be: the suite must pass
# there too. Prints the suite's time under that load.
#   scripts/test_under_load.sh [PER_CORE]   (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v stress-ng >/dev/null || bash scripts/setup.sh
per=${1:-2}
n=$(( $(nproc) * per ))
stress-ng --cpu "$n" --timeout 3h --quiet &
stress=$!
trap 'kill "$stress" 2>/dev/null; wait "$stress" 2>/dev/null || true' EXIT
t0=$SECONDS
rc=0
make test || rc=$?
echo "test_under_load: make test with $n CPU-bound processes beside it: exit $rc after $((SECONDS - t0)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
exit $rc
