#!/usr/bin/env bash
# afdo_preinlined.sh — AutoFDO profiles marked pre-inlined (profgen and
# convert --mark-preinlined, --mark-all-context-preinlined; the llvm-profgen
# drop-in's --mark-all-context-preinlined), on profgen_demo.c recorded under
# emulated LBR:
#   - llvm-profdata-19 reads the marks (summary flag preInlined; with every
#     context, ContextShouldBeInlined on each profile and inlinee) and the
#     counts are those of the unmarked profile;
#   - clang-19 compiles every source with the flagged profile to the same
#     object as with the unmarked profile plus the switches clang turns on
#     for a pre-inlined profile (profi, iterative BFI, ext-TSP, the priority
#     inliner and its limits), and to another object than the unmarked
#     profile alone: the mark is what switches them on;
#   - formats that cannot carry a mark, raw profiles and samples are
#     refused with an error, and nothing is written.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profdata-19 qemu-x86_64 cmp
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
CF="-O2 -g -fdebug-info-for-profiling"
SRC=$PK_ROOT/tests/programs/profgen_demo.c
clang-19 $CF "$SRC" -o "$T/demo" || fail "build"
"$PGOKIT" record --emulate -q -o "$T/p.data" -- "$T/demo" 6 >/dev/null 2>&1 || fail "record"

"$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/p.data" -o "$T/plain.prof"
"$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/p.data" --mark-preinlined -o "$T/flag.prof"
"$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/p.data" --mark-all-context-preinlined -o "$T/all.prof"
"$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/p.data" --mark-all-context-preinlined --format text -o "$T/all.txt"
for p in plain flag all; do check "$p profile written" test -s "$T/$p.prof"; done

sec_flags() { llvm-profdata-19 show --sample --show-sec-info-only "$1" | grep "^$2" | sed 's/.*Flags: //'; }
text() { llvm-profdata-19 merge --sample --text "$1" -o - ; }
check_eq "unmarked: no preInlined flag" "{}" "$(sec_flags "$T/plain.prof" ProfileSummarySection)"
check_eq "--mark-preinlined: the summary says preInlined" "{preInlined}" "$(sec_flags "$T/flag.prof" ProfileSummarySection)"
check_eq "--mark-all-context-preinlined: preInlined" "{preInlined}" "$(sec_flags "$T/all.prof" ProfileSummarySection)"
check_eq "--mark-all-context-preinlined: attributes in the metadata" "{attr}" "$(sec_flags "$T/all.prof" FunctionMetadata)"
text "$T/plain.prof" > "$T/plain.txt"
check_eq "--mark-preinlined: the same counts, no attribute" "$(cat "$T/plain.txt")" "$(text "$T/flag.prof")"
# every function and every inlinee ContextShouldBeInlined (2), as
# llvm-profdata reads the extbinary and the text alike
heads=$(grep -cE '^[^ !]|^ +[0-9.]+: [^0-9 ][^ ]*:[0-9]+$' "$T/plain.txt")
check "the profile has inlinees to mark" test "$(grep -cE '^ +[0-9.]+: [^0-9 ][^ ]*:[0-9]+$' "$T/plain.txt")" -gt 0
check_eq "extbinary: one ContextShouldBeInlined per profile and inlinee" "$heads" \
    "$(text "$T/all.prof" | grep -c '!Attributes: 2$')"
check_eq "text: one ContextShouldBeInlined per profile and inlinee" "$heads" "$(grep -c '!Attributes: 2$' "$T/all.txt")"
check_eq "text and extbinary say the same" "$(text "$T/all.prof")" "$(text "$T/all.txt")"
check_eq "without the attributes, the counts of the unmarked profile" "$(cat "$T/plain.txt")" \
    "$(text "$T/all.prof" | grep -v '!Attributes: 2$')"

# convert marks a profile made elsewhere (llvm-profdata's extbinary of the text)
llvm-profdata-19 merge --sample --extbinary "$T/plain.txt" -o "$T/llvm.prof"
"$PGOKIT" convert -q "$T/llvm.prof" --mark-preinlined -o "$T/conv.prof"
check_eq "convert --mark-preinlined: preInlined" "{preInlined}" "$(sec_flags "$T/conv.prof" ProfileSummarySection)"
check_eq "convert --mark-preinlined: the same counts" "$(cat "$T/plain.txt")" "$(text "$T/conv.prof")"
"$PGOKIT" convert -q "$T/llvm.prof" --mark-all-context-preinlined --format text -o "$T/conv.txt"
check_eq "convert --mark-all-context-preinlined: as profgen's" "$(cat "$T/all.txt")" "$(cat "$T/conv.txt")"

# the llvm-profgen drop-in takes llvm-profgen's spelling
"$PGOKIT" llvm-profgen --binary "$T/demo" --perfdata "$T/p.data" --ignore-stack-samples \
    --mark-all-context-preinlined --output "$T/dropin.prof" >/dev/null 2>&1
check_eq "llvm-profgen --mark-all-context-preinlined: preInlined" "{preInlined}" \
    "$(sec_flags "$T/dropin.prof" ProfileSummarySection)"
check "llvm-profgen --mark-all-context-preinlined: attributes" grep -q '!Attributes: 2$' <(text "$T/dropin.prof")

# refusals: an error naming why, exit 1 (profgen) or 2 (usage), nothing written
refused() { # NAME EXPECTED-RC PATTERN OUTPUT -- command...
    local name=$1 want=$2 pat=$3 out=$4; shift 5
    "$@" > /dev/null 2> "$T/refused.err"
    check_eq "$name: exit status" "$want" "$?"
    check "$name: says why" grep -q "$pat" "$T/refused.err"
    check "$name: nothing written" test ! -e "$out"
}
# convert --mark-preinlined=no unmarks a profile without contexts, and
# refuses a context-sensitive one (its mark holds its pre-inliner's decisions)
"$PGOKIT" convert -q "$T/flag.prof" --mark-preinlined=no -o "$T/unmarked.prof"
check "convert --mark-preinlined=no: the unmarked profile, byte for byte" cmp -s "$T/unmarked.prof" "$T/plain.prof"
"$PGOKIT" convert -q "$T/all.prof" --mark-preinlined=no --format text -o "$T/all-no.txt"
check_eq "convert --mark-preinlined=no: every attribute cleared" "$(cat "$T/plain.txt")" "$(cat "$T/all-no.txt")"
printf '[main]:30:0\n 3: 10 foo:10\n[main:3 @ foo]:20:10\n 1: 20\n !Attributes: 2\n' > "$T/cs.txt"
refused "convert --mark-preinlined=no of a context-sensitive profile" 1 "pre-inliner's decisions" "$T/cs.prof" -- \
    "$PGOKIT" convert -q "$T/cs.txt" --mark-preinlined=no -o "$T/cs.prof"
# the drop-ins keep their tools' behaviour: nothing marked unless asked
"$PGOKIT" llvm-profgen --binary "$T/demo" --perfdata "$T/p.data" --ignore-stack-samples --output "$T/ll.prof" \
    >/dev/null 2>&1
check_eq "llvm-profgen drop-in: unmarked, as llvm-profgen" "{}" "$(sec_flags "$T/ll.prof" ProfileSummarySection)"

# clang-19: the flag is the switches clang turns on for a pre-inlined profile
SWITCHES="-mllvm -sample-profile-use-profi -mllvm -use-iterative-bfi-inference
  -mllvm -enable-ext-tsp-block-placement -mllvm -sample-profile-prioritized-inline
  -mllvm -sample-profile-inline-size -mllvm -sample-profile-recursive-inline
  -mllvm -sample-profile-inline-limit-min=2147483647 -mllvm -sample-profile-inline-limit-max=2147483647
  -mllvm -sample-profile-use-preinliner"
obj() { # OUT PROFILE [extra flags]
    local out=$1 prof=$2; shift 2
    clang-19 $CF -fprofile-sample-use="$prof" "$@" -c "$SRC" -o "$T/$out.o" 2>"$T/$out.err" ||
        { cat "$T/$out.err" >&2; return 1; }
}
obj flag "$T/flag.prof" && obj switches "$T/plain.prof" $SWITCHES && obj plain "$T/plain.prof" ||
    fail "clang-19 with the profiles"
check "clang-19: flagged profile = unmarked profile + the CSSPGO switches" cmp -s "$T/flag.o" "$T/switches.o"
check "clang-19: the flag changes the code" bash -c "! cmp -s '$T/flag.o' '$T/plain.o'"
check_eq "clang-19: no warning with the flagged profile" "" "$(cat "$T/flag.err")"
obj all "$T/all.prof" || fail "clang-19 with every context marked"
check_eq "clang-19: no warning with every context marked" "" "$(cat "$T/all.err")"

refused "profgen --mark-preinlined --format gcc" 1 "gcc format cannot mark" "$T/x.afdo" -- \
    "$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/p.data" --mark-preinlined --format gcc -o "$T/x.afdo"
refused "profgen --mark-all-context-preinlined --format binary" 1 "binary format cannot mark" "$T/x.bin" -- \
    "$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/p.data" --mark-all-context-preinlined --format binary \
    -o "$T/x.bin"
refused "profgen --mark-preinlined --format text" 1 "needs extbinary" "$T/x.txt" -- \
    "$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/p.data" --mark-preinlined --format text -o "$T/x.txt"
refused "profgen --raw-only --mark-preinlined" 1 "cannot be marked pre-inlined" "$T/x.raw" -- \
    "$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/p.data" --raw-only --mark-preinlined -o "$T/x.raw"
refused "convert --mark-preinlined of samples" 2 "only a sample profile can be marked" "$T/x.pb.gz" -- \
    "$PGOKIT" convert -q "$T/p.data" --mark-preinlined -o "$T/x.pb.gz"
refused "convert --mark-preinlined --format text" 2 "needs extbinary" "$T/y.txt" -- \
    "$PGOKIT" convert -q "$T/llvm.prof" --mark-preinlined --format text -o "$T/y.txt"
finish
