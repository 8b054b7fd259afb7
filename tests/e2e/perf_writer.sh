#!/usr/bin/env bash
# perf_writer.sh — files from our perf.data writer read by the oracle perf:
# branch stacks (with and without hw_idx) made of real branch pairs of a test
# binary (from objdump), call chains, a build-id MMAP2 and the BUILD_ID
# feature. perf script -F ip,brstack and perf script -D must read them without
# warnings, and print exactly the entries, call chains and events we wrote.
source "$(dirname "$0")/../lib.sh"
need perf gcc objdump readelf awk
norm="$PK_ROOT/tests/e2e/perf_norm.awk"

gcc -O2 -g -fno-omit-frame-pointer -no-pie -pthread "$PK_ROOT/tests/programs/perf_loop.c" -o "$T/loop" &&
gcc -D_GNU_SOURCE -I"$PK_ROOT/src" -O2 -g "$PK_ROOT/tests/programs/perf_synth.c" "$PK_BUILD/libpgokit.a" \
    -lzstd -lz -lpthread -lm -o "$T/synth" || { fail "build fixtures"; finish; exit 1; }

read -r off vaddr <<<"$(readelf -lW "$T/loop" | awk '$1 == "LOAD" && $8 == "E" {print $2, $3}')"
bid=$(readelf -n "$T/loop" | awk '/Build ID/ {print $3}')
pairs=$(objdump -d --no-show-raw-insn "$T/loop" | awk '
    /^[0-9a-f]+ <(leaf|mid|work|main|thread_main)>:/ {f = 1} /^$/ {f = 0}
    f && $2 ~ /^(j[a-z]+|call)$/ && $3 ~ /^[0-9a-f]+$/ {sub(":", "", $1); printf "0x%s:0x%s ", $1, $3}')
check "found the text segment ($vaddr)" test -n "$vaddr"
check "found branch pairs in the test binary" test "$(wc -w <<<"$pairs")" -ge 8

for variant in c hc hcp; do
    out="$T/w-$variant.data"
    # shellcheck disable=SC2086
    "$T/synth" "$out" "$T/loop" "$vaddr" 0x1000 "$off" "$bid" 300 "$variant" $pairs
    check "[$variant] writer produced a file" test -s "$out"
    perf script -F ip,brstack -i "$out" >"$T/bs.txt" 2>"$T/bs.err"
    check "[$variant] perf script -F ip,brstack exits 0" test $? -eq 0
    check "[$variant] perf script prints no warnings" test ! -s "$T/bs.err"
    # perf prints one line per sample with entries "0xFROM/0xTO/P/-/-/cycles/"
    grep -oE '0x[0-9a-f]+/0x[0-9a-f]+' "$T/bs.txt" >"$T/bs.perf"
    "$PGOKIT" dump "$out" >"$T/dump.txt"
    grep -oE '0x[0-9a-f]+/0x[0-9a-f]+' "$T/dump.txt" >"$T/bs.pk"
    n=$(wc -l <"$T/bs.perf")
    check "[$variant] perf printed branch entries ($n)" test "$n" -ge 8000
    check "[$variant] perf's branch pairs equal ours" cmp -s "$T/bs.perf" "$T/bs.pk"
    # M/P flags and cycles as written (entry i: M if odd, cycles i+1)
    check "[$variant] flags and cycles" grep -q ' 0x[0-9a-f]*/0x[0-9a-f]*/P/-/-/1/  0x[0-9a-f]*/0x[0-9a-f]*/M/-/-/2/' "$T/bs.txt"
    # every field through perf's raw dump
    perf script -D -i "$out" 2>"$T/d.err" | awk -v mode=perf -f "$norm" | sort >"$T/d.perf"
    check "[$variant] perf script -D prints no warnings" test ! -s "$T/d.err"
    awk -v mode=pk -f "$norm" "$T/dump.txt" | sort >"$T/d.pk"
    check "[$variant] perf -D shows 300 samples" test "$(grep -c '^S ' "$T/d.perf")" -eq 300
    if cmp -s "$T/d.perf" "$T/d.pk"; then pass "[$variant] perf -D equals our reader (samples, chains, stacks, events)"
    else fail "[$variant] perf -D differs: $(diff "$T/d.perf" "$T/d.pk" | head -4)"; fi
    perf report -D -i "$out" >"$T/rd.txt" 2>"$T/rd.err"
    check "[$variant] perf report -D decodes 32-entry stacks" test "$(grep -c 'branch stack: nr:32' "$T/rd.txt")" -gt 200
    check "[$variant] perf buildid-list sees our build-id" grep -q "^$bid .*/loop\$" <(perf buildid-list -i "$out" 2>/dev/null)
    perf report --stdio -i "$out" >"$T/rep.txt" 2>"$T/rep.err"
    check "[$variant] perf report (branch mode) attributes to leaf" grep -q 'leaf' "$T/rep.txt"
done

# perf script text read back by our script reader, in both forms llvm-profgen
# takes: stack + LBR blocks (file with call chains) and LBR-only lines
# (file without), plus the MMAP2 line from --show-mmap-events.
# shellcheck disable=SC2086
"$T/synth" "$T/lbr.data" "$T/loop" "$vaddr" 0x1000 "$off" "$bid" 300 h $pairs
for v in w-hc lbr; do
    perf script -F ip,brstack --show-mmap-events -i "$T/$v.data" >"$T/$v.txt" 2>/dev/null
    "$PGOKIT" dump --script "$T/$v.txt" >"$T/$v.sd" 2>"$T/$v.sderr"
    check "[$v script] our script reader accepts perf's text" test $? -eq 0
    check_eq "[$v script] samples" 300 "$(awk '/^# samples:/ {print $3}' "$T/$v.sd")"
    check_eq "[$v script] mmaps" 1 "$(awk '/^# mmaps:/ {print $3}' "$T/$v.sd")"
    check "[$v script] mmap with our build-id" grep -q "@ 0x1000 <$bid>\]: r-xp $T/loop" "$T/$v.sd"
    "$PGOKIT" dump "$T/$v.data" | grep -oE '0x[0-9a-f]+/0x[0-9a-f]+' >"$T/$v.bin-pairs"
    grep -oE '0x[0-9a-f]+/0x[0-9a-f]+' "$T/$v.sd" >"$T/$v.txt-pairs"
    check "[$v script] branch pairs equal the binary reader's" cmp -s "$T/$v.bin-pairs" "$T/$v.txt-pairs"
done
# stack depth per sample: the binary file's chains minus the context marker
check_eq "[w-hc script] call-stack entries" \
    "$("$PGOKIT" dump "$T/w-hc.data" | grep -cP '^\t[0-9a-f]+$')" "$(grep -cP '^\t[0-9a-f]+$' "$T/w-hc.sd")"
# LBR-only lines carry the sample ip
check_eq "[lbr script] sample ips" "$("$PGOKIT" dump "$T/lbr.data" | grep -oP ': ip 0x[0-9a-f]+' | md5sum)" \
    "$(grep -oP ': ip 0x[0-9a-f]+' "$T/lbr.sd" | md5sum)"
# llvm-profgen (through perf script) turns our file into a profile of leaf's loop
if command -v llvm-profgen-19 >/dev/null && command -v llvm-profdata-19 >/dev/null; then
    loop_br=$(objdump -d --no-show-raw-insn "$T/loop" | awk '/<leaf>:/ {f = 1} /^$/ {f = 0}
        f && $2 ~ /^j/ && $3 ~ /^[0-9a-f]+$/ {sub(":", "", $1); print "0x" $1 ":0x" $3; exit}')
    "$T/synth" "$T/pg.data" "$T/loop" "$vaddr" 0x1000 "$off" "$bid" 200 h "$loop_br"
    (cd "$T" && llvm-profgen-19 --binary "$T/loop" --perfdata "$T/pg.data" --output "$T/pg.prof" >"$T/pg.log" 2>&1)
    check "llvm-profgen-19 reads our file" test -s "$T/pg.prof"
    check "its profile has samples in leaf" grep -qE '^ *Function: leaf' <(llvm-profdata-19 show --sample "$T/pg.prof" 2>/dev/null)
fi
# a damaged line is skipped, counted and named; the other samples are read
sed '5s|/0x|/0y|' "$T/lbr.txt" >"$T/bad.txt"
"$PGOKIT" dump --script "$T/bad.txt" >"$T/bad.out" 2>"$T/bad.err"
check "damaged script line: exit 0" test $? -eq 0
check "damaged script line: the warning names line 5" grep -q 'bad.txt: 1 lines skipped .*the first: line 5, column' "$T/bad.err"
check_eq "damaged script line: one sample fewer" \
    "$(($("$PGOKIT" dump --script "$T/lbr.txt" | sed -n 's/^# samples: //p') - 1))" \
    "$(sed -n 's/^# samples: //p' "$T/bad.out")"
finish
