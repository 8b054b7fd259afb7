#!/usr/bin/env bash
# run.sh MODE SECONDS [HARNESS...] — runs the libFuzzer harnesses of
# $BUILD/fuzz/ (all of them by default; see tests/fuzz/README.md).
#   smoke  CI: each harness replays its committed regression inputs
#          (tests/fuzz/corpus/<harness>/) and fresh seeds (seeds.sh), then fuzzes
#          SECONDS from them into a scratch corpus. Prints one line per harness
#          and "fuzz: N passed, N failed".
#   fuzz   the same with a corpus kept across runs in $BUILD/fuzz/corpus/<harness>
#          (`make fuzz`, bench/fuzz_long.sh); crashes, leaks, timeouts and OOMs
#          go to $BUILD/fuzz/findings/<harness>/.
# Limits on every run: -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10
# (FUZZ_FLAGS adds more). FUZZ_CPU_SECONDS=N (fuzz mode) ends each harness
# after N seconds of its own CPU time, SECONDS then being the wall-clock cap. A harness whose run ends with a libFuzzer or
# sanitizer report fails; its log is $BUILD/fuzz/logs/<harness>.log.
set -u
MODE=${1:?usage: run.sh smoke|fuzz SECONDS [HARNESS...]}
SECS=${2:?usage: run.sh smoke|fuzz SECONDS [HARNESS...]}
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${PK_BUILD:-$ROOT/build}
FZ=$BUILD/fuzz
LIMITS="-rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10"
export ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${FUZZ_UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for b in "$FZ"/fuzz_*; do [ -x "$b" ] && names+=("$(basename "$b" | sed 's/^fuzz_//')"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "no harnesses in $FZ (make tests or make fuzz-build first)"; exit 1; }

SEEDS=$FZ/seeds
if [ -z "${FUZZ_KEEP_SEEDS:-}" ] || [ ! -d "$SEEDS" ]; then
    bash "$ROOT/tests/fuzz/seeds.sh" "$SEEDS" >"$FZ/seeds.log" 2>&1 || { echo "seeds.sh failed: $FZ/seeds.log"; exit 1; }
fi
mkdir -p "$FZ/logs"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/pkfuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

passed=0; failed=0; failures=()
for h in "${names[@]}"; do
    bin=$FZ/fuzz_$h
    log=$FZ/logs/$h.log
    t0=$SECONDS
    [ -x "$bin" ] || { echo "FAIL $h: $bin not built"; failed=$((failed + 1)); failures+=("$h"); continue; }
    committed=$ROOT/tests/fuzz/corpus/$h
    seeds=$SEEDS/$h
    mkdir -p "$seeds"
    if [ "$MODE" = fuzz ]; then
        work=$FZ/corpus/$h; art=$FZ/findings/$h
    else
        work=$scratch/corpus-$h; art=$scratch/findings-$h
    fi
    mkdir -p "$work" "$art"
    dirs=("$work" "$seeds")
    [ -d "$committed" ] && dirs+=("$committed")
    replay=("${dirs[@]:1}")
    [ -d "$SEEDS.hostile/$h" ] && replay+=("$SEEDS.hostile/$h")
    # 1. every committed regression input, every seed and hostile input, once
    rc=0
    "$bin" $LIMITS -runs=0 -artifact_prefix="$art/" "${replay[@]}" >"$log" 2>&1 || rc=$?
    replayed=$(grep -oE 'INITED cov: [0-9]+' "$log" | grep -oE '[0-9]+$')
    # 2. fuzzing
    cpu=
    if [ $rc -eq 0 ] && [ "$SECS" -gt 0 ] && [ -n "${FUZZ_CPU_SECONDS:-}" ]; then
        # Bounded by the fuzzer's own CPU time, not wall time, so a loaded
        # machine stretches the run instead of shortening it: SECS is then
        # only the wall-clock cap. SIGINT makes libFuzzer print its final
        # stats and exit 72.
        "$bin" $LIMITS ${FUZZ_FLAGS:-} -max_total_time="$SECS" -print_final_stats=1 \
            -artifact_prefix="$art/" "${dirs[@]}" >>"$log" 2>&1 &
        pid=$! tck=$(getconf CLK_TCK) used=0 stopped=0
        while kill -0 "$pid" 2>/dev/null; do
            read -r -a st <"/proc/$pid/stat" 2>/dev/null || break
            used=$(((st[13] + st[14]) / tck))
            if [ "$used" -ge "$FUZZ_CPU_SECONDS" ] && [ $stopped -eq 0 ]; then
                kill -INT "$pid" 2>/dev/null; stopped=1
            fi
            sleep 2
        done
        wait "$pid" || rc=$?
        [ $stopped -eq 1 ] && [ $rc -eq 72 ] && rc=0
        cpu="; ${used} CPU-s"
    elif [ $rc -eq 0 ] && [ "$SECS" -gt 0 ]; then
        "$bin" $LIMITS ${FUZZ_FLAGS:-} -max_total_time="$SECS" -print_final_stats=1 \
            -artifact_prefix="$art/" "${dirs[@]}" >>"$log" 2>&1 || rc=$?
    fi
    runs=$(grep -oE '^stat::number_of_executed_units: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+$')
    last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|INITED|NEW|REDUCE|pulse)' "$log" | tail -n 1)
    cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+'); ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+')
    corp=$(grep -oE 'corp: [0-9]+' <<<"$last" | grep -oE '[0-9]+')
    info="replay cov ${replayed:-?}; ${runs:-0} runs, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}$cpu"
    if [ $rc -ne 0 ] || grep -qE '^==[0-9]+==ERROR|runtime error:|^SUMMARY: libFuzzer' "$log"; then
        failed=$((failed + 1)); failures+=("$h")
        printf 'FAIL %-18s (%ds) %s; see %s\n' "$h" $((SECONDS - t0)) "$info" "$log"
        grep -E 'ERROR|runtime error|oracle failed|SUMMARY|Test unit written' "$log" | head -n 6 | sed 's/^/    | /'
        [ "$MODE" = smoke ] && mkdir -p "$FZ/findings/$h" && cp "$art"/* "$FZ/findings/$h/" 2>/dev/null
    else
        passed=$((passed + 1))
        printf 'ok   %-18s (%ds) %s\n' "$h" $((SECONDS - t0)) "$info"
    fi
done
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
