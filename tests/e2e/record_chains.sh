#!/usr/bin/env bash
# record_chains.sh — the call chains `pgokit record --ip` takes by itself:
# frame-pointer chains of a program that sets up frame pointers, 1 KiB
# stack copies (perf record --call-graph dwarf,1024) of one that does not.
#  - the count it decides from (`pgokit decode --cfi --stats`: functions
#    with a frame, those that set up a frame pointer) against the same count
#    from readelf --debug-dump=frames-interp and llvm-objdump
#    (tests/e2e/cfi_frames.py), for clang-19 and gcc-12 builds with and
#    without -fno-omit-frame-pointer, x86-64 and AArch64 (where both
#    compilers keep frame pointers by default; gcc's prologue interleaves
#    other instructions before `mov x29, sp`, clang's large frames set x29
#    with an add);
#  - the decision follows the build: frame pointers kept in at least half
#    of the framed code exactly for the builds that keep them;
#  - real perf (when it can sample here): the mode line says which chains
#    and why, and perf's own header agrees (perf evlist: STACK_USER and
#    sample_stack_user 1024, or neither); --call-graph fp / dwarf override
#    the choice; --pid decides from /proc/PID/exe; a script as the command
#    keeps frame-pointer chains and says why.
source "$(dirname "$0")/../lib.sh"
need clang-19 gcc-12 readelf llvm-objdump-19 python3

SRC=$PK_ROOT/tests/programs/ip_icall.c
HERE=$(dirname "$0")
built() { # NAME COMPILER... : builds $T/NAME from the fixture
    local name=$1; shift
    "$@" -O2 -g "$SRC" -o "$T/$name" 2>"$T/$name.cc" || { fail "build $name: $(head -n 1 "$T/$name.cc")"; return 1; }
}
stats() { "$PGOKIT" decode --binary "$1" --cfi --stats; }
oracle() {
    readelf --debug-dump=frames-interp "$1" > "$1.frames" 2>/dev/null
    llvm-objdump-19 -d --no-show-raw-insn "$1" > "$1.dis"
    python3 "$HERE/cfi_frames.py" "$1.frames" "$1.dis"
}
keeps_fp() { # STATS-LINE -> 0 when frame pointers are kept in at least half of the framed code
    awk '{for (i = 1; i < NF; i++) v[$i] = $(i + 1)} END {exit !(2 * v["with-frame-pointer-bytes"] >= v["framed-bytes"])}' <<<"$1"
}
lacks_fp() { ! keeps_fp "$1"; }

# name, whether the build keeps frame pointers, the compiler command
flavors=(
    "x-clang no clang-19"
    "x-clang-fp yes clang-19 -fno-omit-frame-pointer"
    "x-gcc no gcc-12"
    "x-gcc-fp yes gcc-12 -fno-omit-frame-pointer"
)
if command -v aarch64-linux-gnu-gcc-12 >/dev/null && command -v ld.lld-19 >/dev/null; then
    flavors+=(
        "a-clang yes clang-19 --target=aarch64-linux-gnu -fuse-ld=lld"
        "a-gcc yes aarch64-linux-gnu-gcc-12"
        "a-gcc-nofp no aarch64-linux-gnu-gcc-12 -fomit-frame-pointer"
    )
else
    echo "skip: no AArch64 cross toolchain: the AArch64 builds are not checked"
fi
for f in "${flavors[@]}"; do
    read -r name keeps cc <<<"$f"
    # shellcheck disable=SC2086
    built "$name" $cc || continue
    ours=$(stats "$T/$name")
    check_eq "$name: the frame count is readelf's and llvm-objdump's" "$(oracle "$T/$name")" "$ours"
    echo "$name: $ours"
    if [ "$keeps" = yes ]; then
        check "$name: frame pointers in at least half of the framed code" keeps_fp "$ours"
    else
        check "$name: frame pointers in less than half of the framed code" lacks_fp "$ours"
    fi
done

if ! perf record -q -e cpu-clock:u -o "$T/probe.data" true >/dev/null 2>&1; then
    echo "skip: perf record cannot sample here: the recordings are not checked"
    finish
    exit
fi
evlist() { perf evlist -v -i "$1" 2>/dev/null; }
has_copies() { evlist "$1" | grep -q "STACK_USER.*sample_stack_user: $2\b"; }
no_copies() { ! evlist "$1" | grep -q STACK_USER && evlist "$1" | grep -q CALLCHAIN; }

# a program without frame pointers: 1 KiB copies, and why
"$PGOKIT" record --ip -o "$T/n.data" -- "$T/x-clang" 300000 >/dev/null 2>"$T/n.err"
check_eq "record --ip of a build without frame pointers exits 0" 0 $?
check "... the mode line says 1024-byte stack copies and why" \
    grep -qE 'call chains as 1024-byte stack copies \(DWARF\)\): asked with --ip; 1024-byte stack copies: .*/x-clang sets up a frame pointer in 0 % of the code of its functions with a frame \(frame-pointer chains would skip their callers; --call-graph fp or dwarf,BYTES to choose\)$' "$T/n.err"
check "... perf's header: stack copies of 1024 bytes" has_copies "$T/n.data" 1024
"$PGOKIT" profgen --binary "$T/x-clang" --perf "$T/n.data" -o "$T/n.prof" 2>"$T/n.log"
check_eq "... profgen reads it" 0 $?
check "... and unwinds the copies" grep -qE '; [0-9]+ chains unwound from stack copies' "$T/n.log"

# a program with frame pointers: frame-pointer chains, and why
"$PGOKIT" record --ip -o "$T/f.data" -- "$T/x-clang-fp" 300000 >/dev/null 2>"$T/f.err"
check_eq "record --ip of a build with frame pointers exits 0" 0 $?
check "... the mode line says frame-pointer chains and why" \
    grep -qE 'frame-pointer call chains\): asked with --ip; frame-pointer chains: .*/x-clang-fp sets up a frame pointer in (100|[5-9][0-9]) % of the code of its functions with a frame$' "$T/f.err"
check "... perf's header: call chains, no stack copies" no_copies "$T/f.data"

# the user's choice wins, and the line says nothing of a choice
"$PGOKIT" record --ip --call-graph fp -o "$T/of.data" -- "$T/x-gcc" 300000 >/dev/null 2>"$T/of.err"
check "--call-graph fp on a build without frame pointers: frame-pointer chains" no_copies "$T/of.data"
check "... the mode line names no choice" bash -c "grep -q 'frame-pointer call chains): asked with --ip$' '$T/of.err'"
"$PGOKIT" record --ip --call-graph dwarf -o "$T/od.data" -- "$T/x-gcc-fp" 300000 >/dev/null 2>"$T/od.err"
check "--call-graph dwarf on a build with frame pointers: 8192-byte copies" has_copies "$T/od.data" 8192

# a script as the command: it is not the program, nothing to decide from
printf '#!/bin/sh\nexec "%s" "$@"\n' "$T/x-clang" > "$T/run.sh" && chmod +x "$T/run.sh"
"$PGOKIT" record --ip -o "$T/s.data" -- "$T/run.sh" 300000 >/dev/null 2>"$T/s.err"
check_eq "record --ip of a script exits 0" 0 $?
check "... frame-pointer chains, saying the script is no ELF file" \
    grep -qE 'frame-pointer call chains\): asked with --ip; frame-pointer chains: .*run\.sh.*ELF' "$T/s.err"
check "... perf's header: no stack copies" no_copies "$T/s.data"

# attached to a running process: decided from /proc/PID/exe
# (600 M rounds: half a minute on a quiet machine, ended once recorded; the
# attach waits until the child has exec'd the program, 10 s at most)
"$T/x-gcc" 600000000 >/dev/null &
pid=$!
for _ in $(seq 200); do [ "$(readlink "/proc/$pid/exe")" = "$T/x-gcc" ] && break; sleep 0.05; done
check_eq "the program runs under its own pid" "$T/x-gcc" "$(readlink "/proc/$pid/exe")"
"$PGOKIT" record --ip --pid "$pid" --duration 0.5 -o "$T/p.data" >/dev/null 2>"$T/p.err"
check_eq "record --ip --pid exits 0" 0 $?
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
check "... 1024-byte stack copies, decided from /proc/$pid/exe" \
    grep -qE "1024-byte stack copies: /proc/$pid/exe sets up a frame pointer in 0 %" "$T/p.err"
check "... perf's header: stack copies of 1024 bytes" has_copies "$T/p.data" 1024
"$PGOKIT" profgen --binary "$T/x-gcc" --perf "$T/p.data" -o "$T/p.prof" 2>"$T/p.log"
check_eq "... profgen reads it" 0 $?
check "... and unwinds the program's samples" grep -qE '; [1-9][0-9]* chains unwound from stack copies' "$T/p.log"
finish
