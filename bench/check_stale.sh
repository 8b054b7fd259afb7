#!/usr/bin/env bash
# check_stale.sh — what `pgokit check` flags on stale profiles, next to
# clang-19's own -report-profile-staleness, and what applying a stale
# profile costs: instructions (valgrind cachegrind --cache-sim=no, -gdwarf-4
# builds) of no profile, a fresh profile and the stale one, line-based
# (AutoFDO) and probe-based (CSSPGO) profiles, all recorded under emulated LBR.
#
# Experiments:
#   demo   tests/programs/profgen_demo.c, 10 comment lines inserted in run_vm
#          before its loop (issue 12's experiment)
#   lua    two real upstream changes of the Lua scoreboard workload, both from
#          Debian's archive (apt-get source): 5.4.4 -> 5.4.4 + the two upstream
#          fixes Debian 12 backports (0004-cve-2022-28805, 0005-cve-2022-33099:
#          lparser.c, ldebug.c, lvm.c), and 5.3.6 (lua5.3) -> 5.4.4 (lua5.4)
#
#   bench/check_stale.sh [demo] [lua]      (default: both)
# Environment: PGOKIT (build/pgokit), PK_BENCH_WORK (bench/work),
# PK_BENCH_RESULTS (bench/results), DEMO_SCALE (recording and counting scale
# of the demo, 20).
# Writes bench/results/check-stale-DATE.md (the tables) and keeps every
# report, profile and log under WORK/check_stale/.
set -euo pipefail
PK_ROOT=$(cd "$(dirname "$0")/.." && pwd)
PGOKIT=${PGOKIT:-$PK_ROOT/build/pgokit}
[ -x "$PGOKIT" ] || { echo "check_stale: $PGOKIT not built (run make)" >&2; exit 2; }
for t in clang-19 valgrind qemu-x86_64 python3; do
  command -v $t > /dev/null || { echo "check_stale: $t not installed" >&2; exit 2; }
done
W=${PK_BENCH_WORK:-$PK_ROOT/bench/work}/check_stale
RES=${PK_BENCH_RESULTS:-$PK_ROOT/bench/results}
mkdir -p "$W" "$RES"
OUT=$RES/check-stale-$(date +%F).md
exps=("$@"); [ ${#exps[@]} -gt 0 ] || exps=(demo lua)
DEMO_SCALE=${DEMO_SCALE:-20}
CF="-O2 -gdwarf-4 -fdebug-info-for-profiling"
PF="$CF -fpseudo-probe-for-profiling"
log() { echo "[$(date +%T)] $*" >&2; }

# instructions of one run (cachegrind, no cache simulation)
icount() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 > /dev/null |
    awk '/I *refs:/ { gsub(",", "", $NF); print $NF }'
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f %%", 100 * (a - b) / b }'; }
# record BINARY OUT.prof ARGS...: emulated LBR -> profgen (CSSPGO for a probe binary)
record() {
  local bin=$1 prof=$2; shift 2
  "$PGOKIT" record --emulate -q -o "$prof.data" -- "$bin" "$@" > /dev/null
  "$PGOKIT" profgen -q --binary "$bin" --perf "$prof.data" -o "$prof"
  rm -f "$prof.data"
}
# checkrow LABEL BINARY PROFILE: one table row of pgokit check's findings
checkrow() {
  local label=$1 bin=$2 prof=$3 rc=0
  local json=$W/$(echo "$label" | tr -c 'A-Za-z0-9.\n' '_').json
  local t0=$(date +%s.%N)
  "$PGOKIT" check --json --binary "$bin" "$prof" > "$json" || rc=$?
  local t1=$(date +%s.%N)
  python3 - "$json" "$label" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" << 'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["samples"] or 1
by = r["stale_samples_by_reason"]
fn = r["functions"]
top = ", ".join("%s %.1f %%" % (f["name"].split(".")[0], 100 * f["stale_share"]) for f in r["stale_functions"][:4])
more = len(r["stale_functions"]) - 4
print("| %s | %s | %d | **%.2f %%** | %.2f %% | %.2f %% | %.2f %% | %.2f %% | %d/%d | %s%s | %s | %s s |" % (
    sys.argv[2], r["kind"], r["samples"], 100 * r["stale_share"], 100 * by["line"] / s, 100 * by["call"] / s,
    100 * by["checksum"] / s, 100 * by["missing"] / s, fn["stale"], fn["profiled"], top,
    " (+%d more)" % more if more > 0 else "", sys.argv[3], sys.argv[4]))
EOF
}
check_header() {
  echo "| profile -> binary | kind | samples | stale share | lines | call sites | checksums | missing | stale functions | heaviest (share of the profile) | exit | time |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
}
# clang_staleness DIR PROFILE FLAGS FILE...: clang-19 -mllvm -report-profile-staleness, compiled in
# DIR, the counts summed over the files
clang_staleness() {
  local dir=$1 prof=$2 flags=$3; shift 3
  (cd "$dir" && for f in "$@"; do
    clang-19 $flags -fprofile-sample-use="$prof" -mllvm -report-profile-staleness -c "$f" -o /dev/null 2>&1
  done) | awk '
    /functions. profile are invalid/ { split($1, a, /[()\/]/); fn += a[2]; ft += a[3]; split($8, b, /[()\/]/); fs += b[2]; tot += b[3] }
    /callsites. profile are invalid/ { split($1, a, /[()\/]/); cn += a[2]; ct += a[3]; split($8, b, /[()\/]/); cs += b[2]; ctot += b[3] }
    END {
      if (ft) printf "function hash mismatch: %d/%d functions, %d/%d samples (%.2f %%); ", fn, ft, fs, tot, tot ? 100 * fs / tot : 0
      printf "call-site mismatch: %d/%d call sites, %d/%d samples (%.2f %%)", cn, ct, cs, ctot, ctot ? 100 * cs / ctot : 0
    }'
}

exp_demo() {
  local D=$W/demo
  rm -rf "$D"; mkdir -p "$D/base" "$D/comments"
  cp "$PK_ROOT/tests/programs/profgen_demo.c" "$D/base/"
  awk '{print} /^    int pc = 0;$/ && !done {for (i = 1; i <= 10; i++) print "    /* comment line " i " */"; done = 1}' \
    "$D/base/profgen_demo.c" > "$D/comments/profgen_demo.c"
  # one directory per source version, the same file name: probe builds hash the path into .__uniq. names
  b() { (cd "$D/$1" && clang-19 $2 profgen_demo.c -o "$3"); }
  log "demo: builds and recordings (scale $DEMO_SCALE)"
  b base "$CF" line; b base "$PF" probe; b comments "$CF" line; b comments "$PF" probe
  record "$D/base/line" "$D/line.prof" "$DEMO_SCALE"
  record "$D/base/probe" "$D/probe.prof" "$DEMO_SCALE"
  {
    echo "## profgen_demo.c: 10 comment lines in run_vm"
    echo
    echo "Profiles recorded on the original source (\`profgen_demo $DEMO_SCALE\`, emulated LBR), checked against"
    echo "the binary of the source with 10 comment lines inserted in \`run_vm\` after \`int pc = 0;\`, before its loop."
    echo
    check_header
    checkrow "line: original -> original" "$D/base/line" "$D/line.prof"
    checkrow "line: original -> comments" "$D/comments/line" "$D/line.prof"
    checkrow "probe: original -> original" "$D/base/probe" "$D/probe.prof"
    checkrow "probe: original -> comments" "$D/comments/probe" "$D/probe.prof"
    echo
    echo "clang-19 -mllvm -report-profile-staleness (the original source: what clang reports on a fresh profile):"
    echo "- line, original: $(clang_staleness "$D/base" "$D/line.prof" "$CF" profgen_demo.c)"
    echo "- line, comments: $(clang_staleness "$D/comments" "$D/line.prof" "$CF" profgen_demo.c)"
    echo "- probe, original: $(clang_staleness "$D/base" "$D/probe.prof" "$PF" profgen_demo.c)"
    echo "- probe, comments: $(clang_staleness "$D/comments" "$D/probe.prof" "$PF" profgen_demo.c)"
    echo
  } >> "$OUT.tmp"
  log "demo: PGO builds and instruction counts"
  b comments "-O2 -gdwarf-4" none
  b base "$CF -fprofile-sample-use=$D/line.prof" line.fresh
  b comments "$CF -fprofile-sample-use=$D/line.prof" line.stale
  b base "$PF -fprofile-sample-use=$D/probe.prof" probe.fresh
  b comments "$PF -fprofile-sample-use=$D/probe.prof" probe.stale
  local n0 lf ls pf ps
  n0=$(icount "$D/comments/none" "$DEMO_SCALE")
  lf=$(icount "$D/base/line.fresh" "$DEMO_SCALE"); ls=$(icount "$D/comments/line.stale" "$DEMO_SCALE")
  pf=$(icount "$D/base/probe.fresh" "$DEMO_SCALE"); ps=$(icount "$D/comments/probe.stale" "$DEMO_SCALE")
  {
    echo "Instructions of \`profgen_demo $DEMO_SCALE\` (cachegrind). Fresh: the original source with its profile"
    echo "(the comments change no code, so it stands for a profile regenerated after the edit); stale:"
    echo "the comments source with the original's profile; none: \`-O2\`, no profile."
    echo
    echo "| build | line-based | vs none | probe (CSSPGO) | vs none |"
    echo "|---|---|---|---|---|"
    echo "| no profile | $n0 | | $n0 | |"
    echo "| fresh profile | $lf | $(pct "$lf" "$n0") | $pf | $(pct "$pf" "$n0") |"
    echo "| stale profile | $ls | $(pct "$ls" "$n0") | $ps | $(pct "$ps" "$n0") |"
    echo
  } >> "$OUT.tmp"
}

# ---- Lua: two upstream changes, sources from Debian's archive ----
lua_sources() {
  "$PK_ROOT/scripts/workloads.sh" obtain
  local wl; wl=$("$PK_ROOT/scripts/workloads.sh" dir)
  if [ ! -f "$wl/src/lua5.3_5.3.6.orig.tar.gz" ]; then
    # the private APT configuration obtain.sh wrote (deb-src of the machine's suites)
    (cd "$wl/src" && APT_CONFIG=$wl/apt/apt.conf apt-get source -qq --download-only lua5.3 > /dev/null)
  fi
  local L=$W/lua/src
  rm -rf "$L"; mkdir -p "$L"
  tar xzf "$wl/src/lua5.3_5.3.6.orig.tar.gz" -C "$L" && mv "$L/lua-5.3.6" "$L/v536"
  tar xzf "$wl/src/lua5.4_5.4.4.orig.tar.gz" -C "$L" && mv "$L/lua-5.4.4" "$L/v544"
  cp -r "$L/v544" "$L/v544p"
  tar xJf "$wl/src/lua5.4_5.4.4-3+deb12u1.debian.tar.xz" -C "$L" debian/patches
  for p in 0004-cve-2022-28805.patch 0005-cve-2022-33099.patch; do
    patch -s -d "$L/v544p" -p1 < "$L/debian/patches/$p"
  done
  LUA_BENCH=$PK_ROOT/../shared/workloads/lua_bench.lua
  [ -f "$LUA_BENCH" ] || { echo "check_stale: $LUA_BENCH not found" >&2; exit 2; }
}
# lua_build VERSION NAME FLAGS: $W/lua/NAME/lua (every build compiles src/*.c from the same relative path).
# Lua 5.4 seeds its string hashes with time(NULL) and addresses: a fixed seed makes the
# instruction counts repeatable (two runs of one binary: 2 instructions apart, not 0.4 %).
lua_build() {
  local v=$1 name=$2 flags=$3 d=$W/lua/$2
  [ "$v" = v536 ] || flags="$flags '-Dluai_makeseed(L)=0U'"
  rm -rf "$d"; mkdir -p "$d"; cp -r "$W/lua/src/$v/src" "$d/src"
  make -s -C "$d/src" -j2 linux CC=clang-19 MYCFLAGS="$flags" MYLDFLAGS= > "$d/build.log" 2>&1 ||
    { cat "$d/build.log" >&2; exit 1; }
  cp "$d/src/lua" "$d/lua"
}

exp_lua() {
  lua_sources
  log "lua: builds"
  # -O2 comes from Lua's Makefile; -fdebug-info-for-profiling and the probes from here
  local LCF="-gdwarf-4 -fdebug-info-for-profiling" LPF="-gdwarf-4 -fdebug-info-for-profiling -fpseudo-probe-for-profiling"
  for v in v536 v544 v544p; do lua_build $v $v-line "$LCF"; lua_build $v $v-probe "$LPF"; done
  log "lua: recordings"
  for v in v536 v544 v544p; do
    for k in line probe; do
      (cd "$W/lua" && record "$W/lua/$v-$k/lua" "$W/lua/$v-$k.prof" "$LUA_BENCH")
    done
  done
  {
    echo "## Lua: two upstream changes (Debian 12's lua5.4 and lua5.3 sources)"
    echo
    echo "- **minor**: 5.4.4 as released -> 5.4.4 with the two upstream fixes Debian 12 applies"
    echo "  (0004-cve-2022-28805: 1 line in lparser.c \`singlevar\`; 0005-cve-2022-33099: ldebug.c"
    echo "  \`luaG_runerror\` +3 lines, lvm.c \`luaV_concat\` +2 lines, 1 changed), what 5.4.5 fixed;"
    echo "- **major**: 5.3.6 (lua5.3) -> 5.4.4 (lua5.4), a new major release."
    echo
    echo "Profiles of \`lua lua_bench.lua\` (emulated LBR) of the old version, checked against the new one's binary."
    echo
    check_header
    checkrow "line: 5.4.4 -> 5.4.4 (fresh)" "$W/lua/v544-line/lua" "$W/lua/v544-line.prof"
    checkrow "line: 5.4.4 -> 5.4.4+fixes" "$W/lua/v544p-line/lua" "$W/lua/v544-line.prof"
    checkrow "line: 5.3.6 -> 5.4.4" "$W/lua/v544-line/lua" "$W/lua/v536-line.prof"
    checkrow "probe: 5.4.4 -> 5.4.4 (fresh)" "$W/lua/v544-probe/lua" "$W/lua/v544-probe.prof"
    checkrow "probe: 5.4.4 -> 5.4.4+fixes" "$W/lua/v544p-probe/lua" "$W/lua/v544-probe.prof"
    checkrow "probe: 5.3.6 -> 5.4.4" "$W/lua/v544-probe/lua" "$W/lua/v536-probe.prof"
    echo
    echo "clang-19 -mllvm -report-profile-staleness, summed over Lua's files (each compiled alone; the"
    echo "fresh rows: what clang reports on a profile of the same sources):"
    local files; files=$(cd "$W/lua/src/v544p/src" && ls l*.c | grep -v -e '^lua\.c$' -e '^luac\.c$' | tr '\n' ' ')
    echo "- line, 5.4.4 -> 5.4.4 (fresh): $(clang_staleness "$W/lua/src/v544/src" "$W/lua/v544-line.prof" "-O2 $LCF -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -Dluai_makeseed(L)=0U" $files)"
    echo "- probe, 5.4.4 -> 5.4.4 (fresh): $(clang_staleness "$W/lua/src/v544/src" "$W/lua/v544-probe.prof" "-O2 $LPF -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -Dluai_makeseed(L)=0U" $files)"
    echo "- line, 5.4.4 -> 5.4.4+fixes: $(clang_staleness "$W/lua/src/v544p/src" "$W/lua/v544-line.prof" "-O2 $LCF -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -Dluai_makeseed(L)=0U" $files)"
    echo "- probe, 5.4.4 -> 5.4.4+fixes: $(clang_staleness "$W/lua/src/v544p/src" "$W/lua/v544-probe.prof" "-O2 $LPF -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -Dluai_makeseed(L)=0U" $files)"
    echo "- line, 5.3.6 -> 5.4.4: $(clang_staleness "$W/lua/src/v544/src" "$W/lua/v536-line.prof" "-O2 $LCF -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -Dluai_makeseed(L)=0U" $files)"
    echo "- probe, 5.3.6 -> 5.4.4: $(clang_staleness "$W/lua/src/v544/src" "$W/lua/v536-probe.prof" "-O2 $LPF -DLUA_COMPAT_5_3 -DLUA_USE_LINUX -Dluai_makeseed(L)=0U" $files)"
    echo
  } >> "$OUT.tmp"
  log "lua: PGO builds"
  lua_build v544 v544-none "-gdwarf-4"
  lua_build v544p v544p-none "-gdwarf-4"
  for k in line probe; do
    local f=$LCF; [ $k = probe ] && f=$LPF
    lua_build v544p "v544p-$k-fresh" "$f -fprofile-sample-use=$W/lua/v544p-$k.prof"
    lua_build v544p "v544p-$k-stale" "$f -fprofile-sample-use=$W/lua/v544-$k.prof"
    lua_build v544 "v544-$k-fresh" "$f -fprofile-sample-use=$W/lua/v544-$k.prof"
    lua_build v544 "v544-$k-stale" "$f -fprofile-sample-use=$W/lua/v536-$k.prof"
  done
  log "lua: instruction counts"
  local c; declare -A n
  for c in v544p-none v544p-line-fresh v544p-line-stale v544p-probe-fresh v544p-probe-stale \
           v544-none v544-line-fresh v544-line-stale v544-probe-fresh v544-probe-stale; do
    n[$c]=$(cd "$W/lua" && icount "$W/lua/$c/lua" "$LUA_BENCH")
    log "  $c: ${n[$c]}"
  done
  {
    echo "Instructions of \`lua lua_bench.lua\` (cachegrind) built from the new sources: no profile, the"
    echo "new version's own profile (fresh), the old version's (stale)."
    echo
    echo "| change | build | line-based | vs none | probe (CSSPGO) | vs none |"
    echo "|---|---|---|---|---|---|"
    local o
    for o in "minor:v544p" "major:v544"; do
      local lab=${o%%:*} p=${o#*:}
      echo "| $lab | no profile | ${n[$p-none]} | | ${n[$p-none]} | |"
      echo "| $lab | fresh profile | ${n[$p-line-fresh]} | $(pct "${n[$p-line-fresh]}" "${n[$p-none]}") | ${n[$p-probe-fresh]} | $(pct "${n[$p-probe-fresh]}" "${n[$p-none]}") |"
      echo "| $lab | stale profile | ${n[$p-line-stale]} | $(pct "${n[$p-line-stale]}" "${n[$p-none]}") | ${n[$p-probe-stale]} | $(pct "${n[$p-probe-stale]}" "${n[$p-none]}") |"
    done
    echo
  } >> "$OUT.tmp"
}

rm -f "$OUT.tmp"
{
  echo "# pgokit check: stale profiles ($(date +%F))"
  echo
  echo "\`bench/check_stale.sh ${exps[*]}\` at $(cd "$PK_ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?'),"
  echo "clang-19 ($(clang-19 --version | head -1 | sed 's/.*version //')), valgrind $(valgrind --version | sed 's/valgrind-//')."
  echo "Shares are of the profile's body samples (see \`pgokit check --help\`); exit 3 = stale beyond the"
  echo "default 1 %. The line-based share is a lower bound: offsets that shift onto other existing lines"
  echo "cannot be told from fresh ones."
  echo
} > "$OUT.tmp"
for e in "${exps[@]}"; do
  case $e in demo) exp_demo ;; lua) exp_lua ;; *) echo "check_stale: unknown experiment $e" >&2; exit 2 ;; esac
done
mv "$OUT.tmp" "$OUT"
log "wrote $OUT"
