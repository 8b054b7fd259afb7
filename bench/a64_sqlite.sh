#!/usr/bin/env bash
# a64_sqlite.sh — issue #14's end-to-end table: SQLite speedtest1 built with
# clang-19 for aarch64 (and the same for x86-64), one emulated recording per
# build kind (probe build: CSSPGO and probe-only; -fdebug-info-for-profiling
# build: AutoFDO), each profile's block overlap with the exact counts of its
# recording, then the instructions the rebuilt programs execute in one
# measured run (the plugin's exact counts: fall-through ranges × instructions
# in them, main binary only) against plain -O2.
#   bench/a64_sqlite.sh [ARCH...]   (default: aarch64 x86_64)
# Environment: BUILD (default build), SIZE (speedtest1 --size, default 20),
#   BENCH_KEEP=1 keeps the work directory.
# No instrumentation-PGO column for aarch64: Debian's clang-19 ships no
# aarch64 profile runtime (libclang_rt.profile-aarch64.a).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PG=$ROOT/${BUILD:-build}/pgokit
SIZE=${SIZE:-20}
[ -x "$PG" ] || { echo "build pgokit first" >&2; exit 2; }
W=$(scripts/workloads.sh dir)
scripts/workloads.sh obtain
SQ=$W/npm/better-sqlite3-12.11.1/package/deps/sqlite3
SRC=("$W/src/sqlite3-3.40.1/test/speedtest1.c" "$SQ/sqlite3.c")
D=$(mktemp -d "${TMPDIR:-/tmp}/pgokit-a64-sqlite.XXXXXX")
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$D"' EXIT
cd "$D"
ARGS=(--size "$SIZE" --memdb)

# instructions the main binary executed, from exact counts
count() { # EXACT BIN
    python3 - "$PG" "$1" "$2" <<'PY'
import bisect, subprocess, sys
pg, exact, binary = sys.argv[1:4]
addrs = sorted(int(l.split()[0], 16) for l in
               subprocess.run([pg, "decode", "--binary", binary], capture_output=True, text=True).stdout.splitlines()
               if l.startswith("0x"))
inbin, total = False, 0
for line in subprocess.run([pg, "record", "--print-exact", exact], capture_output=True, text=True).stdout.splitlines():
    if line.startswith("binary "):
        inbin = line.split()[1] == binary
        continue
    s = line.strip()
    if inbin and ":" in s and "->" not in s and "-" in s:
        r, n = s.rsplit(":", 1)
        b, e = (int(x, 16) for x in r.split("-"))
        total += int(n) * (bisect.bisect_right(addrs, e) - bisect.bisect_left(addrs, b))
print(total)
PY
}
overlap() { "$PG" overlap --exact "$1" --binary "$2" "$3" | sed -n 's/.*block overlap \([0-9.]*\).*/\1/p'; }

archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(aarch64 x86_64)
for arch in "${archs[@]}"; do
    T=(--target="$arch"-linux-gnu)
    cc() { local out=$1; shift; clang-19 "${T[@]}" -O2 -g -I"$SQ" -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 \
        "$@" "${SRC[@]}" -o "$D/$out" -lm; }
    cc probe.$arch -fpseudo-probe-for-profiling & cc line.$arch -fdebug-info-for-profiling & wait
    for k in probe line; do
        "$PG" record --emulate -q -o $k.$arch.data --exact-counts $k.$arch.exact -- "$D/$k.$arch" "${ARGS[@]}" > /dev/null
    done
    "$PG" profgen -q --binary "$D/probe.$arch" --perf probe.$arch.data -o cs.$arch.prof
    "$PG" profgen -q --binary "$D/probe.$arch" --perf probe.$arch.data -o po.$arch.prof --ignore-stack-samples
    "$PG" profgen -q --binary "$D/line.$arch" --perf line.$arch.data -o line.$arch.prof
    ov_cs=$(overlap probe.$arch.exact "$D/probe.$arch" cs.$arch.prof)
    ov_po=$(overlap probe.$arch.exact "$D/probe.$arch" po.$arch.prof)
    ov_line=$(overlap line.$arch.exact "$D/line.$arch" line.$arch.prof)
    cc o2.$arch & cc cs-use.$arch -fpseudo-probe-for-profiling -fprofile-sample-use=cs.$arch.prof & wait
    cc po-use.$arch -fpseudo-probe-for-profiling -fprofile-sample-use=po.$arch.prof &
    cc line-use.$arch -fdebug-info-for-profiling -fprofile-sample-use=line.$arch.prof & wait
    declare -A n
    for v in o2 cs-use po-use line-use; do
        "$PG" record --emulate -q -o m.$v.data --exact-counts m.$v.exact -- "$D/$v.$arch" "${ARGS[@]}" > /dev/null
        n[$v]=$(count m.$v.exact "$D/$v.$arch")
    done
    echo "$arch: block overlap AutoFDO $ov_line, probe-only $ov_po, CSSPGO $ov_cs"
    for v in line-use po-use cs-use; do
        python3 -c "import sys; o, p = int(sys.argv[2]), int(sys.argv[3]); print('%s %-8s %d instructions vs -O2 %d: %+.2f%%' % (sys.argv[1], sys.argv[4], p, o, 100.0 * (p - o) / o))" \
            "$arch" "${n[o2]}" "${n[$v]}" "${v%-use}"
    done
done
