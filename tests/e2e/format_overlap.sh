#!/usr/bin/env bash
# format_overlap.sh — `pgokit overlap` against `llvm-profdata-19 overlap
# --sample`: same program-level report (similarity, sample overlap, unique
# samples, function / hot-function / hot-block overlap) and the same
# function-level table, on hand-made and generated profiles in every format.
source "$(dirname "$0")/../lib.sh"
need llvm-profdata-19 awk
[ -x "$PGOKIT" ] || { echo "skipped: $PGOKIT not built"; exit 77; }
GEN="$PK_ROOT/tests/e2e/format_genprof.awk"
cd "$T" || exit 1

# the example of the format note: matched and unmatched functions and inlinees
cat > base.txt <<'EOF'
main:300:10
 1: 100
 2: 100
 3: inl:100
  1: 100
foo:100:5
 1: 100
bar:50:1
 1: 50
EOF
cat > test.txt <<'EOF'
main:400:10
 1: 100
 2: 200
 3: inl:100
  1: 50
  2: 50
 5: other:70
  1: 70
foo:100:5
 1: 100
baz:100:1
 1: 100
EOF
awk -v seed=31 -v nf=300 -f "$GEN" > g1.txt
awk -v seed=32 -v nf=300 -f "$GEN" > g2.txt
# a perturbed copy: same functions, scaled counts, a few dropped sample
# lines (never a header, callsite or metadata line, so nesting stays valid)
drop() { awk -v m="$1" '!(/^ +[0-9.]+: [0-9]/ && NR % m == 4)'; }
awk -v seed=31 -v nf=300 -v scale=3 -f "$GEN" | drop 11 > g3.txt
awk -v seed=41 -v nf=80 -v probe=1 -f "$GEN" > p1.txt
awk -v seed=41 -v nf=80 -v probe=1 -f "$GEN" | drop 7 > p2.txt
llvm-profdata-19 merge --sample --extbinary g1.txt -o g1.ext
"$PGOKIT" convert g3.txt --format binary -o g3.bin

cmp_overlap() { # DESC BASE TEST [options]
  local d=$1 b=$2 t=$3; shift 3
  llvm-profdata-19 overlap --sample "$@" "$b" "$t" > llvm.out 2>&1
  "$PGOKIT" overlap "$@" "$b" "$t" > ours.out 2>&1
  if cmp -s llvm.out ours.out; then pass "$d"; else fail "$d"; diff llvm.out ours.out | head -20; fi
}
cmp_overlap "note example" base.txt test.txt
cmp_overlap "note example, function table" base.txt test.txt --value-cutoff=0
cmp_overlap "note example, reversed" test.txt base.txt --similarity-cutoff=990000
cmp_overlap "generated, unrelated" g1.txt g2.txt
cmp_overlap "generated, perturbed (extbinary vs binary)" g1.ext g3.bin
cmp_overlap "generated, perturbed, --function" g1.txt g3.txt --function=fn
cmp_overlap "generated, identical" g1.txt g1.ext
cmp_overlap "probe-based, perturbed" p1.txt p2.txt --value-cutoff=500
cat > cs1.txt <<'EOF'
[main:3 @ foo]:100:10
 2: 50 bar:50
 !CFGChecksum: 123456
 !Attributes: 2
[main:3 @ foo:2 @ bar]:50:50
 1: 50
 !CFGChecksum: 777
[main]:300:0
 3: 10 foo:10
 !CFGChecksum: 555
EOF
cat > cs2.txt <<'EOF'
[main:3 @ foo]:100:10
 2: 70 bar:70
 !CFGChecksum: 123456
[main:3 @ foo:2.1 @ bar]:80:50
 1: 80
 !CFGChecksum: 777
[main]:300:0
 3: 10 foo:10
 4: 5
 !CFGChecksum: 555
EOF
"$PGOKIT" convert cs2.txt -o cs2.ext
cmp_overlap "context-sensitive, function table" cs1.txt cs2.ext --value-cutoff=0
"$PGOKIT" overlap base.txt p1.txt > /dev/null 2>err.txt; rc=$?
check_eq "probe vs line-based is refused" 1 $rc
check "the refusal says why" grep -q "probe" err.txt
printf 'f:0:0\n 1: 0\n' > zero.txt
cmp_overlap "a profile whose samples sum to 0" zero.txt base.txt
finish
