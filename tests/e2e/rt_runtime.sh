#!/usr/bin/env bash
# rt_runtime.sh — libpgokit_rt on programs built with gcc-12 and clang-19
# (-pg -mfentry): first-execution order, coverage, exact counts in counting
# mode, call sites patched to NOPs, threads, fork (separate child profile),
# static and shared runtime, offline correlation with local-name disambiguation.
source "$(dirname "$0")/../lib.sh"
need gcc-12 clang-19

RT_A=$PK_BUILD/libpgokit_rt.a
RT_SO=$PK_BUILD/libpgokit_rt.so
TOOL=$PK_BUILD/rt-temporal-tool
if "$PGOKIT" show --temporal --help 2>/dev/null | grep -q "raw temporal profile"; then TOOL=$PGOKIT; fi
[ -f "$RT_A" ] && [ -x "$TOOL" ] || { echo "skipped: runtime or tool not built"; exit 77; }
SRC=$PK_ROOT/tests/programs

# names in a raw profile, in first-execution order
trace_of() { "$TOOL" show --binary "$1" "$2" | awk '/^rec /{print $6}'; }
count_of() { "$TOOL" show --binary "$1" "$2" | awk -v f="$3" '/^rec / && $6 == f {print $3}'; }

for cc in gcc-12 clang-19; do
  # cet: endbr64 comes first, so the hook call straddles an 8-byte boundary
  # and is patched with a 16-byte compare-and-swap
  for rt in static shared cet; do
    d=$T/$cc-$rt; mkdir -p "$d"
    extra=; [ $rt = cet ] && extra=-fcf-protection=full
    $cc -O2 -g -pg -mfentry $extra -c "$SRC/rt_order.c" -o "$d/a.o" &&
    $cc -O2 -g -pg -mfentry $extra -c "$SRC/rt_order_b.c" -o "$d/b.o" || { fail "$cc: compile"; continue; }
    if [ $rt != shared ]; then
      $cc -o "$d/prog" "$d/a.o" "$d/b.o" "$RT_A" -lpthread -Wl,--build-id || { fail "$cc: link"; continue; }
    else
      $cc -o "$d/prog" "$d/a.o" "$d/b.o" -L"$PK_BUILD" -lpgokit_rt -Wl,-rpath,"$PK_BUILD" -lpthread -Wl,--build-id \
        || { fail "$cc: link shared"; continue; }
    fi
    tag="$cc/$rt"

    # ---- trace mode (default): order, coverage, patched sites, fork ----
    (cd "$d" && PGOKIT_RT_FILE="$d/run.pgoraw" ./prog > out.txt) || fail "$tag: program failed"
    check "$tag: raw profile written" test -s "$d/run.pgoraw"
    # a symlink planted at the temporary's name (exec keeps the shell's pid)
    echo precious > "$d/victim"
    (cd "$d" && bash -c 'ln -s "$1/victim" "$1/planted.pgoraw.tmp.$$"; PGOKIT_RT_FILE="$1/planted.pgoraw" exec ./prog' _ "$d" > planted.txt) ||
      fail "$tag: program failed"
    check "$tag: a symlink at the temporary's name is not written through" grep -qx precious "$d/victim"
    check "$tag: ... and the profile is written all the same" test -s "$d/planted.pgoraw"
    trace_of "$d/prog" "$d/run.pgoraw" > "$d/trace.txt"
    exp_order=$(sed -n 's/^EXPECT_ORDER //p' "$d/out.txt")
    n=$(wc -w <<<"$exp_order")
    check_eq "$tag: first-execution order" "$exp_order" "$(head -n "$n" "$d/trace.txt" | xargs)"
    exp_set=$(sed -n 's/^EXPECT_SET //p' "$d/out.txt" | tr ' ' '\n' | sort | xargs)
    check_eq "$tag: functions first run by threads" "$exp_set" "$(sed -n "$((n + 1)),$((n + 5))p" "$d/trace.txt" | sort | xargs)"
    check_eq "$tag: every function recorded once" "" "$(sort "$d/trace.txt" | uniq -d | xargs)"
    check "$tag: after_fork recorded" grep -qx after_fork "$d/trace.txt"
    check "$tag: child_only not in the parent" bash -c "! grep -q child_only '$d/trace.txt'"
    check "$tag: never_called not covered" bash -c "! grep -q never_called '$d/trace.txt'"
    check "$tag: no unresolved address" bash -c "! grep -qx '?' '$d/trace.txt'"
    # default: the first 16 hook calls of a function retarget its direct
    # callers past the hook, then the hook becomes a NOP (checked in the
    # stress test below, whose calls are indirect)
    check "$tag: main's call to counted skips the hook" grep -Eq "^CALLER_OFFSET counted (5|6|9|10)$" "$d/out.txt"
    # PGOKIT_RT_LEARN_CALLS=0: NOP at the first execution, callers untouched
    (cd "$d" && PGOKIT_RT_LEARN_CALLS=0 PGOKIT_RT_FILE="$d/nolearn.pgoraw" ./prog > nolearn.txt) || fail "$tag: program failed"
    # removed hook: a NOP, or CS prefixes of the first instruction (no cost)
    for f in alpha counted t_work0; do
      check "$tag: no learning: $f's hook is removed after one entry" grep -Eq "^ENTRY $f (f30f1efa)?((67|66)?0f1f440000|(2e){5,6})" "$d/nolearn.txt"
    done
    # counted starts with `mov (%rsp),%rax`: its hook becomes prefixes (gcc's
    # static addr32 call without endbr64: known to be 6 bytes from the unwind
    # table, as no direct caller was seen)
    check "$tag: no learning: counted's hook became CS prefixes" grep -Eq "^ENTRY counted (f30f1efa)?(2e){5,6}488b" "$d/nolearn.txt"
    (cd "$d" && PGOKIT_RT_PREFIX=0 PGOKIT_RT_LEARN_CALLS=0 PGOKIT_RT_FILE="$d/noprefix.pgoraw" ./prog > noprefix.txt) || fail "$tag: program failed"
    check "$tag: PGOKIT_RT_PREFIX=0: NOPs only" grep -Eq "^ENTRY counted (f30f1efa)?(67|66)?0f1f440000" "$d/noprefix.txt"
    check "$tag: no learning: callers untouched" grep -q "^CALLER_OFFSET counted 0$" "$d/nolearn.txt"
    check_eq "$tag: same trace with and without learning" "$(head -n "$n" "$d/trace.txt" | xargs)" \
      "$(trace_of "$d/prog" "$d/nolearn.pgoraw" | head -n "$n" | xargs)"
    check "$tag: never_called still calls the hook" grep -Eq "^ENTRY never_called (f30f1efa)?((67)?e8|ff15)" "$d/out.txt"
    cpid=$(sed -n 's/^CHILD_PID //p' "$d/out.txt")
    check "$tag: child wrote its own profile" test -s "$d/run.$cpid.pgoraw"
    # the child starts empty: child_only first; alpha only if its hook was
    # still live (learning mode), nothing the child did not run
    check "$tag: child's trace" grep -Eqx "child_only( alpha)?" <(trace_of "$d/prog" "$d/run.$cpid.pgoraw" | xargs)
    check_eq "$tag: child's trace, no learning" "child_only" "$(trace_of "$d/prog" "$d/nolearn.$(sed -n 's/^CHILD_PID //p' "$d/nolearn.txt").pgoraw" | xargs)"
    check_eq "$tag: parent pid in its profile" "$(grep -c "pid $cpid " <("$TOOL" show "$d/run.pgoraw"))" "0"

    # ---- counting mode: exact counts, parent and child separate ----
    (cd "$d" && PGOKIT_RT_MODE=count PGOKIT_RT_FILE="$d/cnt.pgoraw" ./prog > cnt.txt) || fail "$tag: count run failed"
    ok=1
    while read -r _ f want; do
      got=$(count_of "$d/prog" "$d/cnt.pgoraw" "$f")
      [ "$got" = "$want" ] || { ok=0; echo "  $tag: count of $f: want $want got '$got'"; }
    done < <(grep '^EXPECT_COUNT ' "$d/cnt.txt")
    check "$tag: exact entry counts" test $ok = 1
    check "$tag: counting mode never patches" grep -Eq "^ENTRY alpha (f30f1efa)?(67)?(e8|ff15)" "$d/cnt.txt"
    check "$tag: counting mode never redirects" grep -q "^CALLER_OFFSET counted 0$" "$d/cnt.txt"
    cpid=$(sed -n 's/^CHILD_PID //p' "$d/cnt.txt")
    check_eq "$tag: child's counts" "child_only=1 alpha=1" \
      "$("$TOOL" show --binary "$d/prog" "$d/cnt.$cpid.pgoraw" | awk '/^rec /{printf "%s%s=%s", s, $6, $3; s=" "}')"
  done
done

# ---- gcc without unwind tables: a 0x67 before the hook call cannot be told
# apart from the end of the previous function, so the hook becomes a NOP ----
d=$T/gcc-nofde; mkdir -p "$d"
if gcc-12 -O2 -g -pg -mfentry -fno-asynchronous-unwind-tables -fno-unwind-tables -c "$SRC/rt_order.c" -o "$d/a.o" &&
   gcc-12 -O2 -g -pg -mfentry -fno-asynchronous-unwind-tables -fno-unwind-tables -c "$SRC/rt_order_b.c" -o "$d/b.o" &&
   gcc-12 -o "$d/prog" "$d/a.o" "$d/b.o" "$RT_A" -lpthread -Wl,--build-id; then
  (cd "$d" && PGOKIT_RT_LEARN_CALLS=0 PGOKIT_RT_FILE="$d/n.pgoraw" ./prog > out.txt) || fail "gcc no unwind tables: program failed"
  check "gcc no unwind tables: hook of counted becomes a 6-byte NOP" grep -Eq "^ENTRY counted 670f1f440000" "$d/out.txt"
  exp_order=$(sed -n 's/^EXPECT_ORDER //p' "$d/out.txt")
  check_eq "gcc no unwind tables: first-execution order" "$exp_order" \
    "$(trace_of "$d/prog" "$d/n.pgoraw" | head -n "$(wc -w <<<"$exp_order")" | xargs)"
else
  fail "gcc no unwind tables: build"
fi

# ---- signal dump and a program killed in the middle of a dump ----
d=$T/gcc-12-static
if [ -x "$d/prog" ]; then
  mkdir -p "$d/sig"
  (cd "$d/sig" && PGOKIT_RT_FILE="$d/sig/s.pgoraw" exec ../prog wait > ready.txt) &
  pid=$!
  for _ in $(seq 100); do grep -q READY "$d/sig/ready.txt" 2>/dev/null && break; sleep 0.05; done
  kill -USR2 $pid
  for _ in $(seq 100); do [ -s "$d/sig/s.pgoraw" ] && break; sleep 0.05; done
  # patching leaves the last written code page writable until a dump
  rwx=$(grep -c ' rwxp ' /proc/$pid/maps || true)
  kill -KILL $pid; wait $pid 2>/dev/null
  check "SIGUSR2 dumps a running program" test -s "$d/sig/s.pgoraw"
  check_eq "no code page left writable after a dump" 0 "$rwx"
  check_eq "signal dump holds the trace so far" "main alpha beta" "$(trace_of "$d/prog" "$d/sig/s.pgoraw" | head -3 | xargs)"
  # PGOKIT_RT_SIGNAL by name (with the SIG prefix), and the default file name
  mkdir -p "$d/sig1"
  (cd "$d/sig1" && PGOKIT_RT_SIGNAL=SIGUSR1 exec ../prog wait > ready.txt) &
  pid=$!
  for _ in $(seq 100); do grep -q READY "$d/sig1/ready.txt" 2>/dev/null && break; sleep 0.05; done
  kill -USR1 $pid
  for _ in $(seq 100); do [ -s "$d/sig1/default.pgoraw" ] && break; sleep 0.05; done
  kill -KILL $pid; wait $pid 2>/dev/null
  check "PGOKIT_RT_SIGNAL=SIGUSR1 dumps to default.pgoraw" test -s "$d/sig1/default.pgoraw"
  check_eq "named-signal dump holds the trace so far" "main alpha beta" \
    "$(trace_of "$d/prog" "$d/sig1/default.pgoraw" 2>/dev/null | head -3 | xargs)"

  # Run A dumps k.pgoraw completely; run B (same file name) is killed in the
  # middle of its dump: A's file must survive intact, B leaves only its temporary.
  mkdir -p "$d/kill"
  run_wait() { # STALL: start ../prog wait, dump with USR2, return its pid in $pid
    (cd "$d/kill" && PGOKIT_RT_TEST_STALL=$1 PGOKIT_RT_FILE="$d/kill/k.pgoraw" exec ../prog wait > "ready$1.txt") &
    pid=$!
    for _ in $(seq 100); do grep -q READY "$d/kill/ready$1.txt" 2>/dev/null && break; sleep 0.05; done
    kill -USR2 $pid
  }
  run_wait 0
  for _ in $(seq 100); do [ -s "$d/kill/k.pgoraw" ] && break; sleep 0.05; done
  kill -KILL $pid; wait $pid 2>/dev/null
  pid_a=$pid
  cp "$d/kill/k.pgoraw" "$d/kill/a.copy"
  run_wait 30
  # the dump stalls after its header is flushed: kill it once the header is there
  for _ in $(seq 400); do [ -s "$d/kill/k.pgoraw.tmp.$pid" ] && break; sleep 0.05; done
  kill -KILL $pid; wait $pid 2>/dev/null
  check "killed mid-dump: the earlier run's file is intact" cmp -s "$d/kill/k.pgoraw" "$d/kill/a.copy"
  check "killed mid-dump: the earlier file is still valid" bash -c "'$TOOL' show '$d/kill/k.pgoraw' | grep -q 'pid $pid_a '"
  check "killed mid-dump: only a temporary is left" test -e "$d/kill/k.pgoraw.tmp.$pid"
  if [ -e "$d/kill/k.pgoraw.tmp.$pid" ]; then
    "$TOOL" show "$d/kill/k.pgoraw.tmp.$pid" > /dev/null 2> "$d/kill/err.txt"
    check "the partial temporary is rejected as truncated" grep -q "truncated" "$d/kill/err.txt"
  fi
fi
# ---- stress: 512 functions first entered concurrently by 8 threads ----
for cc in gcc-12 clang-19; do
  d=$T/stress-$cc; mkdir -p "$d"
  $cc -O2 -g -pg -mfentry -o "$d/prog" "$SRC/rt_stress.c" "$RT_A" -lpthread -Wl,--build-id || { fail "$cc: stress build"; continue; }
  for i in 1 2 3; do
    (cd "$d" && PGOKIT_RT_FILE="$d/t$i.pgoraw" ./prog > "out$i.txt") || fail "$cc: stress run $i crashed"
  done
  ok=1
  for i in 1 2 3; do
    trace_of "$d/prog" "$d/t$i.pgoraw" > "$d/t$i.txt"
    [ "$(grep -c '^f[0-9]*$' "$d/t$i.txt")" = 512 ] && [ -z "$(sort "$d/t$i.txt" | uniq -d)" ] || ok=0
  done
  check "$cc stress: 512 functions, each recorded once, in 3 runs" test $ok = 1
  check "$cc stress: hooks entered 16+ times (indirect calls) were removed" \
    grep -Eq "^ENTRY f100 (f30f1efa)?((67|66)?0f1f440000|(2e){5,6})" "$d/out1.txt"
  (cd "$d" && PGOKIT_RT_MODE=count PGOKIT_RT_FILE="$d/c.pgoraw" ./prog > out.txt) || fail "$cc: stress count run"
  each=$(sed -n 's/^EXPECT_EACH //p' "$d/out.txt")
  check_eq "$cc stress: every entry counted" "512 $each" \
    "$("$TOOL" show --binary "$d/prog" "$d/c.pgoraw" | awk '/^rec / && $6 ~ /^f[0-9]+$/ {n++; c[$3]++} END {for (k in c) printf "%d %s", n, k}')"
done
finish
