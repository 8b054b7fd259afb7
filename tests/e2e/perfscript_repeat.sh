#!/usr/bin/env bash
# perfscript_repeat.sh — repeat counts of aggregated `perf script` text
# ("N" alone on a line before a sample) are weights: profgen on a text where
# every sample is preceded by a count gives the profile of the text with each
# sample written out that many times (flat LBR path, and the unwinder's
# context-sensitive path), and a count of 10^9 on a one-sample text takes no
# time (it was 10^9 callbacks, minutes of profgen: found by fuzz_perf_script).
source "$(dirname "$0")/../lib.sh"
need gcc awk
gcc -O2 -g -fno-omit-frame-pointer -pthread "$PK_ROOT/tests/programs/perf_loop.c" -o "$T/loop" || { fail "build"; finish; exit 1; }
check "record (emulated LBR + stacks)" "$PGOKIT" record -q -o "$T/r.data" --period 20000 --lbr-depth 16 -- "$T/loop" 30
"$PGOKIT" dump --perfscript "$T/r.data" >"$T/full.txt"
check "perf script text written" test -s "$T/full.txt"

# every sample block counted k times (k = 1, 2, 3 in turn): as counts, and written out
awk 'BEGIN { RS = ""; ORS = "\n\n" }
     /^PERF_RECORD/ { print > A; print > E; next }
     { k = NR % 3 + 1; print k "\n" $0 > A; for (i = 0; i < k; i++) print > E }' \
    A="$T/agg.txt" E="$T/exp.txt" "$T/full.txt"
check "aggregated text has repeat counts" grep -qx 3 "$T/agg.txt"

for mode in flat cs; do
    opt=; [ $mode = flat ] && opt=--ignore-stack-samples; [ $mode = cs ] && opt=--cs
    "$PGOKIT" profgen -q --binary "$T/loop" --perfscript "$T/agg.txt" $opt --format text -o "$T/agg.$mode.prof"
    "$PGOKIT" profgen -q --binary "$T/loop" --perfscript "$T/exp.txt" $opt --format text -o "$T/exp.$mode.prof"
    check "$mode: profile made" test -s "$T/agg.$mode.prof"
    check "$mode: counts as weights give the profile of the written-out samples" cmp -s "$T/agg.$mode.prof" "$T/exp.$mode.prof"
done

# a billion repeats of one sample: one weighted sample
{ awk 'BEGIN { RS = ""; ORS = "\n\n" } /^PERF_RECORD/ { print } !/^PERF_RECORD/ && !done { print "1000000000\n" $0; done = 1 }' \
    "$T/full.txt"; } >"$T/billion.txt"
t0=$(date +%s%N)
"$PGOKIT" profgen -q --binary "$T/loop" --perfscript "$T/billion.txt" --format text -o "$T/billion.prof"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "10^9 repeats of one sample: profile made" test $rc -eq 0 -a -s "$T/billion.prof"
check "10^9 repeats of one sample take under 10 s (took ${ms} ms)" test $ms -lt 10000
check_eq "10^9 repeats: the function's total is a billion times the sample's" 1 \
    "$(awk -F: 'NR == 1 { print ($2 >= 1000000000) }' "$T/billion.prof")"
finish
