#!/usr/bin/env bash
# report.sh — `pgokit report` end to end: profiles of profgen_demo.c
# (emulated LBR with exact counts; CSSPGO nested, flat CS, line-based) become
# HTML pages that headless Chromium loads with no console message; the
# script renders every chart and table (laid-out sizes read back from the
# DOM), a screenshot of each page is kept in build/test-output/report/, and
# the page's figures match the oracles: llvm-profdata-19's total count,
# `pgokit overlap --exact --json`, the profile's ShouldBeInlined callsites,
# and the source lines llvm-profdata-19 and llvm-dwarfdump-19 give. A
# synthetic 50,000-context profile renders in bounded time (printed).
source "$(dirname "$0")/../lib.sh"
need chromium clang-19 llvm-profdata-19 llvm-dwarfdump-19 qemu-x86_64 python3
PROG="$PK_ROOT/tests/programs"
HERE="$PK_ROOT/tests/e2e"
OUT="$PK_BUILD/test-output/report"
rm -rf "$OUT" && mkdir -p "$OUT"
CHROME=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync)
ud=0
# dom PAGE [#FRAGMENT] -> $T/PAGE.dom (the DOM after the page's script ran), $T/PAGE.log (console)
dom() {
    ud=$((ud + 1))
    timeout 60 "${CHROME[@]}" --user-data-dir="$T/ud$ud" --enable-logging=stderr --v=0 --window-size=1280,1000 \
        --dump-dom "file://$T/$1${2:-}" > "$T/$1.dom" 2> "$T/$1.log"
}
# shot PAGE -> $OUT/PAGE.png
shot() {
    ud=$((ud + 1))
    timeout 60 "${CHROME[@]}" --user-data-dir="$T/ud$ud" --window-size=1280,2400 --hide-scrollbars \
        --screenshot="$OUT/${1%.html}.png" "file://$T/$1" > /dev/null 2>&1
}
no_console() { ! grep -q 'CONSOLE' "$T/$1.log"; }
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && [ "$(stat -c %s "$1")" -gt 20000 ]; }
# no way for the page to load anything: no external element, no URL but the SVG namespace
self_contained() {
    ! grep -Eq '<(link|img|iframe|object|embed)[ >]|<script[^>]* src=|@import|url\(' "$T/$1" &&
    [ -z "$(grep -oE 'https?://[^"'\'' )]*' "$T/$1" | grep -vx 'http://www.w3.org/2000/svg')" ] &&
    grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$T/$1"
}
total_count() { llvm-profdata-19 show --sample --detailed-summary "$1" | sed -n 's/^Total count: //p'; }
exact_overlap() {
    "$PGOKIT" overlap --exact "$1" --binary "$2" --json "$3" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["block_overlap"])'
}

clang-19 -O2 -g -fpseudo-probe-for-profiling "$PROG/profgen_demo.c" -o "$T/demo_p"
clang-19 -O2 -g "$PROG/profgen_demo.c" -o "$T/demo_l"
check "record the probe build (emulated LBR, exact counts)" \
    "$PGOKIT" record --emulate -q -o "$T/p.data" --exact-counts "$T/p.exact" -- "$T/demo_p" 6
check "record the DWARF-only build" \
    "$PGOKIT" record --emulate -q -o "$T/l.data" --exact-counts "$T/l.exact" -- "$T/demo_l" 6
check "profgen CSSPGO (pre-inlined, nested)" "$PGOKIT" profgen -q --binary "$T/demo_p" --perf "$T/p.data" -o "$T/cs.prof" --format text
check "profgen flat CS" "$PGOKIT" profgen -q --binary "$T/demo_p" --perf "$T/p.data" -o "$T/flat.prof" --format text --no-preinline
check "profgen line-based" "$PGOKIT" profgen -q --binary "$T/demo_l" --perf "$T/l.data" -o "$T/line.prof" --format text

check "report CSSPGO against exact counts" "$PGOKIT" report -q "$T/cs.prof" --binary "$T/demo_p" --exact "$T/p.exact" -o "$T/cs.html"
check "report line-based against exact counts" "$PGOKIT" report -q "$T/line.prof" --binary "$T/demo_l" --exact "$T/l.exact" -o "$T/line.html"
check "report flat CS against the nested profile" "$PGOKIT" report -q "$T/flat.prof" --binary "$T/demo_p" --compare "$T/cs.prof" -o "$T/flat.html"
# the sanitizer build writes the same pages (ASan+UBSan clean, deterministic)
"$PGOKIT_SAN" report -q "$T/cs.prof" --binary "$T/demo_p" --exact "$T/p.exact" -o "$T/cs.san.html"
check_eq "ASan+UBSan build: CSSPGO report, exit status 0" 0 $?
check "ASan+UBSan build: the same page" cmp -s "$T/cs.html" "$T/cs.san.html"
"$PGOKIT_SAN" report -q "$T/line.prof" --binary "$T/demo_l" --exact "$T/l.exact" -o "$T/line.san.html"
check_eq "ASan+UBSan build: line-based report, exit status 0" 0 $?
check "ASan+UBSan build: the same page" cmp -s "$T/line.html" "$T/line.san.html"
for p in cs line flat; do
    check "$p.html is self-contained (nothing to load, CSP says so)" self_contained $p.html
done

# oracles for the figures in the pages
inl=$(python3 - "$T/cs.prof" <<'PY'
import sys
# callsites (indented) whose !Attributes has ShouldBeInlined (bit 2)
print(sum(1 for l in open(sys.argv[1]) if l.startswith("  ") and l.strip().startswith("!Attributes:")
          and int(l.split(":")[1]) & 2))
PY
)
echo "ShouldBeInlined callsites in cs.prof: $inl"
check "the nested profile has pre-inlined callsites" test "$inl" -gt 0
decl=$(llvm-dwarfdump-19 --name=run_vm "$T/demo_l" | sed -n 's/.*DW_AT_decl_line\t*(\([0-9]*\)).*/\1/p' | head -n 1)
llvm-profdata-19 show --sample --function=run_vm "$T/line.prof" > "$T/run_vm.txt"
python3 - "$T/run_vm.txt" "${decl:-0}" > "$T/run_vm.lines" <<'PY'
import re, sys
# the top-level body of run_vm: source line = decl line + offset; a line's
# count is the largest over its discriminators (offsets past 0x8000 are
# lines before the declaration, line 0 code: not shown)
decl, best, body = int(sys.argv[2]), {}, False
for l in open(sys.argv[1]):
    if l.startswith("Samples collected in the function's body"):
        body = True
    elif body and l.startswith("}"):
        break
    elif body:
        m = re.match(r"^  (\d+)(?:\.\d+)?: (\d+)", l)
        if m and int(m.group(1)) < 0x8000:
            line = decl + int(m.group(1))
            best[line] = max(best.get(line, 0), int(m.group(2)))
print("run_vm")
for k in sorted(best):
    print(k, best[k])
PY
check "oracle lines of run_vm from llvm-profdata-19 and llvm-dwarfdump-19" test "$(wc -l < "$T/run_vm.lines")" -gt 5

for p in cs line flat; do dom $p.html; shot $p.html; done
check "cs.html: no console message" no_console cs.html
check "cs.html renders, figures match the oracles" python3 "$HERE/report_dom.py" "$T/cs.html.dom" rendered \
    size:pk-icicle size:pk-functions-table size:pk-decisions-table size:pk-overlap-table size:source \
    "samples:$(total_count "$T/cs.prof")" "inlined:$inl" \
    "overlap:$(exact_overlap "$T/p.exact" "$T/demo_p" "$T/cs.prof")"
check "line.html: no console message" no_console line.html
check "line.html renders, figures and source lines match the oracles" python3 "$HERE/report_dom.py" "$T/line.html.dom" \
    rendered size:pk-icicle size:pk-functions-table size:pk-overlap-table size:source \
    "samples:$(total_count "$T/line.prof")" "overlap:$(exact_overlap "$T/l.exact" "$T/demo_l" "$T/line.prof")" \
    "lines:$T/run_vm.lines"
check "flat.html: no console message" no_console flat.html
check "flat.html renders" python3 "$HERE/report_dom.py" "$T/flat.html.dom" rendered size:pk-icicle size:source \
    size:pk-functions-table size:pk-overlap-table "samples:$(total_count "$T/flat.prof")"
for p in cs line flat; do
    check "screenshot $OUT/$p.png" is_png "$OUT/$p.png"
done

# scale: 50,000 contexts
python3 "$HERE/report_synth.py" 50000 "$T/big.prof"
t0=$(date +%s.%N)
check "report of a 50,000-context profile" "$PGOKIT" report -q "$T/big.prof" -o "$T/big.html"
t1=$(date +%s.%N)
echo "50,000 contexts: report written in $(echo "$t1 - $t0" | bc) s, $(stat -c %s "$T/big.html") bytes"
dom big.html '#pk-bench'   # the page also times three zooms of its icicle
shot big.html
check "big.html: no console message" no_console big.html
python3 "$HERE/report_dom.py" "$T/big.html.dom" rendered size:pk-icicle size:pk-functions-table 'nodes>=50000' \
    > "$T/big.check"; rc=$?
cat "$T/big.check"
check_eq "big.html renders its charts" 0 $rc
ms=$(sed -n 's/^render-ms: \([0-9.]*\).*/\1/p' "$T/big.check")
zms=$(sed -n 's/^render-ms: .* zoom-ms: \([0-9.]*\).*/\1/p' "$T/big.check")
echo "50,000 contexts: time to first render ${ms:-?} ms (since navigation start, in headless Chromium); icicle zoom ${zms:-?} ms"
check "50,000 contexts render in under 10 s" python3 -c "import sys; sys.exit(0 if 0 < float('${ms:-0}') < 10000 else 1)"
check "a zoom of the 50,000-context icicle takes under 2 s" python3 -c "import sys; sys.exit(0 if 0 < float('${zms:-0}') < 2000 else 1)"

# bad input: a clear error, no page
printf 'not a profile\0\1\2' > "$T/junk.prof"
"$PGOKIT" report "$T/junk.prof" -o "$T/junk.html" 2> "$T/junk.err"
check_eq "not a profile: exit status 1" 1 $?
check "not a profile: the error names the file" grep -q "junk.prof" "$T/junk.err"
check "not a profile: no page written" test ! -e "$T/junk.html"
"$PGOKIT" report "$T/cs.prof" --exact "$T/p.exact" -o "$T/x.html" 2> /dev/null
check_eq "--exact without --binary: usage error" 2 $?
"$PGOKIT" report "$T/cs.prof" --binary "$T/demo_l" --exact "$T/p.exact" -o "$T/x.html" 2> "$T/wrong.err"
check_eq "exact counts of another binary: exit status 1" 1 $?
check "exact counts of another binary: no page written" test ! -e "$T/x.html"
finish
