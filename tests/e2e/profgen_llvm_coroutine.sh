#!/usr/bin/env bash
# A C++20 coroutine: clang splits it into a ramp function and funclets
# (_Z6tickeri.resume, .destroy, .cleanup), each a DWARF subprogram named
# _Z6tickeri. As llvm-profgen: they are one function in the profile (a
# sampled part zero-fills the others' lines), and only the part an ELF symbol
# of that name starts is its entry: resuming the coroutine (an indirect call
# to .resume) gives no head samples and no call target _Z6tickeri.
# Compared byte for byte with llvm-profgen-19 on a recording of our fixture.
source "$(dirname "$0")/../lib.sh"
need clang++-19 llvm-profgen-19 llvm-readelf-19 qemu-x86_64
clang++-19 -O2 -g -std=c++20 "$PK_ROOT/tests/programs/profgen_coroutine.cc" -o "$T/co"
check "the fixture has a .resume funclet" grep -q '_Z6tickeri\.resume$' <(llvm-readelf-19 -s "$T/co")
"$PGOKIT" record --emulate --no-callchain -q -o "$T/co.data" -- "$T/co" 2000 >/dev/null
"$PGOKIT" dump --perfscript "$T/co.data" > "$T/co.script"
for fmt in text extbinary; do
    check "$fmt: a profile" "$PGOKIT" llvm-profgen -q --format=$fmt --binary="$T/co" --perfscript="$T/co.script" \
        --output="$T/co.$fmt.pk"
    llvm-profgen-19 --format=$fmt --binary="$T/co" --perfscript="$T/co.script" --output="$T/co.$fmt.ll" 2>/dev/null
    check "$fmt: llvm-profgen-19's profile" cmp "$T/co.$fmt.ll" "$T/co.$fmt.pk"
done
# the ramp's head samples: main's calls only (20 rounds), not the resumptions
head=$(sed -n 's/^_Z6tickeri:[0-9]*:\([0-9]*\)$/\1/p' "$T/co.text.pk")
check "head samples of _Z6tickeri (${head:-none}) no more than its 20 calls" test "${head:-999}" -le 20
awk '/^[^ ]/ {inside = /^_ZN3gen4nextEv:/} inside' "$T/co.text.pk" > "$T/next.prof"
check "gen::next (which resumes it) was sampled" grep -q '^_ZN3gen4nextEv:' "$T/next.prof"
check "gen::next: no call target _Z6tickeri" bash -c "! grep -q ' _Z6tickeri:' '$T/next.prof'"
finish
