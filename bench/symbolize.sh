#!/usr/bin/env bash
# Symbolization speed: every instruction address of .text of SQLite
# (speedtest1) and Lua, clang-19 -O2 -g (DWARF 5), clang-19 -gdwarf-4 and
# gcc-12 -O2 -g (the binaries tests/e2e/binary_workloads.sh builds), through
#   pgokit symbolize --output-style=JSON         (library + output)
#   pgokit symbolize --output-style=none         (library only)
#   llvm-symbolizer-19 --inlines --output-style=JSON (batch on stdin)
# REPS runs each, interleaved; prints the median wall time and peak RSS.
# Usage: bench/symbolize.sh [REPS]   (PGOKIT=... to pick the binary)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
PGOKIT=${PGOKIT:-$root/build/pgokit}
REPS=${1:-5}
W=$("$root/scripts/workloads.sh" dir)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
run() { # file-prefix command... : appends "secs kb" to prefix.t
    /usr/bin/time -f "%e %M" -o "$tmp/one" "$@" < "$tmp/addrs" > /dev/null 2>&1
    cat "$tmp/one" >> "$tmp/$pfx.t"
}
printf '%-26s %9s %10s %10s %10s %8s %8s\n' binary addresses "ours+json" "ours-lib" llvm speedup "rss MB"
for v in binary-d5 binary-d4 binary-gcc12; do
    for p in speedtest1 lua; do
        bin=$W/out/$v/$p
        [ -x "$bin" ] || { echo "$v/$p missing: run tests/e2e/binary_workloads.sh first"; continue; }
        llvm-objdump-19 -d --no-show-raw-insn --section=.text "$bin" |
            awk '/^ +[0-9a-f]+:/ { a=$1; sub(":", "", a); print "0x" a }' > "$tmp/addrs"
        rm -f "$tmp"/*.t
        for r in $(seq "$REPS"); do
            pfx=json run "$PGOKIT" symbolize --binary "$bin" --output-style=JSON
            pfx=lib run "$PGOKIT" symbolize --binary "$bin" --output-style=none
            pfx=llvm run llvm-symbolizer-19 --obj="$bin" --inlines --no-demangle --output-style=JSON
        done
        j=$(cut -d' ' -f1 "$tmp/json.t" | median); l=$(cut -d' ' -f1 "$tmp/lib.t" | median)
        m=$(cut -d' ' -f1 "$tmp/llvm.t" | median)
        rj=$(cut -d' ' -f2 "$tmp/json.t" | median); rm_=$(cut -d' ' -f2 "$tmp/llvm.t" | median)
        printf '%-26s %9d %9ss %9ss %9ss %7.1fx %3d/%-4d\n' "$v/$p" "$(wc -l < "$tmp/addrs")" "$j" "$l" "$m" \
            "$(echo "$m / $j" | bc -l)" $((rj / 1024)) $((rm_ / 1024))
    done
done
echo "(rss: ours / llvm-symbolizer; speedup = llvm / ours+json)"
