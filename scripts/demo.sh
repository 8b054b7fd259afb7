#!/usr/bin/env bash
# demo.sh — the whole AutoFDO loop on a built-in example (`make demo`):
#   build -O2 -g  →  pgokit record (emulated LBR)  →  pgokit profgen
#   →  rebuild with -fprofile-sample-use  →  compare speed and instructions.
# When llvm-profgen-19 is installed, its profile of the same recording is
# built and measured too, as the reference.
#
# Environment: BUILD (default build), CC (default clang-19), DEMO_SCALE_RECORD
# (workload size while recording, default 20), DEMO_SCALE_RUN (while timing,
# default 150), DEMO_RUNS (timed runs per variant, default 5), DEMO_PERIOD
# (taken branches between samples, default 1009), DEMO_KEEP=1
# keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
PGOKIT=${PGOKIT:-$ROOT/$BUILD/pgokit}
CC=${CC:-clang-19}
SCALE_REC=${DEMO_SCALE_RECORD:-20}
SCALE_RUN=${DEMO_SCALE_RUN:-150}
RUNS=${DEMO_RUNS:-5}
PERIOD=${DEMO_PERIOD:-1009}
SRC=$ROOT/tests/programs/profgen_demo.c
W=$(mktemp -d "${TMPDIR:-/tmp}/pgokit-demo.XXXXXX")
[ -n "${DEMO_KEEP:-}" ] || trap 'rm -rf "$W"' EXIT

say() { printf '\n== %s\n' "$*"; }
[ -x "$PGOKIT" ] || { echo "demo: $PGOKIT not built (run make)"; exit 1; }
command -v "$CC" >/dev/null || { echo "demo: $CC not installed (make setup)"; exit 1; }

# -gdwarf-4 so valgrind's reader copes; -fdebug-info-for-profiling gives
# discriminators and linkage names of inlined functions, as AutoFDO advises.
CFLAGS="-O2 -g -gdwarf-4 -fdebug-info-for-profiling"

say "1. release build: $CC $CFLAGS"
$CC $CFLAGS "$SRC" -o "$W/demo.base"

say "2. record (emulated LBR under QEMU): demo $SCALE_REC"
"$PGOKIT" record --emulate --period "$PERIOD" -o "$W/perf.data" -- "$W/demo.base" "$SCALE_REC"

say "3. profgen"
t0=$(date +%s.%N)
"$PGOKIT" profgen --binary "$W/demo.base" --perf "$W/perf.data" -o "$W/demo.prof"
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN{printf "pgokit profgen: %.3f s\n", b - a}'

# The same profile with totals summed from the body instead of per byte of
# code (llvm-profgen's convention), to see which one builds the faster program.
"$PGOKIT" profgen -q --total sum --binary "$W/demo.base" --perf "$W/perf.data" -o "$W/demo.sum.prof"
variants=(base pgokit pgokit-sum)
have_ref=0
if command -v llvm-profgen-19 >/dev/null && command -v perf >/dev/null; then
    perf script -F ip,brstack --show-mmap-events -i "$W/perf.data" > "$W/perf.script" 2>/dev/null || true
    t0=$(date +%s.%N)
    if llvm-profgen-19 --binary "$W/demo.base" --perfscript "$W/perf.script" --output "$W/ref.prof" \
        --ignore-stack-samples > "$W/ref.log" 2>&1; then
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN{printf "llvm-profgen-19 (from perf script text): %.3f s\n", b - a}'
        have_ref=1
        variants+=(llvmprofgen)
        if command -v llvm-profdata-19 >/dev/null; then
            llvm-profdata-19 overlap --sample "$W/ref.prof" "$W/demo.prof" 2>/dev/null |
                grep -E 'Whole program profile similarity|Sample overlap' | sed 's/^ */overlap with llvm-profgen: /' || true
        fi
    else
        echo "llvm-profgen-19 failed (see below); skipping the reference"; tail -3 "$W/ref.log"
    fi
fi

say "4. rebuild with the profile"
$CC $CFLAGS -fprofile-sample-use="$W/demo.prof" "$SRC" -o "$W/demo.pgokit"
$CC $CFLAGS -fprofile-sample-use="$W/demo.sum.prof" "$SRC" -o "$W/demo.pgokit-sum"
[ $have_ref = 0 ] || $CC $CFLAGS -fprofile-sample-use="$W/ref.prof" "$SRC" -o "$W/demo.llvmprofgen"

# Same output from every variant.
want=$("$W/demo.base" 3)
for v in "${variants[@]}"; do
    got=$("$W/demo.$v" 3)
    [ "$got" = "$want" ] || { echo "demo: demo.$v prints '$got', expected '$want'"; exit 1; }
done

say "5. CPU time, $RUNS interleaved runs of: demo $SCALE_RUN"
cpu_time() { # prints user+sys seconds of one run (rusage of the child: microseconds)
    if command -v python3 >/dev/null; then
        python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f" % (r.ru_utime + r.ru_stime))' "$1" "$SCALE_RUN"
    else
        local s
        s=$( { /usr/bin/time -f '%U %S' "$1" "$SCALE_RUN" >/dev/null; } 2>&1 | tail -n 1)
        awk '{printf "%.3f\n", $1 + $2}' <<<"$s"
    fi
}
declare -A times
for ((r = 0; r < RUNS; r++)); do
    for v in "${variants[@]}"; do
        times[$v]+="$(cpu_time "$W/demo.$v") "
    done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
base_med=$(median "${times[base]}")
for v in "${variants[@]}"; do
    m=$(median "${times[$v]}")
    printf '%-12s median %7.4f s  runs: %s  speedup vs base: %s\n' "$v" "$m" "${times[$v]}" \
        "$(awk -v b="$base_med" -v m="$m" 'BEGIN{printf "%.3fx", b/m}')"
done

if command -v valgrind >/dev/null; then
    say "6. instructions executed (valgrind cachegrind, demo $SCALE_REC)"
    for v in "${variants[@]}"; do
        ir=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
                "$W/demo.$v" "$SCALE_REC" 2>&1 >/dev/null | awk '/I *refs:/ {gsub(",", "", $NF); print $NF}')
        [ "$v" = base ] && base_ir=$ir
        printf '%-12s %15s instructions  (%s of base)\n' "$v" "$ir" \
            "$(awk -v b="$base_ir" -v x="$ir" 'BEGIN{printf "%.3f", x/b}')"
    done
fi
echo
echo "demo: done (work directory $W${DEMO_KEEP:+, kept})"
