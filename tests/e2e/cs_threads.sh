#!/usr/bin/env bash
# profgen's threads under ThreadSanitizer: the CS path walks samples on a
# worker thread (and, when the ring is full, on the reading thread too, its
# contexts merged into the worker's at the end) while other threads load
# probes, index DWARF and build the pre-inliner's trie; from IP samples,
# contexts are inferred on several threads. A TSan build of the tool must
# report no race with every thread busy, and give the same profile as one
# thread.
source "$(dirname "$0")/../lib.sh"
need clang-19 qemu-x86_64
PGOKIT_TSAN=${PGOKIT_TSAN:-$PK_BUILD/tsan/pgokit}
[ -x "$PGOKIT_TSAN" ] || { echo "skipped: $PGOKIT_TSAN not built (make tests builds it)"; exit 77; }
# TSan cannot start under some kernels' address-space layouts: that is the
# machine, not the tool, so skip rather than fail.
if ! "$PGOKIT_TSAN" --help > /dev/null 2> "$T/tsan_start.log"; then
    grep -q 'ThreadSanitizer' "$T/tsan_start.log" && { echo "skipped: ThreadSanitizer cannot run here"; exit 77; }
fi
src="$PK_ROOT/tests/programs/cs_scalarop.c"
clang-19 -O2 -g -fpseudo-probe-for-profiling -DPROFILED_BUILD "$src" -o "$T/so"
check "record (emulated LBR + stacks)" "$PGOKIT" record --emulate -q -o "$T/so.data" -- "$T/so" 2000
check "profgen --threads 1" "$PGOKIT" profgen -q --threads 1 --binary "$T/so" --perf "$T/so.data" \
    -o "$T/one.prof" --format text
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
for fmt in text extbinary; do
    PGOKIT_WALK_HERE_EVERY=2 "$PGOKIT_TSAN" profgen --threads 2 --binary "$T/so" --perf "$T/so.data" \
        -o "$T/tsan.$fmt" --format $fmt 2> "$T/tsan.$fmt.log"
    rc=$?
    check_eq "no data race, $fmt (TSan exit status)" 0 "$rc"
    [ "$rc" -eq 0 ] || sed -n '1,40p' "$T/tsan.$fmt.log"
done
check "both threads walked" grep -Eq 'walks \([1-9][0-9]* on the reading thread' "$T/tsan.text.log"
check_eq "same profile as one thread" "$(md5sum < "$T/one.prof")" "$(md5sum < "$T/tsan.text")"
"$PGOKIT" profgen -q --threads 1 --binary "$T/so" --perf "$T/so.data" -o "$T/one.extbinary" --format extbinary
check "same extbinary profile as one thread" cmp -s "$T/one.extbinary" "$T/tsan.extbinary"

# IP samples: every context's flow inference is taken by one of N threads
# from a shared counter (once, then again for the contexts whose call sites
# the callees' entries raised); with stacks (CSSPGO) and without (probe-only)
check "record (emulated IP + stacks)" "$PGOKIT" record --emulate --ip -q -o "$T/ip.data" -- "$T/so" 2000
for kind in cs flat; do
    extra=(); [ $kind = flat ] && extra=(--ignore-stack-samples)
    "$PGOKIT" profgen -q --threads 1 --binary "$T/so" --perf "$T/ip.data" "${extra[@]}" -o "$T/ip1.$kind"
    "$PGOKIT_TSAN" profgen -q --threads 4 --binary "$T/so" --perf "$T/ip.data" "${extra[@]}" \
        -o "$T/ip4.$kind" 2> "$T/ip4.$kind.log"
    rc=$?
    check_eq "IP $kind: no data race on four inference threads (TSan exit status)" 0 "$rc"
    [ "$rc" -eq 0 ] || sed -n '1,40p' "$T/ip4.$kind.log"
    check "IP $kind: same profile as one thread" cmp -s "$T/ip1.$kind" "$T/ip4.$kind"
done
finish
