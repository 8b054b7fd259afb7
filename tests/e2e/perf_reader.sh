#!/usr/bin/env bash
# perf_reader.sh — our perf.data reader against the oracle `perf script -D`
# on real recordings of tests/programs/perf_loop.c (cpu-clock, frame-pointer
# call chains, a thread and a fork): file mode, pipe mode (a file written by
# `-o -`, and the same bytes through a real pipe), `-z` (zstd), pipe mode
# with -z, and two events (attrs tied by sample ids).
# Every sample's pid/tid/time/ip/period/call chain and every MMAP/MMAP2/COMM/
# FORK/EXIT record must be identical (compared as sorted canonical lines,
# since perf -D prints samples after its time sort).
source "$(dirname "$0")/../lib.sh"
need perf gcc awk
norm="$PK_ROOT/tests/e2e/perf_norm.awk"

perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1 || { echo "skipped: perf record cannot sample here (perf_event_paranoid?)"; exit 77; }
gcc -O2 -g -fno-omit-frame-pointer -pthread "$PK_ROOT/tests/programs/perf_loop.c" -o "$T/loop" || { fail "build perf_loop"; finish; exit 1; }
rec() { # perf-record-args...
    perf record -q -e cpu-clock -c 100000 --call-graph fp "$@" "$T/loop" 8000 >/dev/null 2>"$T/rec.err"
}
rec -o "$T/f.data"
perf record -q -e cpu-clock -c 100000 --call-graph fp -o - "$T/loop" 8000 2>/dev/null >"$T/p.data"
rec -z -o "$T/z.data"
perf record -q -z -e cpu-clock -c 100000 --call-graph fp -o - "$T/loop" 8000 2>/dev/null >"$T/pz.data"
perf record -q -e cpu-clock,task-clock -c 100000 --call-graph fp -o "$T/m.data" "$T/loop" 8000 >/dev/null 2>&1
for f in f p z m pz; do
    check "perf recorded $f.data" test -s "$T/$f.data"
done

for f in f p z m pz; do
    perf script -D -i "$T/$f.data" 2>/dev/null | awk -v mode=perf -f "$norm" | sort >"$T/$f.perf"
    "$PGOKIT" dump "$T/$f.data" >"$T/$f.dump" 2>"$T/$f.err"
    check "dump $f.data exits 0" test $? -eq 0
    awk -v mode=pk -f "$norm" "$T/$f.dump" | sort >"$T/$f.pk"
    n=$(grep -c '^S ' "$T/$f.perf")
    check "perf shows samples with call chains in $f.data ($n)" test "$n" -gt 50 -a "$(awk '/^S / && NF > 8' "$T/$f.perf" | wc -l)" -gt 20
    check "$f.data has MMAP2/COMM/FORK/EXIT" test "$(grep -cE '^PERF_RECORD_(MMAP2|COMM|FORK|EXIT)' "$T/$f.perf")" -ge 6
    if cmp -s "$T/$f.perf" "$T/$f.pk"; then pass "$f.data: every sample and event equals perf's"
    else fail "$f.data differs from perf -D: $(diff "$T/$f.perf" "$T/$f.pk" | head -5)"; fi
done
# two events: every sample tied to the right attr by its id
perf script -F event -i "$T/m.data" 2>/dev/null | awk '{c[$1]++} END {printf "%d %d\n", c["cpu-clock:"], c["task-clock:"]}' >"$T/m.ev.perf"
awk '/^# attr [0-9]+:/ {a = $3; sub(":", "", a); for (i = 1; i <= NF; i++) if ($i == "ids") for (j = i + 1; j <= NF; j++) id2a[$j] = a}
     / ip 0x.* id [0-9]+$/ {c[id2a[$NF]]++} END {printf "%d %d\n", c[0], c[1]}' "$T/m.dump" >"$T/m.ev.pk"
check "m.data: two attrs read" test "$(grep -c '^# attr ' "$T/m.dump")" -eq 2
check_eq "m.data: samples per event (cpu-clock task-clock) as perf" "$(cat "$T/m.ev.perf")" "$(cat "$T/m.ev.pk")"
grep -q '^# mode: pipe' "$T/p.dump"; check "p.data read in pipe mode" test $? -eq 0
grep -q '^# mode: file, compressed' "$T/z.dump"; grep -q '^# mode: pipe, compressed' "$T/pz.dump"; check "pz.data read as pipe mode + compressed" test $? -eq 0
check "z.data read as compressed" test $? -eq 0
# the BUILD_ID feature comes before the records and names the test binary
bid=$(readelf -n "$T/loop" | awk '/Build ID/ {print $3}')
check "build-id of the test binary reported" grep -q "^BUILD_ID $bid .*/loop\$" "$T/f.dump"
# --stats counts match the listing
s=$("$PGOKIT" dump --stats "$T/f.data" | awk '/^# samples:/ {print $3}')
check_eq "--stats sample count" "$(grep -c '^S ' "$T/f.pk")" "$s"

# pipe mode through a real pipe (standard input) gives the same listing
cat "$T/p.data" | "$PGOKIT" dump - >"$T/pipe.dump" 2>"$T/pipe.err"
check "dump - (pipe) exits 0" test $? -eq 0
check "pipe listing equals file listing" cmp -s <(grep -v '^# pgokit dump' "$T/pipe.dump") <(grep -v '^# pgokit dump' "$T/p.dump")
# perf record writing straight into our reader
perf record -q -e cpu-clock -c 100000 --call-graph fp -o - "$T/loop" 2000 2>/dev/null | "$PGOKIT" dump --stats - >"$T/live.txt"
check "live perf pipe read" test "$(awk '/^# samples:/ {print $3}' "$T/live.txt")" -gt 0 2>/dev/null
finish
