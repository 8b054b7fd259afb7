#!/usr/bin/env bash
# pgokit order end to end: a generated 2000-function program (≈3 MB .text,
# -ffunction-sections) with a scattered start-up set; temporal traces from
# clang-19's own temporal instrumentation; our order vs `llvm-profdata-19
# order` vs the default layout, measured offline as distinct 4 KiB pages of
# .text touched by the traced functions; each ordering file applied by
# ld.lld-19, gold and GNU ld (checked with nm -n); C3 from a call graph and a
# sample profile; bad inputs under the sanitizer build.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 ld.lld-19 ld.gold llvm-profdata-19 python3 nm

P=$PK_ROOT/tests/programs
cd "$T"
python3 "$P/layout_gen.py" 2000 1500 150 60 4 > prog.c

# ---- training: clang's temporal instrumentation, 4 runs (modes 0..3)
clang-19 -O1 -ffunction-sections -fprofile-generate -mllvm -pgo-temporal-instrumentation \
    prog.c -o prog_inst 2> inst.err || { fail "instrumented build: $(tail -1 inst.err)"; finish; exit 1; }
for m in 0 1 2 3; do LLVM_PROFILE_FILE=run$m.profraw ./prog_inst $m > /dev/null; done
llvm-profdata-19 merge run0.profraw run1.profraw run2.profraw run3.profraw -o prog.profdata
llvm-profdata-19 order prog.profdata -o llvm.order
llvm-profdata-19 show --temporal-profile-traces prog.profdata > traces.txt
check_eq "llvm-profdata lists 4 traces" 4 "$(grep -c 'Temporal Profile Trace [0-9]' traces.txt)"

# ---- our order from the same traces
check "order from llvm-profdata listing" "$PGOKIT" order -q --temporal traces.txt -o ours.order
grep -v '^#' ours.order > ours.syms
check_eq "every traced function ordered once" "$(grep -v '^#' llvm.order | sort | wc -l)" \
    "$(sort -u ours.syms | wc -l)"
check_eq "main first (earliest in every trace)" main "$(head -1 ours.syms)"
"$PGOKIT" order -q --temporal traces.txt -o again.order --threads 1
"$PGOKIT" order -q --temporal traces.txt -o again2.order --threads 2
check "deterministic, same with 1 or 2 threads" cmp -s again.order again2.order
check "same as the default run" cmp -s again.order ours.order
"$PGOKIT" order -q --temporal traces.txt -o seed7.order --seed 7
check "another seed gives another order" bash -c '! cmp -s seed7.order ours.order'

# plain-text traces and the indexed temporal profile give the same order
python3 - <<'EOF'
lines = open("traces.txt").read().splitlines()
out, cur, go = [], None, False
for l in lines:
    if l.startswith("Temporal Profile Traces"):
        go = True
    elif go and l.strip().startswith("Temporal Profile Trace "):
        cur = []
        out.append(cur)
    elif go and l.startswith("    "):
        cur.append(l.strip().split(";")[-1])
open("plain.txt", "w").write("\n".join(" ".join(t) for t in out) + "\n")
EOF
"$PGOKIT" order -q --temporal plain.txt -o plain.order
check "plain-text traces: same order" cmp -s plain.order ours.order
if ${CC:-gcc} -D_GNU_SOURCE -I"$PK_ROOT/src" -O1 "$P/layout_mktemporal.c" "$PK_BUILD/libpgokit.a" \
        -lZydis -lzstd -lz -lpthread -lm -o mktemporal 2> mk.err && ./mktemporal plain.txt t.pgotemporal; then
    "$PGOKIT" order -q --temporal t.pgotemporal -o idx.order
    check "indexed temporal profile: same order" cmp -s idx.order ours.order
else
    fail "building the indexed-profile helper: $(tail -1 mk.err)"
fi

# ---- start-up pages: default vs llvm-profdata vs ours (clang objects, lld)
clang-19 -O1 -ffunction-sections -c prog.c -o prog_clang.o
clang-19 -fuse-ld=lld prog_clang.o -o p_default
clang-19 -fuse-ld=lld -Wl,--symbol-ordering-file=llvm.order prog_clang.o -o p_llvm
clang-19 -fuse-ld=lld -Wl,--symbol-ordering-file=ours.order prog_clang.o -o p_ours
read -r pg_def area_def < <(python3 "$P/layout_pages.py" p_default traces.txt)
read -r pg_llvm area_llvm < <(python3 "$P/layout_pages.py" p_llvm traces.txt)
read -r pg_ours area_ours < <(python3 "$P/layout_pages.py" p_ours traces.txt)
echo "4 KiB pages touched at start-up: default $pg_def, llvm-profdata $pg_llvm, pgokit $pg_ours" \
     "(fault-curve area $area_def / $area_llvm / $area_ours)"
check "ours no worse than llvm-profdata order ($pg_ours <= $pg_llvm pages)" [ "$pg_ours" -le "$pg_llvm" ]
check "ours >= 35% fewer pages than default ($pg_ours vs $pg_def)" [ $((pg_ours * 100)) -le $((pg_def * 65)) ]
check "fault-curve area within 5% of llvm-profdata's" [ $((area_ours * 100)) -le $((area_llvm * 105)) ]
check_eq "reordered program behaves the same" "$(./p_default 2)" "$(./p_ours 2)"

# ---- every linker follows the file: the listed functions appear in nm -n in file order
follows() { # binary, list of wanted symbols
    nm -n "$1" | awk '$2 ~ /^[tTW]$/ { print $3 }' > "$1.nm"
    python3 - "$1.nm" "$2" <<'EOF'
import sys
got = [l.strip() for l in open(sys.argv[1])]
want = [l.strip() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
ws = set(want)
seq = [n for n in got if n in ws]
sys.exit(0 if seq == want else 1)
EOF
}
check "lld (clang objects) follows the symbol ordering file" follows p_ours ours.syms
"$PGOKIT" order -q --temporal traces.txt --format gold -o ours.gold
"$PGOKIT" order -q --temporal traces.txt --format ld-script -o ours.ld
# clang -O1 objects (main in .text.main) and gcc -O2 objects (main in .text.startup.main)
gcc-12 -O2 -ffunction-sections -c prog.c -o prog_gcc.o
check_eq "gcc -O2 puts main in .text.startup.main (handled)" 1 \
    "$(objdump -h prog_gcc.o | grep -c ' \.text\.startup\.main ')"
for o in prog_clang.o prog_gcc.o; do
    gcc-12 -fuse-ld=gold -Wl,--section-ordering-file=ours.gold $o -o g_$o.bin
    check "gold follows the section ordering file ($o)" follows g_$o.bin ours.syms
    gcc-12 -fuse-ld=bfd -Wl,-T,ours.ld $o -o b_$o.bin
    check "GNU ld follows the script ($o)" follows b_$o.bin ours.syms
    check_eq "GNU ld-linked program runs ($o)" "$(./p_default 3)" "$(./b_$o.bin 3)"
done
clang-19 -fuse-ld=lld -Wl,--symbol-ordering-file=ours.order prog_gcc.o -o l_gcc.bin
check "lld (gcc objects) follows the symbol ordering file" follows l_gcc.bin ours.syms

# ---- code similarity for the rest of the functions
"$PGOKIT" order -q --temporal traces.txt --compression-utilities p_default -o comp.order
check "compression order lists every function of the binary" \
    [ "$(grep -vc '^#' comp.order)" -ge 2001 ]
check "compression order keeps the start-up block first" \
    cmp -s <(grep -v '^#' comp.order | head -n "$(wc -l < ours.syms)") ours.syms
clang-19 -fuse-ld=lld -Wl,--symbol-ordering-file=comp.order prog_clang.o -o p_comp
check_eq "compression-ordered program behaves the same" "$(./p_default 1)" "$(./p_comp 1)"

# ---- C3: call graph text and LLVM text sample profile
cat > cg.txt <<'EOF'
node main 100 100
node A 50 1000
node B 50 500
node C 10000 10
node E 10 100
arc main A 100
arc A B 400
arc main C 5
arc main E 5
EOF
check_eq "C3 from a call graph" "E main A B C" "$("$PGOKIT" order -q --call-graph cg.txt | grep -v '^#' | xargs)"
cat > sp.txt <<'EOF'
main:200:1
 1: 100 A:100
A:1000:100
 1: 600 B:400
 2: C:50
  1: 50
B:500:400
 1: 500
EOF
check_eq "C3 from a sample profile (inlined callsite C)" "main A B C" \
    "$("$PGOKIT" order -q --c3 sp.txt | grep -v '^#' | xargs)"
check_eq "start-up block, then C3's steady-state functions" "main A B C" \
    "$(printf 'main\n' > m.txt; "$PGOKIT" order -q --temporal m.txt --c3 sp.txt | grep -v '^#' | xargs)"

# ---- bad inputs: clear errors, no crash (sanitizer build)
SAN=${PGOKIT_SAN:-$PGOKIT}
[ -x "$SAN" ] || SAN=$PGOKIT
bad() { # description, expected message part, args...
    local d=$1 m=$2; shift 2
    "$SAN" order -q "$@" -o bad.out > bad.log 2>&1
    local rc=$?
    if [ $rc -eq 1 ] && grep -q -- "$m" bad.log && [ ! -e bad.out ]; then pass "$d"; else
        fail "$d (rc $rc: $(head -c 300 bad.log))"; fi
}
head -c 100 t.pgotemporal > trunc.pgotemporal
bad "truncated indexed profile" "trunc.pgotemporal" --temporal trunc.pgotemporal
printf '\0\1\2garbage' > garbage.txt
bad "binary garbage as traces" "NUL byte" --temporal garbage.txt
: > empty.txt
bad "empty traces file" "no trace" --temporal empty.txt
printf 'node a 1\n' > badcg.txt
bad "malformed call graph" "line 1" --call-graph badcg.txt
printf 'main:x:1\n' > badsp.txt
bad "malformed sample profile" "badsp.txt" --c3 badsp.txt
bad "missing file" "nonexistent" --temporal /nonexistent/traces
head -c 3000 p_default > trunc.elf
bad "truncated ELF for compression" "trunc.elf" --temporal traces.txt --compression-utilities trunc.elf
check "-o /dev/null writes through the device (never renamed over it)" \
    bash -c '"$0" order -q --temporal traces.txt -o /dev/null && [ -c /dev/null ]' "$PGOKIT"
"$SAN" order --temporal traces.txt --format nope > /dev/null 2>&1
check_eq "unknown format is a usage error" 2 $?
finish
