#!/usr/bin/env bash
# format_gcc.sh — GCC AutoFDO profiles (.afdo, format version 2): gcc-12
# -fauto-profile accepts ours (no version error, no ICE) and annotates the
# blocks of the profiled function with "(auto FDO)" counts taken from it; our
# reader gets back what we wrote; bad files get clean errors.
source "$(dirname "$0")/../lib.sh"
need gcc-12
[ -x "$PGOKIT" ] || { echo "skipped: $PGOKIT not built"; exit 77; }
SRC=$PK_ROOT/tests/programs/format_branch.c
cd "$T" || exit 1
cp "$SRC" fb.c

# offsets from `work` (line 9) and `main` (line 21) of format_branch.c
cat > p.txt <<'EOF'
work:31100:1000
 2: 1000
 3: 10000
 4: 10000
 5: 9000
 7: 100
 9: 1000
main:4000:1000
 0: 1000
 2: 1000
 3: 1000 work:1000
 4: 1000
EOF
"$PGOKIT" convert p.txt --format gcc -o p.afdo
check "writes a GCC profile" test -s p.afdo
check_eq "magic and version 2" "61646367 02000000" "$(od -An -tx1 -N8 p.afdo | tr -d ' \n' | sed 's/\(........\)/\1 /')"
"$PGOKIT" convert p.afdo --format text -o back.txt
check "reads its own GCC profile back" cmp -s p.txt back.txt

gcc-12 -O2 -g -fauto-profile=p.afdo -fdump-tree-optimized-all -c fb.c -o fb.o 2>gcc.err; rc=$?
check_eq "gcc-12 -fauto-profile accepts it" 0 $rc
check "no version complaint or ICE" test ! -s gcc.err
dump=$(ls fb.c.*optimized 2>/dev/null | head -n 1)
check "gcc-12 annotated blocks with (auto FDO) counts" grep -q "(auto FDO)" "$dump"
# the entry block of `work` carries the head count we wrote
work_entry=$(awk '/^;; Function work/{f=1} f && /basic block 2,/{print; exit}' "$dump")
check "work's entry block count is our head count (1000)" grep -q "count 1000 (auto FDO)" <<<"$work_entry"

# merge text + GCC inputs, then GCC output again
"$PGOKIT" merge p.txt p.afdo --format gcc -o m.afdo
"$PGOKIT" convert m.afdo --format text -o m.txt
check "merge of text and GCC inputs doubles the counts" grep -q "^work:62200:2000$" m.txt

# bad files
SAN=${PGOKIT_SAN:-$PGOKIT}; [ -x "$SAN" ] || SAN=$PGOKIT
bad=0; size=$(stat -c %s p.afdo)
for cut in 1 4 11 12 20 30 40 60 $((size - 13)); do
  head -c $cut p.afdo > cut.afdo
  "$SAN" convert cut.afdo --format gcc -o cut.out 2>err; rc=$?
  if [ $rc -ne 1 ] || ! grep -q "cut.afdo" err || grep -q Sanitizer err; then
    bad=$((bad + 1)); echo "cut at $cut: rc=$rc $(head -c 200 err)"
  fi
done
check_eq "truncated GCC profiles: clean errors" 0 $bad
printf 'adcg\x09\x00\x00\x00\x00\x00\x00\x00' > v9.afdo
"$SAN" show v9.afdo >/dev/null 2>err; rc=$?
check "unknown GCC profile version is named" grep -q "version" err
check_eq "unknown GCC profile version fails" 1 $rc
finish
