#!/bin/bash
# record_output: where `pgokit record` writes, as perf record does:
#   -o - streams pipe-mode perf.data to standard output (the program's own
#   output goes to standard error), an existing output is kept as FILE.old,
#   and a SIGKILL of record leaves none of its children running.
source "$(dirname "$0")/../lib.sh"
need perf qemu-x86_64 cc python3
cd "$T"
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
# ./loop: a short run; ./loop long: runs until killed
printf '#include <stdio.h>\nvolatile long n;\nint main(int c, char **v) { long k = c > 1 ? -1L : 20000000L;\n  for (long i = 0; i != k; i++) n += i; puts("program output"); return 0; }\n' > loop.c
cc -O1 -g -o loop loop.c

perf_ok=false
perf record -q -e cpu-clock -o probe.data true > /dev/null 2>&1 && perf_ok=true
modes="--emulate"; $perf_ok && modes="--emulate --ip"
for m in $modes; do
  "$PGOKIT" record $m -o - -- ./loop > s$m.data 2> s$m.err
  check_eq "$m -o -: exit 0" 0 $?
  check "$m -o -: pipe-mode header on standard output" \
      python3 -c 'import sys; d = open(sys.argv[1], "rb").read(16); sys.exit(d != b"PERFILE2" + (16).to_bytes(8, "little"))' s$m.data
  check "$m -o -: the program's output went to standard error" grep -q 'program output' s$m.err
  check "$m -o -: nothing but the data on standard output" bash -c "! grep -aq 'program output' s$m.data"
  n=$(perf script -i - -F ip -G < s$m.data 2> s$m.perr | wc -l)
  check "$m -o -: perf script -i - reads it ($n samples)" test "$n" -gt 0
  check "$m -o -: ... without warnings" test ! -s s$m.perr
  check "$m -o -: the summary's count is what perf reads" grep -q ": $n samples" s$m.err
  "$PGOKIT" profgen -q --binary loop --perf - --format text -o s$m.prof < s$m.data
  check "$m -o -: profgen --perf - takes it" grep -q '^main:' s$m.prof
  check "$m -o -: no file left behind" bash -c "! compgen -G '$TMPDIR/*' > /dev/null && ! test -e ./-"
done
# a pipeline, as over ssh
"$PGOKIT" store init -q st.db
"$PGOKIT" record --emulate -q -o - -- ./loop 2>/dev/null | "$PGOKIT" store add -q st.db --binary loop - 2> st.err
check "-o - | store add DB -: stored" bash -c "'$PGOKIT' store list st.db | grep -q '^loop '"

# an existing output is kept as .old (replacing an older .old), as perf does
"$PGOKIT" record --emulate -q -o keep.data -- ./loop > /dev/null 2>&1
cp keep.data first.copy
echo "older" > keep.data.old
"$PGOKIT" record --emulate -q -o keep.data -- ./loop > /dev/null 2>&1
check "the previous recording is kept as .old" cmp -s keep.data.old first.copy
check "the new recording is in place" bash -c "test -s keep.data && ! cmp -s keep.data first.copy"
"$PGOKIT" record --emulate -q -o keep.data -- /nonexistent/prog > /dev/null 2>&1
check "a run that records nothing leaves the output as it was" bash -c "test -s keep.data && test -s keep.data.old"

# SIGKILL of record: its children (QEMU and so the program) end with it
"$PGOKIT" record --emulate -q -o killed.data -- ./loop long > /dev/null 2>&1 &
rp=$!
# (the QEMU that runs the program, not a short-lived probe of QEMU itself)
for _ in $(seq 400); do q=$(pgrep -P $rp -f 'pgokit-lbr.*loop long$') && [ -n "$q" ] && break; sleep 0.05; done
check "SIGKILL: QEMU runs under record" test -n "${q:-}"
kill -KILL $rp
wait $rp 2>/dev/null
gone=false
for _ in $(seq 200); do kill -0 "${q:-0}" 2>/dev/null || { gone=true; break; }; sleep 0.05; done
check "SIGKILL: QEMU and the program end with record" $gone
$gone || kill -KILL "$q" 2>/dev/null
finish
