#!/usr/bin/env bash
# AArch64 binaries: the A64 decoder (`pgokit decode`) equals llvm-objdump-19
# -d on every instruction of .text — boundaries, length, branch class and
# direct target — and `pgokit symbolize` equals `llvm-symbolizer-19 --inlines`
# on every instruction, for test programs cross-built with clang-19 (lld) and
# gcc-12 (binutils), without and with pointer authentication + BTI (A and B
# keys; hint-space PACIASP/AUTIASP and, with -march=armv8.5-a, RETAA/RETAB),
# the cross libc's .text as a larger hand-written corpus, and SQLite's
# speedtest1 cross-built from the workload sources (skipped when they cannot
# be fetched; cached beside the other workload builds). One program of each
# build runs under qemu-aarch64.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-objdump-19 llvm-symbolizer-19 aarch64-linux-gnu-gcc-12 qemu-aarch64
SYSROOT=/usr/aarch64-linux-gnu
[ -f "$SYSROOT/lib/libc.so.6" ] || { echo "skipped: libc6-dev-arm64-cross not installed"; exit 77; }

PROGS="binary_inline infer_switch profgen_calls profgen_icall probe_inline cs_sizes format_branch record_threads"
CLANG="clang-19 --target=aarch64-linux-gnu -fuse-ld=lld"
GCC=aarch64-linux-gnu-gcc-12

# decode_cmp LABEL BINARY: prints "N M" (instructions compared, mismatches)
decode_cmp() {
    local label=$1 bin=$2
    llvm-objdump-19 -d --no-show-raw-insn --section=.text "$bin" | awk -f "$PK_ROOT/tests/e2e/a64_objdump.awk" \
        > "$T/$label.ref"
    "$PGOKIT" decode --binary "$bin" > "$T/$label.dec" || { echo "0 1"; return; }
    # every objdump line has our instruction at its address with the same
    # length, class and target; ours that objdump left out ("..." zero runs)
    # must be zero words: udf #0, class other
    awk -v label="$label" 'NR == FNR { ref[$1] = $0; next }
        { if ($1 in ref) { split(ref[$1], r, " ")
              if ((r[2] != "?" && r[2] != $2) || r[3] != $3 || r[4] != $4) {
                  if (bad++ < 5) print label ": ours " $0 ", objdump " ref[$1] > "/dev/stderr" }
              seen++; delete ref[$1]; n++
          } else if ($3 != "other") { bad++; print label ": " $0 " not in objdump" > "/dev/stderr" } }
        END { for (a in ref) { bad++; if (bad < 8) print label ": objdump " ref[a] " missing" > "/dev/stderr" }
              print n + 0, bad + 0 }' "$T/$label.ref" "$T/$label.dec"
}

# sym_cmp LABEL BINARY: prints "N M I" (addresses, mismatches, with inline frames)
sym_cmp() {
    local label=$1 bin=$2
    awk '{ print $1 }' "$T/$label.ref" > "$T/$label.addrs"
    "$PGOKIT" symbolize --binary "$bin" --output-style=JSON < "$T/$label.addrs" > "$T/$label.ours" || { echo "0 1 0"; return; }
    llvm-symbolizer-19 --obj="$bin" --inlines --no-demangle --output-style=JSON < "$T/$label.addrs" > "$T/$label.llvm"
    local bad; bad=$(diff "$T/$label.ours" "$T/$label.llvm" | grep -c '^<')
    [ "$bad" -gt 0 ] && diff "$T/$label.ours" "$T/$label.llvm" | head -4 >&2
    echo "$(wc -l < "$T/$label.addrs") $bad $(grep -c '},{' "$T/$label.llvm")"
}

# variant NAME CC FLAGS [PROGS]: build, run one under qemu, compare everything
variant() {
    local name=$1 cc=$2 flags=$3 progs=${4:-$PROGS}
    local n=0 bad=0 branches=0 sn=0 sbad=0 sinl=0 built=0 p
    for p in $progs; do
        local bin="$T/$name-$p"
        if ! $cc -O2 -g $flags "$PK_ROOT/tests/programs/$p.c" -o "$bin" -lpthread 2>"$T/$name-$p.err"; then
            fail "$name: build $p: $(head -2 "$T/$name-$p.err")"; continue
        fi
        built=$((built + 1))
        read -r a b < <(decode_cmp "$name-$p" "$bin")
        n=$((n + a)); bad=$((bad + b))
        branches=$((branches + $(grep -vc ' other ' "$T/$name-$p.dec")))
        read -r a b c < <(sym_cmp "$name-$p" "$bin")
        sn=$((sn + a)); sbad=$((sbad + b)); sinl=$((sinl + c))
    done
    echo "$name: $built programs, $n instructions ($branches branches) decoded, $bad mismatching;" \
         "$sn addresses symbolized ($sinl with inline frames), $sbad mismatching"
    check "$name: all $built programs built" [ "$built" -gt 0 ]
    check "$name: decoder equals llvm-objdump-19 on $n instructions" [ "$bad" -eq 0 -a "$n" -gt 1000 -a "$branches" -gt 100 ]
    check "$name: symbolize equals llvm-symbolizer-19 on $sn addresses" [ "$sbad" -eq 0 -a "$sn" -gt 1000 -a "$sinl" -gt 10 ]
    check "$name: profgen_calls runs under qemu-aarch64" qemu-aarch64 -L "$SYSROOT" "$T/$name-profgen_calls"
}

variant clang "$CLANG" ""
variant clang-pac-bti "$CLANG" "-mbranch-protection=standard"
variant clang-pac-bkey "$CLANG" "-mbranch-protection=pac-ret+leaf+b-key+bti"
variant clang-dwarf4 "$CLANG" "-gdwarf-4 -fdebug-info-for-profiling" "binary_inline profgen_calls infer_switch probe_inline"
variant clang-v85-pac "$CLANG" "-march=armv8.5-a -mbranch-protection=standard"
variant clang-zstd-lto "$CLANG" "-gz=zstd -flto" "binary_inline profgen_calls infer_switch probe_inline"
variant gcc "$GCC" ""
variant gcc-pac-bti "$GCC" "-mbranch-protection=standard"
variant gcc-pac-bkey "$GCC" "-mbranch-protection=pac-ret+leaf+b-key+bti"
variant gcc-dwarf4 "$GCC" "-gdwarf-4 -O3" "binary_inline binary_nested profgen_calls infer_switch"
variant gcc-zlib "$GCC" "-gz=zlib" "binary_inline profgen_calls infer_switch probe_inline"
variant gcc-v85-pac-bkey "$GCC" "-march=armv8.5-a -mbranch-protection=pac-ret+leaf+b-key+bti"
grep -q 'pacibsp' <(llvm-objdump-19 -d "$T/gcc-pac-bkey-binary_inline") && pass "b-key builds use pacibsp" ||
    fail "b-key builds use pacibsp"
grep -q 'retaa' <(llvm-objdump-19 -d "$T/clang-v85-pac-profgen_calls") && pass "armv8.5-a builds return with retaa" ||
    fail "armv8.5-a builds return with retaa"
grep -q 'retab' <(llvm-objdump-19 -d "$T/gcc-v85-pac-bkey-profgen_calls") && pass "armv8.5-a b-key builds return with retab" ||
    fail "armv8.5-a b-key builds return with retab"
grep -q 'bti\s*c' <(llvm-objdump-19 -d "$T/clang-pac-bti-binary_inline") && pass "BTI builds have bti c" ||
    fail "BTI builds have bti c"

# the cross libc: hand-written assembly, PLT-less internal calls, every idiom
read -r a b < <(decode_cmp libc "$SYSROOT/lib/libc.so.6")
echo "libc: $a instructions, $b mismatching"
check "decoder equals llvm-objdump-19 on the aarch64 libc's $a instructions" [ "$b" -eq 0 -a "$a" -gt 100000 ]

# Pseudo-probes are architecture-neutral: an aarch64 build's .pseudo_probe_desc
# equals the x86-64 build's (GUID, CFG checksum, name of every function) and
# every aarch64 probe (function, index, kind, inline context) is one of the
# x86-64 build's (llvm-profgen-19 cannot read aarch64: the x86 build is the oracle).
probes_key() { "$PGOKIT" probes --binary "$1" --no-desc | sed 's/^[0-9a-f]*: //' | sort -u; }
pn=0 pbad=0 pdesc=0
for p in probe_inline cs_sizes profgen_calls cs_scalarop; do
    $CLANG -O2 -g -fpseudo-probe-for-profiling "$PK_ROOT/tests/programs/$p.c" -o "$T/pa-$p" &&
        clang-19 -O2 -g -fpseudo-probe-for-profiling "$PK_ROOT/tests/programs/$p.c" -o "$T/px-$p" ||
        { fail "probe builds of $p"; continue; }
    cmp -s <("$PGOKIT" probes --binary "$T/pa-$p" | sed -n '/^Pseudo Probe Desc/,/^[0-9a-f]*: \[Probe\]/p' | grep -v Probe\]) \
           <("$PGOKIT" probes --binary "$T/px-$p" | sed -n '/^Pseudo Probe Desc/,/^[0-9a-f]*: \[Probe\]/p' | grep -v Probe\]) ||
        pdesc=$((pdesc + 1))
    probes_key "$T/pa-$p" > "$T/pa-$p.k"; probes_key "$T/px-$p" > "$T/px-$p.k"
    pn=$((pn + $(wc -l < "$T/pa-$p.k"))); pbad=$((pbad + $(comm -23 "$T/pa-$p.k" "$T/px-$p.k" | wc -l)))
done
echo "probes: $pn distinct aarch64 probes, $pbad not in the x86-64 build; $pdesc descriptor tables differ"
check "probes: aarch64 .pseudo_probe_desc equals x86-64's" [ "$pdesc" -eq 0 ]
check "probes: every aarch64 probe ($pn) is one of the x86-64 build's" [ "$pbad" -eq 0 -a "$pn" -gt 50 ]

# SQLite (the issue's target): every instruction of speedtest1 + the amalgamation
if W=$("$PK_ROOT/scripts/workloads.sh" dir 2>/dev/null) && "$PK_ROOT/scripts/workloads.sh" obtain >/dev/null 2>&1 &&
   [ -f "$W/npm/better-sqlite3-12.11.1/package/deps/sqlite3/sqlite3.c" ]; then
    sq=$W/out/a64-clang/speedtest1
    mkdir -p "$W/out/a64-clang"
    (
        flock 9
        if [ ! -x "$sq" ]; then
            $CLANG -O2 -g -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 \
                -I"$W/npm/better-sqlite3-12.11.1/package/deps/sqlite3" "$W/src/sqlite3-3.40.1/test/speedtest1.c" \
                "$W/npm/better-sqlite3-12.11.1/package/deps/sqlite3/sqlite3.c" -o "$sq.tmp" -lm && mv "$sq.tmp" "$sq"
        fi
    ) 9>"$W/.lock-build-a64-clang"
    if [ -x "$sq" ]; then
        read -r a b < <(decode_cmp sqlite "$sq")
        check "sqlite: decoder equals llvm-objdump-19 on $a instructions" [ "$b" -eq 0 -a "$a" -gt 100000 ]
        read -r a b c < <(sym_cmp sqlite "$sq")
        echo "sqlite: $a addresses symbolized ($c with inline frames), $b mismatching"
        check "sqlite: symbolize equals llvm-symbolizer-19 --inlines on $a addresses" [ "$b" -eq 0 -a "$a" -gt 100000 -a "$c" -gt 10000 ]
        llvm-dwarfdump-19 --debug-info "$sq" | awk -f "$PK_ROOT/tests/e2e/binary_funcs.awk" | sort > "$T/sq.fref"
        "$PGOKIT" symbolize --binary "$sq" --functions | cut -d' ' -f1-3 | sort > "$T/sq.fours"
        check "sqlite: DWARF function ranges equal llvm-dwarfdump's ($(wc -l < "$T/sq.fref"))" \
            cmp -s "$T/sq.fref" "$T/sq.fours"
        check "sqlite: speedtest1 runs under qemu-aarch64" \
            sh -c "qemu-aarch64 -L '$SYSROOT' '$sq' --size 1 --memdb | grep -q TOTAL"
    else
        fail "sqlite: aarch64 build of speedtest1"
    fi
else
    echo "note: workload sources unavailable, the aarch64 SQLite check did not run"
fi

# the decoder refuses what it cannot decode instead of guessing
printf '\177ELF\002\001\001' > "$T/bad"; head -c 57 /dev/zero >> "$T/bad"
check "decode: a non-ELF file is an error" sh -c "! '$PGOKIT' decode --binary '$T/bad' 2>/dev/null"
finish
