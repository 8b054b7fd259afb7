#!/usr/bin/env bash
# rt_merge.sh — raw temporal profiles → indexed temporal profile: coverage and
# count merging, reservoir sampling (limits, determinism), merging indexed
# profiles, and bad inputs (truncated, corrupt, wrong build-id, leftovers of a
# killed dump): clear errors, no partial output, --skip-bad merges the rest.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12

RT_A=$PK_BUILD/libpgokit_rt.a
TOOL=$PK_BUILD/rt-temporal-tool
TOOL_SAN=$PK_BUILD/san/rt-temporal-tool
if "$PGOKIT" show --temporal --help 2>/dev/null | grep -q "raw temporal profile"; then
  TOOL=$PGOKIT; TOOL_SAN=$PGOKIT_SAN
fi
[ -f "$RT_A" ] && [ -x "$TOOL" ] || { echo "skipped: runtime or tool not built"; exit 77; }
[ -x "$TOOL_SAN" ] || TOOL_SAN=$TOOL
SRC=$PK_ROOT/tests/programs

clang-19 -O2 -g -pg -mfentry -o "$T/prog" "$SRC/rt_order.c" "$SRC/rt_order_b.c" "$RT_A" -lpthread -Wl,--build-id
gcc-12 -O2 -g -pg -mfentry -o "$T/other" "$SRC/rt_order.c" "$SRC/rt_order_b.c" "$RT_A" -lpthread -Wl,--build-id
mkdir -p "$T/runs" "$T/counts"
for i in 1 2 3 4 5; do
  (cd "$T" && PGOKIT_RT_FILE="$T/runs/r%p.pgoraw" ./prog > /dev/null)
done
for i in 1 2; do
  (cd "$T" && PGOKIT_RT_MODE=count PGOKIT_RT_FILE="$T/counts/c%p.pgoraw" ./prog > /dev/null)
done
check_eq "5 runs + 5 forked children = 10 raw profiles" 10 "$(ls "$T/runs" | wc -l)"

hdr() { "$TOOL" show "$1" | sed -n 2p; }
fn() { "$TOOL" show --functions "$1" | awk -v f="$2" -v c="$3" '$1 == "func" && $7 == f {print $c}'; }

# ---- basic merge of a directory ----
check "merge a directory" "$TOOL" merge --temporal --binary "$T/prog" -o "$T/all.pgotemporal" -q "$T/runs"
# a fully stripped binary: symbols (and the STT_FILE names of local ones) from its debug file
objcopy --only-keep-debug "$T/prog" "$T/prog.debug"
objcopy --strip-all "$T/prog" "$T/prog.stripped"
"$TOOL" merge --temporal --binary "$T/prog.stripped" --debug-binary "$T/prog.debug" -o "$T/stripped.pgotemporal" \
  "$T/runs" 2> "$T/stripped.err"
check "stripped binary + --debug-binary: the same indexed profile" cmp -s "$T/all.pgotemporal" "$T/stripped.pgotemporal"
check "stripped binary: merge names the debug file" grep -q "debug info: $T/prog.debug (--debug-binary)" "$T/stripped.err"
check_eq "header" "runs 10 traces 10 seen 10 reservoir 100 max-length 10000" \
  "$(hdr "$T/all.pgotemporal" | awk '{print $1,$2,$3,$4,$5,$6,$7,$8,$9,$10}')"
check_eq "coverage of main (parents only)" 5 "$(fn "$T/all.pgotemporal" main 3)"
check_eq "coverage of child_only (children only)" 5 "$(fn "$T/all.pgotemporal" child_only 3)"
check_eq "never_called is absent" "" "$(fn "$T/all.pgotemporal" never_called 3)"
check_eq "local names stay distinct" "rt_order.c:helper rt_order_b.c:helper" \
  "$("$TOOL" show --functions "$T/all.pgotemporal" | awk '$7 ~ /:helper$/ {print $7}' | sort | xargs)"
first=$("$TOOL" show --traces "$T/all.pgotemporal" | grep -m1 ': main ' | cut -d: -f2 | awk '{print $1,$2,$3}')
check_eq "a parent's trace starts main alpha beta" "main alpha beta" "$first"

# ---- counts ----
check "merge counting-mode runs" "$TOOL" merge --binary "$T/prog" -o "$T/cnt.pgotemporal" -q "$T/counts"
check_eq "counts flag" yes "$(hdr "$T/cnt.pgotemporal" | awk '{print $14}')"
check_eq "summed entry count of counted" 2000 "$(fn "$T/cnt.pgotemporal" counted 4)"
check_eq "summed entry count of t_work2" 20000 "$(fn "$T/cnt.pgotemporal" t_work2 4)"

# ---- reservoir: limits and determinism ----
"$TOOL" merge --binary "$T/prog" --reservoir 3 --max-trace-len 4 -o "$T/r1.pgotemporal" -q "$T/runs" "$T/counts"
"$TOOL" merge --binary "$T/prog" --reservoir 3 --max-trace-len 4 -o "$T/r2.pgotemporal" -q "$T/runs" "$T/counts"
check "same inputs give the same bytes" cmp -s "$T/r1.pgotemporal" "$T/r2.pgotemporal"
check_eq "reservoir keeps 3 of 14" "traces 3 seen 14" "$(hdr "$T/r1.pgotemporal" | awk '{print $3,$4,$5,$6}')"
check_eq "traces truncated to 4" "" "$("$TOOL" show --traces "$T/r1.pgotemporal" | awk '$1=="trace" && $6+0 > 4')"
check_eq "coverage still counts every run" 7 "$(fn "$T/r1.pgotemporal" main 3)"

# ---- merging indexed profiles (and mixing with raw) ----
check "indexed + indexed" "$TOOL" merge -o "$T/twice.pgotemporal" -q "$T/all.pgotemporal" "$T/all.pgotemporal"
check_eq "indexed + indexed header" "runs 20 traces 20 seen 20" "$(hdr "$T/twice.pgotemporal" | awk '{print $1,$2,$3,$4,$5,$6}')"
check_eq "indexed + indexed coverage" 10 "$(fn "$T/twice.pgotemporal" main 3)"
"$TOOL" merge --binary "$T/prog" --reservoir 5 -o "$T/s1.pgotemporal" -q "$T/all.pgotemporal" "$T/counts"
check_eq "saturated reservoir after mixing" "runs 14 traces 5 seen 14" "$(hdr "$T/s1.pgotemporal" | awk '{print $1,$2,$3,$4,$5,$6}')"

# ---- bad inputs ----
mkdir -p "$T/bad"
cp "$T"/runs/*.pgoraw "$T/bad/"
one=$(ls "$T/runs" | head -1)
head -c 100 "$T/runs/$one" > "$T/bad/trunc.pgoraw"
cp "$T/runs/$one" "$T/bad/flip.pgoraw"
printf '\x55' | dd of="$T/bad/flip.pgoraw" bs=1 seek=200 conv=notrunc 2>/dev/null
head -c 40 /dev/urandom > "$T/bad/junk.pgoraw"
cp "$T/runs/$one" "$T/bad/leftover.pgoraw.tmp.123"   # never picked up from a directory
"$TOOL" merge --binary "$T/prog" -o "$T/bad.pgotemporal" "$T/bad" 2> "$T/bad.err"
check_eq "any bad input fails the merge" 1 $?
check "nothing written" test ! -e "$T/bad.pgotemporal"
check "truncated file reported with offset" grep -q "trunc.pgoraw: offset 16: truncated" "$T/bad.err"
check "corrupt file reported" grep -q "flip.pgoraw: offset 24: checksum mismatch" "$T/bad.err"
check "garbage reported" grep -q "junk.pgoraw" "$T/bad.err"
check "no temporary left behind" bash -c "! ls '$T'/bad.pgotemporal.tmp* 2>/dev/null | grep -q ."
"$TOOL" merge --binary "$T/prog" --skip-bad -o "$T/skip.pgotemporal" "$T/bad" 2> "$T/skip.err"
check_eq "--skip-bad merges the good ones" 0 $?
check_eq "--skip-bad: 10 good runs" "runs 10" "$(hdr "$T/skip.pgotemporal" | awk '{print $1,$2}')"
check_eq "--skip-bad: 3 warnings" 3 "$(grep -c 'warning: skipped' "$T/skip.err")"

"$TOOL" merge --binary "$T/other" -o "$T/mis.pgotemporal" "$T/runs/$one" 2> "$T/mis.err"
check_eq "wrong binary refused" 1 $?
check "build-id mismatch named" grep -q "build-id mismatch" "$T/mis.err"
"$TOOL" show --binary "$T/other" "$T/runs/$one" > /dev/null 2> "$T/mis2.err"
check "show refuses a wrong binary too" grep -q "build-id mismatch" "$T/mis2.err"
"$TOOL" merge -o "$T/x.pgotemporal" "$T/runs/$one" 2> "$T/nobin.err"
check "raw input without --binary is a clear error" grep -q "needs --binary" "$T/nobin.err"

# corrupt indexed profiles, under the sanitizer build
sz=$(stat -c %s "$T/all.pgotemporal")
head -c $((sz - 3)) "$T/all.pgotemporal" > "$T/cut.pgotemporal"
cp "$T/all.pgotemporal" "$T/flip.pgotemporal"
printf '\x01' | dd of="$T/flip.pgotemporal" bs=1 seek=170 conv=notrunc 2>/dev/null
for f in cut flip; do
  "$TOOL_SAN" show "$T/$f.pgotemporal" > /dev/null 2> "$T/$f.err"
  check_eq "$f indexed profile: clean failure (sanitizer build)" 1 $?
done
check "cut indexed profile: truncated" grep -q "offset 16: truncated" "$T/cut.err"
check "flipped indexed profile: checksum" grep -q "offset 24: checksum mismatch" "$T/flip.err"
for f in trunc flip junk; do
  "$TOOL_SAN" show "$T/bad/$f.pgoraw" > /dev/null 2> "$T/san-$f.err"
  check_eq "bad raw $f: clean failure (sanitizer build)" 1 $?
done
"$TOOL_SAN" show --binary "$T/prog" "$T/runs/$one" > "$T/san-ok.out"
check_eq "good raw under the sanitizer build" 0 $?
"$TOOL_SAN" merge --binary "$T/prog" -q -o "$T/san.pgotemporal" "$T/runs" "$T/counts"
check "merge under the sanitizer build" cmp -s <("$TOOL" show "$T/san.pgotemporal" | tail -n +2) \
  <("$TOOL" merge --binary "$T/prog" -q -o "$T/nosan.pgotemporal" "$T/runs" "$T/counts" && "$TOOL" show "$T/nosan.pgotemporal" | tail -n +2)
finish
