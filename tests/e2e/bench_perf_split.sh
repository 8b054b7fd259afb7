#!/usr/bin/env bash
# bench/perf_split.c (the fleet benchmark's cutter, bench/store_sparse_fleet.sh)
# on emulated recordings of a fixture, IP + stacks and LBR + stacks: N
# pieces, each a perf.data that perf script reads, the pieces' samples add up
# to the recording's (pgokit dump --stats), every piece's size near
# MIN..MAX, and profgen --perf of all the pieces is byte for byte profgen
# --perf of the whole recording (every sample in exactly one piece, each
# piece mapped). Bad arguments and a missing input fail with a message.
source "$(dirname "$0")/../lib.sh"
need clang-19 perf qemu-x86_64
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: the QEMU plugin is not built"; exit 77; }
cd "$T" || exit 1
cc -O2 -D_GNU_SOURCE -I"$PK_ROOT/src" -o split "$PK_ROOT/bench/perf_split.c" "$PK_ROOT/build/libpgokit.a" \
    $(pkg-config --libs sqlite3 libpq) -lZydis -lzstd -lz -lpthread -lm || { fail "build perf_split"; finish; exit 1; }
clang-19 -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fpseudo-probe-for-profiling \
    "$PK_ROOT/tests/programs/profgen_recurse.c" -o prog || { fail "build fixture"; finish; exit 1; }
samples() { "$PGOKIT" dump --stats "$1" | awk '/^# samples:/ {print $3}'; }

for mode in ip lbr; do
    opt=(); [ $mode = ip ] && opt=(--ip)
    "$PGOKIT" record --emulate "${opt[@]}" -q --period 997 -o $mode.data -- ./prog 300 >/dev/null 2>&1
    check "$mode: recorded" test -s $mode.data
    total=$(samples $mode.data)
    n=12 lo=$((total / 20)) hi=$((total / 10))
    mkdir -p $mode.pieces
    out=$(./split $mode.data $mode.pieces $n $lo $hi 7)
    check "$mode: split exits 0" test $? -eq 0
    check_eq "$mode: $n pieces written" $n "$(ls $mode.pieces/host-*.data | wc -l)"
    read -r t mn mx <<<"$out"
    check_eq "$mode: the printed total is the recording's samples" "$total" "$t"
    sum=0 args=() sizes_ok=1
    for f in $mode.pieces/host-*.data; do
        k=$(samples "$f")
        sum=$((sum + k))
        [ "$k" -ge "$mn" ] && [ "$k" -le "$mx" ] || sizes_ok=0
        args+=(--perf "$f")
    done
    check_eq "$mode: the pieces' samples add up to the recording's" "$total" "$sum"
    check "$mode: every piece within the printed min..max" test $sizes_ok = 1
    check "$mode: min..max near the drawn $lo..$hi (scaled to the total)" \
        test "$mn" -ge $((lo / 2)) -a "$mx" -le $((hi * 2))
    check "$mode: perf script reads a piece" sh -c "perf script -i $mode.pieces/host-00005.data 2>/dev/null | grep -q prog"
    "$PGOKIT" profgen -q --binary prog --perf $mode.data -o whole.prof &&
        "$PGOKIT" profgen -q --binary prog "${args[@]}" -o pieces.prof
    check "$mode: profgen of all pieces == profgen of the recording (cmp)" cmp whole.prof pieces.prof
done

./split ip.data ip.pieces 0 1 2 2>err.txt
check_eq "N 0 refused" 2 $?
check "... with a message" grep -q 'want N > 0' err.txt
./split ip.data ip.pieces 1000000 1 2 2>err.txt
check "more pieces than samples refused" grep -q 'fewer than' err.txt
./split missing.data ip.pieces 3 1 2 2>err.txt
check "a missing input fails naming it" grep -q 'missing.data' err.txt
finish
