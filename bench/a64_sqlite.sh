#!/usr/bin/env bash
# a64_sqlite.sh — issue #14's end-to-end table: SQLite speedtest1 built with
# clang-19 for aarch64 and for x86-64, one emulated recording per build kind
# (probe build: CSSPGO and probe-only; -fdebug-info-for-profiling build:
# AutoFDO), each profile's block overlap with the exact counts of its
# recording, then the instructions the rebuilt programs execute in one
# measured run (the plugin's exact counts: fall-through ranges x instructions
# in them, main binary only) against plain -O2 and against instrumentation
# PGO (-fprofile-instr-generate run under the same qemu, llvm-profdata-19).
# With both architectures, the cross table: each target built with the other
# target's sampled profiles (probe GUIDs, checksums and ids, and source
# lines, are the same on both), which separates "our profile of this target"
# from "what clang does with a profile on this target".
#   bench/a64_sqlite.sh [ARCH...]   (default: x86_64 aarch64)
# Environment: BUILD (default build), SIZE (speedtest1 --size, default 20),
#   CROSS=0 skips the cross table, BENCH_KEEP=1 keeps the work directory.
# Output: human lines, and one machine line per measured build:
#   RESULT ARCH VARIANT INSTRUCTIONS O2_INSTRUCTIONS PERCENT
#   (VARIANT: line po cs instr, or x-line x-po x-cs for the cross builds)
#   COST ARCH plain qemu S record --emulate S ratio R (recording cost, CPU)
#   PROFGEN ARCH cs|line wall SECONDS cpu SECONDS (profgen on the recordings)
# and at the end the executed instructions of every build by kind
# (bench/lib/exact_insns.py): KINDS ARCH VARIANT total=N call=N ret=N ...
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PG=${PGOKIT:-$ROOT/${BUILD:-build}/pgokit}
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

# instructions the main binary's .text executed, in total and by kind
count() { python3 "$ROOT/bench/lib/exact_insns.py" "$PG" "$1" "$2"; }
overlap() { "$PG" overlap --exact "$1" --binary "$2" "$3" | sed -n 's/.*block overlap \([0-9.]*\).*/\1/p'; }

cc() { local arch=$1 out=$2; shift 2; clang-19 --target="$arch"-linux-gnu -O2 -g -I"$SQ" -DSQLITE_OMIT_LOAD_EXTENSION \
    -DSQLITE_THREADSAFE=0 "$@" "${SRC[@]}" -o "$D/$out" -lm; }
# a program of ARCH under plain qemu (instrumentation runs, recording cost)
qemu_of() { if [ "$1" = aarch64 ]; then echo "${PGOKIT_QEMU_AARCH64:-qemu-aarch64} -L /usr/aarch64-linux-gnu"
            else echo "${PGOKIT_QEMU:-qemu-x86_64}"; fi; }
run() { local arch=$1; shift; $(qemu_of $arch) "$@"; }
measure() { # ARCH VARIANT BINARY O2_COUNT: a RESULT and a KINDS line (o2: only the count on stdout)
    local arch=$1 v=$2 bin=$3 o2=$4 kinds n
    "$PG" record --emulate -q -o m.$v.$arch.data --exact-counts m.$v.$arch.exact -- "$bin" "${ARGS[@]}" > /dev/null
    kinds=$(count m.$v.$arch.exact "$bin")
    n=${kinds%% *}; n=${n#total=}
    echo "KINDS $arch $v $kinds" >> kinds.txt
    [ "$v" = o2 ] && { echo "$n"; return; }
    python3 -c "import sys; p, o = int(sys.argv[3]), int(sys.argv[4]); print('RESULT %s %s %d %d %+.2f' % (sys.argv[1], sys.argv[2], p, o, 100.0 * (p - o) / o))" \
        "$arch" "$v" "$n" "$o2" | tee -a results.txt
}

archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(x86_64 aarch64)
: > results.txt; : > kinds.txt
declare -A O2
for arch in "${archs[@]}"; do
    cc $arch probe.$arch -fpseudo-probe-for-profiling & cc $arch line.$arch -fdebug-info-for-profiling &
    cc $arch gen.$arch -fprofile-instr-generate & wait
    for k in probe line; do
        "$PG" record --emulate -q -o $k.$arch.data --exact-counts $k.$arch.exact -- "$D/$k.$arch" "${ARGS[@]}" > /dev/null
    done
    "$PG" profgen -q --binary "$D/probe.$arch" --perf probe.$arch.data -o cs.$arch.prof
    "$PG" profgen -q --binary "$D/probe.$arch" --perf probe.$arch.data -o po.$arch.prof --ignore-stack-samples
    "$PG" profgen -q --binary "$D/line.$arch" --perf line.$arch.data -o line.$arch.prof
    ov_cs=$(overlap probe.$arch.exact "$D/probe.$arch" cs.$arch.prof)
    ov_po=$(overlap probe.$arch.exact "$D/probe.$arch" po.$arch.prof)
    ov_line=$(overlap line.$arch.exact "$D/line.$arch" line.$arch.prof)
    LLVM_PROFILE_FILE="$D/instr.$arch.profraw" run $arch "$D/gen.$arch" "${ARGS[@]}" > /dev/null
    llvm-profdata-19 merge -o instr.$arch.profdata instr.$arch.profraw
    cc $arch o2.$arch & cc $arch cs-use.$arch -fpseudo-probe-for-profiling -fprofile-sample-use=cs.$arch.prof & wait
    cc $arch po-use.$arch -fpseudo-probe-for-profiling -fprofile-sample-use=po.$arch.prof &
    cc $arch line-use.$arch -fdebug-info-for-profiling -fprofile-sample-use=line.$arch.prof & wait
    cc $arch instr-use.$arch -fprofile-instr-use="$D/instr.$arch.profdata" -Wno-profile-instr-out-of-date
    echo "$arch: block overlap AutoFDO $ov_line, probe-only $ov_po, CSSPGO $ov_cs"
    O2[$arch]=$(measure $arch o2 "$D/o2.$arch" 0)
    for v in line po cs instr; do measure $arch $v "$D/$v-use.$arch" "${O2[$arch]}"; done
done

# recording cost: plain qemu against record --emulate (the plugin), CPU
# seconds (user+sys) of the -O2 build, interleaved rounds, medians
cpu() { /usr/bin/time -f "%U %S" -o cpu.txt "$@" > /dev/null 2>&1; awk '{ print $1 + $2 }' cpu.txt; }
for arch in "${archs[@]}"; do
    plain=() rec=()
    for round in 1 2 3; do
        plain+=("$(cpu $(qemu_of $arch) "$D/o2.$arch" "${ARGS[@]}")")
        rec+=("$(cpu "$PG" record --emulate -q -o cost.data -- "$D/o2.$arch" "${ARGS[@]}")")
    done
    python3 -c "import statistics as s, sys; a, q, r = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]; \
print('COST %s plain qemu %.2f s record --emulate %.2f s ratio %.2fx (CPU, median of %d)' % (a, s.median(q), s.median(r), s.median(r) / s.median(q), len(q)))" \
        "$arch" "${plain[*]}" "${rec[*]}"
done

# profgen on each target's recording of the same program: CSSPGO and
# AutoFDO, interleaved rounds, median wall and CPU seconds
if [ ${#archs[@]} -eq 2 ]; then
    : > times.txt
    for round in 1 2 3 4 5; do
        for arch in "${archs[@]}"; do
            for k in cs line; do
                b=probe; [ $k = line ] && b=line
                /usr/bin/time -f "$arch $k %e %U %S" -a -o times.txt \
                    "$PG" profgen -q --binary "$D/$b.$arch" --perf $b.$arch.data -o /dev/null
            done
        done
    done
    python3 - times.txt <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    arch, kind, wall, user, sys_ = line.split()
    rows.setdefault((arch, kind), []).append((float(wall), float(user) + float(sys_)))
for (arch, kind), v in sorted(rows.items()):
    print('PROFGEN %s %s wall %.3f cpu %.3f (median of %d)' % (arch, kind, statistics.median(w for w, _ in v),
                                                             statistics.median(c for _, c in v), len(v)))
PY
fi

# the cross table: target B built with target A's sampled profiles
if [ "${CROSS:-1}" != 0 ] && [ ${#archs[@]} -eq 2 ]; then
    for arch in "${archs[@]}"; do
        other=${archs[0]}; [ "$other" = "$arch" ] && other=${archs[1]}
        cc $arch x-cs-use.$arch -fpseudo-probe-for-profiling -fprofile-sample-use=cs.$other.prof &
        cc $arch x-po-use.$arch -fpseudo-probe-for-profiling -fprofile-sample-use=po.$other.prof & wait
        cc $arch x-line-use.$arch -fdebug-info-for-profiling -fprofile-sample-use=line.$other.prof
        for v in x-line x-po x-cs; do measure $arch $v "$D/$v-use.$arch" "${O2[$arch]}"; done
    done
fi
cat kinds.txt
