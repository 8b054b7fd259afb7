#!/usr/bin/env bash
# What `pgokit llvm-profgen` prints besides the profile, checked against
# llvm-profgen-19, perf and the binaries (recordings of our fixtures):
#  - --help: llvm-profgen's layout (OVERVIEW, USAGE, the same option
#    categories as llvm-profgen-19's --help and no other), and every option
#    it lists is one the drop-in takes and llvm-profgen-19 has;
#  - --show-mmap-events: every mmap event of the recording, as perf script
#    --show-mmap-events lists them (same files, same addresses), the same
#    lines as llvm-profgen-19's on the same perf script, and the profile
#    still written;
#  - --show-detailed-warning: a recording (perf, frame-pointer call chains)
#    of code without frame pointers (tests/programs/profgen_nofp.c): one
#    warning per distinct return address that follows no call, the address
#    perf's chains hold and objdump shows after no call; none without the
#    flag; on emulated (exact) stacks none, as llvm-profgen-19;
#  - --debug-only=cs-preinliner: the contexts the trace says were inlined
#    are the contexts llvm-profgen-19's pre-inlined profile keeps, and
#    pgokit's own; with --use-context-cost-for-preinliner=false each
#    candidate's size is its number of body lines in the flat profile
#    (llvm-profgen-19 without pre-inliner); other debug types are refused.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 llvm-objdump-19 llvm-nm-19 perf qemu-x86_64 python3
src="$PK_ROOT/tests/programs/profgen_recurse.c"

# ---- --help
"$PGOKIT" llvm-profgen --help > "$T/help" 2>&1
check "--help: exit 0" "$PGOKIT" llvm-profgen --help
check "--help: OVERVIEW first, as llvm-profgen's" grep -q '^OVERVIEW: llvm SPGO profile generator' <(head -n 1 "$T/help")
check "--help: a USAGE line" grep -q '^USAGE: ' "$T/help"
headings() { grep -E '[Oo]ptions:' "$1" | grep -v '^OPTIONS:$'; }
llvm-profgen-19 --help > "$T/help.ll" 2>&1
check_eq "--help: llvm-profgen-19's option categories, in its order, no other" \
    "$(headings "$T/help.ll" | tr '\n' ' ')" "$(headings "$T/help" | tr '\n' ' ')"
# every option listed is taken (not refused by name) and is llvm-profgen-19's
# (known to its command line: most of its options are not in its --help)
grep -oE '^  (-[a-z], )?--[a-z0-9-]+' "$T/help" | grep -oE -- '--[a-z0-9-]+' | sort -u > "$T/listed"
check "--help: lists options" test "$(wc -l < "$T/listed")" -ge 40
refused=; notllvm=
while read -r o; do
    "$PGOKIT" llvm-profgen "$o" 2> "$T/o.err" > /dev/null
    grep -q "is not supported" "$T/o.err" && refused="$refused $o"
    llvm-profgen-19 "$o" > /dev/null 2> "$T/o.ll.err"
    grep -q "Unknown command line argument '$o" "$T/o.ll.err" && notllvm="$notllvm $o"
done < "$T/listed"
check_eq "--help: every option listed is taken by the drop-in" "" "$refused"
# (--debug-only exists in llvm-profgen's debug builds only;
# --mark-all-context-preinlined in llvm-profgen after 19)
check_eq "--help: every option listed is llvm-profgen-19's (but pgokit's --quiet, --debug-only and a later one)" \
    " --debug-only --mark-all-context-preinlined --quiet" "$notllvm"
"$PGOKIT" llvm-profgen --color --binary=x --perfscript=y --output=z 2> "$T/color.err"
check "--color (not listed) is refused by name" grep -q "option --color is not supported" "$T/color.err"

# ---- recordings: emulated LBR + exact stacks of a pseudo-probe build
clang-19 -O2 -g -fpseudo-probe-for-profiling "$src" -o "$T/probe"
"$PGOKIT" record --emulate -q -o "$T/probe.data" -- "$T/probe" 20000 >/dev/null
# (perf 6.1's perf script prints call chains file-relative, which
# llvm-profgen-19 takes for addresses: pgokit dump's text is absolute)
"$PGOKIT" dump --perfscript "$T/probe.data" > "$T/probe.script"

# ---- --show-mmap-events
"$PGOKIT" llvm-profgen --perfdata="$T/probe.data" --binary="$T/probe" --output="$T/mm.prof" \
    --show-mmap-events > "$T/mm.pk" 2>/dev/null
rc=$?
check "--show-mmap-events: the profile is still written" bash -c "[ $rc -eq 0 ] && [ -s '$T/mm.prof' ]"
perf script --show-mmap-events -i "$T/probe.data" 2>/dev/null |
    sed -n 's/.*PERF_RECORD_MMAP2\{0,1\} [-0-9]*\/[0-9]*: \[\(0x[0-9a-f]*\)(.*\]: [-a-z]* \(.*\)$/Mmap: Binary \2 loaded at \1: /p' > "$T/mm.perf"
check "--show-mmap-events: perf script lists mmaps" test -s "$T/mm.perf"
check "--show-mmap-events (perf.data): every mmap perf script lists, same files and addresses" \
    cmp "$T/mm.perf" "$T/mm.pk"
"$PGOKIT" llvm-profgen --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/mm2.prof" \
    --show-mmap-events > "$T/mm2.pk" 2>/dev/null
llvm-profgen-19 --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/mm2.ll" \
    --show-mmap-events > "$T/mm2.ll.out" 2>/dev/null
check "--show-mmap-events (perf script): llvm-profgen-19's lines" cmp "$T/mm2.ll.out" "$T/mm2.pk"
check "--show-mmap-events: the same profile as without it" bash -c \
    "'$PGOKIT' llvm-profgen --perfdata='$T/probe.data' --binary='$T/probe' --output='$T/mm0.prof' 2>/dev/null && cmp -s '$T/mm0.prof' '$T/mm.prof'"

# ---- --show-detailed-warning
nofp="$PK_ROOT/tests/programs/profgen_nofp.c"
clang-19 -O2 -g -fno-omit-frame-pointer "$nofp" -o "$T/nofp"
if perf record -q -e cpu-clock -o "$T/perm.data" true >/dev/null 2>&1; then
    "$PGOKIT" record --ip -q -o "$T/nofp.data" -- "$T/nofp" 300000 >/dev/null 2>&1
    "$PGOKIT" profgen --binary "$T/nofp" --perf "$T/nofp.data" -o "$T/nofp.prof" --format text \
        --show-detailed-warning 2> "$T/nofp.err"
    check "--show-detailed-warning: the profile is written" test -s "$T/nofp.prof"
    bad=$(printf '0x%x' "0x$(llvm-nm-19 "$T/nofp" | awk '$3 == "spin_no_call" {print $1}')")
    grep -o 'invalid return address at 0x[0-9a-f]*' "$T/nofp.err" | sed 's/.* //' > "$T/warned"
    check_eq "--show-detailed-warning: one warning, at spin_no_call ($bad)" "$bad" "$(cat "$T/warned")"
    check "--show-detailed-warning: llvm-profgen's text" grep -q \
        "warning: Truncated stack sample due to invalid return address at $bad, likely caused by frame pointer omission" "$T/nofp.err"
    # perf's own chains hold that address (PIE: perf prints it file-relative)
    check "--show-detailed-warning: perf script's call chains hold it" \
        grep -qE "^[[:space:]]+${bad#0x}\$" <(perf script -F ip -i "$T/nofp.data" 2>/dev/null)
    prev=$(llvm-objdump-19 -d --no-show-raw-insn "$T/nofp" | awk -v a="${bad#0x}:" '$1 == a {print last; exit} /^ *[0-9a-f]+:/ {last = $0}')
    check "--show-detailed-warning: objdump shows no call before it ($prev)" \
        bash -c "[ -n '$prev' ] && ! grep -q call <<<'$prev'"
    "$PGOKIT" profgen --binary "$T/nofp" --perf "$T/nofp.data" -o "$T/nofp2.prof" --format text 2> "$T/nofp2.err"
    check "--show-detailed-warning: nothing without the flag" bash -c "! grep -q 'Truncated stack' '$T/nofp2.err'"
else
    echo "skip: perf record cannot sample here (the frame-pointer recording)"
fi
"$PGOKIT" llvm-profgen --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/dw.prof" \
    --show-detailed-warning 2> "$T/dw.pk"
llvm-profgen-19 --perfscript="$T/probe.script" --binary="$T/probe" --output="$T/dw.ll" \
    --show-detailed-warning 2> "$T/dw.ll.err"
check_eq "--show-detailed-warning, exact (emulated) stacks: no truncation, as llvm-profgen-19" \
    "$(grep -c 'Truncated stack' "$T/dw.ll.err")" "$(grep -c 'Truncated stack' "$T/dw.pk")"

# ---- --debug-only=cs-preinliner
args=(--format=text --perfscript="$T/probe.script" --binary="$T/probe" --gen-cs-nested-profile=0)
"$PGOKIT" llvm-profgen "${args[@]}" --output="$T/pi.pk" --debug-only=cs-preinliner 2> "$T/pi.trace"
llvm-profgen-19 "${args[@]}" --output="$T/pi.ll" 2>/dev/null
check "--debug-only=cs-preinliner: llvm-profgen's 'Process' lines" \
    grep -qE '^Process main for context-sensitive pre-inlining \(pre-inline size: [0-9]+, size limit: [0-9]+\)$' "$T/pi.trace"
inlined() { sed -n 's/^  Inlined context profile for: \(.*\) (callee size: [0-9]*, call count:[0-9]*)$/\1/p' "$1" | sort; }
kept() { sed -n 's/^\[\(.* @ .*\)\]:.*/\1/p' "$1" | sort; }
inlined "$T/pi.trace" > "$T/pi.inl"
check "--debug-only=cs-preinliner: some contexts inlined" test -s "$T/pi.inl"
check "--debug-only=cs-preinliner: the contexts inlined are those llvm-profgen-19 keeps" \
    cmp "$T/pi.inl" <(kept "$T/pi.ll")
check "--debug-only=cs-preinliner: ... and those pgokit's profile keeps" cmp "$T/pi.inl" <(kept "$T/pi.pk")
"$PGOKIT" llvm-profgen "${args[@]}" --output="$T/pi0.pk" --debug-only=cs-preinliner \
    --use-context-cost-for-preinliner=false 2> "$T/pi0.trace"
llvm-profgen-19 --format=text --perfscript="$T/probe.script" --binary="$T/probe" --gen-cs-nested-profile=0 \
    --csspgo-preinliner=0 --csprof-merge-cold-context=0 --output="$T/flat.ll" 2>/dev/null
llvm-profgen-19 "${args[@]}" --use-context-cost-for-preinliner=0 --output="$T/pi0.ll" 2>/dev/null
check "--use-context-cost-for-preinliner=false: the contexts llvm-profgen-19 keeps" \
    cmp <(kept "$T/pi0.ll") <(kept "$T/pi0.pk")
python3 - "$T/flat.ll" "$T/pi0.trace" > "$T/sizes" <<'PY'
import re, sys
body, cur = {}, None
for ln in open(sys.argv[1]):
    m = re.match(r"^\[(.*)\]:", ln)
    if m:
        cur = m.group(1); body[cur] = 0
    elif cur and re.match(r"^ \d+(\.\d+)?: \d+", ln):
        body[cur] += 1
n = bad = 0
for ln in open(sys.argv[2]):
    m = re.search(r"context profile for: (.*) \(callee size: (\d+), call count:\d+\)", ln)
    # (a context the flat profile has under its full caller chain only: not comparable)
    if m and m.group(1) in body:
        n += 1
        if int(m.group(2)) != body[m.group(1)]:
            bad += 1; print("size", m.group(1), m.group(2), "lines", body[m.group(1)])
print("compared", n, "differ", bad)
PY
check "--use-context-cost-for-preinliner=false: sizes are body lines (llvm-profgen-19's flat profile)" \
    grep -qE '^compared [1-9][0-9]* differ 0$' "$T/sizes"
tail -n 1 "$T/sizes"
# as llvm-profgen's test runs it: no profile kept (--output=/dev/null), the
# standard input /dev/null too (a character device is no input to protect)
"$PGOKIT" llvm-profgen "${args[@]}" --output=/dev/null --debug-only=cs-preinliner < /dev/null 2> "$T/null.trace"
rc=$?
check "--debug-only=cs-preinliner --output=/dev/null (stdin /dev/null): runs, the same trace" \
    bash -c "[ $rc -eq 0 ] && cmp -s <(grep -v '^profgen' '$T/pi.trace') <(grep -v '^profgen' '$T/null.trace')"
# one trace, two wordings: pgokit profgen's own trace has the same decisions
"$PGOKIT" profgen --perfscript "$T/probe.script" --binary "$T/probe" -o "$T/tr.prof" \
    --trace-preinline "$T/tr.pgokit" 2>/dev/null
"$PGOKIT" profgen --perfscript "$T/probe.script" --binary "$T/probe" -o "$T/tr2.prof" \
    --trace-preinline - --trace-preinline-wording llvm 2> "$T/tr.llvm"
check_eq "--trace-preinline: the same decisions in both wordings (functions, inlined, kept calls)" \
    "$(grep -c ^function "$T/tr.pgokit") $(grep -c ^inline "$T/tr.pgokit") $(grep -c ^keep-call "$T/tr.pgokit")" \
    "$(grep -c ^Process "$T/tr.llvm") $(grep -c '^  Inlined' "$T/tr.llvm") $(grep -c '^  Outlined' "$T/tr.llvm")"
"$PGOKIT" llvm-profgen "${args[@]}" --output="$T/no.pk" --debug-only=inline 2> "$T/do.err"
rc=$?
check "--debug-only=inline: refused by name (exit 2), nothing written" \
    bash -c "[ $rc -eq 2 ] && grep -q -- '--debug-only=inline' '$T/do.err' && [ ! -e '$T/no.pk' ]"
finish
