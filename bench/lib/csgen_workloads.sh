# csgen_workloads.sh — the programs outside the scoreboard (Duktape, tcc,
# expat's xmlwf; also SQLite's speedtest1 and Lua from the scoreboard's
# sources): where their sources come from, how each is built, trained and
# measured. Sourced by cs_generalize.sh and ip_generalize.sh, which set
# PK_ROOT, workloads (the programs asked for) and a script name for errors
# (CSGEN_NAME) before sourcing.
#   bin_name W              the binary's name
#   build W OUT FLAGS...    one binary (-O2 -gdwarf-4 + FLAGS)
#   prepare_inputs W        the fixed inputs (once)
#   train_cmds W BIN        training commands, one process per line
#   measure_cmds W BIN      the measured commands (other inputs, longer)
#   count DIR W             instructions of the measured commands (cachegrind; each
#                           command's median of count_reps W runs, summed)
WORK=${PK_BENCH_WORK:-$PK_ROOT/bench/work}/csgen
SRC=${PK_WORKLOADS:-${XDG_CACHE_HOME:-$HOME/.cache}/pgokit/workloads}/csgen
mkdir -p "$WORK" "$SRC"
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() { echo "${CSGEN_NAME:-csgen}: FAILED: $*" >&2; exit 1; }
CFLAGS_BASE="-O2 -gdwarf-4"   # valgrind 3.19 reads DWARF 4, not clang-19's default 5

# ---- sources (Debian's, once per machine; never committed) ----
obtain() {
  case " ${workloads[*]} " in *" sqlite "*|*" lua "*) "$PK_ROOT/scripts/workloads.sh" obtain ;; esac
  [ -f "$SRC/.obtained" ] && return 0
  log "fetching duktape, tcc and expat sources (apt-get source)"
  # (obtain.sh's closing listing fails when no npm package was asked for:
  # what counts is that the three source trees are there)
  ( cd "$SRC" && APT_SRC="duktape tcc expat" NPM_SRC=" " bash "$PK_ROOT/../shared/workloads/obtain.sh" >"$SRC/obtain.log" 2>&1 ) || true
  ls -d "$SRC"/src/duktape-*/ "$SRC"/src/tcc-*/ "$SRC"/src/expat-*/expat >/dev/null 2>&1 ||
    { tail -n 5 "$SRC/obtain.log" >&2; die "apt-get source of duktape, tcc, expat failed"; }
  local t; t=$(ls -d "$SRC"/src/tcc-*/ | head -n 1)
  ( cd "$t" && ./configure --cc=clang-19 >/dev/null ) || die "tcc: configure failed"
  local e; e=$(ls -d "$SRC"/src/expat-*/expat | head -n 1)
  mkdir -p "$SRC/expat-config"
  cmake -S "$e" -B "$SRC/expat-config" -DEXPAT_BUILD_TESTS=OFF -DEXPAT_BUILD_EXAMPLES=OFF \
    -DEXPAT_BUILD_DOCS=OFF -DEXPAT_BUILD_TOOLS=OFF >/dev/null || die "expat: cmake configure failed"
  touch "$SRC/.obtained"
}
wldir() { "$PK_ROOT/scripts/workloads.sh" dir; }
sqlite_amalg() { echo "$(wldir)/npm/better-sqlite3-12.11.1/package/deps/sqlite3"; }
dukdir() { ls -d "$SRC"/src/duktape-*/ | head -n 1 | sed 's:/$::'; }
tccdir() { ls -d "$SRC"/src/tcc-*/ | head -n 1 | sed 's:/$::'; }
expdir() { ls -d "$SRC"/src/expat-*/expat | head -n 1; }

# ---- per workload: build, training runs, measured runs ----
bin_name() { case $1 in duktape) echo duk ;; tcc) echo tcc ;; expat) echo xmlwf ;; sqlite) echo speedtest1 ;; lua) echo lua ;; esac; }

build() { # workload out-binary extra-flags...
  local w=$1 o=$2; shift 2
  case $w in
    duktape) local S; S=$(dukdir); local D=$S/examples/cmdline
      clang-19 $CFLAGS_BASE "$@" -DDUK_CMDLINE_PRINTALERT_SUPPORT -I"$S/extras/print-alert" -I"$D" -I"$S/src" \
        "$S/src/duktape.c" "$D/duk_cmdline.c" "$S/extras/print-alert/duk_print_alert.c" -lm -o "$o" ;;
    tcc) local T; T=$(tccdir)
      clang-19 $CFLAGS_BASE "$@" -DONE_SOURCE=1 -DTCC_TARGET_X86_64 '-DCONFIG_TRIPLET="x86_64-linux-gnu"' \
        -I"$T" "$T/tcc.c" -o "$o" -lm -ldl -lpthread ;;
    expat) local E; E=$(expdir)
      clang-19 $CFLAGS_BASE "$@" -DHAVE_EXPAT_CONFIG_H -I"$SRC/expat-config" -I"$E/lib" \
        "$E"/lib/xmlparse.c "$E"/lib/xmltok.c "$E"/lib/xmlrole.c "$E"/xmlwf/xmlwf.c "$E"/xmlwf/xmlfile.c \
        "$E"/xmlwf/codepage.c "$E"/xmlwf/unixfilemap.c -o "$o" ;;
    sqlite) local A; A=$(sqlite_amalg)
      clang-19 $CFLAGS_BASE "$@" -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I"$A" \
        "$(wldir)/src/sqlite3-3.40.1/test/speedtest1.c" "$A/sqlite3.c" -o "$o" -lm ;;
    lua) local L; L=$(ls -d "$(wldir)"/src/lua5.4-*/src | head -n 1)
      # a fixed hash seed: see wl_xflags in workloads.sh
      clang-19 $CFLAGS_BASE "$@" -DLUA_COMPAT_5_3 -DLUA_USE_LINUX '-Dluai_makeseed(L)=0U' -I"$L" \
        $(ls "$L"/*.c | grep -v -e '/luac.c$' -e '/onelua.c$') -o "$o" -lm -ldl ;;
  esac
}

prepare_inputs() { # workload
  local I=$WORK/inputs; mkdir -p "$I"
  case $1 in
    duktape) local d=$PK_ROOT/bench/workloads/duktape
      cat "$d/train.js" "$d/mix.js" > "$I/duk-train.js"; cat "$d/measure.js" "$d/mix.js" > "$I/duk-measure.js" ;;
    expat) [ -s "$I/xml-train.xml" ] || python3 "$PK_ROOT/bench/workloads/expat/gen_xml.py" train "$I/xml-train.xml"
      [ -s "$I/xml-measure.xml" ] || python3 "$PK_ROOT/bench/workloads/expat/gen_xml.py" measure "$I/xml-measure.xml" ;;
  esac
}

# One command per line; each is one process (recorded separately).
train_cmds() { # workload binary
  local I=$WORK/inputs f
  case $1 in
    duktape) echo "$2 $I/duk-train.js" ;;
    # tcc compiles its own sources (separately, as its Makefile does)
    tcc) local T; T=$(tccdir)
      for f in libtcc.c tccpp.c tccgen.c tccelf.c tccasm.c tccrun.c x86_64-gen.c x86_64-link.c i386-asm.c tcc.c; do
        echo "$2 -B$T -I$T/include -DONE_SOURCE=0 -DTCC_TARGET_X86_64 -c $T/$f -o $WORK/tcc-train.o"
      done ;;
    expat) echo "$2$(printf " $I/xml-train.xml%.0s" $(seq 20))" ;;
    sqlite) echo "$2 --size 50 --memdb" ;;
    lua) echo "$2 $PK_ROOT/../shared/workloads/lua_bench.lua" ;;
  esac
}
measure_cmds() { # workload binary: other inputs, longer
  local I=$WORK/inputs T
  case $1 in
    duktape) echo "$2 $I/duk-measure.js" ;;
    # tcc compiles other programs: Duktape, expat, and itself as one source
    tcc) T=$(tccdir); local E; E=$(expdir)
      echo "$2 -B$T -I$T/include -c $(dukdir)/src/duktape.c -o $WORK/tcc-measure.o"
      echo "$2 -B$T -I$T/include -DHAVE_EXPAT_CONFIG_H -I$SRC/expat-config -I$E/lib -c $E/lib/xmlparse.c -o $WORK/tcc-measure.o"
      echo "$2 -B$T -I$T/include -DHAVE_EXPAT_CONFIG_H -I$SRC/expat-config -I$E/lib -c $E/lib/xmltok.c -o $WORK/tcc-measure.o"
      echo "$2 -B$T -I$T/include -DONE_SOURCE=1 -DTCC_TARGET_X86_64 -c $T/tcc.c -o $WORK/tcc-measure.o" ;;
    expat) echo "$2$(printf " $I/xml-measure.xml%.0s" $(seq 20))" ;;
    # as the scoreboard counts them (its measured runs under cachegrind)
    sqlite) echo "$2 --size 25 --memdb" ;;
    lua) echo "$2 $PK_ROOT/../shared/workloads/lua_bench.lua" ;;
  esac
}

# How many times each measured command is counted (the median is used).
# Duktape seeds its string hashes with its heap's address (duk_heap_alloc:
# hash_seed = the pointer), which moves from run to run even under
# cachegrind with ASLR off: one binary's count of duk-measure.js moved by
# up to 0.8 % (15.69 to 15.81 G instructions), as much as the gaps between
# profiles; the others repeat exactly.
count_reps() { case $1 in duktape) echo 5 ;; *) echo 1 ;; esac; }

count() { # binary-dir workload -> instructions of the measured runs (sum of each command's median)
  local total=0 cmd ir k reps; reps=$(count_reps "$2")
  while read -r cmd; do
    local runs=()
    for ((k = 0; k < reps; k++)); do
      # shellcheck disable=SC2086
      ir=$(env -i PATH=/usr/bin:/bin valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        $cmd 2>&1 >/dev/null | sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,)
      [ -n "$ir" ] || die "cachegrind failed on: $cmd"
      runs+=("$ir")
    done
    ir=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n "$(( (reps + 1) / 2 ))p")
    total=$((total + ir))
  done < <(measure_cmds "$2" "$1/$(bin_name "$2")")
  echo "$total"
}
