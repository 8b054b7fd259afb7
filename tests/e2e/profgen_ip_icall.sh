#!/usr/bin/env bash
# profgen_ip_icall.sh — calls through pointers in IP profiles
# (tests/programs/ip_icall.c: one pointer call site with three targets in a
# hot loop, and strlen called through its GOT slot, -fno-plt).
#  - chains that name the callers (the emulator's IP mode: exact stacks):
#    the site has its targets in the profile (llvm-profdata-19 reads them),
#    profgen counts "0 of 1 calls through pointers ... without a callee",
#    no warning;
#  - no chains (--no-callchain): "1 of 1", the profile names no target
#    there, and profgen warns, naming the remedy (--call-graph dwarf);
#  - the GOT call into the C library ran in the same loop but is not
#    counted (its callee is other code: "of 1", not "of 2");
#  - real perf (when it can sample here) on a build without frame pointers:
#    `record --ip` takes 1 KiB stack copies by itself, and the site has its
#    callees; asked for frame-pointer chains, profgen gives the frame-pointer
#    warning, which says what AutoFDO loses, and not the indirect-call
#    warning beside it.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profdata-19 objdump

SRC=$PK_ROOT/tests/programs/ip_icall.c
clang-19 -O2 -g -gdwarf-4 -fno-omit-frame-pointer -fno-plt "$SRC" -o "$T/ic" || { fail "build"; finish; exit 1; }
check "strlen is called through its GOT slot (-fno-plt)" \
    bash -c "objdump -d --no-show-raw-insn '$T/ic' | grep -qE 'call +\*0x[0-9a-f]+\(%rip\) +# [0-9a-f]+ <strlen@'"
check "the pointer call site is an indirect call" \
    bash -c "objdump -d --no-show-raw-insn '$T/ic' | grep -qE 'call +\*%r'"

icalls() { sed -n 's/.*; \([0-9]* of [0-9]*\) calls through pointers that ran without a callee in any chain.*/\1/p' "$1"; }
targets() { llvm-profdata-19 show --sample --function=main "$1" | grep -c 'calls: .*step_'; }

# chains with every caller
env -i PATH=/usr/bin:/bin "$PGOKIT" record -q --emulate --ip --period 20011 -o "$T/e.data" -- "$T/ic" 20000 \
    >/dev/null || fail "record --emulate --ip"
"$PGOKIT" profgen --binary "$T/ic" --perf "$T/e.data" -o "$T/e.prof" 2>"$T/e.log"
check_eq "profgen (whole chains) exits 0" 0 $?
check_eq "whole chains: no call through a pointer without a callee (the GOT call not counted)" \
    "0 of 1" "$(icalls "$T/e.log")"
check "... and no warning about it" bash -c "! grep -q 'calls through pointers without a callee' '$T/e.log'"
check_eq "... the site's targets are in the profile" 1 "$(targets "$T/e.prof")"

# no chains at all
env -i PATH=/usr/bin:/bin "$PGOKIT" record -q --emulate --ip --no-callchain --period 20011 -o "$T/n.data" \
    -- "$T/ic" 20000 >/dev/null || fail "record --emulate --ip --no-callchain"
"$PGOKIT" profgen --binary "$T/ic" --perf "$T/n.data" -o "$T/n.prof" 2>"$T/n.log"
check_eq "profgen (no chains) exits 0: the profile is still written" 0 $?
check_eq "no chains: the one call site through a pointer has no callee" "1 of 1" "$(icalls "$T/n.log")"
check "... warned about, with the share of calls and the remedy" \
    grep -q 'warning: calls through pointers without a callee: 1 of 1 indirect call sites that ran (100 % of their calls).*--call-graph dwarf' "$T/n.log"
check_eq "... the profile names no target there" 0 "$(targets "$T/n.prof")"

# real perf on a build without frame pointers
if perf record -q -e cpu-clock:u -o "$T/probe.data" true >/dev/null 2>&1; then
    clang-19 -O2 -g -gdwarf-4 -fno-plt "$SRC" -o "$T/icn" || fail "build without frame pointers"
    # what record takes by itself there: short stack copies
    "$PGOKIT" record --ip -o "$T/d.data" -- "$T/icn" 3000000 >/dev/null 2>"$T/d.err" || fail "record --ip (default chains)"
    check "record --ip chose 1024-byte stack copies: the program sets up no frame pointer" \
        grep -q 'call chains as 1024-byte stack copies (DWARF)).*; 1024-byte stack copies: .*/icn sets up a frame pointer in 0 % of the code of its functions with a frame' "$T/d.err"
    check "... what perf's header says (perf evlist: STACK_USER, sample_stack_user 1024)" \
        bash -c "perf evlist -v -i '$T/d.data' 2>/dev/null | grep -q 'STACK_USER.*sample_stack_user: 1024'"
    "$PGOKIT" profgen --binary "$T/icn" --perf "$T/d.data" -o "$T/d.prof" 2>"$T/d.log"
    check_eq "profgen (default recording, no frame pointers) exits 0" 0 $?
    check_eq "... the call site through a pointer has its callees" "0 of 1" "$(icalls "$T/d.log")"
    check_eq "... its targets are in the profile" 1 "$(targets "$T/d.prof")"
    check "... no warning about frame pointers, stack copies or calls without a callee" \
        bash -c "! grep -qE 'set up no frame pointer|stopped before|calls through pointers without a callee' '$T/d.log'"
    # frame-pointer chains asked for
    "$PGOKIT" record -q --ip --call-graph fp -o "$T/f.data" -- "$T/icn" 3000000 >/dev/null 2>&1 ||
        fail "record --ip --call-graph fp"
    "$PGOKIT" profgen --binary "$T/icn" --perf "$T/f.data" -o "$T/f.prof" 2>"$T/f.log"
    check_eq "profgen (frame-pointer chains, no frame pointers) exits 0" 0 $?
    check "the frame-pointer warning says what AutoFDO loses" \
        grep -q 'set up no frame pointer.*AutoFDO needs the callers only for the targets of calls through pointers' "$T/f.log"
    check "... and stands for the indirect-call warning" \
        bash -c "! grep -q 'calls through pointers without a callee' '$T/f.log'"
else
    echo "skip: perf record cannot sample here: the frame-pointer case is not run"
fi
finish
