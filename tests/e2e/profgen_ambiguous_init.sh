#!/usr/bin/env bash
# The profiles of __cxx_global_var_init* / __tls_init* are left out, as
# top-level profiles and as inlinees of others (here: inlined into
# _GLOBAL__sub_I_...), as llvm-profgen-19 leaves them out; also from a profile
# given with --llvm-sample-profile.
source "$(dirname "$0")/../lib.sh"
need clang++-19 llvm-profgen-19 qemu-x86_64
clang++-19 -O2 -g "$PK_ROOT/tests/programs/profgen_global_init.cc" -o "$T/prog"
"$PGOKIT" record --emulate --no-callchain -q -o "$T/prog.data" -- "$T/prog" >/dev/null
"$PGOKIT" dump --perfscript "$T/prog.data" > "$T/prog.script"
check "profgen" "$PGOKIT" llvm-profgen -q --format=text --perfscript="$T/prog.script" --binary="$T/prog" --output="$T/pk.prof"
llvm-profgen-19 --format=text --perfscript="$T/prog.script" --binary="$T/prog" --output="$T/ll.prof" 2>/dev/null
check "the initialisers ran hot: _GLOBAL__sub_I_ has samples" grep -q '^_GLOBAL__sub_I_[^:]*:[1-9]' "$T/pk.prof"
check "no __cxx_global_var_init anywhere" bash -c "! grep -q __cxx_global_var_init '$T/pk.prof'"
check "llvm-profgen-19's profile" cmp "$T/ll.prof" "$T/pk.prof"
# a profile that still has the inlinee, given back as input
printf '_GLOBAL__sub_I_x:100:0\n 0: __cxx_global_var_init.3:90\n  1: 90\n 1: 10\nmain:50:1\n 1: 50\n' > "$T/in.prof"
check "--llvm-sample-profile" "$PGOKIT" llvm-profgen -q --format=text --llvm-sample-profile="$T/in.prof" --binary="$T/prog" --output="$T/pk2.prof"
llvm-profgen-19 --format=text --llvm-sample-profile="$T/in.prof" --binary="$T/prog" --output="$T/ll2.prof" 2>/dev/null
check "--llvm-sample-profile: llvm-profgen-19's profile" cmp "$T/ll2.prof" "$T/pk2.prof"
check "--llvm-sample-profile: the inlinee left out" bash -c "! grep -q __cxx_global_var_init '$T/pk2.prof'"
finish
