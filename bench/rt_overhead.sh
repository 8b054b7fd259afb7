#!/usr/bin/env bash
# rt_overhead.sh — cost of libpgokit_rt instrumentation (-pg -mfentry +
# self-patching entry hook) on SQLite speedtest1, Lua and CPython 3.11
# (Debian's sources, the program of the start-up acceptance):
#   * binary size: stripped file and .text, instrumented (with the runtime
#     linked in) vs plain; the runtime's own share is printed separately
#     (its code + data, from a program with no instrumented function);
#   * steady-state instructions: valgrind cachegrind Ir (--cache-sim=no,
#     --smc-check=all so the patched code is what valgrind executes), plain vs
#     trace mode (default caller learning, and PGOKIT_RT_LEARN_CALLS=0: hook
#     removed at first entry); counting mode too with RT_BENCH_COUNT=1;
#     CPython runs bench/rt_py_bench.py (pure Python, PYTHONHASHSEED=0);
#   * CPython start-up (`python -c pass`): Ir plain vs trace mode (the
#     runtime's recording and patching included) and functions recorded;
#   * what the trace recorded (functions, raw profile size), and for CPython
#     the 4 KiB pages holding the entries that `-c pass` runs, next to the
#     pages a start-up pass patching every function entry would write.
# Cachegrind Ir is deterministic for these runs (fixed inputs and hash seed)
# up to the size of the environment and paths: repeated runs differ by a few
# thousand instructions (< 0.001%); sizes are exact.
#
# Usage: bench/rt_overhead.sh [BUILD_DIR] [CC...]   (default build-rt, clang-19 gcc-12)
# env:   RT_BENCH_WORKLOADS="speedtest1 luabin python" Ir workloads (default
#          all three; "none" = sizes only). CPython is built (plain and
#          instrumented, ~10 min each at -j2, once: builds are kept in
#          RT_BENCH_WORK and the instrumented one is relinked on every run so
#          the current runtime is measured) unless RT_BENCH_PYTHON=0;
#          RT_BENCH_SMALL=0 skips SQLite and Lua.
#        RT_BENCH_WORK (default ~/.cache/pgokit/rt-bench), JOBS (2),
#        RT_PY_ROUNDS (rounds of rt_py_bench.py, default 40).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$root
B=$root/${1:-build-rt}; shift || true
ccs=${*:-clang-19 gcc-12}
RT_A=$B/libpgokit_rt.a
TOOL=$B/rt-temporal-tool
[ -f "$RT_A" ] || { echo "build the runtime first: make BUILD=${B##*/} $B/libpgokit_rt.a" >&2; exit 1; }
workloads=${RT_BENCH_WORKLOADS:-speedtest1 luabin python}
want_py=${RT_BENCH_PYTHON:-1}
want_small=${RT_BENCH_SMALL:-1}
PYW=${RT_BENCH_WORK:-$HOME/.cache/pgokit/rt-bench}
py_rounds=${RT_PY_ROUNDS:-40}
W=$("$root"/scripts/workloads.sh dir)
"$root"/scripts/workloads.sh obtain
SQ=$W/npm/better-sqlite3-12.11.1/package/deps/sqlite3
ST=$W/src/sqlite3-3.40.1/test/speedtest1.c
LUA=$W/src/lua5.4-5.4.4/src
O=$(mktemp -d "${TMPDIR:-/tmp}/rtbench.XXXXXX")
trap 'rm -rf "$O"' EXIT
# shellcheck source=bench/lib/cpython.sh
source "$root/bench/lib/cpython.sh"
ir() { # cachegrind Ir of a command
  valgrind --tool=cachegrind --cache-sim=no --smc-check=all --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    awk '/I *refs:/ {gsub(",", "", $NF); print $NF}'
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f%%", (b - a) * 100 / a }'; }
textsz() { size -A "$1" | awk '$1 == ".text" {print $2}'; }
allocsz() { # bytes of the loaded sections but .bss/.tbss (what the file holds for the process)
  size -A "$1" | awk '$3 > 0 && $1 != ".bss" && $1 != ".tbss" {s += $2} END {print s}'
}
size_line() { # label plain instr
  local ps is pt it
  ps=$(stat -c %s "$2.stripped"); is=$(stat -c %s "$3.stripped")
  pt=$(textsz "$2"); it=$(textsz "$3")
  echo "$1 size: stripped $ps -> $is bytes ($(pct "$ps" "$is")), .text $pt -> $it ($(pct "$pt" "$it"))"
}
py_env() { (unset PYTHONPATH PYTHONHOME PYTHONSTARTUP; export PYTHONHASHSEED=0; "$@"); }
show_trace() { # label binary raw
  [ -x "$TOOL" ] || return 0
  local n u
  n=$("$TOOL" show --binary "$2" "$3" | grep -c '^rec ' || true)
  u=$("$TOOL" show --binary "$2" "$3" | grep -c '^rec .* ?$' || true)
  echo "$1 trace: $n functions recorded ($u unresolved), raw profile $(stat -c %s "$3") bytes"
}

echo "# libpgokit_rt overhead ($(date -u +%FT%TZ), $(uname -r), $(nproc) cores)"
echo "# Ir: valgrind cachegrind, repeatable to a few thousand instructions (environment size); sizes exact"
for cc in $ccs; do
  # The runtime's fixed share: a program whose only function is main.
  d=$O/$cc-empty; mkdir -p "$d"
  echo 'int main(void) { return 0; }' > "$d/e.c"
  $cc -O2 -c "$d/e.c" -o "$d/e.o"
  $cc -o "$d/plain" "$d/e.o" -Wl,--build-id
  $cc -O2 -pg -mfentry -c "$d/e.c" -o "$d/e-pg.o"
  $cc -o "$d/instr" "$d/e-pg.o" "$RT_A" -lpthread -Wl,--build-id
  strip -o "$d/plain.stripped" "$d/plain"; strip -o "$d/instr.stripped" "$d/instr"
  echo "$cc runtime alone: .text +$(( $(textsz "$d/instr") - $(textsz "$d/plain") )) bytes," \
       "loaded sections (all but .bss) +$(( $(allocsz "$d/instr") - $(allocsz "$d/plain") )) bytes," \
       "stripped file +$(( $(stat -c %s "$d/instr.stripped") - $(stat -c %s "$d/plain.stripped") )) bytes"
  [ "$want_small" != 0 ] && for v in plain instr; do
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
  [ "$want_small" != 0 ] && for b in speedtest1 luabin; do size_line "$cc $b" "$O/$cc-plain/$b" "$O/$cc-instr/$b"; done
  # CPython: configure + `make python` (-O3, CPython's default); the
  # instrumented build adds -pg -mfentry to the compile lines only and the
  # runtime to the link line; the runtime is off while the build runs its
  # own freshly built tools.
  py_ok=0
  if [ "$want_py" != 0 ]; then
    cpython_src "$PYW" > /dev/null
    if (cd "$PYW" && cpython_build "$cc-plain" "$cc" "" "" &&
        PGOKIT_RT_MODE=off cpython_build "$cc-instr" "$cc" "" "" \
          EXTRA_CFLAGS="-pg -mfentry" LIBC="$RT_A -lpthread"); then
      py_ok=1
      for v in plain instr; do
        strip -o "$PYW/$cc-$v/python.stripped" "$PYW/$cc-$v/python"
      done
      grep -q ' pk_rt_hit$' <(nm "$PYW/$cc-instr/python") || { echo "$cc python: runtime not linked in"; py_ok=0; }
      size_line "$cc python" "$PYW/$cc-plain/python" "$PYW/$cc-instr/python"
    else
      echo "$cc python: build failed (logs in $PYW)"
    fi
  fi
  # Steady state: plain vs instrumented (trace mode: hooks patched to NOPs).
  sq_args="--size 10 --memdb"
  lua_script=$root/../shared/workloads/lua_bench.lua
  for b in $workloads; do
    case $b in
      speedtest1) [ "$want_small" != 0 ] || continue; args=$sq_args ;;
      luabin) [ "$want_small" != 0 ] || continue; args=$lua_script ;;
      python)
        [ $py_ok = 1 ] || continue
        pd=$PYW/$cc-plain id=$PYW/$cc-instr
        out_p=$(cd "$pd" && py_env ./python.stripped "$root/bench/rt_py_bench.py" "$py_rounds")
        out_i=$(cd "$id" && PGOKIT_RT_FILE=$O/check.pgoraw py_env ./python.stripped "$root/bench/rt_py_bench.py" "$py_rounds")
        [ "$out_p" = "$out_i" ] || echo "$cc python: OUTPUT DIFFERS: plain $out_p, instrumented $out_i"
        ip=$(cd "$pd" && py_env ir ./python.stripped "$root/bench/rt_py_bench.py" "$py_rounds")
        it=$(cd "$id" && PGOKIT_RT_FILE=$O/$cc-python.pgoraw py_env ir ./python.stripped "$root/bench/rt_py_bench.py" "$py_rounds")
        i0=$(cd "$id" && PGOKIT_RT_LEARN_CALLS=0 PGOKIT_RT_FILE=$O/$cc-python-nolearn.pgoraw \
             py_env ir ./python.stripped "$root/bench/rt_py_bench.py" "$py_rounds")
        echo "$cc python Ir (rt_py_bench.py $py_rounds): plain $ip, trace mode $it ($(pct "$ip" "$it")), trace mode without caller learning $i0 ($(pct "$ip" "$i0"))"
        if [ -n "${RT_BENCH_COUNT:-}" ]; then
          ic=$(cd "$id" && PGOKIT_RT_MODE=count PGOKIT_RT_FILE=$O/$cc-python-count.pgoraw \
               py_env ir ./python.stripped "$root/bench/rt_py_bench.py" "$py_rounds")
          echo "$cc python Ir: count mode $ic ($(pct "$ip" "$ic"))"
        fi
        show_trace "$cc python" "$id/python" "$O/$cc-python.pgoraw"
        # Start-up: what recording and patching cost the start-up itself.
        sp=$(cd "$pd" && py_env ir ./python.stripped -c pass)
        si=$(cd "$id" && PGOKIT_RT_FILE=$O/$cc-pass.pgoraw py_env ir ./python.stripped -c pass)
        s0=$(cd "$id" && PGOKIT_RT_LEARN_CALLS=0 PGOKIT_RT_FILE=$O/$cc-pass0.pgoraw py_env ir ./python.stripped -c pass)
        echo "$cc python -c pass Ir: plain $sp, trace mode $si ($(pct "$sp" "$si")), without caller learning $s0 ($(pct "$sp" "$s0"))"
        show_trace "$cc python -c pass" "$id/python" "$O/$cc-pass.pgoraw"
        # What the alternative (NOP sleds, e.g. -fpatchable-function-entry,
        # turned into hooks by a start-up pass) would write at every start-up.
        if [ -x "$TOOL" ]; then
          "$TOOL" show --binary "$id/python" "$O/$cc-pass.pgoraw" > "$O/$cc-pass.txt"
          read -r nf np nt nr nrp < <(python3 "$root/bench/lib/entry_pages.py" "$id/python" "$O/$cc-pass.txt")
          echo "$cc python -c pass pages: $nr functions entered, their entries on $nrp 4 KiB pages;" \
               "a patch-every-entry start-up pass would write $np pages ($nf functions; .text spans $nt pages)"
        fi
        continue ;;
      *) continue ;;
    esac
    p=$O/$cc-plain/$b.stripped i=$O/$cc-instr/$b.stripped
    ip=$(ir "$p" $args)
    it=$(cd "$O" && PGOKIT_RT_FILE=$O/$cc-$b.pgoraw ir "$i" $args)
    i0=$(cd "$O" && PGOKIT_RT_LEARN_CALLS=0 PGOKIT_RT_FILE=$O/$cc-$b-nolearn.pgoraw ir "$i" $args)
    echo "$cc $b Ir: plain $ip, trace mode $it ($(pct "$ip" "$it")), trace mode without caller learning $i0 ($(pct "$ip" "$i0"))"
    if [ -n "${RT_BENCH_COUNT:-}" ]; then
      ic=$(cd "$O" && PGOKIT_RT_MODE=count PGOKIT_RT_FILE=$O/$cc-$b-count.pgoraw ir "$i" $args)
      echo "$cc $b Ir: count mode $ic ($(pct "$ip" "$ic"))"
    fi
    show_trace "$cc $b" "$O/$cc-instr/$b" "$O/$cc-$b.pgoraw"
  done
done
