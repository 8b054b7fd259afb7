#!/usr/bin/env bash
# format_clang_apply.sh — clang-19 and clang-14 apply our profiles: a
# hand-written profile for tests/programs/format_branch.c (written as text,
# converted by us to extbinary, MD5 extbinary, compressed extbinary and
# binary) must give the IR the counts it describes: function_entry_count =
# head samples + 1 on `work` and `main`, and the same `!prof` metadata as
# the text profile and as llvm-profdata's own extbinary. Catches the traps
# llvm-profdata cannot see (a missing function-offset table makes clang load
# nothing; a missing summary crashes it).
source "$(dirname "$0")/../lib.sh"
need llvm-profdata-19 clang-19 clang-14
[ -x "$PGOKIT" ] || { echo "skipped: $PGOKIT not built"; exit 77; }
SRC=$PK_ROOT/tests/programs/format_branch.c

# offsets from `work` (line 9) and `main` (line 21) of format_branch.c
mkprof() { # HEAD_WORK HEAD_MAIN
cat <<EOF
work:40000:$1
 2: 1000
 3: 10000
 4: 10000
 5: 9000
 7: 100
 9: 1000
main:4000:$2
 0: 1000
 2: 1000
 3: 1000 work:1000
 4: 1000
EOF
}
mkprof 1000 1000 > "$T/p.txt"
mkprof 4999 77 > "$T/q.txt"
"$PGOKIT" convert "$T/p.txt" -o "$T/p.ext"
"$PGOKIT" convert "$T/p.txt" --use-md5 -o "$T/p.md5.ext"
"$PGOKIT" convert "$T/p.txt" --compress -o "$T/p.z.ext"
"$PGOKIT" convert "$T/p.txt" --format binary -o "$T/p.bin"
"$PGOKIT" convert "$T/q.txt" -o "$T/q.ext"
llvm-profdata-19 merge --sample --extbinary "$T/p.txt" -o "$T/p.llvm.ext"

# IR of one compile: the definition lines with their !prof, and the !prof nodes
ir() { # CC PROFILE
  "$1" -O2 -gline-tables-only -fdebug-info-for-profiling -fprofile-sample-use="$2" \
    -S -emit-llvm -o "$T/out.ll" "$SRC" 2>"$T/cc.err" || { cat "$T/cc.err"; return 1; }
  grep -E '^define|branch_weights|function_entry_count' "$T/out.ll" | sed 's/ !dbg ![0-9]*//'
}
entry() { # name: the function_entry_count of a function in $T/out.ll
  local node
  node=$(grep -E "^define .*@$1\(" "$T/out.ll" | grep -oE '!prof ![0-9]+' | grep -oE '[0-9]+$')
  [ -n "$node" ] && grep -E "^!$node = " "$T/out.ll" | grep -oE 'function_entry_count", i64 [0-9]+' | grep -oE '[0-9]+$'
}

for cc in clang-19 clang-14; do
  ref=$(ir $cc "$T/p.txt")
  check_eq "$cc: text profile: work entry count = head + 1" 1001 "$(entry work)"
  check_eq "$cc: text profile: main entry count = head + 1" 1001 "$(entry main)"
  check "$cc: text profile: branch weights present" grep -q branch_weights <<<"$ref"
  for p in p.ext p.md5.ext p.z.ext p.bin p.llvm.ext; do
    got=$(ir $cc "$T/$p")
    check_eq "$cc: $p applied like the text profile" "$ref" "$got"
  done
  ir $cc "$T/q.ext" >/dev/null
  check_eq "$cc: our extbinary with other heads: work entry count" 5000 "$(entry work)"
  check_eq "$cc: our extbinary with other heads: main entry count" 78 "$(entry main)"
done
finish
