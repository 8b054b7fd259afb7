# workloads.sh — what each scoreboard workload runs (sourced by scoreboard.sh).
# For a workload W and a directory B holding its binaries:
#   wl_bin W            the binary name inside B
#   wl_prepare W B      makes the fixed inputs (once per machine; idempotent)
#   wl_train W B        the training commands, one per line (each one process,
#                       so it can be recorded under emulation; stdout discarded)
#   wl_measure W B      the measured run (a shell command line, timed as a whole;
#                       ~1-2 s of CPU natively, so 10 interleaved rounds of ten
#                       variants stay cheap)
#   wl_count W B        the runs whose instructions cachegrind counts, one per
#                       line, summed (smaller than the measured one where that
#                       would take minutes under valgrind; the same mix of
#                       code paths: every mode of the measured run is counted)
#   wl_count_reps W CMD how many times CMD (a line of wl_count) is counted:
#                       its median is used (1 for a deterministic run)
#   wl_xflags W         compiler flags every build of W gets (a fixed hash
#                       seed for Lua, so that its counted work is the same
#                       in every binary)
# Inputs come from ../shared/workloads (run.sh, lua_bench.lua, corpus.sh).
# Training inputs are heads of the measured ones (as SQLite trains on --size 50
# and is measured on --size 100), weighted like the measured run: a mode that
# is a third of the measured time is about a third of the training samples,
# so its code is not classified cold.
WL_SHARED=${PK_SHARED:-$PK_ROOT/../shared}/workloads

wl_bin() {
  case $1 in sqlite) echo speedtest1 ;; lua) echo lua ;; bzip2) echo bzip2 ;; zstd) echo zstd ;; esac
}

# Creates $1 with the output of the rest of the command line, atomically
# (two scoreboard runs may prepare the shared corpus at the same time).
wl_make() {
  local out=$1; shift
  [ -s "$out" ] && return 0
  "$@" > "$out.tmp.$$" && mv -f "$out.tmp.$$" "$out" || { rm -f "$out.tmp.$$"; return 1; }
}

# Compressed inputs for the decompression steps are made with the base binary,
# so every variant decompresses the same bytes (the compressors' output does
# not depend on how they were compiled).
wl_prepare() {
  local w=$1 B=$2 C=$WL_DIR/corpus
  case $w in
    bzip2) wl_make "$C/sqlite20m.tar" head -c 20000000 "$C/sqlite40m.tar"
           wl_make "$C/train8m.bz2" "$B/bzip2" -9 -c "$C/sqlite8m.tar"
           wl_make "$C/meas20m.bz2" "$B/bzip2" -9 -c "$C/sqlite20m.tar" ;;
    zstd)  wl_make "$C/train40m.zst" "$B/zstd" -q -T1 -3 -c "$C/sqlite40m.tar"
           wl_make "$C/meas-src.zst" "$B/zstd" -q -T1 -3 -c "$C/sqlite-src.tar" ;;
  esac
}

wl_train() {
  local w=$1 B=$2 C=$WL_DIR/corpus
  case $w in
    sqlite) echo "$B/speedtest1 --size 50 --memdb" ;;
    lua)    echo "$B/lua $WL_SHARED/lua_bench.lua" ;;
    bzip2)  echo "$B/bzip2 -9 -c $C/sqlite8m.tar"
            echo "$B/bzip2 -d -c $C/train8m.bz2" ;;
    # natively: -3 0.13 s, -12 0.23 s, -d 0.03 s (measured: 0.5 / 1.05 / 0.1 s)
    zstd)   echo "$B/zstd -q -T1 -3 -c $C/sqlite40m.tar"
            echo "$B/zstd -q -T1 -12 -c $C/sqlite8m.tar"
            echo "$B/zstd -q -T1 -d -c $C/train40m.zst" ;;
  esac
}

# WORKLOADS.md's runs; bzip2 on a 20 MB head instead of 40 MB (3.2 s -> 1.6 s
# of CPU, the same 900 kB blocks), and decompression of a prepared file instead
# of a temporary written by the run (same bytes, no 20 MB write per round).
wl_measure() {
  local w=$1 B=$2 C=$WL_DIR/corpus
  case $w in
    sqlite) echo "$B/speedtest1 --size 100 --memdb >/dev/null" ;;
    lua)    echo "$B/lua $WL_SHARED/lua_bench.lua >/dev/null" ;;
    bzip2)  echo "$B/bzip2 -9 -c $C/sqlite20m.tar >/dev/null && $B/bzip2 -d -c $C/meas20m.bz2 >/dev/null" ;;
    zstd)   echo "$B/zstd -q -T1 -3 -c $C/sqlite-src.tar >/dev/null && $B/zstd -q -T1 -12 -c $C/sqlite40m.tar >/dev/null && $B/zstd -q -T1 -d -c $C/meas-src.zst >/dev/null" ;;
  esac
}

wl_count() {
  local w=$1 B=$2 C=$WL_DIR/corpus
  case $w in
    sqlite) echo "$B/speedtest1 --size 25 --memdb" ;;
    lua)    echo "$B/lua $WL_SHARED/lua_bench.lua" ;;
    bzip2)  echo "$B/bzip2 -9 -c $C/sqlite8m.tar"
            echo "$B/bzip2 -d -c $C/train8m.bz2" ;;
    zstd)   echo "$B/zstd -q -T1 -3 -c $C/sqlite40m.tar"
            echo "$B/zstd -q -T1 -12 -c $C/sqlite8m.tar"
            echo "$B/zstd -q -T1 -d -c $C/train40m.zst" ;;
  esac
}

# zstd -T1 -3: the main thread polls its one worker (ZSTDMT_compressStream_generic,
# POOL_tryAdd, pthread mutexes) as often as the scheduling lets it, so the
# count of one binary varies between runs (832 to 846 M over five runs), more
# than the gaps between variants: the median of 5 runs is used. The -12 and -d
# runs vary by under 0.01% and are counted once.
#
# Lua seeds its string hashes with time(NULL) and three addresses (the
# lua_State, a stack variable, lua_newstate): the seed changes how often
# tables collide and rehash, so two binaries' counts differed by up to 0.9 %
# for that alone (the AutoFDO build at three stack offsets: 12,874 M to
# 12,897 M; the -O2 build 12,978 M to 13,038 M), and the function's address
# differs between binaries, which no choice of offsets averages away. Every
# Lua binary of the bench is built with a fixed seed (wl_xflags): a binary's
# count then repeats to 0.001 % at any stack offset, so it is counted once.
wl_xflags() {
  case $1 in lua) echo "-Dluai_makeseed(L)=0U" ;; esac
}

wl_count_reps() {
  case "$1:$2" in
    zstd:*" -3 "*) echo 5 ;;
    *) echo 1 ;;
  esac
}
