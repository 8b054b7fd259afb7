#!/usr/bin/env bash
# `pgokit record` follows forks and execs, as `perf record` does without
# --no-inherit (plugin/follow.c, src/record/merge.c):
#  (a) a forked child (tests/programs/record_fork.c): both processes'
#      samples in one perf.data, told apart by pid (perf script, pgokit
#      dump: the same counts), a FORK record, the summary names both; the
#      exact counts hold the child's loop too (its backward branch is taken
#      exactly N - 1 times, the parent's N/3 - 1); profgen of the binary
#      works from the recording, llvm-profgen --pid CHILD too; no temporary
#      left;
#  (b) a child that dies of abort() keeps its samples; a child killed by
#      SIGKILL cannot: record names it as unrecorded; SIGTERM to record or
#      SIGINT to its process group stops parent and child, with their samples;
#  (c) exec (tests/programs/record_exec.c): the same pid records the old
#      and the new program (COMM exec records), an exec that fails first
#      (ENOENT, as in a shell's PATH search) stops nothing; the exec'd
#      program gets its argv[0], ignored and blocked signals as natively;
#  (d) a shell script as the command: followed into the programs it runs and
#      execs (every process image sampled), profgen of a child's binary;
#      a script whose interpreter is missing fails with the reason;
#  (e) --emulate --ip and --ip (perf itself inherits): the child's samples;
#  (f) a 32-bit program exec'd: it runs, and record names it unrecorded;
#  (g) an lld-linked PIE whose text starts at a non-page-aligned file offset
#      gets the kernel's MMAP2 (page of the text, pgoff 0): perf symbolizes
#      its samples, profgen reads them.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 perf clang-19 llvm-readelf-19 timeout setsid
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
P=$PK_ROOT/tests/programs
ulimit -c 0   # QEMU writes a guest core on SIGABRT when allowed
cd "$T" || exit 1

clang-19 -O1 -g -o rf "$P/record_fork.c" && clang-19 -O1 -g -o rx "$P/record_exec.c" &&
    clang-19 -O2 -g -fuse-ld=lld -o rf_lld "$P/record_fork.c" || { fail "build the fixtures"; finish; exit; }
N=300000
rec() { timeout 120 "$PGOKIT" record "$@"; }
# pids with samples in a recording, and samples of one pid
pids_of() { perf script -i "$1" -F pid 2>/dev/null | awk '{print $1}' | sort -u; }
samples_of() { perf script -i "$1" -F pid 2>/dev/null | awk -v p="$2" '$1 == p' | wc -l; }
fork_of() { "$PGOKIT" dump "$1" | sed -nE 's/^PERF_RECORD_FORK\(([0-9]+):.*\):\(([0-9]+):.*/\1 \2/p' | head -n 1; }

# (a) fork
native=$(./rf $N)
out=$(rec --emulate --exact-counts a.exact -o a.data -- ./rf $N 2> a.err)
check_eq "fork: the program's output is unchanged" "$native" "$out"
perf script -i a.data -F pid,comm,ip,sym > a.txt 2> a.perr
check "fork: perf script reads it without a warning" test ! -s a.perr
read -r child parent <<<"$(fork_of a.data)"
check "fork: a FORK record names the child and the parent" test -n "$child" -a -n "$parent"
check_eq "fork: samples come from the parent and the child" "$(printf '%s\n' "$parent" "$child" | sort)" \
    "$(pids_of a.data)"
cs=$(samples_of a.data "$child"); ps=$(samples_of a.data "$parent")
check "fork: the child (N iterations) has more samples than the parent (N/3): $cs > $ps" test "$cs" -gt "$ps"
check_eq "fork: pgokit dump counts the child's samples as perf does" "$cs" \
    "$("$PGOKIT" dump a.data | grep -cE "^$child/$child .*: ip 0x")"
check "fork: the summary gives samples per process" \
    grep -qE "2 processes: rf\[($child|$parent)\] [0-9]+, rf\[($child|$parent)\] [0-9]+" a.err
check "fork: the samples are in the loop (perf symbolizes them)" grep -q 'lcg_loop' a.txt
total=$(( N - 1 + N / 3 - 1 ))
check "fork: exact counts hold the child's loop too ($N-1 + $N/3-1 = $total)" \
    bash -c "'$PGOKIT' record --print-exact a.exact | grep -qE -- '->[0-9a-f]+:$total\$'"
check "fork: profgen of the binary works from the recording" \
    "$PGOKIT" profgen -q --binary rf --perf a.data --format text -o a.prof
check "fork: the profile has the loop" grep -q '^lcg_loop:' a.prof
if command -v llvm-profgen-19 > /dev/null; then
    # the child announces its inherited mappings under its own pid
    check "fork: llvm-profgen --pid CHILD reads the child's samples" \
        llvm-profgen-19 --binary rf --perfdata a.data --pid "$child" --format=text --output a.lp 2> a.lperr
    check "fork: ... and finds the loop" grep -q '^lcg_loop:' a.lp
fi
check "fork: no temporary left" bash -c "! compgen -G '$T/*.tmp*' > /dev/null"

# (b) a child that dies of a signal keeps its samples; a SIGKILLed one cannot
out=$(rec --emulate -o b.data -- ./rf $N abort 2> b.err)
check "abort: the parent saw the child die of SIGABRT" grep -q 'child status signal 6' <<<"$out"
read -r child parent <<<"$(fork_of b.data)"
check "abort: the aborted child's samples are kept" test "$(samples_of b.data "$child")" -gt 0
check "abort: the parent's too" test "$(samples_of b.data "$parent")" -gt 0
out=$(rec --emulate -o k.data -- ./rf $N hang 2> k.err)
check "SIGKILL: the parent saw the child killed" grep -q 'child status signal 9' <<<"$out"
check "SIGKILL: record names the process that ran unrecorded" \
    grep -qE 'warning: 1 process ran unrecorded' k.err
check "SIGKILL: ... with its pid and why" grep -qE 'rf\[[0-9]+\]: ended without finishing its recording' k.err
check "SIGKILL: the parent's samples are there" test "$(pids_of k.data | wc -l)" -eq 1
check "SIGKILL: no temporary left" bash -c "! compgen -G '$T/*.tmp*' > /dev/null"

# SIGTERM to record, and SIGINT to its process group (a terminal's ^C),
# while parent and child run: both stop, both keep their samples.
# both_sampling NAME PID: waits (at most 60 s) until two processes' files in
# record's session directory hold samples (each plugin's writer flushes
# 64 KiB at a time, the first flush after its header and mappings).
both_sampling() {
    for _ in $(seq 1200); do
        [ "$(find "$T" -path "$T/$1.tmp.*/*" -name '*.data.tmp.*' -size +0 2>/dev/null | wc -l)" -ge 2 ] && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
for how in TERM INT; do
    if [ $how = TERM ]; then
        "$PGOKIT" record --emulate -o t$how.data -- ./rf 3000000000 > /dev/null 2> t$how.err & rp=$!
    else   # its own process group, SIGINT not ignored as in a script's background job
        setsid env --default-signal=INT "$PGOKIT" record --emulate -o t$how.data -- ./rf 3000000000 \
            > /dev/null 2> t$how.err & rp=$!
    fi
    check "SIG$how: parent and child run and are sampled" both_sampling t$how.data $rp
    if [ $how = TERM ]; then kill -TERM $rp; else kill -INT -- -$rp; fi
    wait $rp; rc=$?
    check_eq "SIG$how: record ends with the signal's status" $((128 + $(kill -l $how))) "$rc"
    check_eq "SIG$how: the parent's and the child's samples are kept" 2 "$(pids_of t$how.data | wc -l)"
done

# SIGKILL of record while parent and child run: every QEMU of the run ends
# with it (the first by PR_SET_PDEATHSIG, the forked one through the pipe
# record holds), none runs on unrecorded
"$PGOKIT" record --emulate -o tKILL.data -- ./rf 3000000000 > /dev/null 2> tKILL.err & rp=$!
check "SIGKILL: parent and child run and are sampled" both_sampling tKILL.data $rp
qs=$(pgrep -f "pgokit-lbr.so,dir=$T/tKILL.data.tmp" | tr '\n' ' ')
check "SIGKILL: two QEMUs run (${qs})" test "$(wc -w <<< "$qs")" -eq 2
kill -KILL $rp
wait $rp 2>/dev/null
ended() { for _ in $(seq 200); do local a=0; for q in $qs; do kill -0 $q 2>/dev/null && a=1; done; [ $a = 0 ] && return 0; sleep 0.05; done; return 1; }
check "SIGKILL: every QEMU of the run ends with record" ended
for q in $qs; do kill -KILL $q 2>/dev/null; done
rm -rf "$T"/tKILL.data.tmp.*

# (c) exec: the same pid records both programs
out=$(rec --emulate -o x.data -- ./rx 100000 ./rf rf $N 2> x.err)
check "exec: both programs ran" grep -q 'exec_work' <<<"$out"
check "exec: ... the exec'd one too" grep -q 'parent .* child status exit 7' <<<"$out"
"$PGOKIT" dump x.data > x.dump
pid=$(sed -nE 's/^PERF_RECORD_COMM exec: rx:([0-9]+).*/\1/p' x.dump)
check "exec: COMM exec records name rx, then rf, in one pid" grep -qE "^PERF_RECORD_COMM exec: rf:$pid/$pid" x.dump
perf script -i x.data -F comm,pid,ip,sym -G > x.txt 2>/dev/null
check "exec: rx's samples (exec_work) are there" grep -qE "^ *rx +$pid +[0-9a-f]+ exec_work" x.txt
check "exec: rf's samples in the same pid" grep -qE "^ *rf +$pid" x.txt
check "exec: the summary counts rx and rf apart" grep -qE "rx\[$pid\] [0-9]+" x.err
check "exec: a failed exec stopped nothing (nothing unrecorded)" bash -c "! grep -q unrecorded x.err"
native=$(./rx 1000 ./rx renamed signals | tail -n 1)
check "exec: natively, the exec'd program has its argv[0], SIGUSR1 ignored and SIGUSR2 blocked" \
    test "$native" == "argv0 renamed, SIGUSR1 ignored 1, SIGUSR2 blocked 1"
check_eq "exec: ... and so under the emulator" "$native" \
    "$(rec --emulate -q -o sig.data -- ./rx 1000 ./rx renamed signals | tail -n 1)"

# (d) a script
cat > run.sh <<EOF
#!/bin/sh
echo script start
./rf $N
exec ./rx 100000 ./rf rf $N
EOF
chmod +x run.sh
native=$(./run.sh)
out=$(rec --emulate -o s.data -- ./run.sh 2> s.err)
check_eq "script: its output is unchanged" "$native" "$out"
check_eq "script: samples from 4 processes (rf and its child, twice)" 4 "$(pids_of s.data | wc -l)"
"$PGOKIT" dump s.data > s.dump
check "script: the shell is named after the script" grep -qE '^PERF_RECORD_COMM exec: run.sh:' s.dump
check "script: its exec'd programs are recorded" test "$(grep -cE '^PERF_RECORD_COMM exec: (rx|rf):' s.dump)" -ge 3
check "script: profgen of a child's binary works from it" \
    "$PGOKIT" profgen -q --binary rf --perf s.data --format text -o s.prof
check "script: ... with the loop of every rf process" grep -q '^lcg_loop:' s.prof
printf 'echo plain "$@"\n./rf %s\n' $N > plain.sh; chmod +x plain.sh
out=$(rec --emulate -o pl.data -- ./plain.sh a b 2> /dev/null)
check "a script without #!: /bin/sh runs it, as execvp does" grep -q '^plain a b$' <<<"$out"
check_eq "... and its program's processes are recorded" 2 "$(pids_of pl.data | wc -l)"
printf '#!/nonexistent/shell\necho no\n' > bad.sh; chmod +x bad.sh
rec --emulate -o bad.data -- ./bad.sh 2> bad.err; rc=$?
check_eq "script with a missing interpreter: exit status 127" 127 "$rc"
check "... and the reason" grep -q 'cannot run ./bad.sh: No such file or directory' bad.err
check "... and no output" test ! -e bad.data

# (e) IP modes
rec --emulate --ip -o e.data -- ./rf $N > /dev/null 2>&1
read -r child parent <<<"$(fork_of e.data)"
check "emulated IP: the child's samples" test "$(samples_of e.data "$child")" -gt 0
check "emulated IP: the parent's" test "$(samples_of e.data "$parent")" -gt 0
if perf record -q -e cpu-clock -o probe.data true > /dev/null 2>&1; then
    # perf inherits by default: the child runs 0.1 s or more natively
    rec --ip -o p.data -- ./rf 60000000 > /dev/null 2> p.err
    check_eq "perf --ip: samples of the parent and the child" 2 "$(pids_of p.data | wc -l)"
    # a sample can land in perf's forked child before its exec: then the
    # parent shows once per program ("(with their execs)"), both rf still
    check "perf --ip: the summary gives both" \
        bash -c "grep -qE '; 2 processes( \\(with their execs\\))?: ' p.err && [ \$(grep -o ' rf\\[' p.err | wc -l) -eq 2 ]" \
        || cat p.err
else
    echo "skip: perf cannot sample here"
fi

# (f) a program the emulator cannot run
if clang-19 -m32 -O1 -nostdlib -static -fuse-ld=lld -o i386 "$P/record_i386.c" 2>/dev/null && ./i386 > /dev/null 2>&1
then
    out=$(rec --emulate -o n.data -- ./rx 100000 ./i386 i386 2> n.err)
    check "32-bit exec: it ran (natively)" grep -q 'i386 ok' <<<"$out"
    check "32-bit exec: record names it unrecorded, and why" \
        grep -qE 'i386\[[0-9]+\]: exec of ./i386: a 32-bit program; it runs natively' n.err
    check "32-bit exec: rx's own samples are kept" test "$(pids_of n.data | wc -l)" -eq 1
else
    echo "skip: no 32-bit x86 program runs here"
fi

# (g) lld: text at file offset 0x7xx, vaddr 0x17xx (not page-aligned)
text_off=$(llvm-readelf-19 -lW rf_lld | awk '$1 == "LOAD" && / R E / {print $2}')
rec --emulate -o l.data -- ./rf_lld $N > /dev/null 2>&1
"$PGOKIT" dump l.data > l.dump
lpid=$(sed -nE 's/^PERF_RECORD_COMM exec: rf_lld:([0-9]+).*/\1/p' l.dump)
mm=$(grep -E "PERF_RECORD_MMAP2 $lpid/.*r-xp .*/rf_lld\$" l.dump)
check "lld: its text segment is not page-aligned in the file ($text_off)" test "$((text_off % 4096))" -ne 0
check_eq "lld: one MMAP2 for its text" 1 "$(grep -c . <<<"$mm")"
check "lld: ... mapping the text's page from file offset 0, as the kernel does" grep -qE '000\([0-9a-fx]+\) @ 0 <' <<<"$mm"
check "lld: perf symbolizes the samples" grep -q lcg_loop <(perf script -i l.data -F ip,sym 2>/dev/null)
check "lld: profgen reads the recording" \
    "$PGOKIT" profgen -q --binary rf_lld --perf l.data --format text -o l.prof
check "lld: ... and finds the loop" grep -q '^lcg_loop:' l.prof
finish
