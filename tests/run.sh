#!/usr/bin/env bash
# Runs the whole suite: unit tests (plain and under ASan+UBSan), then the
# end-to-end scripts in tests/e2e/. Every test program may print a line
# "<what>: N passed, N failed[, N skipped]"; those are summed. A program that
# fails without such a line counts as one failure; exit 77 means skipped.
# Usage: tests/run.sh [substring]   (only tests whose file name contains it)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
filter=${1:-}
export PGOKIT="$PWD/$BUILD/pgokit" PGOKIT_SAN="$PWD/$BUILD/san/pgokit"
export PK_BUILD="$PWD/$BUILD" PK_TEST_SRCDIR="$PWD/tests" PK_ROOT="$PWD"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logdir="$PWD/$BUILD/test-logs"; rm -rf "$logdir"; mkdir -p "$logdir"

passed=0; failed=0; skipped=0; failures=()
run_one() { # label, command...
    local label=$1; shift
    local log="$logdir/${label//\//_}.log" t0=$SECONDS
    "$@" >"$log" 2>&1
    local rc=$? line p f s
    line=$(grep -E '^([A-Za-z0-9_-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ $rc -eq 77 ]; then
        skipped=$((skipped + 1)); printf 'SKIP %-40s %s\n' "$label" "$(tail -n 1 "$log")"; return
    fi
    if [ -n "$line" ]; then
        p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
        f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
        s=$(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '[0-9]+' || echo 0)
        passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + ${s:-0}))
        [ $rc -ne 0 ] && [ "$f" -eq 0 ] && { failed=$((failed + 1)); f=1; }
    elif [ $rc -eq 0 ]; then
        passed=$((passed + 1)); f=0
    else
        failed=$((failed + 1)); f=1
    fi
    if [ "$f" -ne 0 ] || [ $rc -ne 0 ]; then
        failures+=("$label"); printf 'FAIL %-40s (%ds) see %s\n' "$label" $((SECONDS - t0)) "$log"
        sed 's/^/    | /' "$log" | tail -n 25
    else
        printf 'ok   %-40s (%ds) %s\n' "$label" $((SECONDS - t0)) "$line"
    fi
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t"); [[ -z "$filter" || "$name" == *"$filter"* ]] || continue
    run_one "unit/$name" "$t"
    run_one "san/$name" "$BUILD/san/tests/$name"
done
for t in tests/e2e/*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh); [[ -z "$filter" || "$name" == *"$filter"* ]] || continue
    run_one "e2e/$name" bash "$t"
done

echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
