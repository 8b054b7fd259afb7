#!/usr/bin/env bash
# Pseudo-probe decoding against the oracle: `pgokit probes` must list exactly
# the descriptors and probes (address, function, index, type, discriminator,
# inline context) that `llvm-profgen-19 --show-pseudo-probe` prints, for a
# fixture built with clang-19 and clang-14, and for Lua and SQLite (the
# acceptance workloads, when ../shared/workloads is available).
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19

# llvm-profgen prints probes just before the instruction at their address:
# turn that into "ADDR: [Probe]:..." lines, as `pgokit probes` prints them.
oracle() { # binary
    : > "$T/empty.script"
    llvm-profgen-19 --binary "$1" --perfscript "$T/empty.script" --output "$T/unused" \
        --show-pseudo-probe --show-disassembly-only 2>&1 | awk '
        /^Pseudo Probe Desc:/ { desc = 1 }
        desc && /^(GUID|Hash|Pseudo)/ { print; next }
        /^Disassembly of/ { desc = 0 }
        /^ \[Probe\]:/ { pending[n++] = substr($0, 2); next }
        /^ *[0-9a-f]+:\t/ { if (n) { a = $1; for (i = 0; i < n; i++) print a " " pending[i]; n = 0 } }'
}

compare() { # label binary
    local label=$1 bin=$2
    oracle "$bin" > "$T/$label.want"
    "$PGOKIT" probes --binary "$bin" > "$T/$label.got" 2> "$T/$label.err"
    local rc=$?
    check "$label: pgokit probes succeeds" test $rc -eq 0
    local nprobes; nprobes=$(grep -c '\[Probe\]' "$T/$label.want")
    check "$label: oracle lists probes ($nprobes)" test "$nprobes" -gt 0
    if cmp -s "$T/$label.want" "$T/$label.got"; then
        pass "$label: identical to llvm-profgen ($nprobes probes, $(grep -c '^GUID' "$T/$label.want") descriptors)"
    else
        fail "$label: differs from llvm-profgen"
        diff "$T/$label.want" "$T/$label.got" | head -n 20
    fi
}

src="$PK_ROOT/tests/programs/probe_inline.c"
clang-19 -O2 -g -fpseudo-probe-for-profiling "$src" -o "$T/p19"
compare clang19 "$T/p19"
clang-19 -O2 -g -fpseudo-probe-for-profiling -fno-pie -no-pie "$src" -o "$T/p19nopie"
compare clang19-nopie "$T/p19nopie"
if command -v clang-14 >/dev/null; then
    clang-14 -O2 -g -fpseudo-probe-for-profiling "$src" -o "$T/p14"
    compare clang14 "$T/p14"
fi

# Robustness: corrupt .pseudo_probe bytes must give an error or a clean listing, never a crash.
if command -v objcopy >/dev/null; then
    objcopy --dump-section .pseudo_probe="$T/pp.bin" "$T/p19" 2>/dev/null
    size=$(stat -c %s "$T/pp.bin")
    crashes=0
    for cut in 1 7 9 $((size / 2)) $((size - 1)); do
        head -c "$cut" "$T/pp.bin" > "$T/pp.cut"
        objcopy --update-section .pseudo_probe="$T/pp.cut" "$T/p19" "$T/p19.cut" 2>/dev/null || continue
        "$PGOKIT_SAN" probes --binary "$T/p19.cut" > /dev/null 2> "$T/cut.err"
        rc=$?
        if [ $rc -ge 128 ] || grep -q 'Sanitizer' "$T/cut.err"; then crashes=$((crashes + 1)); fi
        [ $rc -ne 0 ] && ! grep -q 'offset' "$T/cut.err" && { fail "truncated at $cut: error without offset: $(cat "$T/cut.err")"; }
    done
    check_eq "truncated probe sections never crash" 0 "$crashes"
fi

# The acceptance workloads (cached builds; skipped without ../shared).
if W=$("$PK_ROOT/scripts/workloads.sh" dir 2>/dev/null) && [ -d "$PK_ROOT/../shared/workloads" ]; then
    if PK_WORKLOADS_CACHE=1 XFLAGS="-fpseudo-probe-for-profiling" "$PK_ROOT/scripts/workloads.sh" build test-probe lua sqlite >/dev/null 2>&1; then
        compare lua "$W/out/test-probe/lua"
        compare sqlite "$W/out/test-probe/speedtest1"
    else
        fail "building lua and sqlite with probes"
    fi
fi
finish
