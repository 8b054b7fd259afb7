#!/usr/bin/env bash
# debuginfo_deb.sh — a real distribution build: Debian's lua5.4 source package
# built with `dpkg-buildpackage -b -uc -us`, so dh_strip strips the binary
# fully and dh_dwz compresses the debug files (a .gnu_debugaltlink to
# /usr/lib/debug/.dwz/<triplet>/lua5.4.debug, compressed sections) into the
# -dbg package under /usr/lib/debug/.build-id/. Both packages are unpacked
# with `dpkg -x` into a temporary root. pgokit records the installed stripped
# /usr/bin/lua5.4 (`record --emulate`, LBR and --ip; `record --ip` through
# perf where it may record), finds its debug file by
# build-id under ROOT/usr/lib/debug (--debug-dir) and writes profiles equal
# to those made from the unstripped binary of the same build (src/lua5.4 of
# the build tree: same build-id); `symbolize` on every instruction address
# equals llvm-symbolizer-19 on the unstripped binary.
#
# The source is fetched once (apt-get source with a private APT configuration
# whose deb-src entries are derived from the system's Debian sources) into
# ${PK_DEBSRC_CACHE:-~/.cache/pgokit/debsrc}, outside the repository. The
# build takes about two minutes here.
source "$(dirname "$0")/../lib.sh"
need dpkg-buildpackage dpkg-source dpkg-checkbuilddeps apt-get dwz qemu-x86_64 llvm-symbolizer-19 llvm-objdump-19 \
    llvm-dwarfdump-19 timeout
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
PKG=lua5.4
CACHE=${PK_DEBSRC_CACHE:-$HOME/.cache/pgokit/debsrc}

fetch_source() {
    local top=$CACHE sys=/etc/apt/sources.list.d/debian.sources
    [ -r "$sys" ] || return 1
    mkdir -p "$top/apt/parts" "$top/apt/lists/partial" "$top/apt/archives/partial" "$top/src"
    # every stanza of the system list but -security, as deb-src
    awk 'BEGIN{RS="";ORS="\n\n"} !/Suites:[^\n]*-security/ {gsub(/Types: deb\n/,"Types: deb-src\n"); print}' \
        "$sys" > "$top/apt/parts/debian.sources"
    cat > "$top/apt/apt.conf" <<CONF
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$top/apt/parts";
Dir::State::Lists "$top/apt/lists";
Dir::Cache::Archives "$top/apt/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CONF
    APT_CONFIG=$top/apt/apt.conf timeout 120 apt-get update -qq >/dev/null 2>&1 &&
        (cd "$top/src" && APT_CONFIG=$top/apt/apt.conf timeout 120 apt-get source -qq --download-only "$PKG" \
            >/dev/null 2>&1)
}
dsc=$(ls "$CACHE"/src/${PKG}_*.dsc 2>/dev/null | tail -1)
if [ -z "$dsc" ]; then
    fetch_source || true
    dsc=$(ls "$CACHE"/src/${PKG}_*.dsc 2>/dev/null | tail -1)
fi
[ -n "$dsc" ] || { echo "skipped: the $PKG source package could not be fetched into $CACHE"; exit 77; }

mkdir -p "$T/build" "$T/root"
dpkg-source -x "$dsc" "$T/build/src" >/dev/null 2>&1 || { fail "dpkg-source -x $dsc"; finish; exit; }
(cd "$T/build/src" && dpkg-checkbuilddeps) 2>"$T/deps.err" ||
    { echo "skipped: $(cat "$T/deps.err") (scripts/setup.sh installs them)"; exit 77; }
t0=$(date +%s)
(cd "$T/build/src" && timeout 400 dpkg-buildpackage -b -uc -us -j2 >"$T/build.log" 2>&1)
rc=$?
echo "dpkg-buildpackage: exit $rc after $(($(date +%s) - t0)) s"
check_eq "dpkg-buildpackage -b -uc -us" 0 "$rc"
check "dh_strip and dh_dwz ran" sh -c "grep -q 'dh_strip' '$T/build.log' && grep -q 'dh_dwz' '$T/build.log'"
for deb in "$T"/build/${PKG}_*.deb "$T"/build/*-dbg_*.deb "$T"/build/*-dbgsym_*.deb; do
    [ -f "$deb" ] && dpkg -x "$deb" "$T/root"
done
BIN=$T/root/usr/bin/$PKG
UNSTRIPPED=$T/build/src/src/$PKG
DBG=$T/root/usr/lib/debug
bid=$(readelf -n "$BIN" 2>/dev/null | awk '/Build ID/ {print $3}')
ubid=$(readelf -n "$UNSTRIPPED" 2>/dev/null | awk '/Build ID/ {print $3}')
check "installed binary and build-tree binary: same build-id ($bid)" [ -n "$bid" -a "$bid" = "$ubid" ]
check "the installed binary is fully stripped" sh -c "! readelf -SW '$BIN' 2>/dev/null | grep -qE '\\.symtab|\\.debug_info'"
dbgfile=$DBG/.build-id/${bid:0:2}/${bid:2}.debug
check "the -dbg package holds the debug file by build-id" test -f "$dbgfile"
check "the debug file is dwz-compressed (.gnu_debugaltlink)" sh -c "readelf -SW '$dbgfile' 2>/dev/null | grep -q gnu_debugaltlink"
check "the debug file uses DW_FORM_GNU_ref_alt" sh -c "llvm-dwarfdump-19 -v --debug-info '$dbgfile' 2>/dev/null | grep -q DW_FORM_GNU_ref_alt"

cat > "$T/bench.lua" <<'EOF'
local N = tonumber(arg[1]) or 20
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 20000 do t[i] = tostring(i * 7 % 1000) end
table.sort(t)
local s = 0
for i = 1, #t do s = s + #t[i] end
print(fib(N) + s)
EOF
"$PGOKIT" record --emulate -q -o "$T/lbr.data" -- "$BIN" "$T/bench.lua" >"$T/lbr.out" 2>&1
"$PGOKIT" record --emulate --ip -q -o "$T/ip.data" -- "$BIN" "$T/bench.lua" >"$T/ip.out" 2>&1
check "recorded the installed stripped binary (LBR and IP)" test -s "$T/lbr.data" -a -s "$T/ip.data"
# and natively, IP samples through perf (cpu-clock, frame-pointer chains) where perf may record
kinds="lbr ip"
if "$PGOKIT" record --ip --freq 2000 -q -o "$T/perf_ip.data" -- "$BIN" "$T/bench.lua" 27 >"$T/perf_ip.out" 2>&1 &&
    [ -s "$T/perf_ip.data" ]; then
    kinds="$kinds perf_ip"
else
    echo "note: perf cannot record here: $(tail -1 "$T/perf_ip.out")"
fi
for k in $kinds; do
    "$PGOKIT" profgen --binary "$UNSTRIPPED" --perf "$T/$k.data" -o "$T/ref_$k.txt" --format text -q
    "$PGOKIT" profgen --binary "$BIN" --debug-dir "$DBG" --perf "$T/$k.data" -o "$T/dbg_$k.txt" --format text \
        2>"$T/dbg_$k.err"
    check "$k: the profile has the interpreter's functions" grep -q '^luaV_execute:' "$T/ref_$k.txt"
    check "$k: profile from the stripped binary + dwz'd debug file equals the unstripped binary's" \
        cmp -s "$T/ref_$k.txt" "$T/dbg_$k.txt"
    check "$k: the summary names the debug file and its dwz supplement" \
        grep -q "debug info: $dbgfile (build-id), dwz supplementary file $DBG/.dwz/" "$T/dbg_$k.err"
done
# symbolization on every instruction address
llvm-objdump-19 -d --no-show-raw-insn "$UNSTRIPPED" | awk '/^ +[0-9a-f]+:/ { a=$1; sub(":", "", a); print "0x" a }' \
    > "$T/insn.addrs"
n=$(wc -l < "$T/insn.addrs")
llvm-symbolizer-19 --obj="$UNSTRIPPED" --inlines --no-demangle --output-style=JSON < "$T/insn.addrs" |
    sed "s|\"ModuleName\":\"$UNSTRIPPED\"|\"ModuleName\":\"$BIN\"|" > "$T/insn.llvm"
"$PGOKIT" symbolize -q --binary "$BIN" --debug-dir "$DBG" --output-style=JSON < "$T/insn.addrs" > "$T/insn.ours"
# One difference is expected: gcc's DWARF 5 gives a DIE's DW_AT_decl_file as
# DW_FORM_implicit_const, which LLVM 19 cannot turn into a file (no start file
# in llvm-symbolizer, and pgokit answers the same on such DWARF); dwz rewrites
# the abbreviations of the DIEs it moves into the supplementary file with an
# explicit form, and there the file is known. So a frame whose only
# difference is a start file where llvm-symbolizer has none is counted apart.
python3 - "$T/insn.ours" "$T/insn.llvm" > "$T/insn.cmp" <<'PY'
import json, sys
ours = open(sys.argv[1]).read().splitlines(); ref = open(sys.argv[2]).read().splitlines()
bad = known = 0
for o, r in zip(ours, ref):
    if o == r: continue
    jo, jr = json.loads(o), json.loads(r)
    fo, fr = jo.get("Symbol", []), jr.get("Symbol", [])
    if len(fo) == len(fr) and all(a == b or (b.get("StartFileName") == "" and
                                             dict(a, StartFileName="") == b) for a, b in zip(fo, fr)):
        known += 1
    else:
        bad += 1
        if bad <= 2: print("ours: " + o + "\nllvm: " + r, file=sys.stderr)
print(bad + abs(len(ours) - len(ref)), known)
PY
read -r bad known < "$T/insn.cmp"
echo "symbolize: $n addresses, $bad mismatching, $known with a start file llvm-symbolizer cannot give"
check "symbolize: equal to llvm-symbolizer-19 (unstripped) on $n addresses" [ "$bad" -eq 0 -a "$n" -gt 1000 ]
check "symbolize: under 1 % of the addresses differ only by a start file ($known)" [ $((known * 100)) -lt "$n" ]
finish
