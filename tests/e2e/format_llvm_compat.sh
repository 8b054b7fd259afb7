#!/usr/bin/env bash
# format_llvm_compat.sh — our LLVM sample-profile writers and readers against
# llvm-profdata-19:
#  (1) `llvm-profdata show` prints the same for our extbinary as for our text;
#  (2) our text / binary / extbinary (plain, --use-md5, compressed, probe)
#      are byte-identical to `llvm-profdata merge` of the same text; for CS
#      profiles only FuncMetadata order may differ (llvm-profdata writes it
#      in hash-map order), so CS files are compared through their text;
#  (3) we read llvm-profdata's text/binary/extbinary/MD5/compressed output
#      back to the same text; MD5 GUIDs equal llvm-profdata's;
#  merge with weights equals `llvm-profdata merge --weighted-input`;
#  corrupt/truncated inputs: clean error naming the file, no sanitizer report.
source "$(dirname "$0")/../lib.sh"
need llvm-profdata-19 awk cmp
[ -x "$PGOKIT" ] || { echo "skipped: $PGOKIT not built"; exit 77; }
GEN="$PK_ROOT/tests/e2e/format_genprof.awk"
LP=llvm-profdata-19

cat > "$T/ex.txt" <<'EOF'
# plain AutoFDO profile with every line-based feature
main:1000:10
 1: 10
 2: 100 foo:60 bar:40
 3.2: 50
 4: inlined_fn:300
  1: 200
  2.1: 100 baz:100
foo:500:60
 0: 60
 1: 440
operator new(unsigned long):500:0
 65532: 7 ns::f(int):3 operator delete(void*):4
EOF
cat > "$T/probe.txt" <<'EOF'
main:100:10
 1: 10
 2: 30 foo:20
 3: foo:20
  1: 20
  !CFGChecksum: 99
 !CFGChecksum: 123456
bar:50:5
 1: 50
 !CFGChecksum: 77
EOF
# nested probe profile with attributes (profgen's CSSPGO output after the
# pre-inliner): per-inlinee checksums and attributes, summary flag preInlined
cat > "$T/nestprobe.txt" <<'EOF'
main:100:10
 1: 10
 3: foo:20
  1: 20
  !CFGChecksum: 99
  !Attributes: 2
 !CFGChecksum: 123456
 !Attributes: 1
bar:50:5
 1: 50
 !CFGChecksum: 77
EOF
cat > "$T/cs.txt" <<'EOF'
[main:3 @ foo]:100:10
 2: 50 bar:50
 !CFGChecksum: 123456
 !Attributes: 2
[main:3 @ foo:2.1 @ bar]:50:50
 1: 50
 !CFGChecksum: 777
 !Attributes: 1
[main]:300:0
 3: 10 foo:10
 !CFGChecksum: 555
EOF
awk -v seed=11 -v nf=400 -f "$GEN" > "$T/big.txt"
awk -v seed=12 -v nf=150 -v probe=1 -f "$GEN" > "$T/bigprobe.txt"

# (2) byte identity with llvm-profdata's writers
# (probe profiles: FuncMetadata is in llvm-profdata's hash-map order, so the
# big one is compared by size, section table and contents instead of bytes)
for p in ex big probe nestprobe bigprobe; do
  $LP merge --sample --text "$T/$p.txt" -o "$T/$p.llvm.txt"
  "$PGOKIT" convert "$T/$p.txt" --format text -o "$T/$p.ours.txt"
  check "$p: text output identical to llvm-profdata's" cmp -s "$T/$p.llvm.txt" "$T/$p.ours.txt"
  for v in "plain:" "md5:--use-md5" "z:--compress-all-sections" "md5z:--use-md5 --compress-all-sections"; do
    tag=${v%%:*}; opts=${v#*:}
    $LP merge --sample --extbinary $opts "$T/$p.txt" -o "$T/$p.$tag.llvm.ext"
    "$PGOKIT" convert "$T/$p.txt" --format extbinary ${opts/--compress-all-sections/--compress} -o "$T/$p.$tag.ours.ext"
    if [ $p != bigprobe ]; then
      check "$p: extbinary ($tag) identical to llvm-profdata's" cmp -s "$T/$p.$tag.llvm.ext" "$T/$p.$tag.ours.ext"
    else
      case $tag in *z) ;; *)  # compressed metadata in another order compresses to other sizes
      check_eq "$p: extbinary ($tag): same size as llvm-profdata's" \
        "$(stat -c %s "$T/$p.$tag.llvm.ext")" "$(stat -c %s "$T/$p.$tag.ours.ext")"
      check_eq "$p: extbinary ($tag): same section table as llvm-profdata's" \
        "$($LP show --sample --show-sec-info-only "$T/$p.$tag.llvm.ext")" \
        "$($LP show --sample --show-sec-info-only "$T/$p.$tag.ours.ext")" ;;
      esac
      check_eq "$p: extbinary ($tag): llvm-profdata reads the same profile from both" \
        "$($LP merge --sample --text "$T/$p.$tag.llvm.ext" -o - | md5sum)" \
        "$($LP merge --sample --text "$T/$p.$tag.ours.ext" -o - | md5sum)"
    fi
  done
done
for p in ex big; do
  $LP merge --sample --binary "$T/$p.txt" -o "$T/$p.llvm.bin"
  "$PGOKIT" convert "$T/$p.txt" --format binary -o "$T/$p.ours.bin"
  check "$p: binary identical to llvm-profdata's" cmp -s "$T/$p.llvm.bin" "$T/$p.ours.bin"
done
# CS: same text, and llvm-profdata reads our extbinary to the same text
$LP merge --sample --text "$T/cs.txt" -o "$T/cs.llvm.txt"
"$PGOKIT" convert "$T/cs.txt" --format text -o "$T/cs.ours.txt"
check "cs: text output identical to llvm-profdata's" cmp -s "$T/cs.llvm.txt" "$T/cs.ours.txt"
"$PGOKIT" convert "$T/cs.txt" -o "$T/cs.ours.ext"
$LP merge --sample --extbinary "$T/cs.txt" -o "$T/cs.llvm.ext"
$LP merge --sample --text "$T/cs.ours.ext" -o "$T/cs.ours.ext.txt"
check "cs: llvm-profdata reads our CS extbinary back to the same text" cmp -s "$T/cs.llvm.txt" "$T/cs.ours.ext.txt"
meta_off=$($LP show --sample --show-sec-info-only "$T/cs.llvm.ext" | sed -n 's/^FunctionMetadata - Offset: \([0-9]*\),.*/\1/p')
check "cs: identical bytes up to FuncMetadata (at $meta_off)" cmp -s -n "$meta_off" "$T/cs.llvm.ext" "$T/cs.ours.ext"
check_eq "cs: same file size as llvm-profdata's" "$(stat -c %s "$T/cs.llvm.ext")" "$(stat -c %s "$T/cs.ours.ext")"
check_eq "cs: same section table as llvm-profdata's" \
  "$($LP show --sample --show-sec-info-only "$T/cs.llvm.ext")" "$($LP show --sample --show-sec-info-only "$T/cs.ours.ext")"
# A larger flat CS profile: many contexts per leaf function (the summary
# sums them by function and location), discriminators, the largest line
# offsets, zero counts: llvm-profdata's summary and ours must agree.
awk 'BEGIN {
  srand(21);
  for (c = 0; c < 600; c++) {
    leaf = "f" (c % 37);
    printf "[main:%d @ g%d:%d.%d @ %s]:%d:%d\n", 1 + c % 5, c % 11, 1 + c % 7, c % 3, leaf, 1000 + c, c % 13;
    n = 3 + (c % 37) % 9;
    for (i = 0; i < n; i++) {
      line = (i == n - 1 && c % 37 < 4) ? 65535 - c % 2 : 1 + i * 2;
      cnt = (i % 4 == 3) ? 0 : int(rand() * 500);
      if (i % 5 == 2) printf " %d.%d: %d\n", line, 1 + (c + i) % 3, cnt;
      else printf " %d: %d\n", line, cnt;
    }
  }
}' > "$T/csbig.txt"
check "csbig: converted" "$PGOKIT" convert "$T/csbig.txt" -o "$T/csbig.ours.ext"
check "csbig: llvm-profdata merges it" $LP merge --sample --extbinary "$T/csbig.txt" -o "$T/csbig.llvm.ext"
check_eq "csbig: llvm-profdata's detailed summary of our extbinary = of its own" \
  "$($LP show --sample --detailed-summary "$T/csbig.llvm.ext" | sed -n '/^Total count/,$p' | md5sum)" \
  "$($LP show --sample --detailed-summary "$T/csbig.ours.ext" | sed -n '/^Total count/,$p' | md5sum)"
check "csbig: the summary has counts" grep -q "Total count: [1-9]" <<<"$($LP show --sample --detailed-summary "$T/csbig.ours.ext")"

# (1) llvm-profdata shows our extbinary exactly like our text
for p in ex big bigprobe; do
  "$PGOKIT" convert "$T/$p.txt" -o "$T/$p.o.ext"
  a=$($LP show --sample --detailed-summary "$T/$p.o.ext" 2>&1 | md5sum)
  b=$($LP show --sample --detailed-summary "$T/$p.ours.txt" 2>&1 | md5sum)
  check_eq "$p: llvm-profdata show --detailed-summary: our extbinary = our text" "$b" "$a"
  a=$($LP show --sample --all-functions "$T/$p.o.ext" 2>&1 | md5sum)
  b=$($LP show --sample --all-functions "$T/$p.ours.txt" 2>&1 | md5sum)
  check_eq "$p: llvm-profdata show --all-functions: our extbinary = our text" "$b" "$a"
done

# (3) we read what llvm-profdata writes
for p in ex big bigprobe; do
  for f in "$T/$p".*.llvm.ext "$T/$p.llvm.bin"; do
    [ -f "$f" ] || continue
    $LP merge --sample --text "$f" -o "$f.llvm.txt"
    "$PGOKIT" convert "$f" --format text -o "$f.ours.txt"
    check "read $(basename "$f") like llvm-profdata" cmp -s "$f.llvm.txt" "$f.ours.txt"
  done
done
# MD5 names: the GUIDs we compute are the ones llvm-profdata writes
check_eq "MD5 GUID of main in llvm-profdata's MD5 profile" "15822663052811949562:1000:10" \
  "$("$PGOKIT" convert "$T/ex.md5.llvm.ext" --format text -o - | head -n 1)"
$LP merge --sample --text "$T/big.md5.ours.ext" -o "$T/big.md5.ours.txt"
$LP merge --sample --text "$T/big.md5.llvm.ext" -o "$T/big.md5.llvm.txt"
check "llvm-profdata reads our MD5 names as its own" cmp -s "$T/big.md5.llvm.txt" "$T/big.md5.ours.txt"

# merge with weights, mixed input formats
awk -v seed=21 -v nf=120 -f "$GEN" > "$T/m1.txt"
awk -v seed=22 -v nf=160 -f "$GEN" > "$T/m2.txt"
$LP merge --sample --extbinary "$T/m2.txt" -o "$T/m2.ext"
$LP merge --sample --extbinary "$T/m1.txt" --weighted-input=3,"$T/m2.txt" "$T/big.txt" -o "$T/merged.llvm.ext"
"$PGOKIT" merge "$T/m1.txt" -w 3,"$T/m2.ext" "$T/big.ours.bin" -o "$T/merged.ours.ext"
check "merge with weights identical to llvm-profdata merge" cmp -s "$T/merged.llvm.ext" "$T/merged.ours.ext"
printf '# inputs\n%s\n\n 3,%s \n' "$T/m1.txt" "$T/m2.ext" > "$T/list.txt"
"$PGOKIT" merge -f "$T/list.txt" "$T/big.txt" -o "$T/merged2.ours.ext"
check "merge --input-files identical to llvm-profdata merge" cmp -s "$T/merged.llvm.ext" "$T/merged2.ours.ext"
$LP merge --sample --text "$T/ex.txt" "$T/ex.txt" -o "$T/ex2.llvm.txt"
"$PGOKIT" merge "$T/ex.txt" "$T/ex.ours.txt" --text -o "$T/ex2.ours.txt"
check "merge of a profile with itself = llvm-profdata's" cmp -s "$T/ex2.llvm.txt" "$T/ex2.ours.txt"
# names + GUIDs: every name becomes its GUID, so a profile merged with its own
# MD5 form is the MD5 form of the doubled profile. (llvm-profdata-19 matches
# top-level names to GUIDs but not call targets or inlinees, and leaves both.)
"$PGOKIT" merge "$T/ex.txt" "$T/ex.md5.ours.ext" -o "$T/mix.ext"
"$PGOKIT" convert "$T/ex2.ours.txt" --use-md5 -o "$T/ex2.md5.ext"
check_eq "merge of names with GUIDs works on GUIDs throughout" \
  "$("$PGOKIT" convert "$T/ex2.md5.ext" --format text -o - | md5sum)" \
  "$("$PGOKIT" convert "$T/mix.ext" --format text -o - | md5sum)"
"$PGOKIT" merge "$T/ex.txt" "$T/probe.txt" -o "$T/mixed.ext" 2>"$T/err"; rc=$?
check_eq "merge refuses probe + line-based inputs" 1 $rc
check "no output left after a failed merge" test ! -e "$T/mixed.ext"

# profile symbol lists: written like llvm-profdata, kept through merges
printf 'main\nfoo\nzzz_cold\nbar\n\n' > "$T/syms.txt"
$LP merge --sample --extbinary "$T/ex.txt" --prof-sym-list="$T/syms.txt" -o "$T/s.llvm.ext"
"$PGOKIT" merge "$T/ex.txt" --prof-sym-list "$T/syms.txt" -o "$T/s.ours.ext"
check "profile symbol list: identical to llvm-profdata's" cmp -s "$T/s.llvm.ext" "$T/s.ours.ext"
$LP merge --sample --extbinary --compress-all-sections "$T/ex.txt" --prof-sym-list="$T/syms.txt" -o "$T/sz.llvm.ext"
"$PGOKIT" merge "$T/ex.txt" --prof-sym-list "$T/syms.txt" --compress -o "$T/sz.ours.ext"
check "compressed profile symbol list: identical to llvm-profdata's" cmp -s "$T/sz.llvm.ext" "$T/sz.ours.ext"
"$PGOKIT" merge "$T/s.llvm.ext" -o "$T/s2.ours.ext"
check "profile symbol list kept by merge" cmp -s "$T/s.llvm.ext" "$T/s2.ours.ext"
check_eq "show --show-prof-sym-list" "bar foo main zzz_cold " "$("$PGOKIT" show --show-prof-sym-list "$T/s.llvm.ext" | sort | tr '\n' ' ')"
"$PGOKIT" merge "$T/s.llvm.ext" --drop-profile-symbol-list -o "$T/s3.ours.ext"
check "--drop-profile-symbol-list" cmp -s "$T/ex.plain.llvm.ext" "$T/s3.ours.ext"

# show
out=$("$PGOKIT" show "$T/ex.o.ext")
check "show lists the hottest function first" grep -q "^ *1000 .* main$" <<<"$out"
check "show prints the stored summary" grep -q "Total count: $($LP show --sample --detailed-summary "$T/ex.o.ext" | sed -n 's/^Total count: //p')$" <<<"$out"
out=$("$PGOKIT" show --function foo "$T/ex.o.ext")
check_eq "show --function prints the profile in text form" "$(printf 'foo:500:60\n 0: 60\n 1: 440')" "$out"
"$PGOKIT" show --function nosuch "$T/ex.o.ext" >/dev/null 2>&1; rc=$?
check_eq "show --function of an absent function fails" 1 $rc

# corrupt and truncated inputs, under the sanitizers
SAN=${PGOKIT_SAN:-$PGOKIT}; [ -x "$SAN" ] || SAN=$PGOKIT
bad=0
for f in "$T/ex.plain.ours.ext" "$T/ex.z.ours.ext" "$T/probe.plain.ours.ext" "$T/cs.ours.ext"; do
  size=$(stat -c %s "$f")
  for cut in 0 5 9 10 18 50 100 200 241 242 250 300 $((size - 1)); do
    [ $cut -lt "$size" ] || continue
    head -c $cut "$f" > "$T/cut.prof"
    rm -f "$T/cut.txt"
    "$SAN" convert "$T/cut.prof" --format text -o "$T/cut.txt" 2>"$T/err"; rc=$?
    if [ $rc -ne 1 ] || ! grep -q "cut.prof" "$T/err" || grep -q "Sanitizer" "$T/err" || [ -e "$T/cut.txt" ]; then
      bad=$((bad + 1)); echo "truncated $(basename "$f") at $cut: rc=$rc $(head -c 300 "$T/err")"
    fi
  done
done
check_eq "truncated extbinary files: clean errors naming the file" 0 $bad
printf 'main:1:1\n 1: 5 foo\n' > "$T/bad.txt"
"$SAN" show "$T/bad.txt" >/dev/null 2>"$T/err"; rc=$?
check "bad text line: error with file and line" grep -q "bad.txt: line 2" "$T/err"
check_eq "bad text line: exit status 1" 1 $rc
finish
