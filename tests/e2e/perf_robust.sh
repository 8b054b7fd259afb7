#!/usr/bin/env bash
# perf_robust.sh — the reader under ASan+UBSan ($PGOKIT_SAN dump) on damaged
# copies of real recordings (plain and -z compressed): truncated at record
# boundaries and at random offsets (must fail with exit 1 and an error naming
# the file and an offset), and with sizes, types and random bytes corrupted
# (must exit 0 or 1, never crash or trip a sanitizer).
source "$(dirname "$0")/../lib.sh"
need perf gcc awk dd od
SAN=$PGOKIT_SAN
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1 || { echo "skipped: perf record cannot sample here (perf_event_paranoid?)"; exit 77; }
gcc -O2 -g -fno-omit-frame-pointer -pthread "$PK_ROOT/tests/programs/perf_loop.c" -o "$T/loop" || { fail "build"; finish; exit 1; }
perf record -q -e cpu-clock -c 200000 --call-graph fp -o "$T/f.data" "$T/loop" 4000 >/dev/null 2>&1
perf record -q -z -e cpu-clock -c 200000 --call-graph fp -o "$T/z.data" "$T/loop" 4000 >/dev/null 2>&1
check "recordings made" test -s "$T/f.data" -a -s "$T/z.data"
RANDOM=12345

u64() { od -An -tu8 -j "$2" -N 8 "$1" | tr -d ' '; }
u16() { od -An -tu2 -j "$2" -N 2 "$1" | tr -d ' '; }
san() { # FILE -> sets rc, out
    "$SAN" dump --stats "$1" >/dev/null 2>"$T/err"
    rc=$?
}
bad_report() { grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$T/err"; }

for f in f z; do
    src="$T/$f.data"
    size=$(stat -c %s "$src")
    doff=$(u64 "$src" 40); dsize=$(u64 "$src" 48)
    san "$src"
    check "[$f] intact file reads under the sanitizers" test $rc -eq 0
    # record boundaries of the data section (outer records: COMPRESSED ones for -z)
    bounds=()
    pos=$doff; end=$((doff + dsize))
    while [ $pos -lt $end ] && [ ${#bounds[@]} -lt 4000 ]; do
        bounds+=("$pos")
        s=$(u16 "$src" $((pos + 6)))
        [ "$s" -ge 8 ] || break
        pos=$((pos + s))
    done
    check "[$f] walked the data section to its end" test $pos -eq $end
    # cuts: up to 120 boundaries (spread), the data end, 50 random offsets
    cuts=()
    step=$(( (${#bounds[@]} + 119) / 120 ))
    for ((i = 1; i < ${#bounds[@]}; i += step)); do cuts+=("${bounds[$i]}"); done
    cuts+=("$end" $((end + 8)) $((size - 1)) 0 7 15 104)
    for ((i = 0; i < 50; i++)); do cuts+=($(( (RANDOM * 32768 + RANDOM) % size ))); done
    nfail=0; ncrash=0; nooff=0
    for c in "${cuts[@]}"; do
        head -c "$c" "$src" >"$T/cut.data"
        san "$T/cut.data"
        if bad_report || [ $rc -ge 2 ]; then ncrash=$((ncrash + 1)); echo "crash/rc=$rc at cut $c: $(head -3 "$T/err")"
        elif [ $rc -ne 1 ]; then nfail=$((nfail + 1)); echo "cut at $c: exit $rc"
        elif ! grep -q "cut.data: .*offset [0-9]" "$T/err"; then nooff=$((nooff + 1)); echo "cut at $c: $(cat "$T/err")"; fi
    done
    check "[$f] ${#cuts[@]} truncated copies: no crash" test $ncrash -eq 0
    check "[$f] truncated copies all fail with exit 1" test $nfail -eq 0
    check "[$f] truncation errors name the file and an offset" test $nooff -eq 0
    # corruption: record sizes, record types, random bytes
    ncrash=0; nbad=0; runs=0
    for ((i = 0; i < 60; i++)); do
        cp "$src" "$T/bad.data"
        b=${bounds[$((RANDOM % ${#bounds[@]}))]}
        case $((i % 3)) in
        0) printf "$(printf '\\x%02x\\x%02x' $((RANDOM % 256)) $((RANDOM % 256)))" | dd of="$T/bad.data" bs=1 seek=$((b + 6)) conv=notrunc status=none ;;
        1) printf "$(printf '\\x%02x' $(( (RANDOM % 3) ? RANDOM % 100 : RANDOM % 256 )))" | dd of="$T/bad.data" bs=1 seek=$b conv=notrunc status=none ;;
        2) for k in 1 2 3 4; do
               printf "$(printf '\\x%02x' $((RANDOM % 256)))" | dd of="$T/bad.data" bs=1 seek=$(( (RANDOM * 32768 + RANDOM) % size )) conv=notrunc status=none
           done ;;
        esac
        san "$T/bad.data"; runs=$((runs + 1))
        if bad_report || [ $rc -ge 2 ]; then ncrash=$((ncrash + 1)); echo "corruption $i crashed (rc=$rc): $(head -3 "$T/err")"; cp "$T/bad.data" "$T/crash-$f-$i.data"; fi
        if [ $rc -eq 1 ] && ! grep -q "bad.data" "$T/err"; then nbad=$((nbad + 1)); echo "error without file name: $(cat "$T/err")"; fi
    done
    check "[$f] $runs corrupted copies: no crash, no sanitizer report" test $ncrash -eq 0
    check "[$f] corruption errors name the file" test $nbad -eq 0
done
finish
