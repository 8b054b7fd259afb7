#!/usr/bin/env bash
# Overhead of `pgokit record --ip` (perf IP sampling with call chains) on
# SQLite speedtest1 (--size 50 --memdb; built -O2 -g
# -fno-omit-frame-pointer through ../shared/workloads), at the default
# frequency (4999 Hz), a quarter of it and four times it, against native
# runs, the default frequency without call chains (what the sampling
# interrupt alone costs) and with stack copies instead of a frame-pointer
# walk: 1 KiB per sample (--call-graph dwarf,1024, what record takes by
# itself from a build without frame pointers) and 8 KiB (--call-graph
# dwarf). The chains are always named: the command recorded is bash (see
# below), and record would choose them from bash, not from speedtest1.
# Rounds interleave the variants (order rotated every round), so machine
# noise hits each alike; medians are reported.
#
# The program's own cost is measured inside the recording: perf's workload is
# `bash -c 'time speedtest1 ...'` (bash's time: the program's wall, user and
# system time, in ms, from its rusage), so the sampling cost charged to the
# program (interrupt, call-chain walk, ring-buffer write: this kernel has no
# IRQ time accounting, so it lands in the interrupted task's CPU time) is in
# its figures and perf's start-up and end-of-run work is not. Those are
# reported apart: start-up (record started -> program started) and end
# (program ended -> record exited) wall times, and perf's own CPU time
# (record's children's CPU minus the program's).
#   bench/record_ip_overhead.sh [ROUNDS]       (default 12; BUILD=build-xxx)
# Prints a Markdown report on stdout; progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${1:-12}
PGOKIT=$PWD/$BUILD/pgokit
[ -x "$PGOKIT" ] || { echo "build first: make BUILD=$BUILD all" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
W=$(scripts/workloads.sh dir)
B=$W/out/recip-fp/speedtest1
[ -x "$B" ] || XFLAGS=-fno-omit-frame-pointer scripts/workloads.sh build recip-fp sqlite >&2
ARGS=(--size 50 --memdb)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
DEF=4999
FREQS=($((DEF / 4)) $DEF $((DEF * 4)))

# The program under bash's `time`: prints "wall user sys" (seconds, ms
# precision), then "start end" (epoch seconds) to fd 3.
inner() {
    bash -c 'TIMEFORMAT="%3R %3U %3S"; s=$EPOCHREALTIME; { time "$@" >/dev/null 2>&1; } 2>&3
             echo "$s $EPOCHREALTIME" >&3' _ "$@"
}
export -f inner
now() { date +%s.%N; }

declare -A prog_cpu prog_wall start_wall end_wall perf_cpu samples
run_native() {
    inner "$B" "${ARGS[@]}" 3> "$T/t"
    read -r w u s < "$T/t"
    prog_cpu[native]+="$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.3f", u + s}') "
    prog_wall[native]+="$w "
}
run_rec() { # VARIANT: FREQ, FREQ-nocc, FREQ-dwarf1k or FREQ-dwarf
    local f=$1 t0 t1 hz=${1%-*} cc=(--call-graph fp)
    [ "$f" = "$hz-nocc" ] && cc=(--no-callchain)
    [ "$f" = "$hz-dwarf1k" ] && cc=(--call-graph dwarf,1024)
    [ "$f" = "$hz-dwarf" ] && cc=(--call-graph dwarf)
    t0=$(now)
    /usr/bin/time -o "$T/outer" -f '%U %S' \
        "$PGOKIT" record --ip --freq "$hz" "${cc[@]}" -o "$T/p$f.data" -- \
        bash -c "$(declare -f inner); inner \"\$@\"" _ "$B" "${ARGS[@]}" 3> "$T/t" 2> "$T/rec.err" > /dev/null
    t1=$(now)
    { read -r w u s; read -r ps pe; } < "$T/t"
    read -r ou os < "$T/outer"
    local cpu
    cpu=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.3f", u + s}')
    prog_cpu[$f]+="$cpu "
    prog_wall[$f]+="$w "
    start_wall[$f]+="$(awk -v a="$t0" -v b="$ps" 'BEGIN{printf "%.3f", b - a}') "
    end_wall[$f]+="$(awk -v a="$pe" -v b="$t1" 'BEGIN{printf "%.3f", b - a}') "
    perf_cpu[$f]+="$(awk -v u="$ou" -v s="$os" -v c="$cpu" 'BEGIN{printf "%.3f", u + s - c}') "
    local n
    n=$(sed -nE 's/^pgokit record: IP sampling: wrote .*: ([0-9]+) samples.*/\1/p' "$T/rec.err")
    [ -n "$n" ] || { cat "$T/rec.err" >&2; exit 1; }
    samples[$f]+="$(awk -v n="$n" -v c="$cpu" 'BEGIN{printf "%.0f", n / c}') "
}

FREQS+=("$DEF-nocc" "$DEF-dwarf1k" "$DEF-dwarf")
variants=(native "${FREQS[@]}")
for r in $(seq "$ROUNDS"); do
    k=$(( (r - 1) % ${#variants[@]} ))
    order=("${variants[@]:k}" "${variants[@]:0:k}")
    for v in "${order[@]}"; do
        if [ "$v" = native ]; then run_native; else run_rec "$v"; fi
    done
    echo "round $r/$ROUNDS: program CPU s:$(for v in "${variants[@]}"; do
        printf ' %s %s' "$v" "$(awk '{print $NF}' <<<"${prog_cpu[$v]}")"; done)" >&2
done

med() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
rng() { tr ' ' '\n' <<<"$1" | grep . | sort -g | sed -n '1p;$p' | paste -sd- ; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%+.1f %%", (a / b - 1) * 100}'; }
# median over rounds of (variant / native of the same round): the load of a
# shared machine drifts during a run, and pairing cancels the drift
paired() { paste -d' ' <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) |
    awk '{print $1 / $2}' | sort -g | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2;
    printf "%+.1f %%", (m - 1) * 100}'; }

nc=$(med "${prog_cpu[native]}"); nw=$(med "${prog_wall[native]}")
echo "# pgokit record --ip overhead: SQLite speedtest1 --size 50 --memdb"
echo
echo "$(date -u +%Y-%m-%d), $ROUNDS interleaved rounds (order rotated each round), medians;"
echo "$(nproc) CPUs, load average at the end $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r), $(perf --version)."
echo "Event: $(sed -nE 's/^pgokit record: IP sampling \(perf record -e ([^ ]+) .*/\1/p' "$T/rec.err" | head -1) (user space only),"
echo "--call-graph fp (except --no-callchain and --call-graph dwarf[,1024]), --buildid-mmap. kernel.perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)."
echo
echo "Program: the program's own CPU (user+sys) and wall time, measured inside the recording."
echo "Start-up: from \`pgokit record\` starting to the program starting (record's PMU probe, perf's"
echo "start, the events enabled). End: from the program's end to record's exit (perf's end-of-run work,"
echo "record's read-back and rename of the file). perf CPU: CPU time of perf itself over the whole run"
echo "(record's children minus the program)."
echo
echo "CPU overhead (paired): the median over rounds of the program's CPU time in the variant over"
echo "its native CPU time in the same round (the machine's load drifts during a run); CPU overhead"
echo "and wall overhead: ratios of the medians."
echo
echo "| variant | samples / CPU-s | program CPU s (range) | CPU overhead (paired) | CPU overhead | program wall s | wall overhead | start-up s | end s | perf CPU s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
echo "| native | - | $nc ($(rng "${prog_cpu[native]}")) | - | - | $nw | - | - | - | - |"
for f in "${FREQS[@]}"; do
    c=$(med "${prog_cpu[$f]}"); w=$(med "${prog_wall[$f]}")
    label="--freq ${f%-*}"
    case $f in *-nocc) label+=" --no-callchain" ;; *-dwarf1k) label+=" --call-graph dwarf,1024" ;; *-dwarf) label+=" --call-graph dwarf" ;; esac
    echo "| $label | $(med "${samples[$f]}") | $c ($(rng "${prog_cpu[$f]}")) | $(paired "${prog_cpu[$f]}" "${prog_cpu[native]}") | $(pct "$c" "$nc") | $w | $(pct "$w" "$nw") | $(med "${start_wall[$f]}") | $(med "${end_wall[$f]}") | $(med "${perf_cpu[$f]}") |"
done
echo
echo "Raw program CPU seconds per round (in round order):"
echo
for v in "${variants[@]}"; do echo "- $v: ${prog_cpu[$v]}"; done
