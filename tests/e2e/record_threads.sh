#!/usr/bin/env bash
# `pgokit record` on a program with threads and a fork()ed child: each
# thread gets its own branch stacks (FORK records announce them); the child,
# forked while the workers run, records itself (its own pid, its FORK record)
# and leaves the parent's samples intact (more in record_forks.sh).
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 perf clang-19
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

clang-19 -O2 -g -pthread -o "$T/thr" "$PK_ROOT/tests/programs/record_threads.c" || { fail "build"; finish; exit; }
native=$("$T/thr" | sort)
out=$("$PGOKIT" record --emulate -q --period 2003 -o "$T/t.data" --exact-counts "$T/t.exact" -- "$T/thr" | sort)
check_eq "output of parent and child unchanged" "$native" "$out"
perf script -i "$T/t.data" -F pid,tid,ip,brstack > "$T/s.txt" 2> "$T/s.err"
check "perf script reads it without warnings" test ! -s "$T/s.err"
pids=$(awk 'NF && $1 ~ /^[0-9]+\/[0-9]+$/ {split($1, a, "/"); print a[1]}' "$T/s.txt" | sort -u | wc -l)
tids=$(awk 'NF && $1 ~ /^[0-9]+\/[0-9]+$/ {split($1, a, "/"); print a[2]}' "$T/s.txt" | sort -u | wc -l)
check_eq "samples come from two processes (the fork child records too)" 2 "$pids"
check "samples come from the main thread and both workers ($tids threads)" test "$tids" -ge 3
perf script -i "$T/t.data" --show-task-events -F pid,tid > "$T/tasks.txt" 2>/dev/null
check "worker threads are announced with FORK records" test "$(grep -c PERF_RECORD_FORK "$T/tasks.txt")" -ge 2
perf script -i "$T/t.data" -F ip,sym > "$T/sym.txt" 2>/dev/null
check "the workers' loop is sampled" grep -q ' spin' "$T/sym.txt"
check "exact counts written by the parent only, and readable" \
    bash -c "'$PGOKIT' record --print-exact '$T/t.exact' | grep -q '^binary $T/thr '"

# execve() replaces QEMU: the plugin must commit perf.data before it happens.
"$PGOKIT" record --emulate -q -o "$T/x.data" -- /bin/sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; exec /bin/true'
check "perf.data committed when the program execs" test -s "$T/x.data"
check "the pre-exec samples are readable" bash -c "perf script -i '$T/x.data' -F ip,brstack 2>/dev/null | grep -q '0x.*/0x'"
check "no temporary file left behind" bash -c "! ls '$T'/x.data.tmp* 2>/dev/null"
finish
