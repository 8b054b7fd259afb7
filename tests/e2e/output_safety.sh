#!/bin/bash
# output_safety: every -o goes through one temporary that nobody can plant
# a symlink at, no command overwrites one of its own inputs, and a signal
# during a write leaves no temporary behind.
source "$(dirname "$0")/../lib.sh"
cd "$T"

printf 'main:100:10\n 1: 10\n 2: 90\n' > in.prof
echo "precious" > victim
cp victim victim.orig

# A symlink planted at the name the temporary used to have ("<out>.tmp.<pid>":
# exec keeps the shell's pid) must not be followed.
bash -c 'ln -s "$1/victim" "$1/out.prof.tmp.$$"; exec "$2" convert "$1/in.prof" --text -o "$1/out.prof"' _ "$T" "$PGOKIT"
check "convert: a planted <out>.tmp.<pid> symlink is not followed" cmp -s victim victim.orig
check "convert: the output is written" grep -q '^main:100:10' out.prof
# and a symlink at any *.tmp.* name next to the output is not used either
for i in $(seq 20); do ln -sf "$T/victim" "$T/out2.prof.tmp.$i"; done
"$PGOKIT" convert in.prof --text -o out2.prof
check "convert: symlinks beside the output untouched" cmp -s victim victim.orig
check_eq "convert: the temporary was renamed, not left" "20" "$(ls out2.prof.tmp.* | wc -l)"

# Commands refuse an output that is one of their inputs (by device and inode,
# so another name of the same file is caught too).
refuses() { # DESC FILE COMMAND...
  local d=$1 f=$2; shift 2
  cp "$f" "$f.before"
  "$@" > out.txt 2> err.txt
  local rc=$?
  check "$d: fails" test $rc -ne 0
  check "$d: says why" grep -q 'same file as the input' err.txt
  check "$d: the input is unchanged" cmp -s "$f" "$f.before"
}
cp in.prof x.prof
refuses "convert x.prof -o x.prof" x.prof "$PGOKIT" convert x.prof --text -o x.prof
ln x.prof hardlink.prof
refuses "convert x.prof -o (a hard link of x.prof)" x.prof "$PGOKIT" convert x.prof --text -o hardlink.prof
refuses "convert --output=x.prof" x.prof "$PGOKIT" convert x.prof --text --output=x.prof
refuses "merge a b -o b" x.prof "$PGOKIT" merge in.prof x.prof -o x.prof
echo "x.prof" > list.txt
refuses "merge -f LIST -o (a file LIST names)" x.prof "$PGOKIT" merge in.prof -f list.txt -o x.prof

printf 'int main(void){return 0;}\n' | cc -g -x c - -o prog
refuses "profgen --binary B -o B" prog "$PGOKIT" profgen --binary prog --perf x.prof -o prog
refuses "record -o PROG -- PROG" prog "$PGOKIT" record -q -o prog -- ./prog
refuses "record -o PROG PROG (no --)" prog "$PGOKIT" record -q -o prog ./prog

"$PGOKIT" record -q -o x.data -- ./prog > /dev/null 2>&1
check "record: wrote x.data" test -s x.data
refuses "convert x.data -o x.data" x.data "$PGOKIT" convert x.data -o x.data
refuses "convert - -o x.data < x.data" x.data bash -c '"$1" convert --from perf - -o x.data < x.data' _ "$PGOKIT"

"$PGOKIT" store init store.db > /dev/null 2>&1
check "store init" test -s store.db
refuses "store pull DB -o DB" store.db "$PGOKIT" store pull store.db --build-id 00 -o store.db

# A signal during an output write removes the temporary. perf (record --ip)
# writes into record's temporary while the program runs: wait until perf has
# written into it, then signal. (SIGINT is ignored in a script's background
# job, as pgokit keeps it: SIGTERM stands for a user's stop.)
gone() { # PID...: true once none of them runs (bounded: 10 s)
  for _ in $(seq 200); do
    local alive=0
    for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && return 0
    sleep 0.05
  done
  return 1
}
# waits for a child that was signalled; one that does not end within the
# bound is killed and the check fails (the suite never hangs on it)
# (the killer is a copy of this script: it must not run lib.sh's EXIT trap,
# which removes $T, when it is stopped; SIGKILL runs no trap)
wait_bounded() { # PID SECONDS
  rm -f "$T/.timed-out"
  ( trap - EXIT; sleep "$2"; touch "$T/.timed-out"; kill -9 "$1" 2>/dev/null ) &
  local killer=$!
  wait "$1" 2>/dev/null
  local nap; nap=$(pgrep -P "$killer")
  kill -9 "$killer" 2>/dev/null; wait "$killer" 2>/dev/null
  [ -z "$nap" ] || kill $nap 2>/dev/null
  [ ! -e "$T/.timed-out" ]
}
# (pgokit is started with the signals at their defaults: a suite started
# under nohup, or as a script's background job, would pass SIGHUP or SIGINT
# on ignored, and pgokit keeps an ignored SIGHUP ignored, as nohup means;
# env execs pgokit, so $! is pgokit itself, where a shell function run in
# the background would be a copy of this script)
if command -v perf > /dev/null 2>&1 && perf record -q -e cpu-clock -o perf.probe true > /dev/null 2>&1; then
  for sig in HUP TERM KILL; do
    mkdir -p "sig$sig"
    env --default-signal=HUP,INT,TERM "$PGOKIT" record --ip -q -o "sig$sig/p.data" -- sleep 60 > /dev/null 2>&1 &
    pid=$!
    for _ in $(seq 200); do
      [ -n "$(find "sig$sig" -name 'p.data.tmp.*' -size +0 2>/dev/null)" ] && break
      sleep 0.05
    done
    check "record --ip SIG$sig: perf was writing the temporary" test -n "$(find "sig$sig" -name 'p.data.tmp.*' -size +0)"
    perf_pid=$(pgrep -P $pid | head -1)
    prog_pid=$(pgrep -P "${perf_pid:-0}" | head -1)
    check "record --ip SIG$sig: perf and the program run" test -n "$perf_pid" -a -n "$prog_pid"
    kill -"$sig" $pid
    check "record --ip SIG$sig: pgokit ends (bounded: 60 s)" wait_bounded $pid 60
    check "record --ip SIG$sig: perf and the program end with pgokit" gone $perf_pid $prog_pid
    case $sig in
    HUP)
      check "record --ip SIG$sig: no temporary left" test -z "$(ls "sig$sig" | grep tmp)"
      check "record --ip SIG$sig: no output" test ! -e "sig$sig/p.data" ;;
    TERM) # SIGTERM stops the recording: the file is finished, not dropped
      check "record --ip SIG$sig: no temporary left" test -z "$(ls "sig$sig" | grep tmp)"
      check "record --ip SIG$sig: the recording is kept" test -s "sig$sig/p.data" ;;
    esac
  done
else
  echo "skipped the signal checks: perf cannot record here"
fi
# the same for an emulated recording: its session directory (each process's
# files) goes, and QEMU with pgokit
printf 'volatile long n; int main(void) { for (;;) n++; }\n' | cc -O1 -x c - -o spin
mkdir -p sigE
env --default-signal=HUP,INT,TERM "$PGOKIT" record --emulate -q -o sigE/p.data -- ./spin > /dev/null 2>&1 &
pid=$!
for _ in $(seq 400); do
  [ -n "$(find sigE -path 'sigE/p.data.tmp.*/*' -size +0 2>/dev/null)" ] && break
  sleep 0.05
done
check "record --emulate SIGHUP: the plugin was writing into the session directory" \
  test -n "$(find sigE -path 'sigE/p.data.tmp.*/*' -size +0)"
q=$(pgrep -P $pid -f 'pgokit-lbr.*spin$')
kill -HUP $pid
check "record --emulate SIGHUP: pgokit ends (bounded: 60 s)" wait_bounded $pid 60
check "record --emulate SIGHUP: QEMU ends with pgokit" gone ${q:-0}
check "record --emulate SIGHUP: no temporary or session directory left" test -z "$(ls sigE)"

finish
