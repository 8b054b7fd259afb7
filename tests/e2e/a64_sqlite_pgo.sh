#!/usr/bin/env bash
# Issue #14's end-to-end acceptance on SQLite speedtest1, for aarch64 and
# x86-64 in one table (bench/a64_sqlite.sh at --size 2, without its cross
# table): clang-19 builds, one emulated recording per build kind, AutoFDO,
# probe-only and CSSPGO profiles by pgokit, instrumentation PGO beside them,
# and the instructions each rebuilt program executes in one measured run (the
# plugin's exact counts) against plain -O2. Every profile must lower the
# instruction count by at least 3 % on both targets, and have a block overlap
# of at least 0.9 with the exact counts of its own recording. The full-size
# table and the comparison of the two targets are in
# bench/results/a64-sqlite-*.md.
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profdata-19 qemu-aarch64 qemu-x86_64 python3
[ -d "$PK_ROOT/../shared/workloads" ] || { echo "skipped: ../shared/workloads not found"; exit 77; }
[ -f /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.profile-aarch64.a ] \
    || { echo "skipped: no aarch64 profile runtime (scripts/setup.sh installs libclang-rt-19-dev:arm64)"; exit 77; }
[ -d /usr/aarch64-linux-gnu/lib ] || { echo "skipped: no aarch64 cross libc"; exit 77; }
PGOKIT=$PGOKIT TMPDIR=$T SIZE=2 CROSS=0 bash "$PK_ROOT/bench/a64_sqlite.sh" x86_64 aarch64 > "$T/out.txt" 2> "$T/err.txt"
rc=$?
cat "$T/out.txt"
check_eq "bench/a64_sqlite.sh exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || sed -n '1,40p' "$T/err.txt"
for arch in x86_64 aarch64; do
    for v in line po cs instr; do
        pct=$(awk -v a=$arch -v v=$v '$1 == "RESULT" && $2 == a && $3 == v { print $6 }' "$T/out.txt")
        check "$arch $v: at least 3 % fewer instructions than -O2 (${pct:-none} %)" \
            python3 -c "import sys; sys.exit(0 if float('${pct:-0}') <= -3 else 1)"
    done
    for kv in AutoFDO:line probe-only:po CSSPGO:cs; do
        q=$(sed -n "s/^$arch: block overlap.* ${kv%%:*} \([0-9.]*\).*/\1/p" "$T/out.txt")
        check "$arch ${kv%%:*}: block overlap with the exact counts >= 0.9 (${q:-none})" \
            python3 -c "import sys; sys.exit(0 if float('${q:-0}') >= 0.9 else 1)"
    done
done
finish
