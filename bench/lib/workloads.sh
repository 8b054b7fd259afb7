# workloads.sh — what each scoreboard workload runs (sourced by scoreboard.sh).
# For a workload W and a directory B holding its binaries:
#   wl_bin W            the binary name inside B
#   wl_train W B        the training commands, one per line (each one process,
#                       so it can be recorded under emulation; stdout discarded)
#   wl_measure W B      the measured run (a shell command line, timed as a whole)
#   wl_count W B        the run whose instructions cachegrind counts (smaller
#                       than the measured one where the measured run would take
#                       minutes under valgrind; same code paths)
# Inputs come from ../shared/workloads (run.sh, lua_bench.lua, corpus.sh).
WL_SHARED=${PK_SHARED:-$PK_ROOT/../shared}/workloads

wl_bin() {
  case $1 in sqlite) echo speedtest1 ;; lua) echo lua ;; bzip2) echo bzip2 ;; zstd) echo zstd ;; esac
}

# Prepared once per run: compressed inputs for the decompression steps,
# made with the base binaries so every variant decompresses the same bytes.
wl_prepare() {
  local w=$1 B=$2 C=$WL_DIR/corpus
  case $w in
    bzip2) [ -s "$C/train8m.bz2" ] || "$B/bzip2" -9 -c "$C/sqlite8m.tar" > "$C/train8m.bz2" ;;
    zstd)  [ -s "$C/train8m.zst" ] || "$B/zstd" -q -T1 -3 -c "$C/sqlite8m.tar" > "$C/train8m.zst" ;;
  esac
}

wl_train() {
  local w=$1 B=$2 C=$WL_DIR/corpus
  case $w in
    sqlite) echo "$B/speedtest1 --size 50 --memdb" ;;
    lua)    echo "$B/lua $WL_SHARED/lua_bench.lua" ;;
    bzip2)  echo "$B/bzip2 -9 -c $C/sqlite8m.tar"
            echo "$B/bzip2 -d -c $C/train8m.bz2" ;;
    zstd)   echo "$B/zstd -q -T1 -3 -c $C/sqlite8m.tar"
            echo "$B/zstd -q -T1 -12 -c $C/sqlite8m.tar"
            echo "$B/zstd -q -T1 -d -c $C/train8m.zst" ;;
  esac
}

wl_measure() {
  local w=$1 B=$2 C=$WL_DIR/corpus
  case $w in
    sqlite) echo "$B/speedtest1 --size 100 --memdb >/dev/null" ;;
    lua)    echo "$B/lua $WL_SHARED/lua_bench.lua >/dev/null" ;;
    bzip2)  echo "$B/bzip2 -9 -c $C/sqlite40m.tar > $C/.m.$$.bz2 && $B/bzip2 -d -c $C/.m.$$.bz2 >/dev/null" ;;
    zstd)   echo "$B/zstd -q -T1 -3 -c $C/sqlite-src.tar > $C/.m.$$.zst && $B/zstd -q -T1 -12 -c $C/sqlite40m.tar >/dev/null && $B/zstd -q -T1 -d -c $C/.m.$$.zst >/dev/null" ;;
  esac
}

wl_count() {
  local w=$1 B=$2 C=$WL_DIR/corpus
  case $w in
    sqlite) echo "$B/speedtest1 --size 25 --memdb" ;;
    lua)    echo "$B/lua $WL_SHARED/lua_bench.lua" ;;
    bzip2)  echo "$B/bzip2 -9 -c $C/sqlite8m.tar" ;;
    zstd)   echo "$B/zstd -q -T1 -3 -c $C/sqlite8m.tar" ;;
  esac
}
