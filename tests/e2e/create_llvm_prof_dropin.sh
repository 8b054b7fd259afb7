#!/usr/bin/env bash
# `pgokit create_llvm_prof` / `pgokit create_gcov` (and pgokit through links of
# those names) take AutoFDO's command lines verbatim, as google/autofdo's
# README writes them, on recordings of our fixture made here; compared with
# Debian's create_llvm_prof (autofdo 0.19) where it reads the same input.
# Unsupported flags are refused by name, nothing written.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 llvm-profdata-19 qemu-x86_64 python3
src="$PK_ROOT/tests/programs/profgen_recurse.c"
similarity() { llvm-profdata-19 overlap --sample "$1" "$2" 2>/dev/null | sed -n 's/.*Whole program profile similarity: *\([0-9.]*\)%.*/\1/p' | head -n 1; }
atleast() { python3 -c "import sys; sys.exit(0 if float('${1:-0}') >= $2 else 1)"; }
# autofdo 0.19 reads DWARF 4
clang-19 -O2 -g -gdwarf-4 "$src" -o "$T/prog"
"$PGOKIT" record --emulate --no-callchain -q -o "$T/perf.data" -- "$T/prog" 20000 >/dev/null
cd "$T"
for f in text binary extbinary; do
    check "create_llvm_prof --binary=prog --profile=perf.data --out=prog.$f --format=$f" \
        "$PGOKIT" create_llvm_prof --binary=prog --profile=perf.data --out=prog.$f --format=$f -q
    llvm-profdata-19 merge --sample --text prog.$f -o prog.$f.txt 2>/dev/null
    check "--format=$f: llvm-profdata-19 reads it" test -s prog.$f.txt
done
check "binary and extbinary: the text profile's content" bash -c "cmp -s prog.text.txt prog.binary.txt && cmp -s prog.text.txt prog.extbinary.txt"
check "default format: binary (create_llvm_prof's)" "$PGOKIT" create_llvm_prof --binary=prog --profile=perf.data --out=prog.def -q
check "default format: the same bytes as --format=binary" cmp -s prog.def prog.binary
check "extbinary: llvm-profdata-19 sees its sections" grep -q LBRProfileSection <(llvm-profdata-19 show --sample --show-sec-info-only prog.extbinary)
# gflags spellings and a link named create_llvm_prof
ln -s "$PGOKIT" create_llvm_prof
check "through a link named create_llvm_prof, -flag value spellings" ./create_llvm_prof -binary prog -profile perf.data -out prog.link -format text -q
check "the same profile" cmp -s prog.text prog.link
# Debian's create_llvm_prof on the same perf.data (its binary output is an
# older layout llvm-profdata-19 cannot read; its text output it can)
if command -v create_llvm_prof >/dev/null && timeout 120 create_llvm_prof --binary=prog --profile=perf.data --out=af.text --format=text 2>/dev/null && [ -s af.text ]; then
    ov=$(similarity af.text prog.text)
    echo "LBR: similarity with Debian's create_llvm_prof ${ov:-?}%"
    check "LBR: similarity with Debian's create_llvm_prof >= 97%" atleast "$ov" 97
else
    echo "Debian's create_llvm_prof not usable here: comparison skipped"
fi
# --use_lbr=false: IP samples
"$PGOKIT" record --emulate --ip -q -o ip.data -- ./prog 20000 >/dev/null
check "--use_lbr=false" "$PGOKIT" create_llvm_prof --binary=prog --profile=ip.data --out=ip.text --format=text --use_lbr=false -q
check "--nouse_lbr (gflags' negation): the same" "$PGOKIT" create_llvm_prof --binary=prog --profile=ip.data --out=ip2.text --format=text --nouse_lbr -q
check "the same profile" cmp -s ip.text ip2.text
# (its IP profiles sometimes hold inlinee names with NUL bytes, which
# llvm-profdata-19 rejects: then there is nothing to compare with)
if command -v create_llvm_prof >/dev/null && timeout 120 create_llvm_prof --binary=prog --profile=ip.data --out=afip.text --format=text --use_lbr=false 2>/dev/null && [ -s afip.text ] &&
   ! llvm-profdata-19 show --sample afip.text >/dev/null 2>&1; then
    echo "Debian's create_llvm_prof wrote an IP profile llvm-profdata-19 rejects: comparison skipped"
elif [ -s afip.text ]; then
    ov=$(similarity afip.text ip.text)
    echo "IP: similarity with Debian's create_llvm_prof ${ov:-?}%"
    check "IP: similarity with Debian's create_llvm_prof >= 95%" atleast "$ov" 95
fi
"$PGOKIT" create_llvm_prof --binary=prog --profile=ip.data --out=lbr-only.text --format=text -q 2>/dev/null
check "--use_lbr (default) on samples without branch stacks: nothing written" test ! -s lbr-only.text
# --prof_sym_list: every function of the binary, sampled or not
check "--format=extbinary --prof_sym_list" "$PGOKIT" create_llvm_prof --binary=prog --profile=perf.data --out=sym.prof --format=extbinary --prof_sym_list -q
check "--prof_sym_list: the symbol list holds the functions" bash -c "llvm-profdata-19 show --sample --show-prof-sym-list sym.prof | grep -qx leafwork"
# create_gcov: GCC's AutoFDO profile, as the README's command line writes it
gcc-12 -O2 -g "$src" -o gprog
"$PGOKIT" record --emulate --no-callchain -q -o gperf.data -- ./gprog 20000 >/dev/null
check "create_gcov --binary=gprog --profile=gperf.data --gcov=gprog.gcov -gcov_version=1" \
    "$PGOKIT" create_gcov --binary=gprog --profile=gperf.data --gcov=gprog.gcov -gcov_version=1 -q
check "create_gcov: a gcc profile" grep -q "Format: gcc" <("$PGOKIT" show gprog.gcov)
gcc-12 -O2 -fauto-profile=gprog.gcov "$src" -o gprog.fdo 2> gcc.err
check "gcc-12 -fauto-profile reads it without a complaint" bash -c "[ -x gprog.fdo ] && [ ! -s gcc.err ]"
ln -s "$PGOKIT" create_gcov
check "through a link named create_gcov" ./create_gcov --binary=gprog --profile=gperf.data --gcov=gprog.link.gcov -q
check "the same file" cmp -s gprog.gcov gprog.link.gcov
# refused by name, nothing written
for o in --debug_dump --prefetch_hints=x --logtostderr --format=compbinary --profiler=text -gcov_version=1; do
    "$PGOKIT" create_llvm_prof --binary=prog --profile=perf.data --out=no.prof "$o" 2> no.err
    rc=$?
    name=${o%%=*}; name=${name#--}; name=${name#-}
    check "create_llvm_prof $o: refused (exit 2), by name" bash -c "[ $rc -eq 2 ] && grep -q -- '$name' no.err && grep -q 'not supported' no.err"
done
"$PGOKIT" create_gcov --binary=gprog --profile=gperf.data --gcov=no.prof --format=text 2> no.err
check "create_gcov --format: refused by name" grep -q "flag --format is not supported" no.err
"$PGOKIT" create_gcov --binary=gprog --profile=gperf.data --gcov=no.prof -gcov_version=875575082 2> no.err
check "create_gcov -gcov_version of GCC 4.7: refused" grep -q "gcov_version=875575082 is not supported" no.err
check "nothing written when refused" test ! -e no.prof
"$PGOKIT" create_llvm_prof --binary=prog --profile=perf.data 2> no.err
check "--out is required" grep -q -- "--out is required" no.err
finish
