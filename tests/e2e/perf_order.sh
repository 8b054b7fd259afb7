#!/usr/bin/env bash
# perf_order.sh — perf.data is consumed in time order. perf writes each CPU's
# buffer in turn, so a sample can precede, in file order, the COMM and MMAP2
# of the exec it ran in (never across a FINISHED_ROUND). Real emulated
# recordings (LBR of a PIE with a shared library; IP of a shell that runs the
# program twice) are written again with the project's writer, once as read
# (time order) and once with, inside each round, the samples before the
# COMM / MMAP2 / FORK / EXIT records (perf report -D shows samples of the
# program before its MMAP2). Both must give the same profile (LBR and IP),
# the same raw profile, the same pprof (go tool pprof -top) and the same
# closing summary of record; nothing lands on <unknown>.
# Then stock perf recordings of three processes on the machine's CPUs, until
# one has samples before the MMAP2 of their program in file order (perf
# writes one CPU's buffer after another's; about one in six here): pgokit's
# samples per program equal perf report's.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 perf clang-19 gcc go
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
export HOME="$T/home" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on
mkdir -p "$HOME"

P=$PK_ROOT/tests/programs
clang-19 -O2 -g -fPIC -shared -o "$T/librecord_lib.so" "$P/record_lib.c" &&
clang-19 -O2 -g -fPIE -pie -fno-omit-frame-pointer -o "$T/prog" "$P/record_prog.c" \
    -L"$T" -lrecord_lib -Wl,-rpath,"$T" || { fail "build test program"; finish; exit; }
gcc -D_GNU_SOURCE -I"$PK_ROOT/src" -O1 "$P/perf_reorder.c" "$PK_BUILD/libpgokit.a" \
    -lZydis -lzstd -lz -lpthread -lm -lsqlite3 -lpq -lprotobuf-c -o "$T/reorder" ||
    { fail "build perf_reorder"; finish; exit; }

"$PGOKIT" record --emulate -q --period 997 -o "$T/lbr.data" -- "$T/prog" 30000 >/dev/null
check "emulated LBR recording" test -s "$T/lbr.data"
"$PGOKIT" record --emulate --ip -q --period 997 -o "$T/sh.data" -- \
    /bin/sh -c "'$T/prog' 20000 >/dev/null && '$T/prog' 10000 >/dev/null"
check "emulated IP recording of a shell running the program twice" test -s "$T/sh.data"

for f in lbr sh; do
    "$T/reorder" copy "$T/$f.data" "$T/$f.time" >/dev/null
    "$T/reorder" shuffle "$T/$f.data" "$T/$f.shuf" >"$T/$f.shuf.log"
    check "$f: rewritten in time order and shuffled inside rounds" test -s "$T/$f.time" -a -s "$T/$f.shuf"
    # the oracle: perf report -D gives each record's file offset
    perf report -D -i "$T/$f.shuf" 2>/dev/null >"$T/$f.D"
    pid=$(awk '/PERF_RECORD_MMAP2 .*\/prog$/ { split($5, a, "/"); print a[1]; exit }' "$T/$f.D")
    moff=$(awk -v p="$pid/" '/PERF_RECORD_MMAP2 .*\/prog$/ && index($5, p) == 1 { print $2; exit }' "$T/$f.D")
    early=0
    for o in $(awk -v p="$pid/" '/PERF_RECORD_SAMPLE/ && index($0, ": " p) { print $2 }' "$T/$f.D"); do
        [ -n "$moff" ] && [ $((o)) -lt $((moff)) ] && early=$((early + 1))
    done
    check "$f: in file order, $early samples of the program precede its MMAP2 at $moff (perf report -D)" \
        test "$early" -gt 0

    # profiles
    for k in time shuf; do
        "$PGOKIT" profgen --binary "$T/prog" --perf "$T/$f.$k" --format text -o "$T/$f.$k.prof" 2>"$T/$f.$k.err"
        "$PGOKIT" profgen --binary "$T/prog" --perf "$T/$f.$k" --raw-only -o "$T/$f.$k.raw" 2>/dev/null
        "$PGOKIT" convert "$T/$f.$k" -o "$T/$f.$k.pb.gz" 2>/dev/null
        timeout 120 go tool pprof -top "$T/$f.$k.pb.gz" 2>/dev/null | grep -v 'pgokit convert from' >"$T/$f.$k.top"
        "$T/reorder" tally "$T/$f.$k" >"$T/$f.$k.tally"
    done
    check "$f: a profile of the time-ordered records" test -s "$T/$f.time.prof"
    check "$f: profile identical" cmp -s "$T/$f.time.prof" "$T/$f.shuf.prof"
    check "$f: raw profile identical" cmp -s "$T/$f.time.raw" "$T/$f.shuf.raw"
    check "$f: go tool pprof -top read it" grep -q 'flat%' "$T/$f.time.top"
    check "$f: go tool pprof -top identical" cmp -s "$T/$f.time.top" "$T/$f.shuf.top"
    check "$f: no sample on <unknown>" bash -c "! grep -q '<unknown>' '$T/$f.shuf.top'"
    check "$f: record's summary identical" cmp -s "$T/$f.time.tally" "$T/$f.shuf.tally"
done
# the shell ran the program twice: two execs, each named after its program
check_eq "sh: both execs of the program are credited to prog" 2 "$(grep -c '^prog\[' "$T/sh.shuf.tally")"
# (before its exec a forked shell may take a sample or two, as in perf)
check "sh: the samples after each exec are not credited to sh" awk -F'[][ ]' '
    $1 == "prog" { prog[$2] = 1 } $1 == "sh" { sh[$2] = $4 }
    END { for (p in prog) if (sh[p] > 9) exit 1 }' "$T/sh.shuf.tally"

# ---- real perf recordings ----
if perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1; then
    clang-19 -O2 -g -fno-omit-frame-pointer "$PK_ROOT/tests/programs/record_ip.c" -o "$T/rip" -lpthread
    found=
    for i in $(seq 20); do
        perf record -q -e cpu-clock -c 100000 --call-graph fp -o "$T/real.data" -- \
            sh -c "'$T/rip' 0.2 & '$T/rip' 0.2 & '$T/rip' 0.1; wait" >/dev/null 2>&1
        early=$(python3 "$PK_ROOT/tests/e2e/perf_early_samples.py" "$T/real.data")
        [ "${early:-0}" -gt 0 ] && { found=$i; break; }
    done
    if [ -n "$found" ]; then
        echo "note: recording $found has $early samples before the MMAP2 of their program"
        # perf's share of the program, and ours (record's summary)
        want=$(perf report -i "$T/real.data" --sort comm --stdio -g none 2>/dev/null | awk '$NF == "rip" {print $1; exit}')
        "$T/reorder" tally "$T/real.data" >"$T/real.tally"
        got=$(awk 'NR == 1 {n = $2} /^rip\[/ {s += $2} END {printf "%.2f%%", 100 * s / n}' "$T/real.tally")
        check_eq "real recording: samples of the program, as perf report counts them" "$want" "$got"
        "$PGOKIT" convert "$T/real.data" -o "$T/real.pb.gz" 2>/dev/null
        check "real recording: no sample on <unknown> (go tool pprof -top)" \
            bash -c "timeout 120 go tool pprof -top '$T/real.pb.gz' 2>/dev/null | grep -q ip_hot && ! timeout 120 go tool pprof -top '$T/real.pb.gz' 2>/dev/null | grep -q '<unknown>'"
    else
        echo "note: no recording with samples before their MMAP2 in 20 tries; that part is skipped"
    fi
else
    echo "note: perf cannot sample here; the real-recording part is skipped"
fi
finish
