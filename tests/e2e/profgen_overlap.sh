#!/usr/bin/env bash
# profgen_overlap.sh — `pgokit profgen` against the oracle llvm-profgen-19 on
# the same perf-script LBR input (synthesized from the test program's real
# control flow by bench/profgen_synth.py), then: the formats read back by
# llvm-profdata-19, clang-19 applies the profile, raw profiles round-trip and
# merge by addition, PIE relocation does not change the result, corrupt raw
# profiles fail cleanly.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 llvm-profdata-19 llvm-objdump-19 llvm-readelf-19 python3

SRC=$PK_ROOT/tests/programs/profgen_demo.c
SYNTH=$PK_ROOT/bench/profgen_synth.py
clang-19 -O2 -g -fdebug-info-for-profiling "$SRC" -o "$T/demo" || { fail "build demo"; finish; exit 1; }

python3 "$SYNTH" "$T/demo" "$T/s.txt" --samples 4000 --seed 3 --load-base 555555554000
python3 "$SYNTH" "$T/demo" "$T/s0.txt" --samples 4000 --seed 3 --load-base 0

llvm-profgen-19 --binary "$T/demo" --perfscript "$T/s.txt" --output "$T/ref.txt" --format=text \
    >"$T/ref.log" 2>&1
check "llvm-profgen-19 produced a profile" test -s "$T/ref.txt"

check "profgen text" "$PGOKIT" profgen --binary "$T/demo" --perfscript "$T/s.txt" -o "$T/ours.txt" --format text -q
check "profgen extbinary (default)" "$PGOKIT" profgen --binary "$T/demo" --perfscript "$T/s.txt" -o "$T/ours.prof" -q

# overlap with the oracle
llvm-profdata-19 overlap --sample "$T/ref.txt" "$T/ours.txt" >"$T/overlap.txt" 2>&1
sim=$(awk -F: '/Whole program profile similarity/ {gsub(/[ %]/, "", $2); print $2}' "$T/overlap.txt")
ovl=$(awk -F: '/Whole program sample overlap/ {gsub(/[ %]/, "", $2); print $2}' "$T/overlap.txt")
echo "overlap vs llvm-profgen-19: similarity ${sim:-?}%, sample overlap ${ovl:-?}%"
check "similarity >= 95% (${sim:-none})" awk -v x="${sim:-0}" 'BEGIN{exit !(x >= 95)}'
check "sample overlap >= 95% (${ovl:-none})" awk -v x="${ovl:-0}" 'BEGIN{exit !(x >= 95)}'

# the same per-byte totals and head samples as the oracle for the hottest function
top_ref=$(grep -m1 -E '^[^ ]' "$T/ref.txt")
grep -qxF "$top_ref" "$T/ours.txt" && pass "hottest function header identical ($top_ref)" ||
    fail "hottest function header: oracle '$top_ref', ours '$(grep -m1 -E '^[^ ]' "$T/ours.txt")'"

# extbinary reads back to the same profile as the text output
llvm-profdata-19 merge --sample --text "$T/ours.prof" -o "$T/ours.prof.txt" 2>"$T/m.err"
llvm-profdata-19 merge --sample --text "$T/ours.txt" -o "$T/ours.txt.txt" 2>>"$T/m.err"
check "extbinary == text (via llvm-profdata-19)" cmp -s "$T/ours.prof.txt" "$T/ours.txt.txt"

# clang applies it: entry counts and branch weights appear
clang-19 -O2 -g -fdebug-info-for-profiling -fprofile-sample-use="$T/ours.prof" -S -emit-llvm "$SRC" -o "$T/pgo.ll" 2>"$T/clang.err"
check "clang-19 attaches function_entry_count" grep -q 'function_entry_count' "$T/pgo.ll"
check "clang-19 attaches branch_weights" grep -q 'branch_weights' "$T/pgo.ll"

# PIE relocation: the same walk at another load address gives the same profile
"$PGOKIT" profgen --binary "$T/demo" --perfscript "$T/s0.txt" -o "$T/ours0.txt" --format text -q
check "load address does not change the profile" cmp -s "$T/ours.txt" "$T/ours0.txt"

# raw profiles: round trip, merge by addition
"$PGOKIT" profgen --binary "$T/demo" --perfscript "$T/s.txt" --raw-only -o "$T/a.raw" -q
check "raw profile written" test -s "$T/a.raw"
"$PGOKIT" profgen --binary "$T/demo" --raw "$T/a.raw" -o "$T/fromraw.txt" --format text -q
check "raw round trip gives the same profile" cmp -s "$T/ours.txt" "$T/fromraw.txt"
"$PGOKIT" profgen --binary "$T/demo" --raw "$T/a.raw" --raw "$T/a.raw" -o "$T/double.txt" --format text -q
llvm-profdata-19 merge --sample --text --weighted-input=2,"$T/ours.txt" -o "$T/double.ref.txt" 2>/dev/null
llvm-profdata-19 merge --sample --text "$T/double.txt" -o "$T/double.norm.txt" 2>/dev/null
check "merging a raw profile with itself doubles every count" cmp -s "$T/double.ref.txt" "$T/double.norm.txt"

# corrupt inputs: clear error, non-zero exit, no output file (sanitizer build)
PG=${PGOKIT_SAN:-$PGOKIT}; [ -x "$PG" ] || PG=$PGOKIT
head -c 100 "$T/a.raw" >"$T/trunc.raw"
"$PG" profgen --binary "$T/demo" --raw "$T/trunc.raw" -o "$T/bad.prof" 2>"$T/bad.err"; rc=$?
check_eq "truncated raw profile exits 1" 1 "$rc"
check "truncated raw profile names file and offset" grep -q 'trunc.raw: offset' "$T/bad.err"
check "no output after a failure" test ! -e "$T/bad.prof"
printf 'this is not a perf script\n' >"$T/bad.txt"
"$PG" profgen --binary "$T/demo" --perfscript "$T/bad.txt" -o "$T/bad.prof" 2>"$T/bad.err"; rc=$?
check_eq "malformed perf script exits 1" 1 "$rc"
check "no output after a malformed script" test ! -e "$T/bad.prof"
"$PG" profgen --binary "$T/demo" --raw "$T/a.raw" -o "$T/san.txt" --format text -q
check "sanitizer build gives the same profile" cmp -s "$T/ours.txt" "$T/san.txt"
finish
