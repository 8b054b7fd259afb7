#!/usr/bin/env bash
# seeds.sh OUT — seed corpora for the fuzz harnesses, made from the fixture
# programs (tests/programs/*.c) at test time: OUT/<harness>/<files>.
#   elf_dwarf            the fixtures built by gcc-12 and clang-19: DWARF 4 and 5,
#                        zlib/zstd-compressed debug sections, pseudo-probes, stripped,
#                        dwz-compressed debug files, a split-DWARF package
#   probes               .pseudo_probe_desc + .pseudo_probe of a probe build
#   perf_data, perf_write  `pgokit record --emulate` (with and without call
#                        chains), perf record -e cpu-clock --call-graph fp
#                        (file, pipe, -z compressed)
#   perf_script          `perf script -F ip,brstack` and pgokit dump --perfscript
#                        texts, perf's default stack text, an aggregated text
#   prof_*               profgen's outputs in every format (line, probe, CS),
#                        merge --use-md5 / --compress variants
#   rawprof              profgen --raw-only (version 2: flat, contexts, IP; version 1)
#   temporal_raw/indexed libpgokit_rt runs (trace and count modes), merge --temporal
#   exact_counts         record --exact-counts
#   pprof                pgokit convert to pprof, gzip and raw protobuf
# and OUT.hostile/<harness>/bad-*: hostile.py's inputs that declare huge sizes.
# Everything is small (short runs, long sampling periods): seeds of a few KB
# keep the fuzzers fast. Needs build/pgokit, the plugin and the runtime.
set -u
OUT=${1:?usage: seeds.sh OUT}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${PK_BUILD:-$ROOT/build}
PGOKIT=${PGOKIT:-$BUILD/pgokit}
SRC=$ROOT/tests/programs
W=$(mktemp -d "${TMPDIR:-/tmp}/pkseeds.XXXXXX")
trap 'rm -rf "$W"' EXIT
rm -rf "$OUT" "$OUT.hostile"
for h in elf_dwarf probes perf_data perf_write perf_script prof_text prof_binary prof_extbinary prof_gcc \
         rawprof temporal_raw temporal_indexed exact_counts pprof; do mkdir -p "$OUT/$h"; done
q() { "$@" >/dev/null 2>&1; }

# ---- binaries ----
q gcc-12 -O2 -g -fno-omit-frame-pointer -pthread "$SRC/perf_loop.c" -o "$W/loop"
q clang-19 -O2 -g -fpseudo-probe-for-profiling -DPROFILED_BUILD "$SRC/profgen_demo.c" -o "$W/demo_probe"
q clang-19 -O2 -g -gdwarf-4 -gz=zlib "$SRC/binary_inline.c" -o "$W/inline_d4z"
q clang-19 -O1 -g -gdwarf-5 "$SRC/cs_scalarop.c" -o "$W/nested_d5" &&
    q llvm-objcopy-19 --compress-debug-sections=zstd "$W/nested_d5" "$W/scalarop_d5zstd"
q gcc-12 -O2 -g -gdwarf-4 "$SRC/binary_nested.c" -o "$W/nested_gcc_d4"
q gcc-12 -O1 -g -gdwarf-5 "$SRC/binary_inline.c" -o "$W/inline_gcc_d5"
q clang-19 -O2 -g -fdebug-info-for-profiling -funique-internal-linkage-names "$SRC/profgen_calls.c" -o "$W/calls"
for b in loop demo_probe inline_d4z scalarop_d5zstd nested_gcc_d4 inline_gcc_d5 calls; do
    [ -f "$W/$b" ] && cp "$W/$b" "$OUT/elf_dwarf/$b"
done
[ -f "$W/loop" ] && strip -o "$OUT/elf_dwarf/loop_stripped" "$W/loop"
# separate debug files as distributions ship them: dwz -m (.gnu_debugaltlink,
# GNU_ref_alt/strp_alt; the supplementary file itself), and a split-DWARF
# package (.debug_cu_index)
if [ -f "$W/inline_gcc_d5" ] && [ -f "$W/nested_gcc_d4" ]; then
    q objcopy --only-keep-debug "$W/inline_gcc_d5" "$W/dz_a.debug"
    q objcopy --only-keep-debug "$W/nested_gcc_d4" "$W/dz_b.debug"
    (cd "$W" && q dwz -m dz_common.debug dz_a.debug dz_b.debug) &&
        cp "$W/dz_a.debug" "$W/dz_common.debug" "$OUT/elf_dwarf/"
fi
(cd "$W" && q clang-19 -O2 -g -gsplit-dwarf -c "$SRC/binary_inline.c" -o split.o && q clang-19 split.o -o split &&
    q timeout 60 llvm-dwp-19 -e split -o split.dwp) && cp "$W/split.dwp" "$OUT/elf_dwarf/split.dwp"

# ---- pseudo-probe sections: u32 length of the descriptors, descriptors, probes ----
if [ -f "$W/demo_probe" ]; then
    q objcopy --dump-section .pseudo_probe_desc="$W/desc.bin" --dump-section .pseudo_probe="$W/probe.bin" \
        "$W/demo_probe" "$W/dumped"
    if [ -s "$W/desc.bin" ]; then
        python3 - "$W/desc.bin" "$W/probe.bin" "$OUT/probes" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read(); p = open(sys.argv[2], 'rb').read()
open(sys.argv[3] + '/demo', 'wb').write(struct.pack('<I', len(d)) + d + p)
# smaller pieces: the first records of each section
open(sys.argv[3] + '/demo_head', 'wb').write(struct.pack('<I', min(len(d), 200)) + d[:200] + p[:400])
EOF
    fi
fi

# ---- recordings ----
if [ -x "$PGOKIT" ] && [ -f "$W/loop" ]; then
    q "$PGOKIT" record -q -o "$W/e.data" --period 40000 --lbr-depth 8 --exact-counts "$W/e.exact" -- "$W/loop" 20
    q "$PGOKIT" record -q -o "$W/e_nocc.data" --period 60000 --lbr-depth 4 --no-callchain -- "$W/loop" 10
    q "$PGOKIT" record -q -o "$W/p.data" --period 40000 --lbr-depth 8 -- "$W/demo_probe" 1
fi
if command -v perf >/dev/null && [ -f "$W/loop" ]; then
    q perf record -q -e cpu-clock -c 200000 --call-graph fp -o "$W/f.data" "$W/loop" 200
    q perf record -q -z -e cpu-clock -c 200000 --call-graph fp -o "$W/z.data" "$W/loop" 200
    perf record -q -e cpu-clock -c 200000 --call-graph fp -o - "$W/loop" 100 2>/dev/null >"$W/pipe.data"
fi
for f in e e_nocc p f z pipe; do
    if [ -s "$W/$f.data" ] && [ "$(stat -c %s "$W/$f.data")" -le 262144 ]; then
        cp "$W/$f.data" "$OUT/perf_data/$f.data"
        cp "$W/$f.data" "$OUT/perf_write/$f.data"
    fi
done
[ -s "$W/e.exact" ] && cp "$W/e.exact" "$OUT/exact_counts/e.exact"

# ---- perf script texts ----
if [ -s "$W/e.data" ]; then
    q "$PGOKIT" dump --perfscript "$W/e.data" && "$PGOKIT" dump --perfscript "$W/e.data" 2>/dev/null | head -c 16384 >"$OUT/perf_script/stack_lbr.txt"
    command -v perf >/dev/null && perf script -F ip,brstack -i "$W/e.data" 2>/dev/null | head -c 8192 >"$OUT/perf_script/lbr_only.txt"
    command -v perf >/dev/null && perf script -F comm,pid,tid,time,event,ip,sym,dso,brstack --show-mmap-events \
        -i "$W/e.data" 2>/dev/null | head -c 8192 >"$OUT/perf_script/perf_fields.txt"
    { echo 3; head -n 3 "$OUT/perf_script/lbr_only.txt"; echo 2; sed -n 4,6p "$OUT/perf_script/lbr_only.txt"; } \
        >"$OUT/perf_script/aggregated.txt" 2>/dev/null
fi
[ -s "$W/f.data" ] && command -v perf >/dev/null &&
    perf script -i "$W/f.data" --show-mmap-events 2>/dev/null | head -c 8192 >"$OUT/perf_script/perf_stacks.txt"
find "$OUT/perf_script" -size 0 -delete

# ---- profiles in every format ----
prof() { # BIN DATA NAME [profgen options]
    local bin=$1 data=$2 name=$3; shift 3
    for fmt in text binary extbinary gcc; do
        q "$PGOKIT" profgen -q --binary "$bin" --perf "$data" -o "$W/$name.$fmt" --format "$fmt" "$@" &&
            cp "$W/$name.$fmt" "$OUT/prof_$fmt/$name"
    done
}
if [ -s "$W/e.data" ]; then
    prof "$W/loop" "$W/e.data" line
    prof "$W/loop" "$W/e.data" line_cs --cs
    q "$PGOKIT" profgen -q --binary "$W/loop" --perf "$W/e.data" -o "$W/e.raw" --raw-only && cp "$W/e.raw" "$OUT/rawprof/e.raw"
    q "$PGOKIT" profgen -q --binary "$W/loop" --perf "$W/e.data" -o "$W/e1.raw" --raw-only --raw-version 1 &&
        cp "$W/e1.raw" "$OUT/rawprof/e1.raw"
fi
if [ -s "$W/p.data" ]; then
    prof "$W/demo_probe" "$W/p.data" csspgo
    prof "$W/demo_probe" "$W/p.data" probe --ignore-stack-samples
    prof "$W/demo_probe" "$W/p.data" csspgo_flat --no-preinline
    # version 2 with calling contexts
    q "$PGOKIT" profgen -q --binary "$W/demo_probe" --perf "$W/p.data" -o "$W/p.raw" --raw-only &&
        cp "$W/p.raw" "$OUT/rawprof/p.raw"
fi
if [ -s "$W/f.data" ]; then
    prof "$W/loop" "$W/f.data" ip
    q "$PGOKIT" profgen -q --binary "$W/loop" --perf "$W/f.data" -o "$W/f.raw" --raw-only && cp "$W/f.raw" "$OUT/rawprof/f.raw"
fi
for f in "$OUT"/prof_text/*; do
    [ -f "$f" ] || continue
    n=$(basename "$f")
    q "$PGOKIT" merge "$f" -o "$W/$n.md5" --extbinary --use-md5 && cp "$W/$n.md5" "$OUT/prof_extbinary/${n}_md5"
    q "$PGOKIT" merge "$f" -o "$W/$n.z" --extbinary --compress && cp "$W/$n.z" "$OUT/prof_extbinary/${n}_zlib"
done

# ---- pprof ----
for f in e f; do
    [ -s "$W/$f.data" ] || continue
    if q "$PGOKIT" convert "$W/$f.data" -o "$W/$f.pb.gz"; then
        cp "$W/$f.pb.gz" "$OUT/pprof/$f.pb.gz"
        gzip -dc "$W/$f.pb.gz" >"$OUT/pprof/$f.pb"
    fi
done

# ---- temporal profiles ----
RT_A=$BUILD/libpgokit_rt.a
if [ -f "$RT_A" ]; then
    q clang-19 -O2 -g -pg -mfentry -o "$W/rt" "$SRC/rt_order.c" "$SRC/rt_order_b.c" "$RT_A" -lpthread -Wl,--build-id
    if [ -x "$W/rt" ]; then
        mkdir -p "$W/runs"
        (cd "$W" && PGOKIT_RT_FILE="$W/runs/t%p.pgoraw" ./rt >/dev/null 2>&1)
        (cd "$W" && PGOKIT_RT_MODE=count PGOKIT_RT_FILE="$W/runs/c%p.pgoraw" ./rt >/dev/null 2>&1)
        i=0
        for f in "$W"/runs/*.pgoraw; do
            [ -f "$f" ] && cp "$f" "$OUT/temporal_raw/run$i.pgoraw" && i=$((i + 1))
        done
        q "$PGOKIT" merge --temporal --binary "$W/rt" -o "$W/all.pgotemporal" -q "$W/runs" &&
            cp "$W/all.pgotemporal" "$OUT/temporal_indexed/all.pgotemporal"
    fi
fi
for h in "$OUT"/*; do
    echo "$(basename "$h"): $(ls "$h" | wc -l) seeds, $(du -sk "$h" | cut -f1) KB"
done
# hostile inputs (huge declared sizes and counts, deep nesting): replayed and
# checked on the command line, not fuzzed from (they are errors by design)
python3 "$ROOT/tests/fuzz/hostile.py" "$OUT.hostile" && echo "hostile: $(find "$OUT.hostile" -type f | wc -l) inputs"

