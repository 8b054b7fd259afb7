#!/usr/bin/env bash
# The QEMU plugin's IP mode (ip=N: a sample every N retired instructions,
# jittered) and the closing of perf.data when the guest is killed. qemu-x86_64
# runs directly, with the plugin arguments `pgokit record --emulate` builds
# (src/record/commands.c) plus ip=N.
#  (a) a static, non-PIE program (every instruction it runs is in one ELF
#      file, so the exact counts written by the same run cover all of them):
#      perf reads the file, the event is instructions:u without branch
#      stacks; every sample IP is an instruction start (llvm-objdump-19)
#      inside a function; the sample count is the exact instruction total / N
#      and the periods add up to it; each function's share of the samples is
#      its share of the executed instructions, each hot instruction its
#      executions / N; in every call chain each return address follows a
#      call of the function of the frame below it;
#      the same seed gives the same samples, another seed other samples;
#      exact= next to ip= writes the same exact counts as in LBR mode and
#      leaves the samples alone; a rep-prefixed instruction counts once.
#  (b) a PIE with a shared library: samples symbolize in both, MMAP2 records
#      carry build-ids, IPs and return addresses check out as in (a).
#  (c) SIGINT / SIGTERM sent to qemu, abort() and SIGSEGV in the guest, in
#      LBR and IP modes: a readable perf.data with samples, no temporary left,
#      the exit status of the signal; a guest that handles SIGINT exits cleanly.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 perf clang-19 llvm-objdump-19 llvm-readelf-19 python3
PLUGIN=$PK_BUILD/pgokit-lbr.so
[ -f "$PLUGIN" ] || { echo "skipped: $PLUGIN not built"; exit 77; }
P=$PK_ROOT/tests/programs
ulimit -c 0   # QEMU writes a guest core on SIGSEGV/SIGABRT when allowed

# rec OUT PROG IP SEED EXACT ARGS... (EXACT "" for none; IP "" for LBR mode)
rec() {
    local out=$1 prog=$2 ip=$3 seed=$4 exact=$5; shift 5
    qemu-x86_64 -plugin "$PLUGIN,out=$out,period=2003,depth=32,callchain=on,seed=$seed,comm=$(basename "$prog"),exe=$prog${exact:+,exact=$exact}${ip:+,ip=$ip}" \
        "$prog" "$@"
}

clang-19 -O1 -g -static -fno-optimize-sibling-calls -fno-omit-frame-pointer \
    -o "$T/ex" "$P/record_exact.c" || { fail "build static fixture"; finish; exit; }
N=251
# Every run writes to a file: a pipe and /dev/null take different paths in libc.
"$T/ex" 100000 > "$T/native.out"
rec "$T/ip.data" "$T/ex" $N 7 "$T/ip.exact" 100000 > "$T/ip.out"
check "program output unchanged" cmp -s "$T/native.out" "$T/ip.out"
check "perf.data and exact counts written" test -s "$T/ip.data" -a -s "$T/ip.exact"
check "no temporary left" bash -c "! ls '$T'/*.tmp.* 2>/dev/null | grep -q ."

perf script -i "$T/ip.data" -F event,period,ip,dso > "$T/ip.txt" 2> "$T/ip.err"
check "perf script prints no warnings" test ! -s "$T/ip.err"
check "the event is instructions:u" grep -q 'instructions:u' "$T/ip.txt"
perf report -D -i "$T/ip.data" > "$T/ip.D" 2>&1
check "perf report -D has no warnings" bash -c "! grep -qiwE 'warning|error|unprocessable|bad' '$T/ip.D'"
check "no branch stacks" bash -c "! grep -q 'branch stack' '$T/ip.D'"
check "call chains start with PERF_CONTEXT_USER" grep -qE '^\.+ +0: fffffffffffffe00$' "$T/ip.D"
"$PGOKIT" dump "$T/ip.data" > "$T/ip.dump" 2> "$T/dump.err"
check "pgokit dump reads it: attr without BRANCH_STACK" \
    grep -qE '^# attr 0: type 0 config 0x1 .*\(IP\|TID\|TIME\|CALLCHAIN\|PERIOD\)' "$T/ip.dump"
check_eq "pgokit dump and perf script count the same samples" \
    "$(grep -c 'instructions:u' "$T/ip.txt")" "$(grep -cE '^[0-9]+/[0-9]+ .*: ip 0x' "$T/ip.dump")"
"$PGOKIT" record --print-exact "$T/ip.exact" > "$T/ip.exact.txt"
llvm-objdump-19 -d --no-show-raw-insn "$T/ex" > "$T/ex.dis"

# The checker: perf script frames are map-relative (file offsets), turned
# into ELF vaddrs with the program headers, as in record_emulated.sh.
cat > "$T/check.py" <<'PY'
import bisect, re, struct, sys
# check.py OWN SCRIPT N EXACT|- BINARY=DISASSEMBLY...
# OWN: comma-separated functions of the fixture, never tail-called: a call
# of one of them must have its frame right below the return address.
own, script, N, exact = set(sys.argv[1].split(",")), sys.argv[2], int(sys.argv[3]), sys.argv[4]
bins = {}        # path -> (loads, insns {addr: (func, mnemonic, operands)}, sorted addrs)
for spec in sys.argv[5:]:
    path, dis = spec.split("=", 1)
    d = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", d, 32); phentsize, phnum = struct.unpack_from("<HH", d, 54)
    loads = []
    for i in range(phnum):
        t, fl, off, va, pa, fs, ms = struct.unpack_from("<IIQQQQQ", d, phoff + i * phentsize)
        if t == 1: loads.append((off, va, fs))
    ins, func = {}, None
    for line in open(dis):
        m = re.match(r"^([0-9a-f]+) <(\S+)>:", line)
        if m: func = m.group(2); continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and func: ins[int(m.group(1), 16)] = (func, m.group(2), m.group(3))
    bins[path] = (loads, ins, sorted(ins))
def vaddr(rel, path):
    for o, va, fs in bins[path][0]:
        if o <= rel < o + fs: return rel - o + va
    return None
def func_of(path, a):
    loads, ins, order = bins[path]
    i = bisect.bisect_right(order, a) - 1
    return ins[order[i]][0] if i >= 0 else None
def prev_insn(path, a):
    order = bins[path][2]
    i = bisect.bisect_left(order, a)
    return order[i - 1] if 0 < i < len(order) and order[i] == a else None
samples, periods, bad, checked_ip, calls, hits, at = 0, 0, 0, 0, 0, {}, {}
def block(lines):
    global samples, periods, bad, checked_ip, calls
    if not lines: return
    head = re.match(r"^\s*(\d+) instructions:u:", lines[0])
    if not head: return
    samples += 1; periods += int(head.group(1))
    frames = []
    for l in lines[1:]:
        m = re.match(r"^\s+([0-9a-f]+) \((.*)\)$", l)
        if m: frames.append((int(m.group(1), 16), m.group(2)))
    if not frames: bad += 1; print("sample without a call chain"); return
    out = []
    for rel, path in frames:
        out.append((path, vaddr(rel, path)) if path in bins else (None, None))
    path, ip = out[0]
    if path:
        checked_ip += 1
        if ip not in bins[path][1]:
            bad += 1; print("ip %x is not an instruction start of %s" % (ip, path)); return
        f = bins[path][1][ip][0]
        hits[f] = hits.get(f, 0) + 1
        at[ip] = at.get(ip, 0) + 1
    # each return address follows a call; a direct call targets the function below
    below = bins[path][1][ip][0] if path else None
    for p, r in out[1:]:
        if not p:
            below = None; continue
        pi = prev_insn(p, r)
        mn = [w for w in (bins[p][1][pi][1] + " " + bins[p][1][pi][2]).split()
              if w not in ("addr32", "data16", "notrack", "bnd", "cs", "ds")] if pi is not None else [""]
        if not mn[0].startswith("call"):
            bad += 1; print("return address %x does not follow a call" % r); return
        calls += 1
        m = re.match(r"^(?:0x)?[0-9a-f]+ <([^>+]+)>", " ".join(mn[1:]))
        if m and m.group(1) in own and m.group(1) != below:
            bad += 1; print("call at %x goes to %s, the frame below is in %s" % (pi, m.group(1), below)); return
        below = bins[p][1][pi][0]
cur = []
for line in open(script):
    if line.strip() == "": block(cur); cur = []
    else: cur.append(line.rstrip("\n"))
block(cur)
print("samples", samples, "ip-checked", checked_ip, "return-addresses", calls, "bad", bad)
if exact != "-":
    # instructions executed, per function, from the exact ranges (inclusive)
    path = [p for p in bins][0]
    loads, ins, order = bins[path]
    total, per, execs = 0, {}, {}
    in_bin = False
    for line in open(exact):
        if line.startswith("binary "): in_bin = line.split()[1] == path; continue
        m = re.match(r"^\s+([0-9a-f]+)-([0-9a-f]+):(\d+)$", line)
        if not (in_bin and m): continue
        a, b, c = int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))
        for x in order[bisect.bisect_left(order, a):bisect.bisect_right(order, b)]:
            per[ins[x][0]] = per.get(ins[x][0], 0) + c; total += c
            execs[x] = execs.get(x, 0) + c
    print("instructions", total, "expected-samples %.1f" % (total / N), "sum-periods", periods)
    print("rate-error %.4f" % (abs(samples - total / N) / (total / N)))
    print("periods-gap", total - periods)
    worst = 0.0
    for f in sorted(per, key=per.get, reverse=True):
        share_i, share_s = 100.0 * per[f] / total, 100.0 * hits.get(f, 0) / samples
        if share_i >= 0.5 or share_s >= 0.5:
            print("share %-24s instructions %6.2f%% samples %6.2f%%" % (f, share_i, share_s))
            worst = max(worst, abs(share_i - share_s))
    print("worst-share-gap %.2f" % worst)
    # per instruction: every instruction executed often enough is sampled in
    # proportion (an off-by-one in the choice of the instruction would leave
    # the first instruction of every block unsampled)
    hot = [x for x in execs if execs[x] * samples / total >= 100]
    dev = max([abs(at.get(x, 0) / (execs[x] * samples / total) - 1) for x in hot] or [1])
    never = sum(1 for x in at if x not in execs)
    print("hot-instructions", len(hot), "worst-deviation %.3f" % dev, "sampled-never-executed", never)
PY
python3 "$T/check.py" main,classify,depth "$T/ip.txt" $N "$T/ip.exact.txt" "$T/ex=$T/ex.dis" > "$T/check.txt"
grep -v '^share' "$T/check.txt" | head -8; grep '^share' "$T/check.txt" | head -6
check "samples were checked" grep -qE '^samples [0-9]{4,} ip-checked [0-9]{4,} return-addresses [0-9]{4,} ' "$T/check.txt"
check "every IP is an instruction start; every return address follows a call of the frame below" \
    grep -qE ' bad 0$' "$T/check.txt"
check "sample count = exact instructions / N within 3%" \
    awk '/^rate-error/ {exit !($2 < 0.03)}' "$T/check.txt"
# the periods add up to the instructions counted up to the last sample: the
# rest is less than one interval (3N/2); the exact ranges miss only the few
# instructions after the last branch before exit_group
check "periods add up to the exact instruction count" \
    awk -v n=$N '/^periods-gap/ {exit !($2 > -64 && $2 < 1.5 * n)}' "$T/check.txt"
check "each function's share of samples within 1.5 points of its share of instructions" \
    awk '/^worst-share-gap/ {exit !($2 < 1.5)}' "$T/check.txt"
check "each hot instruction's samples within 30% of its executions / N; (almost) none never executed" \
    awk '/^hot-instructions/ {exit !($2 >= 20 && $4 < 0.3 && $6 <= 2)}' "$T/check.txt"

# determinism: the same seed, the same samples (pid, tid and times differ
# from run to run; everything else is equal); another seed, other samples
# (the second run also shows that exact= leaves the samples alone)
rec "$T/ip2.data" "$T/ex" $N 7 "" 100000 > "$T/ip.out"
rec "$T/ip3.data" "$T/ex" $N 8 "" 100000 > "$T/ip.out"
norm() { # DATA OUT: pgokit dump without its title line, pid and times replaced
    "$PGOKIT" dump "$1" | sed 1d > "$2.raw"
    local pid; pid=$(grep -oE '^PERF_RECORD_COMM exec: [^ ]+:[0-9]+' "$2.raw" | grep -oE '[0-9]+$')
    # The time first, then the pid where records print it: the seconds of a
    # time (since boot) can equal the pid (both 5-digit numbers here), and a
    # blind replacement of the pid then left that sample's time unreplaced.
    sed -E "s/^$pid\/$pid [0-9]+\.[0-9]+:/P\/P T:/; s/^(PERF_RECORD_[A-Z0-9]+[ (]|PERF_RECORD_COMM exec: [^ ]+:)$pid([/:])$pid\b/\1P\2P/" "$2.raw" > "$2"
}
norm "$T/ip.data" "$T/n1"; norm "$T/ip2.data" "$T/n2"; norm "$T/ip3.data" "$T/n3"
check "same seed: identical records apart from pid, tid and time" cmp -s "$T/n1" "$T/n2"
check "another seed: other samples" bash -c "! cmp -s '$T/n1' '$T/n3'"
check "sample records are compared" test "$(grep -c '^P/P T: ip 0x' "$T/n1")" -gt 1000

# exact= with ip=: the same exact counts as an LBR-mode run of the program
rec "$T/lbr.data" "$T/ex" "" 7 "$T/lbr.exact" 100000 > "$T/ip.out"
"$PGOKIT" record --print-exact "$T/lbr.exact" > "$T/lbr.exact.txt"
check "exact counts in IP mode equal those of LBR mode" cmp -s "$T/ip.exact.txt" "$T/lbr.exact.txt"

# a rep-prefixed instruction counts once per execution, not per iteration
# (with and without exact=: the two callbacks take the repeat test apart)
clang-19 -O1 -g -static -fno-optimize-sibling-calls -fno-omit-frame-pointer \
    -o "$T/rep" "$P/record_rep.c" || { fail "build rep fixture"; finish; exit; }
rec "$T/rep.data" "$T/rep" $N 5 "$T/rep.exact" 100000 > "$T/rep.out"
rec "$T/rep2.data" "$T/rep" $N 5 "" 100000 > "$T/rep.out"
"$PGOKIT" record --print-exact "$T/rep.exact" > "$T/rep.exact.txt"
llvm-objdump-19 -d --no-show-raw-insn "$T/rep" > "$T/rep.dis"
perf script -i "$T/rep.data" -F event,period,ip,dso > "$T/rep.txt" 2>/dev/null
python3 "$T/check.py" main,copy "$T/rep.txt" $N "$T/rep.exact.txt" "$T/rep=$T/rep.dis" > "$T/rep.check"
grep -E '^(samples|periods-gap|hot)' "$T/rep.check"
check "rep: IPs and call chains check out" grep -qE '^samples [0-9]{4,} .* bad 0$' "$T/rep.check"
check "rep: periods add up to the exact instruction count" \
    awk -v n=$N '/^periods-gap/ {exit !($2 > -64 && $2 < 1.5 * n)}' "$T/rep.check"
check "rep: hot instructions (the rep included) sampled in proportion" \
    awk '/^hot-instructions/ {exit !($2 >= 10 && $4 < 0.3 && $6 <= 2)}' "$T/rep.check"
norm "$T/rep.data" "$T/r1"; norm "$T/rep2.data" "$T/r2"
check "rep: the same samples with and without exact=" cmp -s "$T/r1" "$T/r2"

# (b) PIE and shared library
clang-19 -O2 -g -fPIC -shared -o "$T/librecord_lib.so" "$P/record_lib.c" &&
clang-19 -O2 -g -fPIE -pie -fno-omit-frame-pointer -o "$T/prog" "$P/record_prog.c" \
    -L"$T" -lrecord_lib -Wl,-rpath,"$T" || { fail "build PIE fixture"; finish; exit; }
native=$("$T/prog" 20000)
out=$(rec "$T/pie.data" "$T/prog" 499 3 "" 20000)
check_eq "PIE output unchanged" "$native" "$out"
perf script -i "$T/pie.data" -F event,period,ip,dso > "$T/pie.txt" 2> "$T/pie.err"
check "perf script reads the PIE recording without warnings" test ! -s "$T/pie.err"
llvm-objdump-19 -d --no-show-raw-insn "$T/prog" > "$T/prog.dis"
llvm-objdump-19 -d --no-show-raw-insn "$T/librecord_lib.so" > "$T/lib.dis"
python3 "$T/check.py" main,work,fib,leaf_add,leaf_sub "$T/pie.txt" 499 - "$T/prog=$T/prog.dis" "$T/librecord_lib.so=$T/lib.dis" > "$T/pie.check"
head -3 "$T/pie.check"
check "PIE and library samples checked" grep -qE '^samples [0-9]{3,} ip-checked [0-9]{3,} return-addresses [0-9]{3,} ' "$T/pie.check"
check "PIE/library IPs are instruction starts, return addresses follow calls" grep -qE ' bad 0$' "$T/pie.check"
perf script -i "$T/pie.data" -F ip,sym,dso -G > "$T/pie.sym" 2>/dev/null
for s in work fib leaf_add leaf_sub; do
    check "PIE samples in $s" grep -qE " $s\+?.*\(\S*/prog\)" "$T/pie.sym"
done
check "library samples in record_lib_mix" grep -q "record_lib_mix.*librecord_lib.so" "$T/pie.sym"
perf script -i "$T/pie.data" --show-mmap-events -F ip > "$T/pie.mmaps" 2>/dev/null
check "MMAP2 of the PIE carries its build-id" \
    grep -q "<$(llvm-readelf-19 -n "$T/prog" | awk '/Build ID/{print $3}')>.* $T/prog\$" "$T/pie.mmaps"
check "bad ip= is refused" bash -c "! qemu-x86_64 -plugin '$PLUGIN,out=$T/x.data,ip=0' /bin/true 2>'$T/bad.err' && grep -q 'ip=0' '$T/bad.err'"

# (c) signals. Background jobs of a script ignore SIGINT: reset it.
clang-19 -O2 -g -fno-omit-frame-pointer -o "$T/sig" "$P/record_signal.c" || { fail "build signal fixture"; finish; exit; }
readable() { # FILE: perf reads it and it has samples
    perf script -i "$1" -F ip > "$1.txt" 2> "$1.err" && test -s "$1.txt" && ! grep -qi 'warning\|error' "$1.err"
}
# sampling FILE PID: waits (at most 60 s) until the plugin has written
# samples into FILE's temporary: its writer flushes 64 KiB at a time, after
# the header and the first mappings, so a non-empty temporary holds samples,
# and the guest has run past its start (handlers installed). A fixed delay
# fails on a loaded machine, where QEMU may not even have loaded the guest.
sampling() {
    for _ in $(seq 1200); do
        compgen -G "$1.tmp.*" > /dev/null && [ -n "$(find "$(dirname "$1")" -name "$(basename "$1").tmp.*" -size +0)" ] &&
            return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
for mode in lbr ip; do
    ipn=; [ $mode = ip ] && ipn=100003
    for sig in INT TERM; do
        f=$T/k-$mode-$sig.data
        env --default-signal=INT,TERM qemu-x86_64 -plugin "$PLUGIN,out=$f,seed=1,exe=$T/sig${ipn:+,ip=$ipn}" "$T/sig" spin &
        pid=$!
        check "$mode: SIG$sig test: the guest runs and is sampled" sampling "$f" $pid
        kill -$sig $pid
        wait $pid; rc=$?
        check_eq "$mode: SIG$sig kills the guest (exit status)" $((128 + $(kill -l $sig))) $rc
        check "$mode: SIG$sig leaves a readable perf.data with samples" readable "$f"
        check "$mode: SIG$sig leaves no temporary" bash -c "! ls '$f'.tmp.* 2>/dev/null | grep -q ."
    done
    for crash in abort segv; do
        f=$T/c-$mode-$crash.data
        rc=$( { qemu-x86_64 -plugin "$PLUGIN,out=$f,seed=1,exe=$T/sig${ipn:+,ip=$ipn}" "$T/sig" $crash; echo $?; } 2>/dev/null)
        want=134; [ $crash = segv ] && want=139
        check_eq "$mode: $crash in the guest (exit status)" $want $rc
        check "$mode: $crash leaves a readable perf.data with samples" readable "$f"
        check "$mode: $crash leaves no temporary" bash -c "! ls '$f'.tmp.* 2>/dev/null | grep -q ."
    done
done
# A signal while QEMU starts, before it handles signals (it dies outright
# then): the plugin must have created nothing yet. The delays sweep QEMU's
# first milliseconds, the plugin's loading among them; each run is waited
# for (at most 3 s, then killed: a lost signal fails the check too). Python
# starts and signals them: a shell's child signalled before its exec would
# run the script's EXIT trap (which removes $T).
mkdir -p "$T/early"
lost=$(python3 - "$PLUGIN" "$T/early" "$T/sig" <<'PY'
import os, signal, subprocess, sys, time
plugin, d, prog = sys.argv[1:]
lost = 0
for i in range(1, 61):
    p = subprocess.Popen(["qemu-x86_64", "-plugin", f"{plugin},out={d}/e{i}.data,seed=1,exe={prog}", prog, "spin"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGTERM)])
    time.sleep(i * 0.0002)
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=3)
    except subprocess.TimeoutExpired:
        lost += 1
        p.kill()
        p.wait()
print(lost)
PY
)
check_eq "SIGTERM in QEMU's first milliseconds: every run ends" 0 "$lost"
check "SIGTERM in QEMU's first milliseconds: no temporary left" bash -c "! compgen -G '$T/early/*.tmp*' > /dev/null"
for d in "$T"/early/e*.data; do
    [ -e "$d" ] || continue
    perf script -i "$d" -F ip > /dev/null 2>&1 || { fail "an early-stopped recording is unreadable: $d"; break; }
done
f=$T/h.data
env --default-signal=INT qemu-x86_64 -plugin "$PLUGIN,out=$f,ip=100003,exe=$T/sig" "$T/sig" handle > "$T/h.out" &
pid=$!
check "a guest that handles SIGINT: it runs and is sampled" sampling "$f" $pid
kill -INT $pid
wait $pid; rc=$?
check_eq "a guest that handles SIGINT goes on and exits 0" "0 clean" "$rc $(cat "$T/h.out")"
check "its perf.data is complete" readable "$f"
finish
