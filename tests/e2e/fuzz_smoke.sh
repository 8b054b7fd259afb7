#!/usr/bin/env bash
# fuzz_smoke.sh — the fuzzers in CI (tests/fuzz/README.md):
#  1. every libFuzzer harness replays its committed regression inputs
#     (tests/fuzz/corpus/<harness>/) and fresh seeds, then fuzzes a few seconds
#     (PK_FUZZ_SMOKE_SECONDS, default 4) under ASan+UBSan with the memory limits;
#  2. the command line on every regression input and on the hostile inputs of
#     tests/fuzz/hostile.py (huge declared sizes and counts): a `bad-*` input makes the
#     pgokit command that reads it exit 1 with an error naming the file and a
#     position (offset or line), and leaves no output file; an `ok-*` input
#     (a valid file some reader or writer got wrong) is read, and written where
#     the command writes, without an error.
source "$(dirname "$0")/../lib.sh"
need clang-19
FZ=$PK_BUILD/fuzz
ls "$FZ"/fuzz_* >/dev/null 2>&1 || { echo "skipped: fuzz harnesses not built (make tests)"; exit 77; }
CORPUS=$PK_ROOT/tests/fuzz/corpus

# ---- 1. harnesses ----
bash "$PK_ROOT/tests/fuzz/run.sh" smoke "${PK_FUZZ_SMOKE_SECONDS:-4}" >"$T/smoke.txt" 2>&1
cat "$T/smoke.txt"
while read -r status name rest; do
    case $status in
    ok) pass "fuzz_$name: corpus replayed and fuzzed ($rest)" ;;
    FAIL) fail "fuzz_$name: $rest" ;;
    esac
done < <(grep -E '^(ok|FAIL) ' "$T/smoke.txt")
check "every harness ran" grep -q '^fuzz: [0-9]* passed, 0 failed' "$T/smoke.txt"

# ---- 2. the command line on the regression inputs ----
SEEDS=$FZ/seeds
BIN=$SEEDS/elf_dwarf/loop
RT=$T/rt
clang-19 -O2 -g -pg -mfentry -o "$RT" "$PK_ROOT/tests/programs/rt_order.c" "$PK_ROOT/tests/programs/rt_order_b.c" \
    "$PK_BUILD/libpgokit_rt.a" -lpthread -Wl,--build-id 2>/dev/null

probe_sections() { # FILE: the harness's input (u32 length, descriptors, probes) as sections of a binary
    python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack("<I", d[:4])[0] % (len(d) - 3) if len(d) >= 4 else 0
open(sys.argv[2], "wb").write(d[4:4 + n]); open(sys.argv[3], "wb").write(d[4 + n:])
' "$1" "$T/desc.bin" "$T/probe.bin" &&
    objcopy --add-section .pseudo_probe_desc="$T/desc.bin" --add-section .pseudo_probe="$T/probe.bin" "$BIN" "$T/probed"
}

# bad HARNESS FILE OUT: the pgokit command that reads FILE and writes OUT
bad() {
    local h=$1 f=$2 out=$3
    case $h in
    perf_data | perf_write) "$PGOKIT" convert "$f" --from perf -o "$out.pb.gz" ;;
    perf_script) "$PGOKIT" profgen -q --binary "$BIN" --perfscript "$f" -o "$out" ;;
    elf_dwarf) "$PGOKIT" symbolize --binary "$f" 0x1010 0x401000 >/dev/null ;;
    probes) probe_sections "$f" && "$PGOKIT" probes --binary "$T/probed" >/dev/null ;;
    prof_*) "$PGOKIT" merge "$f" -o "$out" ;;
    rawprof) "$PGOKIT" profgen -q --binary "$BIN" --raw "$f" -o "$out" ;;
    temporal_raw | temporal_indexed) "$PGOKIT" merge --temporal -q --binary "$RT" "$f" -o "$out" ;;
    exact_counts) "$PGOKIT" record --print-exact "$f" >/dev/null ;;
    pprof) "$PGOKIT" convert "$f" --from pprof -o "$out.data" ;;
    *) return 99 ;;
    esac
}

# ok HARNESS FILE OUT: read FILE (and what the command writes from it) without an error
ok() {
    local h=$1 f=$2 out=$3
    case $h in
    perf_data | perf_write) "$PGOKIT" dump -q "$f" ;;
    perf_script) "$PGOKIT" dump -q --script "$f" ;;
    elf_dwarf) "$PGOKIT" symbolize --binary "$f" 0x0 ;;
    probes) probe_sections "$f" && "$PGOKIT" probes --binary "$T/probed" ;;
    prof_*) # as text too, unless the text cannot carry its names (the writer says so)
        "$PGOKIT" merge "$f" -o "$out.ext" && "$PGOKIT" show "$out.ext" &&
            if "$PGOKIT" merge "$f" --text -o "$out.txt" 2>"$out.err"; then
                [ ! -s "$out.txt" ] || "$PGOKIT" show "$out.txt"
            else
                grep -q "cannot be written as a text profile" "$out.err"
            fi ;;
    rawprof) # read, then written and read again; a profile of another binary is refused after reading
        if "$PGOKIT" profgen -q --binary "$BIN" --raw "$f" --raw-only -o "$out" 2>"$out.err"; then
            "$PGOKIT" profgen -q --binary "$BIN" --raw "$out" --raw-only -o "$out.2"
        else
            grep -q "cannot merge profiles of different binaries" "$out.err"
        fi ;;
    temporal_raw) "$PGOKIT" show --temporal "$f" ;;
    temporal_indexed) # merged with itself into a small reservoir, written, read back
        "$PGOKIT" show --temporal "$f" && "$PGOKIT" merge --temporal -q --reservoir 3 --binary "$RT" "$f" "$f" -o "$out" &&
            "$PGOKIT" show --temporal "$out" ;;
    exact_counts) "$PGOKIT" record --print-exact "$f" ;;
    pprof) "$PGOKIT" convert "$f" --from pprof -o "$out.data" && "$PGOKIT" dump -q "$out.data" ;;
    *) return 99 ;;
    esac
}

for dir in "$CORPUS"/*/ "$SEEDS.hostile"/*/; do
    h=$(basename "$dir")
    for f in "$dir"*; do
        [ -f "$f" ] || continue
        n=$(basename "$f")
        case $n in bad-* | ok-*) ;; *) continue ;; esac
        rm -rf "$T/o"; mkdir -p "$T/o"
        if [[ $n == bad-* ]]; then bad "$h" "$f" "$T/o/out"; else ok "$h" "$f" "$T/o/out"; fi >/dev/null 2>"$T/err"
        rc=$?
        [ $rc -eq 99 ] && { fail "$h/$n: no command line for harness $h"; continue; }
        left=$(ls -A "$T/o")
        if [[ $n == bad-* ]]; then
            # the probe sections' offsets are the copy's, so only the file name is checked there
            # a position, or one of the conditions of the whole input fuzz_util.c accepts too
            if [ $rc -eq 1 ] && grep -q "$f\|$T/probed" "$T/err" &&
                grep -qE 'offset [0-9]+|line [0-9]+|nothing usable|no sample_type says|no samples|none of [0-9]+ samples|no LBR line' "$T/err" &&
                [ -z "$left" ]; then
                pass "$h/$n: exit 1, $(head -c 160 "$T/err" | tr '\n' ' ')"
            else
                fail "$h/$n: exit $rc, files left: '$left', stderr: $(head -c 300 "$T/err")"
            fi
        else
            if [ $rc -eq 0 ]; then
                pass "$h/$n: read without error"
            else
                fail "$h/$n: exit $rc: $(head -c 300 "$T/err")"
            fi
        fi
    done
done
finish
