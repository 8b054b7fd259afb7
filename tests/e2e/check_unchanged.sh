#!/usr/bin/env bash
# check_unchanged.sh — `pgokit check` of a profile against a binary of the
# same sources: the very binary that was profiled, and an -O0 -g build. Both
# must be fresh, 0 % stale, no function listed. The -O2 profiles hold what
# an -O0 build has no code for (line-0 locations stored as wrapped offsets,
# "do{" and "}" lines, lines of a caller's text in an inlined copy, inlined
# header functions that -O0 calls through the PLT) and, from IP samples,
# call targets seen through tail calls and frames a frame-pointer chain
# skipped. Programs: record_prog.c (C, a shared library), demangle_cpp.cc
# (C++, exceptions) and SQLite's speedtest1 (a 250,000-line file: offsets of
# line 0 wrap without bit 15), each recorded emulated, LBR and IP.
# Then profgen's frame-pointer warning: stock perf --call-graph fp of a
# program built without frame pointers gives one warning line naming the
# flags; built with them, none.
source "$(dirname "$0")/../lib.sh"
need clang-19 clang++-19 qemu-x86_64 python3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
P=$PK_ROOT/tests/programs

# check_fresh LABEL BINARY PROFILE: exit 0, nothing stale, no function listed
check_fresh() {
    "$PGOKIT" check --binary "$2" "$3" --top 0 -v >"$T/$1.txt" 2>&1
    local rc=$?
    "$PGOKIT" check --binary "$2" "$3" --top 0 --json >"$T/$1.json" 2>/dev/null
    local got
    got=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["stale_samples"], len(r["stale_functions"]))' "$T/$1.json" 2>/dev/null)
    if [ $rc -eq 0 ] && [ "$got" = "0 0" ] && grep -q '^fresh: 0.00 %' "$T/$1.txt"; then
        pass "$1: fresh, 0 % stale, no function listed"
    else
        fail "$1: exit $rc, stale samples and functions '$got': $(sed -n '3,12p' "$T/$1.txt")"
    fi
}

# profiles LABEL BINARY ARGS...: emulated LBR and IP recordings and their profiles
profiles() {
    local l=$1 bin=$2; shift 2
    "$PGOKIT" record --emulate -q --period 997 -o "$T/$l.lbr.data" -- "$bin" "$@" >/dev/null 2>&1
    "$PGOKIT" record --emulate --ip -q --period 997 -o "$T/$l.ip.data" -- "$bin" "$@" >/dev/null 2>&1
    "$PGOKIT" profgen --binary "$bin" --perf "$T/$l.lbr.data" -o "$T/$l.lbr.prof" 2>/dev/null
    "$PGOKIT" profgen --binary "$bin" --perf "$T/$l.ip.data" -o "$T/$l.ip.prof" 2>/dev/null
    check "$l: LBR and IP profiles written" test -s "$T/$l.lbr.prof" -a -s "$T/$l.ip.prof"
}

# ---- small programs ----
clang-19 -O2 -g -fPIC -shared -o "$T/librecord_lib.so" "$P/record_lib.c" &&
clang-19 -O2 -g -fPIE -pie -o "$T/c_O2" "$P/record_prog.c" -L"$T" -lrecord_lib -Wl,-rpath,"$T" &&
clang-19 -O0 -g -fPIE -pie -o "$T/c_O0" "$P/record_prog.c" -L"$T" -lrecord_lib -Wl,-rpath,"$T" &&
clang++-19 -O2 -g -o "$T/cpp_O2" "$P/demangle_cpp.cc" && clang++-19 -O0 -g -o "$T/cpp_O0" "$P/demangle_cpp.cc" ||
    { fail "build the test programs"; finish; exit; }
profiles c "$T/c_O2" 30000
profiles cpp "$T/cpp_O2" 100000
for l in c cpp; do
    for k in lbr ip; do
        check_fresh "$l $k vs the profiled binary" "$T/${l}_O2" "$T/$l.$k.prof"
        check_fresh "$l $k vs -O0" "$T/${l}_O0" "$T/$l.$k.prof"
    done
done
# the -O0 build calls atoi, which the -O2 build inlined: that inlinee is no stale call
check "c: the profile has atoi inlined into main" \
    bash -c "'$PGOKIT' show --json '$T/c.lbr.prof' | grep -q '\"atoi\"'"

# ---- a frame skipped in front of an indirect call ----
# An IP sample in the prologue of a function called through a pointer, before
# it pushed its frame pointer, shows it called from its caller's caller: a
# written profile with that call is fresh. The same call two frames up, or on
# a line with no call, is stale.
cat > "$T/ind.c" <<'C'
int target(int x) { return x * 3 + 1; }
__attribute__((noinline)) int wrap(int (*fp)(int), int x) { return fp(x) + 1; }
__attribute__((noinline)) int outer(int (*fp)(int), int x) { return wrap(fp, x) + 2; }
int main(int argc, char **argv)
{
    int (*volatile fp)(int) = target;
    int s = 0;
    for (int i = 0; i < argc * 1000; i++)
        s += wrap(fp, i);
    for (int i = 0; i < argc * 1000; i++)
        s += outer(fp, i);
    return s & 1;
}
C
clang-19 -O2 -g -o "$T/ind" "$T/ind.c" || fail "build ind.c"
# ind_prof OFFSET: main calling target at main's line OFFSET (wrap's line 5, outer's 7, return 8)
ind_prof() { printf 'main:100:1\n 4: 50\n %s: 50 target:50\n' "$1" > "$T/ind_$1.prof"; }
ind_prof 5
check_fresh "indirect call one frame down: fresh" "$T/ind" "$T/ind_5.prof"
for o in 7 8; do
    ind_prof $o
    "$PGOKIT" check --binary "$T/ind" "$T/ind_$o.prof" --top 0 --json >"$T/ind_$o.json" 2>/dev/null
    check_eq "the call at offset $o (two frames up, no call): stale" 1 \
        "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["stale_functions"]))' "$T/ind_$o.json")"
done

# ---- SQLite ----
W=$("$PK_ROOT/scripts/workloads.sh" dir 2>/dev/null)
if [ -n "$W" ] && PK_WORKLOADS_CACHE=1 XFLAGS= "$PK_ROOT/scripts/workloads.sh" build binary-d5 sqlite >/dev/null 2>&1 &&
   [ -x "$W/out/binary-d5/speedtest1" ]; then
    sq=$W/npm/better-sqlite3-12.11.1/package/deps/sqlite3
    cp "$W/out/binary-d5/speedtest1" "$T/sq_O2"
    clang-19 -O0 -g -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I"$sq" \
        "$W/src/sqlite3-3.40.1/test/speedtest1.c" "$sq/sqlite3.c" -o "$T/sq_O0" -lm ||
        fail "build speedtest1 at -O0"
    profiles sq "$T/sq_O2" --size 3
    # a line-0 location whose wrapped offset has no bit 15 (declared past line 32768)
    "$PGOKIT" show --json "$T/sq.lbr.prof" >"$T/sq.json"
    check "sq: the profile holds line-0 offsets without bit 15 (functions declared past line 32768)" \
        python3 - "$T/sq.json" "$T/sq_O2" <<'PY'
import json, subprocess, sys
decl = {}
out = subprocess.run(["llvm-dwarfdump-19", "--debug-info", sys.argv[2]], capture_output=True, text=True).stdout
name = None
for line in out.splitlines():
    line = line.strip()
    if line.startswith("DW_AT_name") or line.startswith("DW_AT_linkage_name"):
        name = line.split('"')[1]
    elif line.startswith("DW_AT_decl_line") and name:
        decl.setdefault(name, int(line.split("(")[1].rstrip(")")))
hits = 0
for f in json.load(open(sys.argv[1])):
    s = decl.get(f["name"])
    if s and s > 32768:
        hits += sum(1 for b in f.get("body", []) if b["line"] == (-s) & 0xffff)
sys.exit(0 if hits else 1)
PY
    for k in lbr ip; do
        check_fresh "sq $k vs the profiled binary" "$T/sq_O2" "$T/sq.$k.prof"
        check_fresh "sq $k vs -O0" "$T/sq_O0" "$T/sq.$k.prof"
    done
else
    echo "note: SQLite workload unavailable; its part is skipped"
fi

# ---- profgen: missing frame pointers, one warning line ----
if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1; then
    for v in nofp fp; do
        f=; [ $v = fp ] && f="-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
        clang-19 -O2 -g $f "$P/record_ip.c" -o "$T/ip_$v" -lpthread
        perf record -q -e cpu-clock -c 100000 --call-graph fp -o "$T/ip_$v.data" -- "$T/ip_$v" 0.5 >/dev/null 2>&1
        "$PGOKIT" profgen --binary "$T/ip_$v" --perf "$T/ip_$v.data" -o "$T/ip_$v.prof" 2>"$T/ip_$v.err"
        check "$v: profile written" test -s "$T/ip_$v.prof"
    done
    check_eq "without frame pointers: one warning line" 1 "$(grep -c 'warning: .*no known caller' "$T/ip_nofp.err")"
    check "it names the flags" grep -q -- '-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer' "$T/ip_nofp.err"
    check "it gives the share of samples" grep -qE 'warning: [0-9.]+ % of the samples' "$T/ip_nofp.err"
    check_eq "with frame pointers: no warning" 0 "$(grep -c 'no known caller' "$T/ip_fp.err")"
else
    echo "note: perf cannot sample here; the frame-pointer warning part is skipped"
fi
finish
