#!/usr/bin/env bash
# cli_show_fixes.sh — `pgokit show` reads every file pgokit writes (sample
# profiles, raw profiles, perf.data, pprof, exact counts) and names anything
# else "not a profile in any known format" with its first bytes escaped;
# llvm-profdata's spellings (show --topn/--json/--hot-func-list, overlap
# --json) give what llvm-profdata-19 gives; profgen's closing total is what
# `show` reads back from the file written (GCC format included); output
# errors name the user's path; every subcommand takes -q; merge --help lists
# its temporal options.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 clang-19 gcc-12 llvm-profdata-19 python3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
cd "$T" || exit 1
SRC=$PK_ROOT/tests/programs/profgen_demo.c

# ---- recordings: a clang and a gcc build (line-based), a probe build ----
clang-19 -O2 -g "$SRC" -o c.bin && gcc-12 -O2 -g "$SRC" -o g.bin &&
  clang-19 -O2 -g -fpseudo-probe-for-profiling "$SRC" -o p.bin || { fail "build"; finish; exit; }
# (in a fixed environment: the guest's stack, and so the samples, move with
# it; one recording in a clean clone gave a CS profile whose hot-function
# list differed from llvm-profdata's, not reproduced in 36 other ones)
fixed() { env -i PATH=/usr/bin:/bin "$@"; }
fixed "$PGOKIT" record --emulate -q --period 1009 -o c.data --exact-counts c.exact -- ./c.bin 3 >/dev/null
fixed "$PGOKIT" record --emulate -q --period 1009 -o g.data -- ./g.bin 3 >/dev/null
fixed "$PGOKIT" record --emulate -q --period 1009 -o p.data -- ./p.bin 3 >/dev/null
check "recorded" test -s c.data -a -s g.data -a -s p.data -a -s c.exact

# ---- profgen's closing summary describes the file it wrote ----
"$PGOKIT" profgen --binary g.bin --perf g.data --format gcc -o g.afdo 2> g.log
pg_total=$(sed -n 's/.*wrote g.afdo.*total samples \([0-9]*\).*/\1/p' g.log)
show_total=$("$PGOKIT" show g.afdo | sed -n 's/^Profiles: .*total samples: \([0-9]*\)$/\1/p')
check "gcc profile written" test -s g.afdo
check_eq "profgen's gcc total = show's" "$show_total" "$pg_total"
pg_funcs=$(sed -n 's/.*wrote g.afdo[^:]*: \([0-9]*\) functions.*/\1/p' g.log)
check_eq "profgen's gcc function count = show's" "$("$PGOKIT" show g.afdo | sed -n 's/^Profiles: \([0-9]*\) functions.*/\1/p')" "$pg_funcs"
# the README's gcc recipe: gcc-12 takes the profile (block counts from it)
gcc-12 -O2 -g -fauto-profile=g.afdo -fdump-tree-optimized-all "$SRC" -o g.pgo 2> gcc.err
check "gcc-12 -fauto-profile takes the profile without complaint" test $? -eq 0 -a ! -s gcc.err
hot=$(awk '/^;; Function run_vm/ {f = 1} /^;; Function / && !/run_vm/ {f = 0}
           f && /basic block.*count [1-9][0-9]* \(auto FDO\)/ {n++} END {print n + 0}' g.pgo-*optimized 2>/dev/null)
check "gcc-12: run_vm's blocks carry counts from the profile ($hot)" test "${hot:-0}" -gt 3
check_eq "gcc-12 build with the profile: same output" "$(./g.bin 3)" "$(./g.pgo 3)"
"$PGOKIT" profgen --binary c.bin --perf c.data -o c.prof 2> c.log
check_eq "profgen's extbinary total = show's" \
  "$("$PGOKIT" show c.prof | sed -n 's/^Profiles: .*total samples: \([0-9]*\)$/\1/p')" \
  "$(sed -n 's/.*wrote c.prof.*total samples \([0-9]*\),.*/\1/p' c.log)"

# ---- show: raw profiles, samples, exact counts ----
"$PGOKIT" profgen -q --raw-only --binary c.bin --perf c.data -o c.raw
"$PGOKIT" show c.raw --top 3 > raw.txt; rc=$?
check_eq "show reads a raw profile" 0 $rc
check "raw profile: format named" grep -q "^Format: pgokit raw profile" raw.txt
branches=$(sed -n 's/.*LBR: [0-9]* entries, \([0-9]*\) branches counted.*/\1/p' c.log)
check "raw profile: the branch total profgen counted" grep -q "^Branches: [0-9]* distinct, $branches taken" raw.txt
check_eq "raw profile: --top 3 branches and ranges" 6 "$(grep -c '^ *[0-9][0-9]* *[0-9.]*%  ' raw.txt)"
"$PGOKIT" show c.data > data.txt; rc=$?
check_eq "show reads perf.data" 0 $rc
want=$("$PGOKIT" dump --stats c.data | sed -n 's/^# samples: \([0-9]*\).*/\1/p')
check "perf.data: sample count as dump --stats" grep -q "^Samples: $want (" data.txt
"$PGOKIT" convert -q c.data -o c.pb.gz
"$PGOKIT" show c.pb.gz > pb.txt; rc=$?
check_eq "show reads pprof" 0 $rc
check "pprof: format named" grep -q "^Format: pprof" pb.txt
"$PGOKIT" show c.exact > exact.txt; rc=$?
check_eq "show reads exact counts" 0 $rc
check "exact counts: the binary listed" grep -q "c.bin build-id [0-9a-f]\{40\}: [1-9][0-9]* ranges" exact.txt

# ---- anything else: named, escaped, exit 1 ----
printf 'junk\x1b[31mred\x07\x00\xff\xfe' > junk.bin
"$PGOKIT" show junk.bin > out.txt 2> err.txt; rc=$?
check_eq "random bytes: exit 1" 1 $rc
check "random bytes: 'not a profile in any known format'" grep -q "junk.bin: offset 0: not a profile in any known format" err.txt
check "random bytes: first bytes escaped" grep -qF 'junk\x1b[31mred\x07\x00\xff\xfe' err.txt
check "random bytes: no control byte reaches the terminal" bash -c "! LC_ALL=C grep -q \$'[\x01-\x09\x0b-\x1f\x7f-\xff]' err.txt out.txt"
head -c 4096 /dev/urandom > rand.bin
"$PGOKIT" show rand.bin 2> err.txt; rc=$?
check_eq "4 KiB of random bytes: exit 1" 1 $rc
check "4 KiB of random bytes: escaped message" bash -c "grep -q 'not a profile in any known format' err.txt && ! LC_ALL=C grep -q \$'[\x01-\x09\x0b-\x1f\x7f-\xff]' err.txt"
"$PGOKIT" show "$PK_ROOT/README.md" 2> err.txt; rc=$?
check "a text file that is no profile: named" test $rc -eq 1 -a -n "$(grep 'not a profile in any known format' err.txt)"
"$PGOKIT" show c.bin 2> err.txt
check "an ELF binary: named" grep -q "c.bin: not a sample profile: an ELF binary" err.txt
"$PGOKIT" merge c.prof c.raw -o m.prof 2> err.txt; rc=$?
check "merge names a raw profile among sample profiles instead of a parse error" test $rc -eq 1 -a -n "$(grep 'a pgokit raw profile' err.txt)"
"$PGOKIT" merge c.raw c.prof -o m.prof 2> err.txt; rc=$?
check "merge names a sample profile among raw profiles" test $rc -eq 1 -a -n "$(grep 'c.prof: not a raw profile' err.txt)"
"$PGOKIT" merge c.raw -o m.raw; rc=$?
check "merge of raw profiles writes a raw profile (one input: the same bytes)" test $rc -eq 0 -a "$(cmp c.raw m.raw && echo same)" = same

# ---- llvm-profdata's spellings ----
"$PGOKIT" profgen -q --binary p.bin --perf p.data -o cs.prof
"$PGOKIT" profgen -q --binary p.bin --perf p.data --no-preinline --format text -o csflat.prof
"$PGOKIT" profgen -q --binary p.bin --perf p.data --ignore-stack-samples -o probe.prof
check_eq "show --topn N = show --top N" "$("$PGOKIT" show --top 3 c.prof)" "$("$PGOKIT" show --topn=3 c.prof)"
for p in c.prof cs.prof csflat.prof probe.prof; do
  "$PGOKIT" show --json "$p" > ours.json
  llvm-profdata-19 show --sample --json "$p" > ref.json
  same=$(python3 - ours.json ref.json <<'PY'
import json, sys
ours, ref = (json.load(open(f)) for f in sys.argv[1:3])
def strip(x):  # our additions: context (CS), checksum (probes)
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k not in ("context", "checksum")}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
print("same" if strip(ours) == ref and len(ours) > 0 else "differ")
PY
)
  check_eq "show --json of $p = llvm-profdata show --sample --json" same "$same"
  "$PGOKIT" show --hot-func-list --no-demangle "$p" > ours.txt   # llvm-profdata does not demangle
  llvm-profdata-19 show --sample --hot-func-list "$p" | sed -n '/functions with profile/,$p' > ref.txt
  check "show --hot-func-list of $p = llvm-profdata's" cmp -s ours.txt ref.txt
done
check "show --json: a CS profile carries its contexts" python3 -c "
import json; d = json.load(open('/dev/stdin')); assert any(' @ ' in f.get('context', '') for f in d)" \
  < <("$PGOKIT" show --json csflat.prof)
"$PGOKIT" profgen -q --binary c.bin --perf c.data --total sum -o c.sum.prof
"$PGOKIT" overlap --json c.prof c.sum.prof > ov.json
text_sim=$("$PGOKIT" overlap c.prof c.sum.prof | sed -n 's/.*Whole program profile similarity: \([0-9.]*\)%/\1/p')
json_sim=$(python3 -c "import json; d = json.load(open('ov.json')); print('%.3f' % (d['program']['similarity'] * 100))")
check_eq "overlap --json: the similarity of the text report" "$text_sim" "$json_sim"
check_eq "overlap --json: every function of TEST" "$("$PGOKIT" show --top 0 c.sum.prof | sed -n 's/^Profiles: \([0-9]*\).*/\1/p')" \
  "$(python3 -c "import json; print(len(json.load(open('ov.json'))['functions']))")"
text_bo=$("$PGOKIT" overlap --exact c.exact --binary c.bin c.prof | sed -n 's/.*block overlap \([0-9.]*\) .*/\1/p')
json_bo=$("$PGOKIT" overlap --exact c.exact --binary c.bin --json c.prof |
  python3 -c "import json, sys; print('%.4f' % json.load(sys.stdin)[0]['block_overlap'])")
check_eq "overlap --exact --json: the text report's block overlap" "$text_bo" "$json_bo"

# ---- errors name the user's path ----
"$PGOKIT" merge c.prof -o "$T/no/such/dir/out.prof" 2> err.txt; rc=$?
check "output error names the user's path" grep -q "$T/no/such/dir/out.prof: cannot create" err.txt
check "output error does not name the temporary" bash -c "! grep -q '\.tmp\.' err.txt"

# ---- uniform flags ----
bad=""
for c in $("$PGOKIT" help | awk '/^commands:/{f=1; next} f && !NF {exit} f {print $1}'); do
  "$PGOKIT" "$c" --help | grep -q -- '-q' || bad="$bad $c"
done
check_eq "every subcommand documents -q" "" "$bad"
check "dump -q is quiet, not --stats: the full listing" \
  test "$("$PGOKIT" dump -q c.data | wc -l)" -gt "$("$PGOKIT" dump --stats c.data | wc -l)"
bad=""
for o in --temporal --binary --skip-bad --reservoir --weight -q; do
  "$PGOKIT" merge --help | grep -q -- "$o" || bad="$bad $o"
done
check_eq "merge --help lists its temporal options" "" "$bad"
check "show --help describes temporal profiles too" bash -c "'$PGOKIT' show --help | grep -q -- '--traces'"
finish
