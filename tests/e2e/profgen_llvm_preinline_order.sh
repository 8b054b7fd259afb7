#!/usr/bin/env bash
# The pre-inliner visits a caller before its callee also when the call is
# cold (left out of its call graph): one sample of main -> foo -> bar, made
# by hand from the fixture's code, so that every call weighs the cold count.
# foo visited first can still inline its small callee bar under the cold
# threshold (llvm-profgen's cs-preinline test's arguments); visited after
# bar, it finds [main @ foo @ bar] already merged into [bar]. Compared with
# llvm-profgen-19 on the same input.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 objdump
clang-19 -O2 -g -fno-pie -no-pie "$PK_ROOT/tests/programs/preinline_cold.c" -o "$T/pc"
dis() { objdump -d --no-show-raw-insn "$T/pc" | awk -v f="<$1>:" '$0 ~ f {on = 1; next} on && /^$/ {exit} on'; }
first() { dis "$1" | awk -v p="$2" '$0 ~ p {sub(":", "", $1); print $1; exit}'; }
after() { dis "$1" | awk -v p="$2" 'hit {sub(":", "", $1); print $1; exit} $0 ~ p {hit = 1}'; }
B=$(first bar '') BR=$(first bar '\tret') F=$(first foo '') CB=$(first foo 'call.*<bar>') RB=$(after foo 'call.*<bar>')
CF=$(first main 'call.*<foo>') RF=$(after main 'call.*<foo>')
check "the fixture's calls found" test -n "$B" -a -n "$BR" -a -n "$CB" -a -n "$RB" -a -n "$CF" -a -n "$RF"
# the stack (leaf first: foo just after bar returned, main's return
# address), then the branch stack, newest first
printf '\t%s\n\t%s\n 0x%s/0x%s/P/-/-/0  0x%s/0x%s/P/-/-/0  0x%s/0x%s/P/-/-/0\n\n' \
    "$RB" "$RF" "$BR" "$RB" "$CB" "$B" "$CF" "$F" > "$T/pc.script"
args=(--format=text --perfscript="$T/pc.script" --binary="$T/pc" --csspgo-preinliner=1 --gen-cs-nested-profile=0
      --sample-profile-hot-inline-threshold=3000 --sample-profile-cold-inline-threshold=45)
check "a pre-inlined profile" "$PGOKIT" llvm-profgen -q "${args[@]}" --output="$T/pc.pk"
llvm-profgen-19 "${args[@]}" --output="$T/pc.ll" 2>/dev/null
check "bar kept where foo inlines it" grep -q '^\[main:[0-9]* @ foo:[0-9]* @ bar\]' "$T/pc.pk"
check "bar not merged into its base profile" bash -c "! grep -q '^\[bar\]' '$T/pc.pk'"
check "llvm-profgen-19's profile" cmp "$T/pc.ll" "$T/pc.pk"
finish
