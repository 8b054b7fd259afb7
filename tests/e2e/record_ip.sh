#!/usr/bin/env bash
# `pgokit record` IP + call-stack sampling, attach and Ctrl-C, on a fixture
# with a hot loop three calls deep (tests/programs/record_ip.c):
#  - --ip (perf): >= 4,000 samples per CPU-second at the default frequency,
#    every sample with an ip and a frame-pointer call chain and no branch
#    stack; call chains symbolize (llvm-symbolizer-19, through the MMAP2
#    records and the ELF segments) into ip_hot <- ip_middle <- ip_outer <-
#    main; perf script reads the file and counts the same samples; MMAP2
#    carries the build-id; --freq is applied and capped at the kernel limit;
#  - no mode flag: one stderr line names the mode and why;
#  - --pid PID --duration 1 attaches to a running process;
#  - SIGINT / SIGTERM to record (and a terminal-like ^C to its process
#    group) end the recording: a readable perf.data with samples, no
#    temporary file, exit 130 / 143, the program stopped;
#  - --emulate: the same with QEMU, and --emulate --ip (plugin ip=N);
#  - an output that cannot be created fails before the program runs.
# The emulated Ctrl-C and --emulate --ip checks need the plugin of issue 17
# (ip=N and finishing perf.data when the guest dies of a signal). Its marker:
# the plugin accepts ip=N. An older plugin rejects it ("unknown argument
# 'ip=..."): those checks are then skipped, and the rest still must pass
# (for Ctrl-C: no temporary left behind, and record says what it removed).
source "$(dirname "$0")/../lib.sh"
need perf clang-19 llvm-symbolizer-19 llvm-readelf-19 python3 timeout
perf record -q -e cpu-clock -o "$T/probe.data" true >/dev/null 2>&1 ||
    { echo "skipped: perf record cannot sample here (perf_event_paranoid?)"; exit 77; }
_skip=0
skip() { _skip=$((_skip + 1)); echo "skip: $*"; }
finish_ip() { echo "$_script: $_pass passed, $_fail failed, $_skip skipped"; [ $_fail -eq 0 ]; }
HERE=$(cd "$(dirname "$0")" && pwd)

clang-19 -O2 -g -fno-omit-frame-pointer -o "$T/ip" "$PK_ROOT/tests/programs/record_ip.c" ||
    { fail "build the fixture"; finish_ip; exit; }
BID=$(llvm-readelf-19 -n "$T/ip" | awk '/Build ID/ {print $3}')
samples_of() { "$PGOKIT" dump --stats "$1" 2>/dev/null | awk '/^# samples:/ {print $3}'; }
no_tmp() { ! compgen -G "$T/$1.tmp*" >/dev/null; }
chains() { # DATA -> "samples N leaf_bin A leaf_known B leaf_hot C chain D ip_is_leaf E"
    "$PGOKIT" dump "$1" > "$1.dump" 2>&1 && python3 "$HERE/record_ip_chains.py" "$1.dump" "$T/ip"
}
field() { awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}' <<<"$2"; }
# at least PCT % of the samples: check_pct DESCRIPTION PCT PART WHOLE
check_pct() { check "$1 ($3 of $4)" test $(($3 * 100)) -ge $(($2 * $4)) -a "$4" -gt 0; }

# ---- --ip: one CPU-second of the fixture ----
"$PGOKIT" record --ip -o "$T/ip.data" -- "$T/ip" 1 > "$T/ip.out" 2> "$T/ip.err"
check_eq "record --ip exits with the program's status" 0 $?
check "the program ran" grep -q ' rounds$' "$T/ip.out"
check "the mode line says IP sampling: instructions at a fixed period, or cpu-clock at 4999 Hz, frame-pointer chains of a program that keeps frame pointers" \
    grep -qE '^pgokit record: IP sampling \(perf record -e (instructions:u every 500009 events|cpu-clock:u at 4999 Hz), frame-pointer call chains\): asked with --ip; frame-pointer chains: .*/ip sets up a frame pointer in (100|[5-9][0-9]) % of the code of its functions with a frame$' "$T/ip.err"
n=$(sed -nE 's/^pgokit record: IP sampling: wrote .*ip\.data: ([0-9]+) samples.*/\1/p' "$T/ip.err")
echo "summary: $(grep '^pgokit record: .*wrote' "$T/ip.err")"
check "the summary counts >= 4000 samples in one CPU-second (${n:-none})" test "${n:-0}" -ge 4000
check_eq "the summary's count is the reader's" "$n" "$(samples_of "$T/ip.data")"
check "no temporary file left" no_tmp ip.data
"$PGOKIT" dump "$T/ip.data" > "$T/ip.dump"
check "attr: ip and call chain, no branch stack" \
    bash -c "grep -q '^# attr 0: .*(IP|TID|TIME|CALLCHAIN|PERIOD)' '$T/ip.dump' && ! grep -q BRANCH_STACK '$T/ip.dump'"
check "no branch-stack entries" grep -q '^# branch entries: 0$' "$T/ip.dump"
perf script -i "$T/ip.data" -F pid,ip,sym > "$T/ip.script" 2> "$T/ip.script.err"
check "perf script reads it without a warning" test ! -s "$T/ip.script.err"
check_eq "perf script sees as many samples" "$n" "$(grep -c '^ *[0-9]' "$T/ip.script")"
check "perf script names ip_hot" grep -q ' ip_hot' "$T/ip.script"
perf script -i "$T/ip.data" --show-mmap-events -F ip > "$T/ip.mmaps" 2>/dev/null
check "MMAP2 of the program carries its build-id" grep -q "<$BID>.* $T/ip\$" "$T/ip.mmaps"
r=$(chains "$T/ip.data"); echo "chains: $r"
s=$(field samples "$r")
check_pct "every chain starts with the sample's ip" 100 "$(field ip_is_leaf "$r")" "$s"
check_pct "leaves symbolize into the fixture's functions" 95 "$(field leaf_known "$r")" "$s"
check_pct "leaves in the hot loop" 90 "$(field leaf_hot "$r")" "$s"
check_pct "chains read ip_hot <- ip_middle <- ip_outer <- main" 90 "$(field chain "$r")" "$s"

# ---- mode choice without a flag ----
"$PGOKIT" record -o "$T/auto.data" -- "$T/ip" 0.2 > /dev/null 2> "$T/auto.err"
check_eq "one line says the mode chosen and why" 1 \
    "$(grep -cE '^pgokit record: (IP sampling|hardware LBR) \(.*\): no mode flag, and ' "$T/auto.err")"
if grep -q '^pgokit record: IP sampling' "$T/auto.err"; then
    check "IP mode because the PMU records no branch stacks" grep -q 'branch stacks.*--emulate records LBR' "$T/auto.err"
    check "the automatic IP recording has no branch stacks" \
        bash -c "'$PGOKIT' dump --stats '$T/auto.data' | grep -q '^# branch entries: 0$'"
else
    check "hardware LBR because the PMU records branch stacks" grep -q 'the PMU records branch stacks' "$T/auto.err"
fi

# ---- --freq, and the kernel's limit ----
"$PGOKIT" record -q -F 1000 -o "$T/f.data" -- "$T/ip" 0.5 > /dev/null
nf=$(samples_of "$T/f.data")
check "-F 1000 gives ~500 samples in half a CPU-second ($nf)" test "${nf:-0}" -ge 350 -a "${nf:-0}" -le 650
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
"$PGOKIT" record --freq $((max + 1)) -o "$T/max.data" -- "$T/ip" 0.05 > /dev/null 2> "$T/max.err"
check_eq "a frequency above the kernel's limit still records" 0 $?
check "... and says it is capped" grep -q "above kernel.perf_event_max_sample_rate ($max): sampling at $max Hz" "$T/max.err"

# ---- exit status and usage errors ----
"$PGOKIT" record --ip -q -o "$T/x.data" -- sh -c 'exit 3'
check_eq "the program's exit status is passed through" 3 $?
for bad in "--emulate --pid 1" "--freq 100 --emulate -- true" "--hardware --ip -- true" \
           "--duration 1 -- true" "--pid 1 -- true" "--freq 100 --period 5 -- true" "--ip --lbr-depth 8 -- true"; do
    # shellcheck disable=SC2086
    "$PGOKIT" record $bad 2>/dev/null
    check_eq "usage error: record $bad" 2 $?
done
for m in --ip --emulate; do
    "$PGOKIT" record $m -o "$T/nx.data" -- "$T/no-such-program" 2> "$T/nx.err"
    check "a missing program ($m): exit 127, said, no output" \
        bash -c "[ $? -eq 127 ] && grep -q 'cannot run $T/no-such-program' '$T/nx.err' && [ ! -e '$T/nx.data' ]"
done
sh -c 'exit 0' & gone=$!; wait $gone
"$PGOKIT" record --pid $gone --duration 1 -o "$T/gone.data" 2> "$T/gone.err"
check "--pid of a process that is gone fails clearly" bash -c "[ $? -eq 1 ] && grep -q 'no such process' '$T/gone.err'"

# ---- the output is checked before the program starts ----
"$PGOKIT" record --emulate -o "$T/nodir/x.data" -- sh -c "touch '$T/ran1'" 2> "$T/nodir.err"
check_eq "missing output directory: exit 1" 1 $?
check "... the message names the path" grep -q "$T/nodir/x.data" "$T/nodir.err"
check "... and the program did not run" test ! -e "$T/ran1"
mkdir "$T/ro"
ro_run() { # MODE-FLAG: record into a read-only directory
    if [ "$(id -u)" != 0 ]; then
        chmod 555 "$T/ro"
        "$PGOKIT" record "$1" -o "$T/ro/x.data" -- sh -c "touch '$T/ran2'"
    else   # root writes anywhere: a read-only tmpfs in a private mount namespace
        unshare -m bash -c "mount -t tmpfs -o ro tmpfs '$T/ro' &&
            '$PGOKIT' record $1 -o '$T/ro/x.data' -- sh -c \"touch '$T/ran2'\""
    fi
}
if [ "$(id -u)" != 0 ] || unshare -m true 2>/dev/null; then
    for m in --emulate --ip; do
        ro_run $m 2> "$T/ro.err"
        rc=$?
        check "read-only output directory ($m): exit 1, the path named, nothing run" \
            bash -c "[ $rc -eq 1 ] && grep -q 'cannot create the output $T/ro/x.data in $T/ro: ' '$T/ro.err' && [ ! -e '$T/ran2' ]"
    done
    chmod 755 "$T/ro"
else
    skip "read-only output directory (root without mount namespaces)"
fi

# ---- --pid: attach to a running process for one second ----
"$T/ip" 30 > /dev/null &
F=$!
# attach once the fixture is itself (exec'd), not the shell that starts it
for _ in $(seq 200); do [ "$(readlink /proc/$F/exe 2>/dev/null)" = "$T/ip" ] && break; sleep 0.05; done
t0=$(date +%s%N)
timeout 30 "$PGOKIT" record --pid $F --duration 1 -o "$T/pid.data" 2> "$T/pid.err"
rc=$?
t1=$(date +%s%N)
kill $F 2>/dev/null; wait $F 2>/dev/null
check_eq "--pid --duration 1 exits 0" 0 $rc
check "... after about a second ($(( (t1 - t0) / 1000000 )) ms)" test $(( (t1 - t0) / 1000000 )) -lt 8000
check "... the mode line names the attach" grep -q "attached to pid $F for 1 s" "$T/pid.err"
np=$(samples_of "$T/pid.data")
check "... samples of the process ($np)" test "${np:-0}" -gt 200
check "... every sample from that process" bash -c "'$PGOKIT' dump '$T/pid.data' | grep -E '^[0-9]+/[0-9]+ ' | grep -vq '^$F/' && exit 1 || exit 0"
perf script -i "$T/pid.data" --show-mmap-events -F ip > "$T/pid.mmaps" 2>/dev/null
check "... the existing mappings are listed with build-ids" grep -q "<$BID>.* $T/ip\$" "$T/pid.mmaps"
r=$(chains "$T/pid.data"); echo "attach chains: $r"
check_pct "... chains read ip_hot <- ip_middle <- ip_outer <- main" 90 "$(field chain "$r")" "$(field samples "$r")"
check "... no temporary file left" no_tmp pid.data
# a process that exits before --duration ends the recording
"$T/ip" 0.3 > /dev/null &
F=$!
t0=$(date +%s%N)
timeout 60 "$PGOKIT" record -q --pid $F --duration 30 -o "$T/pid2.data"
rc=$?
t1=$(date +%s%N)
wait $F
check_eq "--pid of a process that exits before --duration: exit 0" 0 $rc
check "... recording ends with the process ($(( (t1 - t0) / 1000000 )) ms)" test $(( (t1 - t0) / 1000000 )) -lt 20000
np=$(samples_of "$T/pid2.data")
check "... with its samples ($np)" test "${np:-0}" -gt 0

# ---- Ctrl-C and SIGTERM ----
# Job control gives each background job its own process group with SIGINT
# not ignored (a script's plain `&` ignores it), as on a terminal.
set -m
running() { # REGEX: wait until a process's command line matches (at most 20 s)
    for _ in $(seq 200); do pgrep -f "$1" >/dev/null && return 0; sleep 0.1; done; return 1
}
# ran_cpu REGEX MS: wait until the process matching REGEX has used MS ms of
# CPU time (at most 60 s): sampled on CPU time, it has samples by then,
# however loaded the machine is
ran_cpu() {
    local p tck
    p=$(pgrep -f "$1" | head -1) tck=$(getconf CLK_TCK)
    [ -n "$p" ] || return 1
    for _ in $(seq 600); do
        read -r -a st < "/proc/$p/stat" 2>/dev/null || return 1
        [ $(( (st[13] + st[14]) * 1000 / tck )) -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
# interrupt NAME SIGNAL-TARGET SIGNAL REGEX RECORD-ARGS... : start record on
# the fixture for 30 CPU-seconds, wait for the fixture (REGEX) to run and use
# 300 ms of CPU, signal record (or its process group), wait for it (<= 60 s);
# sets rc
interrupt() {
    local name=$1 target=$2 sig=$3 regex=$4; shift 4
    # (env: a suite started with SIGINT ignored, as a non-interactive
    # shell's `&` leaves it, would pass that on to record)
    env --default-signal=INT,TERM "$PGOKIT" record "$@" -o "$T/$name.data" -- "$T/ip" 30 > /dev/null 2> "$T/$name.err" &
    local R=$!
    running "$regex" || echo "note: the fixture did not start"
    ran_cpu "$regex" 300 || echo "note: the fixture did not run 300 ms"
    if [ "$target" = group ]; then kill -s "$sig" -- -$R; else kill -s "$sig" $R; fi
    for _ in $(seq 600); do kill -0 $R 2>/dev/null || break; sleep 0.1; done
    kill -KILL $R 2>/dev/null
    wait $R
    rc=$?
    sed 's/^/    /' "$T/$name.err"
}
for c in "int pgokit INT 130" "term pgokit TERM 143" "grp group INT 130"; do
    read -r name target sig want <<<"$c"
    interrupt "c$name" "$target" "$sig" "^$T/ip 30" --ip
    check_eq "--ip, SIG$sig to $target: exit $want" "$want" "$rc"
    nc=$(samples_of "$T/c$name.data")
    check "... a readable perf.data with samples (${nc:-none})" test "${nc:-0}" -gt 0
    check "... perf script reads it" bash -c "perf script -i '$T/c$name.data' 2>&1 >/dev/null | grep -c . | grep -qx 0"
    check "... no temporary file left" no_tmp "c$name.data"
    check "... the program was stopped" bash -c "! pgrep -f '^$T/ip 30'"
    pkill -f "^$T/ip 30" 2>/dev/null   # (only if the check above failed)
done
set +m

PLUGIN=${PGOKIT_LBR_PLUGIN:-$PK_BUILD/pgokit-lbr.so}
if ! command -v qemu-x86_64 >/dev/null || [ ! -f "$PLUGIN" ]; then
    skip "emulated checks: qemu-x86_64 or $PLUGIN missing"
    finish_ip; exit
fi
new_plugin=1
qemu-x86_64 -plugin "$PLUGIN,out=$T/marker.data,ip=1000" /bin/true 2> "$T/marker.err"
grep -q "unknown argument 'ip=" "$T/marker.err" && new_plugin=0
[ $new_plugin = 1 ] || echo "note: $PLUGIN rejects ip=N: it predates issue 17 (IP mode, finishing on signals)"

set -m
interrupt eint pgokit INT "^qemu-x86_64 .* $T/ip 30" --emulate --period 200003
set +m
check "--emulate, SIGINT: no temporary file left" no_tmp eint.data
check "... the program was stopped" bash -c "! pgrep -f '^qemu-x86_64 .* $T/ip 30'"
if [ $new_plugin = 1 ]; then
    check_eq "--emulate, SIGINT: exit 130" 130 "$rc"
    ne=$(samples_of "$T/eint.data")
    check "... a readable perf.data with samples (${ne:-none})" test "${ne:-0}" -gt 0
    check "... with branch stacks" bash -c "'$PGOKIT' dump --stats '$T/eint.data' | grep -qE '^# branch entries: [1-9]'"
else
    check "--emulate, SIGINT with an old plugin: record says what it removed" grep -q 'removed the unfinished' "$T/eint.err"
    skip "--emulate Ctrl-C keeps the samples: needs the plugin of issue 17"
fi

"$PGOKIT" record --emulate --ip -o "$T/eip.data" -- "$T/ip" 0.2 > /dev/null 2> "$T/eip.err"
rc=$?
if grep -q "unknown argument 'ip=" "$T/eip.err"; then
    skip "--emulate --ip: the plugin predates ip=N (issue 17)"
else
    check_eq "--emulate --ip exits 0" 0 $rc
    check "the mode line says emulated IP sampling every ~10007 instructions" \
        grep -q '^pgokit record: emulated IP sampling (qemu-x86_64, a sample every ~10007 instructions, call chains)' "$T/eip.err"
    check "no branch-stack entries" bash -c "'$PGOKIT' dump --stats '$T/eip.data' | grep -q '^# branch entries: 0$'"
    check "perf script reads it without a warning" bash -c "perf script -i '$T/eip.data' 2>&1 >/dev/null | grep -c . | grep -qx 0"
    r=$(chains "$T/eip.data"); echo "emulated chains: $r"
    s=$(field samples "$r")
    check "samples ($s)" test "${s:-0}" -gt 100
    check_pct "leaves symbolize into the fixture's functions" 95 "$(field leaf_known "$r")" "$s"
    check_pct "chains read ip_hot <- ip_middle <- ip_outer <- main" 90 "$(field chain "$r")" "$s"
fi
finish_ip
