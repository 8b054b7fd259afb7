#!/usr/bin/env bash
# profgen_ip.sh — profiles from IP + call-stack samples (no branch stacks):
# `pgokit record --ip` (stock perf, cpu-clock, frame-pointer stacks) of the demo program (real
# samples, as on any VM without LBR), and the emulator's exact counts of the
# same run as the ground truth. Checks: the profile kind follows the samples
# (the summary says IP), flow inference beats raw block weights against the
# exact counts, llvm-profdata-19 reads every kind, clang-19 applies them, a
# CS profile has calling contexts, and --lbr on IP samples fails clearly.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profdata-19 perf

SRC=$PK_ROOT/tests/programs/profgen_demo.c
CFLAGS="-O2 -g -gdwarf-4 -fdebug-info-for-profiling -fno-omit-frame-pointer"
clang-19 $CFLAGS "$SRC" -o "$T/demo" || { fail "build demo"; finish; exit 1; }
clang-19 $CFLAGS -fpseudo-probe-for-profiling "$SRC" -o "$T/demo_probe" || { fail "build probe demo"; finish; exit 1; }

# IP samples: `pgokit record --ip` runs stock perf (cpu-clock works without
# a PMU); skip if this kernel refuses software sampling
rec() { "$PGOKIT" record --ip -q -o "$1" -- "${@:2}" >/dev/null 2>"$T/perf.err"; }
if ! rec "$T/ip.data" "$T/demo" 80; then
  echo "skipped: perf record -e cpu-clock fails here: $(head -n 2 "$T/perf.err")"; exit 77
fi
rec "$T/ipp.data" "$T/demo_probe" 80 || fail "perf record of the probe binary"
# the ground truth of the same runs (the emulator's exact counts)
"$PGOKIT" record --emulate -q --exact-counts "$T/ex" -o "$T/lbr.data" -- "$T/demo" 80 >/dev/null 2>&1 ||
  fail "emulated exact counts"
"$PGOKIT" record --emulate -q --exact-counts "$T/exp" -o "$T/lbrp.data" -- "$T/demo_probe" 80 >/dev/null 2>&1 ||
  fail "emulated exact counts (probe)"

# line-based AutoFDO, each inference method
for m in mcf propagate none; do
  "$PGOKIT" profgen --binary "$T/demo" --perf "$T/ip.data" --flow $m -o "$T/ip-$m.afdo" --format text 2>"$T/pg-$m.log"
  check "profgen --flow $m on IP samples" test -s "$T/ip-$m.afdo"
done
check "the summary says the profile came from IP samples" grep -q "from IP samples" "$T/pg-mcf.log"
check "the summary reports flow inference" grep -q "flow inference:" "$T/pg-mcf.log"
# cpu-clock fires on time: the summary counts such samples and says what
# that does to the counts, and which event weighs code by execution
check "the summary counts the samples of an event that fires on time" grep -q "from an event that fires on time" "$T/pg-mcf.log"
check "a note on cpu-clock's time weighting names instruction sampling" \
  grep -q "^profgen: note: 100 % of the samples .*fires on time.*instructions:u" "$T/pg-mcf.log"
ov() { "$PGOKIT" overlap --exact "$1" --binary "$2" "$3" 2>/dev/null | sed -n 's/.*block overlap \([0-9.]*\).*/\1/p'; }
o_mcf=$(ov "$T/ex" "$T/demo" "$T/ip-mcf.afdo"); o_none=$(ov "$T/ex" "$T/demo" "$T/ip-none.afdo")
o_prop=$(ov "$T/ex" "$T/demo" "$T/ip-propagate.afdo")
echo "line-based block overlap vs exact counts: mcf ${o_mcf:-?}, propagate ${o_prop:-?}, none ${o_none:-?}"
check "min-cost flow beats raw weights (${o_mcf:-?} > ${o_none:-?})" awk -v a="${o_mcf:-0}" -v b="${o_none:-1}" 'BEGIN{exit !(a > b)}'
check "min-cost flow overlap >= 0.85 (${o_mcf:-?})" awk -v a="${o_mcf:-0}" 'BEGIN{exit !(a >= 0.85)}'

# probe-only and CSSPGO from the same kind of samples
"$PGOKIT" profgen --binary "$T/demo_probe" --perf "$T/ipp.data" --ignore-stack-samples -o "$T/ip.probe" 2>"$T/pp.log"
check "probe-only profile from IP samples" test -s "$T/ip.probe"
"$PGOKIT" profgen --binary "$T/demo_probe" --perf "$T/ipp.data" -o "$T/ip.cs" 2>"$T/cs.log"
check "CSSPGO profile from IP samples" grep -q "CSSPGO, pre-inlined, nested" "$T/cs.log"
"$PGOKIT" profgen --binary "$T/demo_probe" --perf "$T/ipp.data" --no-preinline --format text -o "$T/ip.csflat" 2>/dev/null
check "flat CS profile has caller contexts" grep -qE '^\[main:[0-9]+ @ ' "$T/ip.csflat"
o_probe=$(ov "$T/exp" "$T/demo_probe" "$T/ip.probe"); o_cs=$(ov "$T/exp" "$T/demo_probe" "$T/ip.cs")
echo "probe block overlap vs exact counts: probe-only ${o_probe:-?}, CSSPGO ${o_cs:-?}"
# (cpu-clock samples weigh instructions by time, not by count, and are
# sparse here: loose bounds; the emulated IP mode below has the strict ones)
check "probe-only overlap >= 0.75 (${o_probe:-?})" awk -v a="${o_probe:-0}" 'BEGIN{exit !(a >= 0.75)}'
check "CSSPGO overlap >= 0.75 (${o_cs:-?})" awk -v a="${o_cs:-0}" 'BEGIN{exit !(a >= 0.75)}'

# every kind reads in llvm-profdata-19 and applies in clang-19
for p in ip-mcf.afdo ip.probe ip.cs; do
  check "llvm-profdata-19 reads $p" llvm-profdata-19 show --sample "$T/$p" -o /dev/null
done
clang-19 $CFLAGS -fprofile-sample-use="$T/ip-mcf.afdo" -S -emit-llvm "$SRC" -o "$T/afdo.ll" 2>"$T/clang.err"
check "clang-19 attaches entry counts from the IP AutoFDO profile" grep -q 'function_entry_count' "$T/afdo.ll"
check "clang-19 attaches branch weights from the IP AutoFDO profile" grep -q 'branch_weights' "$T/afdo.ll"
clang-19 $CFLAGS -fpseudo-probe-for-profiling -fprofile-sample-use="$T/ip.cs" -S -emit-llvm "$SRC" -o "$T/cs.ll" 2>"$T/clang2.err"
check "clang-19 applies the IP CSSPGO profile" grep -q 'function_entry_count' "$T/cs.ll"

# the hot loop's function gets its entry from main's call site (head samples > 0)
check "run_vm has head samples from its call site" grep -qE '^run_vm:[0-9]+:[1-9]' "$T/ip-mcf.afdo"

# --lbr on IP-only samples: a clear error, no output
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/ip.data" --lbr -o "$T/lbr.afdo" 2>"$T/lbr.err"
check_eq "--lbr on IP samples fails" 1 $?
check "--lbr error says there is no branch stack" grep -q "branch stack" "$T/lbr.err"
check "--lbr leaves no output" test ! -e "$T/lbr.afdo"

# --ip on an LBR recording uses the samples' instruction pointers
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/lbr.data" --ip -o "$T/forced.afdo" --format text 2>"$T/forced.log"
check "--ip forces IP samples on an LBR recording" grep -q "from IP samples" "$T/forced.log"

# a leaf without a frame pointer (-momit-leaf-frame-pointer): its
# frame-pointer chains skip the caller, which profgen puts back from the
# caller's only call to it
clang-19 -O2 -g -fno-omit-frame-pointer -momit-leaf-frame-pointer -fpseudo-probe-for-profiling \
  "$PK_ROOT/tests/programs/ip_leaf.c" -o "$T/ipl" || fail "build ip_leaf"
rec "$T/ipl.data" "$T/ipl" 20000 || fail "record ip_leaf"
"$PGOKIT" profgen --binary "$T/ipl" --perf "$T/ipl.data" --no-preinline --format text -o "$T/ipl.txt" 2>"$T/ipl.log"
check "the skipped caller of a frameless leaf is put back" grep -qE '^\[main:[0-9]+ @ middle:[0-9]+ @ leaf_mix\]' "$T/ipl.txt"
check "no context skips it" bash -c "! grep -qE '^\[main:[0-9]+ @ leaf_mix\]' '$T/ipl.txt'"
check "the summary counts the frames put back" grep -q "with a skipped caller put back" "$T/ipl.log"

# the emulator's IP mode: one sample every ~20k retired instructions with
# the exact instruction and shadow call stack (deterministic: the oracle
# that separates inference from cpu-clock's time weighting)
"$PGOKIT" record -q --emulate --ip --period 20011 --exact-counts "$T/eex" -o "$T/eip.data" -- "$T/demo" 60 >/dev/null 2>&1 ||
  fail "record --emulate --ip"
"$PGOKIT" record -q --emulate --ip --period 20011 --exact-counts "$T/eexp" -o "$T/eipp.data" -- "$T/demo_probe" 60 \
  >/dev/null 2>&1 || fail "record --emulate --ip (probe)"
for m in mcf none; do
  "$PGOKIT" profgen -q --binary "$T/demo" --perf "$T/eip.data" --flow $m -o "$T/e-$m.afdo"
  "$PGOKIT" profgen -q --binary "$T/demo_probe" --perf "$T/eipp.data" --flow $m --ignore-stack-samples -o "$T/e-$m.probe"
  "$PGOKIT" profgen -q --binary "$T/demo_probe" --perf "$T/eipp.data" --flow $m -o "$T/e-$m.cs"
done
# instruction samples (the emulator's, as a PMU's) draw no such note
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/eip.data" -o "$T/e-note.afdo" 2>"$T/e-note.log"
check "the summary of instruction samples says IP" grep -q "from IP samples" "$T/e-note.log"
check "instruction samples: no time-weighting note" sh -c "! grep -q 'fires on time' '$T/e-note.log'"
for k in afdo probe cs; do
  ex=$T/eexp; b=$T/demo_probe; [ $k = afdo ] && { ex=$T/eex; b=$T/demo; }
  a=$(ov "$ex" "$b" "$T/e-mcf.$k"); n=$(ov "$ex" "$b" "$T/e-none.$k")
  echo "emulated IP, $k: block overlap with inference ${a:-?}, without ${n:-?}"
  check "emulated IP $k: overlap >= 0.95 with inference (${a:-?})" awk -v a="${a:-0}" 'BEGIN{exit !(a >= 0.95)}'
  check "emulated IP $k: inference beats raw weights (${a:-?} > ${n:-?})" awk -v a="${a:-0}" -v b="${n:-1}" 'BEGIN{exit !(a > b)}'
done

# sampling density: samples per instruction of the hot code, in the
# summary; a recording too thin for its hot code is warned about (and still
# gives its profile). The same run sampled 50 times less often (about 2,000
# samples against 104,000) has about a fiftieth of the density; 50 samples
# are thin even for this small program.
dens() { sed -n 's/.*; \([0-9.]*\) samples per hot instruction.*/\1/p' "$1"; }
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/eip.data" -o "$T/d-dense.afdo" 2>"$T/d-dense.log"
"$PGOKIT" record -q --emulate --ip --period 1000003 -o "$T/eip50.data" -- "$T/demo" 60 >/dev/null 2>&1 ||
  fail "record --emulate --ip, period 1000003"
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/eip50.data" -o "$T/d-50.afdo" 2>"$T/d-50.log"
"$PGOKIT" record -q --emulate --ip --period 40000003 -o "$T/eipthin.data" -- "$T/demo" 60 >/dev/null 2>&1 ||
  fail "record --emulate --ip, period 40000003"
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/eipthin.data" -o "$T/d-thin.afdo" 2>"$T/d-thin.log"
check_eq "a thin recording still gives its profile" 0 $?
d1=$(dens "$T/d-dense.log") d50=$(dens "$T/d-50.log") dthin=$(dens "$T/d-thin.log")
echo "density, samples per hot instruction: every 20,011 instructions ${d1:-?}, every 1,000,003 ${d50:-?}, every 40,000,003 ${dthin:-?}"
check "the summary states the density" test -n "$d1"
check "a fiftieth of the samples, about a fiftieth of the density (${d1:-?} / ${d50:-?})" \
  awk -v a="${d1:-0}" -v b="${d50:-0}" 'BEGIN{exit !(b > 0 && a / b > 25 && a / b < 100)}'
check "no thin-samples warning at ${d1:-?} and ${d50:-?}" bash -c "! grep -q 'thin IP samples' '$T/d-dense.log' '$T/d-50.log'"
check "thin samples (${dthin:-?} per hot instruction) are warned about" \
  grep -qE "warning: thin IP samples: ${dthin:-x} samples per hot instruction .*merge more runs or record longer" "$T/d-thin.log"
check "the thin profile is written" test -s "$T/d-thin.afdo"
check "llvm-profgen's density warning is not given for IP samples" bash -c "! grep -q 'optimize better with' '$T/d-thin.log'"

# CSSPGO: a base profile (a function's contexts the pre-inliner did not
# inline, merged) takes the shape of the function inferred from all its
# samples at once: its own body is the probe-only profile's, scaled to its
# own mass; --ip-base-shape contexts keeps the sum of the contexts'
"$PGOKIT" profgen --binary "$T/demo_probe" --perf "$T/eipp.data" -o "$T/e-shape.cs" --format text 2>"$T/shape.log"
"$PGOKIT" profgen -q --binary "$T/demo_probe" --perf "$T/eipp.data" --ignore-stack-samples -o "$T/e-shape.probe" --format text
"$PGOKIT" profgen -q --binary "$T/demo_probe" --perf "$T/eipp.data" --ip-base-shape contexts -o "$T/e-ctx.cs" --format text
check "the summary counts the base profiles shaped" grep -qE "base profiles: [1-9][0-9]* of [0-9]+ take their function's shape" "$T/shape.log"
check "base profiles: the probe-only shape at their own mass" python3 - "$T/e-shape.cs" "$T/e-shape.probe" <<'PY'
import re, sys
def tops(path):
    out, cur = {}, None
    for l in open(path):
        if not l.startswith(' '):
            cur = {}; out[l.rsplit(':', 2)[0]] = cur
        else:
            m = re.match(r'^ (\d+): (\d+)', l)
            if m: cur[m.group(1)] = int(m.group(2))
    return out
cs, pr = tops(sys.argv[1]), tops(sys.argv[2])
shaped = 0
for f, body in cs.items():
    flat = {k: v for k, v in pr.get(f, {}).items() if k in body}
    if not flat or not sum(flat.values()) or not sum(body.values()):
        continue
    # profgen scales by the base's own sum before rounding each entry; the
    # sum read back here is off by up to half a count per entry, and so is
    # this scale, by at most n/2 over the probe-only sum
    fsum = sum(flat.values())
    s = sum(body.values()) / fsum
    for k, c in body.items():
        want = flat.get(k, 0) * s
        if abs(c - want) > 0.5 + flat.get(k, 0) * 0.5 * len(body) / fsum + 1e-6:
            sys.exit("%s probe %s: %d, not %.1f" % (f, k, c, want))
    shaped += 1
sys.exit(0 if shaped else "no base profile shaped")
PY
check "--ip-base-shape contexts keeps the contexts' sums" bash -c "! cmp -s '$T/e-shape.cs' '$T/e-ctx.cs'"
a=$(ov "$T/eexp" "$T/demo_probe" "$T/e-shape.cs"); n=$(ov "$T/eexp" "$T/demo_probe" "$T/e-ctx.cs")
echo "emulated IP, CSSPGO block overlap: base profiles shaped by the function ${a:-?}, by the contexts ${n:-?}"
check "emulated IP CSSPGO with shaped base profiles: overlap >= 0.95 (${a:-?})" awk -v a="${a:-0}" 'BEGIN{exit !(a >= 0.95)}'
"$PGOKIT" profgen -q --binary "$T/demo_probe" --perf "$T/eipp.data" --ip-base-shape nope -o "$T/nope.cs" 2>"$T/nope.err"
check_eq "--ip-base-shape refuses another value" 2 $?

# pprof input: our samples through pprof give the same profiles as the
# perf.data itself; two files add up like two recordings
"$PGOKIT" convert "$T/ip.data" -o "$T/ip.pb.gz" 2>/dev/null
"$PGOKIT" convert "$T/ipp.data" -o "$T/ipp.pb.gz" 2>/dev/null
"$PGOKIT" profgen --binary "$T/demo" --pprof "$T/ip.pb.gz" -o "$T/pp.afdo" --format text -q
check "--pprof equals --perf (line-based)" cmp -s "$T/pp.afdo" "$T/ip-mcf.afdo"
"$PGOKIT" profgen --binary "$T/demo_probe" --pprof "$T/ipp.pb.gz" -o "$T/pp.cs" -q
check "--pprof equals --perf (CSSPGO)" cmp -s "$T/pp.cs" "$T/ip.cs"
"$PGOKIT" profgen --binary "$T/demo" --pprof "$T/ip.pb.gz" --pprof "$T/ip.pb.gz" -o "$T/pp2.afdo" --format text -q
"$PGOKIT" profgen --binary "$T/demo" --perf "$T/ip.data" --perf "$T/ip.data" -o "$T/pf2.afdo" --format text -q
check "two pprof files merge like two perf.data files" cmp -s "$T/pp2.afdo" "$T/pf2.afdo"
head -c 700 "$T/ip.pb.gz" > "$T/trunc.pb.gz"
"$PGOKIT" profgen --binary "$T/demo" --pprof "$T/trunc.pb.gz" -o "$T/trunc.afdo" 2>"$T/trunc.err"
check_eq "a truncated pprof fails" 1 $?
check "the error names the file" grep -q "trunc.pb.gz" "$T/trunc.err"
check "no output for a truncated pprof" test ! -e "$T/trunc.afdo"

# the ASan+UBSan build on the CS path
"$PGOKIT_SAN" profgen --binary "$T/demo_probe" --perf "$T/ipp.data" -o "$T/san.cs" 2>"$T/san.log"
check "sanitizer build: IP CSSPGO" test -s "$T/san.cs"
finish
