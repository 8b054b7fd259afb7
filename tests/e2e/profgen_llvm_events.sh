#!/usr/bin/env bash
# llvm-profgen's sample selection and weighting, through pgokit llvm-profgen,
# against llvm-profgen-19 on the same perf script text: --perf-event(s)
# (the event field perf prints, padded as perf pads it), --sample-period (an
# LBR sample counts period / (its entries with an end in the binary - 1)),
# --leading-ip-only (the samples' instruction pointers alone, summed per
# line). The text is a recording of our fixture (emulated LBR, no stacks)
# with two event names put in.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 qemu-x86_64
clang-19 -O2 -g "$PK_ROOT/tests/programs/profgen_recurse.c" -o "$T/prog"
"$PGOKIT" record --emulate --no-callchain -q -o "$T/prog.data" -- "$T/prog" 20000 >/dev/null
"$PGOKIT" dump --perfscript "$T/prog.data" > "$T/plain.script"
awk '/PERF_RECORD/ {print; next} NF {n++; sub(/^ */, ""); printf "  %s:            %s\n", (n % 3 ? "cycles:u" : "br_misp_retired.all_branches:upp"), $0; next} {print}' \
    "$T/plain.script" > "$T/ev.script"
run() { # NAME ARGS...
    local name=$1; shift
    check "$name" "$PGOKIT" llvm-profgen -q --format=text --perfscript="$T/ev.script" --binary="$T/prog" --output="$T/$name.pk" "$@"
    llvm-profgen-19 --format=text --perfscript="$T/ev.script" --binary="$T/prog" --output="$T/$name.ll" "$@" 2>/dev/null
    check "$name: llvm-profgen-19's profile" cmp "$T/$name.ll" "$T/$name.pk"
}
run cycles --perf-event=cycles:u
run misp --perf-event br_misp_retired.all_branches:upp
run both --perf-events=cycles:u,br_misp_retired.all_branches:upp
check "one event: fewer samples than both" test "$(head -c 40 "$T/cycles.pk")" != "$(head -c 40 "$T/both.pk")"
run period --perf-event=cycles:u --sample-period=1000003
run ip --perf-event=br_misp_retired.all_branches:upp --leading-ip-only
run ip-period --perf-event=cycles:u --leading-ip-only --sample-period=7
"$PGOKIT" llvm-profgen -q --format=text --perfscript="$T/ev.script" --binary="$T/prog" --output="$T/none.pk" --perf-event=instructions 2> "$T/none.err"
check "an event no sample has: nothing written" test ! -e "$T/none.pk"
"$PGOKIT" llvm-profgen -q --format=text --perfdata="$T/prog.data" --binary="$T/prog" --output="$T/pd.pk" --perf-event=cycles:u 2> "$T/pd.err"
check "--perf-event on perf.data: refused, saying why" grep -q "selects samples of perf script text" "$T/pd.err"
"$PGOKIT" llvm-profgen -q --format=text --perfscript="$T/ev.script" --binary="$T/prog" --output="$T/bad.pk" --sample-period=0 2> "$T/bad.err"
check "--sample-period=0: refused" grep -q "sample-period must be a positive count" "$T/bad.err"
finish
