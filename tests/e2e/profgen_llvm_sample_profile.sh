#!/usr/bin/env bash
# --llvm-sample-profile (llvm-profgen's): a profile as the input, only the
# post-processing runs on it: cold trimming (flat), nesting, the pre-inliner
# and cold-context trimming (context-sensitive). The inputs are llvm-profgen-19's
# profiles of a recording of our fixture; compared with llvm-profgen-19 given
# the same command line.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profgen-19 llvm-profdata-19 qemu-x86_64
clang-19 -O2 -g "$PK_ROOT/tests/programs/profgen_recurse.c" -o "$T/prog"
"$PGOKIT" record --emulate -q -o "$T/prog.data" -- "$T/prog" 20000 >/dev/null
"$PGOKIT" dump --perfscript "$T/prog.data" > "$T/prog.script"
llvm-profgen-19 --format=text --perfscript="$T/prog.script" --binary="$T/prog" --output="$T/flat.prof" --ignore-stack-samples 2>/dev/null
llvm-profgen-19 --format=text --perfscript="$T/prog.script" --binary="$T/prog" --output="$T/cs.prof" \
    --csspgo-preinliner=0 --gen-cs-nested-profile=0 2>/dev/null
check "llvm-profgen-19 made the input profiles" bash -c "[ -s '$T/flat.prof' ] && grep -q '^\[' '$T/cs.prof'"
n=0
run() { # INPUT ARGS...
    local in=$1; shift; n=$((n + 1))
    check "$in $*" "$PGOKIT" llvm-profgen -q --format=text --binary="$T/prog" --llvm-sample-profile="$T/$in" --output="$T/$n.pk" "$@"
    llvm-profgen-19 --format=text --binary="$T/prog" --llvm-sample-profile="$T/$in" --output="$T/$n.ll" "$@" 2>/dev/null
    check "$in $*: llvm-profgen-19's profile" cmp "$T/$n.ll" "$T/$n.pk"
}
run flat.prof --trim-cold-profile --profile-summary-cold-count=100
run flat.prof --trim-cold-profile --profile-summary-cold-count=10000
check "a cold count that trims: fewer profiles" test "$(grep -c '^[a-z]' "$T/$n.pk")" -lt "$(grep -c '^[a-z]' "$T/1.pk")"
run cs.prof --csspgo-preinliner=0 --gen-cs-nested-profile=1
run cs.prof --csspgo-preinliner=1 --gen-cs-nested-profile=0
run cs.prof --csspgo-preinliner=0 --gen-cs-nested-profile=0 --trim-cold-profile --profile-summary-hot-count=500
check "extbinary from a text profile" "$PGOKIT" llvm-profgen -q --binary="$T/prog" --llvm-sample-profile="$T/flat.prof" --output="$T/eb.prof"
check "extbinary: llvm-profdata-19 reads it" llvm-profdata-19 show --sample "$T/eb.prof" -o /dev/null
"$PGOKIT" llvm-profgen -q --binary="$T/prog" --llvm-sample-profile="$T/flat.prof" --perfscript="$T/prog.script" --output="$T/two.prof" 2> "$T/two.err"
check "with another input: refused" grep -q "must be the only input" "$T/two.err"
check "nothing written" test ! -e "$T/two.prof"
finish
