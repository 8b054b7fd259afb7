#!/usr/bin/env bash
# rt_overhead.sh — cost of libpgokit_rt instrumentation (-pg -mfentry +
# self-patching entry hook) on SQLite speedtest1 and Lua:
#   * binary size: stripped file and .text, instrumented (with the runtime
#     linked in) vs plain;
#   * steady-state instructions: valgrind cachegrind Ir (--cache-sim=no,
#     --smc-check=all so the patched code is what valgrind executes), plain vs
#     trace mode (default caller learning, and PGOKIT_RT_LEARN_CALLS=0: hook
#     NOP'd at first entry); counting mode too with RT_BENCH_COUNT=1;
#   * what the trace recorded (functions, raw profile size).
# Usage: bench/rt_overhead.sh [BUILD_DIR] [CC...]   (default build-rt, clang-19 gcc-12)
#        RT_BENCH_WORKLOADS="speedtest1 luabin" (default both; Lua under
#        cachegrind takes minutes per run; "none" = sizes only)
# Takes several minutes (two SQLite builds per compiler + cachegrind runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
B=$root/${1:-build-rt}; shift || true
ccs=${*:-clang-19 gcc-12}
RT_A=$B/libpgokit_rt.a
TOOL=$B/rt-temporal-tool
[ -f "$RT_A" ] || { echo "build the runtime first: make BUILD=${B##*/} $B/libpgokit_rt.a" >&2; exit 1; }
W=$("$root"/scripts/workloads.sh dir)
"$root"/scripts/workloads.sh obtain
SQ=$W/npm/better-sqlite3-12.11.1/package/deps/sqlite3
ST=$W/src/sqlite3-3.40.1/test/speedtest1.c
LUA=$W/src/lua5.4-5.4.4/src
O=$(mktemp -d "${TMPDIR:-/tmp}/rtbench.XXXXXX")
trap 'rm -rf "$O"' EXIT
ir() { # cachegrind Ir of a command
  valgrind --tool=cachegrind --cache-sim=no --smc-check=all --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    awk '/I *refs:/ {gsub(",", "", $NF); print $NF}'
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f%%", (b - a) * 100 / a }'; }
textsz() { size -A "$1" | awk '$1 == ".text" {print $2}'; }

echo "# libpgokit_rt overhead ($(date -u +%FT%TZ), $(uname -r), $(nproc) cores)"
for cc in $ccs; do
  for v in plain instr; do
    flags="-O2 -g"; [ $v = instr ] && flags="$flags -pg -mfentry"
    d=$O/$cc-$v; mkdir -p "$d"
    $cc $flags -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I"$SQ" -c "$SQ/sqlite3.c" -o "$d/sqlite3.o"
    $cc $flags -I"$SQ" -c "$ST" -o "$d/speedtest1.o"
    libs="-lm"; [ $v = instr ] && libs="$RT_A -lm -lpthread"
    $cc -o "$d/speedtest1" "$d/speedtest1.o" "$d/sqlite3.o" $libs -Wl,--build-id
    mkdir -p "$d/lua"
    for f in "$LUA"/*.c; do
      case ${f##*/} in luac.c) continue ;; esac
      $cc $flags -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -c "$f" -o "$d/lua/$(basename "$f" .c).o"
    done
    $cc -o "$d/luabin" "$d"/lua/*.o $libs -ldl -Wl,-E -Wl,--build-id
    for b in speedtest1 luabin; do strip -o "$d/$b.stripped" "$d/$b"; done
  done
  for b in speedtest1 luabin; do
    p=$O/$cc-plain/$b i=$O/$cc-instr/$b
    ps=$(stat -c %s "$p.stripped"); is=$(stat -c %s "$i.stripped")
    pt=$(textsz "$p"); it=$(textsz "$i")
    echo "$cc $b size: stripped $ps -> $is bytes ($(pct "$ps" "$is")), .text $pt -> $it ($(pct "$pt" "$it"))"
  done
  # Steady state: plain vs instrumented (trace mode: hooks patched to NOPs).
  sq_args="--size 10 --memdb"
  lua_script=$root/../shared/workloads/lua_bench.lua
  for b in ${RT_BENCH_WORKLOADS:-speedtest1 luabin}; do
    case $b in speedtest1) args=$sq_args ;; luabin) args=$lua_script ;; *) continue ;; esac
    p=$O/$cc-plain/$b.stripped i=$O/$cc-instr/$b.stripped
    ip=$(ir "$p" $args)
    it=$(cd "$O" && PGOKIT_RT_FILE=$O/$cc-$b.pgoraw ir "$i" $args)
    i0=$(cd "$O" && PGOKIT_RT_LEARN_CALLS=0 PGOKIT_RT_FILE=$O/$cc-$b-nolearn.pgoraw ir "$i" $args)
    echo "$cc $b Ir: plain $ip, trace mode $it ($(pct "$ip" "$it")), trace mode without caller learning $i0 ($(pct "$ip" "$i0"))"
    if [ -n "${RT_BENCH_COUNT:-}" ]; then
      ic=$(cd "$O" && PGOKIT_RT_MODE=count PGOKIT_RT_FILE=$O/$cc-$b-count.pgoraw ir "$i" $args)
      echo "$cc $b Ir: count mode $ic ($(pct "$ip" "$ic"))"
    fi
    if [ -x "$TOOL" ]; then
      n=$("$TOOL" show --binary "$O/$cc-instr/$b" "$O/$cc-$b.pgoraw" | grep -c '^rec ' || true)
      u=$("$TOOL" show --binary "$O/$cc-instr/$b" "$O/$cc-$b.pgoraw" | grep -c '^rec .* ?$' || true)
      echo "$cc $b trace: $n functions recorded ($u unresolved), raw profile $(stat -c %s "$O/$cc-$b.pgoraw") bytes"
    fi
  done
done
