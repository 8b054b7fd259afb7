#!/usr/bin/env bash
# llvm-profgen-19's semantics where pgokit used to differ, each on a recording
# of our own fixture (emulated LBR + stacks) or on synthetic perf script text,
# compared with llvm-profgen-19 on the same input:
#   - line-based CS compresses recursion on the inline-expanded frames;
#   - callers are kept across a callback from code outside the binary.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profdata-19 llvm-profgen-19 qemu-x86_64 python3
src="$PK_ROOT/tests/programs/profgen_recurse.c"
# Top-level contexts with samples in their bodies, one per line, sorted.
contexts() { sed -n 's/^\(\[.*\]\):\([0-9]*\):[0-9]*$/\1 \2/p' "$1" | awk '$2 > 0 {print $1}' | sort; }

clang-19 -O2 -g "$src" -o "$T/rec"
check "record (emulated LBR + stacks)" "$PGOKIT" record --emulate -q -o "$T/rec.data" -- "$T/rec" 20000 >/dev/null
"$PGOKIT" dump --perfscript "$T/rec.data" > "$T/rec.script"
check "profgen --cs (flat)" "$PGOKIT" profgen -q --cs --no-preinline --binary "$T/rec" --perf "$T/rec.data" \
    -o "$T/cs.prof" --format text
llvm-profgen-19 --binary "$T/rec" --perfscript "$T/rec.script" -o "$T/cs.llvm.prof" --format=text \
    --csspgo-preinliner=0 --gen-cs-nested-profile=0 --profile-summary-cold-count=0 2>/dev/null

# 1. recursion: no context repeats a window of caller frames (even:4 @ odd:4
#    twice came from two call addresses of the same line)
check "line CS: no repeated caller frames" python3 - "$T/cs.prof" <<'PY'
import re, sys
bad = []
for line in open(sys.argv[1]):
    m = re.match(r'^\[(.*)\]:', line)
    if not m:
        continue
    fr = m.group(1).split(' @ ')[:-1]
    n = len(fr)
    if any(fr[i:i + k] == fr[i + k:i + 2 * k] for k in range(1, n // 2 + 1) for i in range(n - 2 * k + 1)):
        bad.append(m.group(1))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
check "line CS: llvm-profgen-19 has the same contexts" diff <(contexts "$T/cs.llvm.prof") <(contexts "$T/cs.prof")

# 2. callback: sorter (main → sorter → qsort → cmp) keeps main as its caller,
#    the comparator's contexts start at libc
check "callback: [main:10 @ sorter] present" grep -q '^\[main:10 @ sorter\]:' "$T/cs.prof"
check "callback: no [sorter] cut at libc" bash -c "! grep -q '^\[sorter[]:]' '$T/cs.prof'"
check "callback: the comparator is a root context" grep -q '^\[cmp\]:' "$T/cs.prof"
clang-19 -O2 -g -fpseudo-probe-for-profiling "$src" -o "$T/recp"
"$PGOKIT" record --emulate -q -o "$T/recp.data" -- "$T/recp" 20000 >/dev/null
check "CSSPGO (probes, flat)" "$PGOKIT" profgen -q --no-preinline --binary "$T/recp" --perf "$T/recp.data" \
    -o "$T/csp.prof" --format text
check "CSSPGO callback: [main:16 @ sorter] present" grep -q '^\[main:16 @ sorter\]:' "$T/csp.prof"
check "CSSPGO callback: no [sorter] cut at libc" bash -c "! grep -q '^\[sorter[]:]' '$T/csp.prof'"

finish
