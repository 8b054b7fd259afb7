#!/usr/bin/env bash
# debuginfo_separate.sh — a FULLY stripped binary (objcopy --strip-all: no
# .symtab, no DWARF) whose symbols and DWARF live in a separate debug file,
# found the ways gdb/perf/elfutils find it: --debug-binary (build-id checked),
# .gnu_debuglink (CRC32 checked) beside the binary, in its .debug/ and under
# a debug root, and ROOT/.build-id/xx/yyyy.debug under --debug-dir.
#  - profiles (LBR and IP) from the stripped binary equal the profile from
#    the unstripped one, for every way of finding the debug file;
#  - `pgokit symbolize` equals llvm-symbolizer-19 (on the unstripped binary)
#    on every sampled address and on every instruction address;
#  - a debuglink target with the wrong CRC, a --debug-binary of another build
#    and a build-id file of another build are refused with a clear error;
#  - the summary says which debug file was used.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-symbolizer-19 llvm-objdump-19 objcopy perf qemu-x86_64
PROG=$PK_ROOT/tests/programs
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

# non-PIE: sampled run-time addresses are ELF addresses, for llvm-symbolizer
CF="-O2 -g -fdebug-info-for-profiling -fno-pie -no-pie -fno-omit-frame-pointer"
mkdir -p "$T/bin"
clang-19 $CF "$PROG/profgen_demo.c" -o "$T/demo" || { fail "build fixture"; finish; exit; }
objcopy --only-keep-debug "$T/demo" "$T/demo.debug"
objcopy --strip-all "$T/demo" "$T/bin/demo"
check "the stripped binary has no .symtab and no DWARF" \
    sh -c "! readelf -SW '$T/bin/demo' | grep -qE '\\.symtab|\\.debug_info'"
bid=$(readelf -n "$T/demo" | awk '/Build ID/ {print $3}')
check "the fixture has a build-id" [ ${#bid} -ge 16 ]

"$PGOKIT" record --emulate -q -o "$T/lbr.data" -- "$T/bin/demo" 8 >/dev/null 2>"$T/rec.err"
"$PGOKIT" record --emulate --ip -q -o "$T/ip.data" -- "$T/bin/demo" 8 >/dev/null 2>"$T/rec_ip.err"
check "recorded the stripped binary (LBR and IP)" test -s "$T/lbr.data" -a -s "$T/ip.data"

# references from the unstripped binary (same build, same code bytes)
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/lbr.data" -o "$T/ref_lbr.txt" --format text -q
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/ip.data" -o "$T/ref_ip.txt" --format text -q
check "reference profiles are not empty" grep -q main "$T/ref_lbr.txt"

# same DIR LABEL [pgokit options]: the stripped binary's profiles equal the references
same() {
    local bin=$1 label=$2; shift 2
    rm -f "$T/$label"_*.txt
    "$PGOKIT" profgen --binary "$bin" --perf "$T/lbr.data" -o "$T/${label}_lbr.txt" --format text "$@" \
        2>"$T/$label.err"
    "$PGOKIT" profgen --binary "$bin" --perf "$T/ip.data" -o "$T/${label}_ip.txt" --format text -q "$@"
    check "$label: LBR profile equals the unstripped binary's" cmp -s "$T/ref_lbr.txt" "$T/${label}_lbr.txt"
    check "$label: IP profile equals the unstripped binary's" cmp -s "$T/ref_ip.txt" "$T/${label}_ip.txt"
}

# 1. --debug-binary
same "$T/bin/demo" debug-binary --debug-binary "$T/demo.debug"
check "debug-binary: the summary names the debug file" grep -q "debug info: $T/demo.debug (--debug-binary)" \
    "$T/debug-binary.err"
# without any debug file: a clear error, no output
"$PGOKIT" profgen --binary "$T/bin/demo" --perf "$T/lbr.data" -o "$T/none.txt" 2>"$T/none.err"
check "no debug file: error, no output" test ! -e "$T/none.txt"
check "no debug file: the message says debug information is missing" grep -qi 'debug' "$T/none.err"

# 2. .gnu_debuglink: beside the binary, in .debug/, under a root
objcopy --strip-all --add-gnu-debuglink="$T/demo.debug" "$T/demo" "$T/linked"
for where in beside dotdebug root; do
    d=$T/dl_$where; rm -rf "$d"; mkdir -p "$d/app"
    cp "$T/linked" "$d/app/demo"
    case $where in
    beside) cp "$T/demo.debug" "$d/app/" ;;
    dotdebug) mkdir -p "$d/app/.debug"; cp "$T/demo.debug" "$d/app/.debug/" ;;
    root) mkdir -p "$d/root$d/app"; cp "$T/demo.debug" "$d/root$d/app/" ;;
    esac
    same "$d/app/demo" "debuglink-$where" --debug-dir "$d/root"
    check "debuglink-$where: the summary says debuglink" grep -q 'demo.debug (debuglink)' "$T/debuglink-$where.err"
done
# a debuglink target of the same name but another content: refused (CRC)
d=$T/dl_badcrc; mkdir -p "$d"; cp "$T/linked" "$d/demo"
cp "$T/demo.debug" "$d/demo.debug"; printf 'x' >> "$d/demo.debug"
"$PGOKIT" profgen --binary "$d/demo" --perf "$T/lbr.data" -o "$d/out.txt" 2>"$d/err"; rc=$?
check_eq "wrong CRC: refused" 1 "$rc"
check "wrong CRC: no output" test ! -e "$d/out.txt"
check "wrong CRC: the message names the file and the CRC" grep -q "$d/demo.debug.*CRC32" "$d/err"
"$PGOKIT" decode --binary "$d/demo" --stats > /dev/null 2>&1
check_eq "wrong CRC: a command that needs no debug information still works (decode)" 0 "$?"

# 3. build-id tree under --debug-dir
r=$T/bidroot; mkdir -p "$r/.build-id/${bid:0:2}"
cp "$T/demo.debug" "$r/.build-id/${bid:0:2}/${bid:2}.debug"
same "$T/bin/demo" build-id --debug-dir "$T/nothing-here" --debug-dir "$r"
check "build-id: the summary names the build-id file" \
    grep -q "debug info: $r/.build-id/${bid:0:2}/${bid:2}.debug (build-id)" "$T/build-id.err"

# another build: a --debug-binary or a build-id file with another build-id is refused
clang-19 ${CF/-O2/-O1} "$PROG/profgen_demo.c" -o "$T/other"
objcopy --only-keep-debug "$T/other" "$T/other.debug"
"$PGOKIT" profgen --binary "$T/bin/demo" --debug-binary "$T/other.debug" --perf "$T/lbr.data" \
    -o "$T/o.txt" 2>"$T/o.err"; rc=$?
check_eq "--debug-binary of another build: refused" 1 "$rc"
check "--debug-binary of another build: the message says build-id" grep -q "build-id.*does not match" "$T/o.err"
r2=$T/badroot; mkdir -p "$r2/.build-id/${bid:0:2}"
cp "$T/other.debug" "$r2/.build-id/${bid:0:2}/${bid:2}.debug"
"$PGOKIT" profgen --binary "$T/bin/demo" --debug-dir "$r2" --perf "$T/lbr.data" -o "$T/o2.txt" 2>"$T/o2.err"; rc=$?
check_eq "build-id file of another build: refused" 1 "$rc"
check "build-id file of another build: the message says so" grep -q "another build-id" "$T/o2.err"

# CSSPGO (pseudo-probes, call stacks) and line-based context-sensitive profiles
clang-19 -O2 -g -fpseudo-probe-for-profiling "$PROG/profgen_demo.c" -o "$T/pp"
objcopy --only-keep-debug "$T/pp" "$T/pp.debug"
objcopy --strip-all --add-gnu-debuglink="$T/pp.debug" "$T/pp" "$T/pp.s"
"$PGOKIT" record --emulate -q -o "$T/pp.data" -- "$T/pp.s" 8 >/dev/null 2>&1
"$PGOKIT" profgen --binary "$T/pp" --perf "$T/pp.data" -o "$T/pp_ref.txt" --format text -q
"$PGOKIT" profgen --binary "$T/pp.s" --perf "$T/pp.data" -o "$T/pp_s.txt" --format text -q
check "CSSPGO: the reference is a probe profile" grep -q '!CFGChecksum' "$T/pp_ref.txt"
check "CSSPGO: stripped + debuglink gives the unstripped binary's profile" cmp -s "$T/pp_ref.txt" "$T/pp_s.txt"
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/lbr.data" --cs -o "$T/cs_ref.txt" --format text -q
"$PGOKIT" profgen --binary "$T/bin/demo" --debug-binary "$T/demo.debug" --perf "$T/lbr.data" --cs \
    -o "$T/cs_s.txt" --format text -q
check "--cs: stripped + --debug-binary gives the unstripped binary's profile" cmp -s "$T/cs_ref.txt" "$T/cs_s.txt"

# every other command that opens the binary: the same output from the
# stripped binary + its debug file as from the unstripped binary
U=$T/demo S=$T/bin/demo
DB="--debug-binary $T/demo.debug"
"$PGOKIT" check --binary "$U" "$T/ref_lbr.txt" > "$T/check_u.txt" 2>/dev/null
"$PGOKIT" check --binary "$S" $DB "$T/ref_lbr.txt" 2>"$T/check_s.err" | sed "s|$S|$U|g" > "$T/check_s.txt"
check "check: same report" cmp -s "$T/check_u.txt" "$T/check_s.txt"
check "check: names the debug file" grep -q "check: debug info: $T/demo.debug" "$T/check_s.err"
"$PGOKIT" report "$T/ref_lbr.txt" --binary "$U" -o "$T/rep_u.html" -q
"$PGOKIT" report "$T/ref_lbr.txt" --binary "$S" $DB -o "$T/rep_s.html" 2>"$T/rep_s.err"
sed -i "s|$S|$U|g" "$T/rep_s.html"
check "report: same page (annotated source included)" cmp -s "$T/rep_u.html" "$T/rep_s.html"
check "report: names the debug file" grep -q "report: debug info: $T/demo.debug" "$T/rep_s.err"
"$PGOKIT" order -q --c3 "$T/ref_lbr.txt" --binary "$U" > "$T/order_u.txt"
"$PGOKIT" order --c3 "$T/ref_lbr.txt" --binary "$S" $DB > "$T/order_s.txt" 2>"$T/order_s.err"
check "order: same order (function sizes from the debug file's symbols)" cmp -s "$T/order_u.txt" "$T/order_s.txt"
check "order: names the debug file" grep -q "order: debug info: $T/demo.debug" "$T/order_s.err"
printf 'main\nrun_vm\n' > "$T/traces.txt"
"$PGOKIT" order -q --temporal "$T/traces.txt" --compression-utilities "$U" > "$T/comp_u.txt"
"$PGOKIT" order -q --temporal "$T/traces.txt" --compression-utilities "$S" --debug-dir "$r" > "$T/comp_s.txt"
check "order --compression-utilities: same order from the stripped binary" \
    sh -c "cmp -s '$T/comp_u.txt' '$T/comp_s.txt' && [ \$(grep -vc '^#' '$T/comp_u.txt') -ge 4 ]"
for w in u s; do
    b=$U; [ $w = s ] && b=$S
    "$PGOKIT" store init -q "$T/store_$w.db"
    "$PGOKIT" store add "$T/store_$w.db" --binary "$b" $([ $w = s ] && echo "$DB") --name demo --host h --time 2026-01-01 \
        "$T/lbr.data" 2>"$T/store_$w.err" >/dev/null
    "$PGOKIT" store pull -q "$T/store_$w.db" --build-id "$bid" -o "$T/store_$w.raw"
done
"$PGOKIT" record --emulate -q --exact-counts "$T/demo.exact" -o "$T/ex.data" -- "$S" 8 >/dev/null 2>&1
"$PGOKIT" overlap --exact "$T/demo.exact" --binary "$U" "$T/ref_lbr.txt" > "$T/ov_u.txt" 2>/dev/null
"$PGOKIT" overlap --exact "$T/demo.exact" --binary "$S" $DB "$T/ref_lbr.txt" > "$T/ov_s.txt" 2>"$T/ov_s.err"
check "overlap --exact: the same block overlap" \
    sh -c "grep -q 'block overlap [0-9]' '$T/ov_u.txt' && cmp -s '$T/ov_u.txt' '$T/ov_s.txt'"
check "overlap --exact: names the debug file" grep -q "overlap: debug info: $T/demo.debug" "$T/ov_s.err"
# (the raw profile records the binary's path: compared through the profiles made of them)
for w in u s; do
    "$PGOKIT" profgen --binary "$U" --raw "$T/store_$w.raw" -o "$T/store_$w.txt" --format text -q
done
check "store add: raw profiles that give the same profile" cmp -s "$T/store_u.txt" "$T/store_s.txt"
check "store add: which is the profile of the recording" cmp -s "$T/ref_lbr.txt" "$T/store_s.txt"
check "store add: names the debug file" grep -q "store add: debug info: $T/demo.debug" "$T/store_s.err"

# 4. symbolization of the stripped binary equals llvm-symbolizer's of the unstripped one
perf script -F ip,brstack -i "$T/lbr.data" 2>/dev/null |
    awk '{ print $1; for (i = 2; i <= NF; i++) { split($i, a, "/"); print a[1]; print a[2] } }' |
    grep -E '^0x[0-9a-f]+$' | sort -u > "$T/sampled.addrs"
perf script -F ip -i "$T/ip.data" 2>/dev/null | awk 'NF { print "0x" $1 }' | sort -u >> "$T/sampled.addrs"
llvm-objdump-19 -d --no-show-raw-insn "$T/demo" | awk '/^ +[0-9a-f]+:/ { a=$1; sub(":", "", a); print "0x" a }' \
    > "$T/insn.addrs"
for set in sampled insn; do
    n=$(wc -l < "$T/$set.addrs")
    llvm-symbolizer-19 --obj="$T/demo" --inlines --no-demangle --output-style=JSON < "$T/$set.addrs" |
        sed "s|\"ModuleName\":\"$T/demo\"|\"ModuleName\":\"$T/bin/demo\"|" > "$T/$set.llvm"
    for how in "--debug-binary $T/demo.debug" "--debug-dir $r"; do
        "$PGOKIT" symbolize --binary "$T/bin/demo" $how --output-style=JSON < "$T/$set.addrs" \
            > "$T/$set.ours" 2>"$T/$set.err"
        bad=$(diff "$T/$set.ours" "$T/$set.llvm" | grep -c '^<')
        [ "$bad" -gt 0 ] && diff "$T/$set.ours" "$T/$set.llvm" | head -4
        check "symbolize ($set addresses, ${how%% *}): equal to llvm-symbolizer-19 on $n addresses" \
            [ "$bad" -eq 0 -a "$n" -gt 20 ]
    done
    check "symbolize says which debug file it used" grep -q "debug info: .*(build-id)" "$T/$set.err"
done
finish
