#!/usr/bin/env bash
# llvm-profgen's options, in both spellings (--opt=value, --opt value), with
# llvm-profgen's meanings: each run on a recording of our fixture and compared
# with llvm-profgen-19 on the same input (perf script text from pgokit dump).
source "$(dirname "$0")/../lib.sh"
need clang-19 llvm-profdata-19 llvm-profgen-19 qemu-x86_64 python3
src="$PK_ROOT/tests/programs/profgen_recurse.c"
clang-19 -O2 -g -fpseudo-probe-for-profiling "$src" -o "$T/p"
# (in a fixed environment: the guest's stack, and so the sampled branches,
# move with it, and the pre-inliner checks below compare exact decisions)
check "record (emulated LBR + stacks)" env -i PATH=/usr/bin:/bin "$PGOKIT" record --emulate -q -o "$T/p.data" -- "$T/p" 20000 >/dev/null
"$PGOKIT" dump --perfscript "$T/p.data" > "$T/p.script"
# Top-level contexts (or function names) of a text profile that have a body
# line of their own (not only call sites: llvm-profgen makes such a parent
# for an inlinee whose context was trimmed), sorted.
tops() { awk '/^[^ ]/ {if (t && own) print t; t = ""; own = 0} /^(\[[^]]*\]|[^ :][^:]*):[0-9]+:[0-9]+$/ {t = $0; sub(/:[0-9]+:[0-9]+$/, "", t)}
              /^ [0-9]+(\.[0-9]+)?: [0-9]+$/ {own = 1} END {if (t && own) print t}' "$1" | sort; }
depth() { tops "$1" | awk -F' @ ' 'NF > m {m = NF} END {print m}'; }
# pk NAME ARGS...: pgokit and llvm-profgen-19 with the same options on the same recording
pk() {
    local n=$1; shift
    "$PGOKIT" profgen -q --outside-leaf-context full "$@" --binary "$T/p" --perf "$T/p.data" -o "$T/$n.pk" --format text || return 1
    llvm-profgen-19 --binary "$T/p" --perfscript "$T/p.script" -o "$T/$n.ll" --format=text "$@" 2>/dev/null
}
same_tops() { diff <(tops "$T/$1.ll") <(tops "$T/$1.pk") > "$T/$1.diff"; }
flat=(--csspgo-preinliner=0 --gen-cs-nested-profile=0)

# --compress-recursion: -1 any length (default), 0 none, N windows up to N
# (no cold merging here: --profile-summary-hot-count=0)
for v in 0 1 2; do
    check "--compress-recursion=$v" pk cr$v "${flat[@]}" --profile-summary-hot-count=0 --compress-recursion=$v
    check "--compress-recursion=$v: llvm-profgen-19's contexts" same_tops cr$v
done
check "--compress-recursion=0 keeps the recursion: deeper contexts" test "$(depth "$T/cr0.pk")" -gt "$(depth "$T/cr2.pk")"
check "--compress-recursion 1 (two words) = --compress-recursion=1" \
    bash -c "'$PGOKIT' profgen -q --outside-leaf-context full ${flat[*]} --profile-summary-hot-count 0 --compress-recursion 1 --binary '$T/p' --perf '$T/p.data' -o '$T/cr1b.pk' --format text && cmp -s '$T/cr1.pk' '$T/cr1b.pk'"
# --csprof-max-context-depth: the innermost N callers of each (expanded) context
for v in 1 2; do
    check "--csprof-max-context-depth $v" pk d$v "${flat[@]}" --profile-summary-hot-count=0 --csprof-max-context-depth $v
    check "--csprof-max-context-depth $v: llvm-profgen-19's contexts" same_tops d$v
    check "--csprof-max-context-depth $v: at most $v callers" test "$(depth "$T/d$v.pk")" -le $((v + 1))
done
# cold contexts (under the hot threshold, here given): merged into their
# base profile (without the pre-inliner), or kept N frames deep, or trimmed.
# The two tools' totals differ a little (llvm-profgen drops some samples
# pgokit keeps): the count given falls between the same contexts in both.
H=$(python3 - "$T/cr2.ll" "$T/cr2.pk" <<'PY'
import re, sys
def tot(p):
    return {m.group(1): int(m.group(2)) for m in (re.match(r'^(\[.*\]):(\d+):\d+$', l.strip()) for l in open(p)) if m}
a, b = tot(sys.argv[1]), tot(sys.argv[2])
common = [k for k in a if k in b]
cands = sorted({v + 1 for v in list(a.values()) + list(b.values())})
best = None
for t in cands:
    cold = [k for k in common if a[k] < t]
    if all((a[k] < t) == (b[k] < t) for k in common) and 2 <= len(cold) <= len(common) - 3:
        best = t if best is None or abs(len(cold) - len(common) / 2) < abs(sum(a[k] < best for k in common) - len(common) / 2) else best
print(best or 0)
PY
)
echo "hot count chosen: $H"
check "--profile-summary-hot-count=$H (cold contexts merged)" pk h300 "${flat[@]}" --profile-summary-hot-count=$H
check "hot count: llvm-profgen-19's contexts" same_tops h300
check "hot count: fewer contexts than with 0" test "$(tops "$T/h300.pk" | wc -l)" -lt "$(tops "$T/cr2.pk" | wc -l)"
check "--csprof-max-cold-context-depth=2" pk cold2 "${flat[@]}" --profile-summary-hot-count=$H --csprof-max-cold-context-depth=2
check "cold context depth 2: llvm-profgen-19's contexts" same_tops cold2
check "--trim-cold-profile" pk trim "${flat[@]}" --profile-summary-hot-count=$H --trim-cold-profile
check "trim: llvm-profgen-19's contexts" same_tops trim
check "trim: fewer contexts than merged" test "$(tops "$T/trim.pk" | wc -l)" -lt "$(tops "$T/h300.pk" | wc -l)"
check "--trim-cold-profile=false is the default" bash -c "'$PGOKIT' profgen -q --outside-leaf-context full ${flat[*]} --profile-summary-hot-count=$H --trim-cold-profile=false --binary '$T/p' --perf '$T/p.data' -o '$T/nt.pk' --format text && cmp -s '$T/h300.pk' '$T/nt.pk'"
# flat probe-only profile: --trim-cold-profile drops the profiles under the cold threshold
check "--ignore-stack-samples --trim-cold-profile" pk ptrim --ignore-stack-samples --trim-cold-profile
check "probe-only trim: llvm-profgen-19's functions" same_tops ptrim
# no pre-inliner, nested all the same
check "--csspgo-preinliner=0" pk nopre --csspgo-preinliner=0 --profile-summary-hot-count=$H
check "no pre-inliner: llvm-profgen-19's top-level profiles" same_tops nopre
check "no pre-inliner: nothing marked pre-inlined" bash -c "! grep -q '!Attributes: 2' '$T/nopre.pk'"
check "--gen-cs-nested-profile=0: flat contexts, pre-inlined" pk nonest --gen-cs-nested-profile=0
check "flat pre-inlined: contexts and the pre-inliner's marks" grep -q '!Attributes: [23]' "$T/nonest.pk"
# the pre-inliner's size thresholds: none inlined at 0 (but contexts whose
# code was optimized away), all at 3000 (this
# fixture's functions are small), as llvm-profgen-19 decides
ninl() { grep -c '^ *[0-9.]*: [^0-9 ]' "$1"; }
ntop() { grep -c '^[^ ]' "$1"; }
check "--sample-profile-hot-inline-threshold=0" pk inl0 --sample-profile-hot-inline-threshold=0
check "threshold 0: no more inlinees than llvm-profgen-19 (only code-free ones)" test "$(ninl "$T/inl0.pk")" -le "$(ninl "$T/inl0.ll")"
check "--sample-profile-hot-inline-threshold 3000 --sample-profile-cold-inline-threshold=3000" \
    pk inl3k --sample-profile-hot-inline-threshold 3000 --sample-profile-cold-inline-threshold=3000
check_eq "threshold 3000: llvm-profgen-19's top-level profiles and inlinees" \
    "$(ntop "$T/inl3k.ll") $(ninl "$T/inl3k.ll")" "$(ntop "$T/inl3k.pk") $(ninl "$T/inl3k.pk")"
check "threshold 3000 inlines more than the default" test "$(ninl "$T/inl3k.pk")" -gt 0
# --csspgo-replay-preinline: exactly what the binary inlined (within the size limit)
check "--csspgo-replay-preinline" pk replay --csspgo-replay-preinline
check_eq "replay: llvm-profgen-19's top-level profiles and inlinees" \
    "$(ntop "$T/replay.ll") $(ninl "$T/replay.ll")" "$(ntop "$T/replay.pk") $(ninl "$T/replay.pk")"
check "replay: every inlinee was inlined in the binary" bash -c "! grep -q '!Attributes: 2$' '$T/replay.pk'"
# --update-total-samples (line-based): each total is the sum of the body
# and the inlinees' totals
sums() { awk '/^[^ ]/ {if (n) print (t == s ? "sum" : "other"); n = $0; m = split($0, a, ":"); t = a[m - 1]; s = 0}
              /^ [0-9]+(\.[0-9]+)?: [0-9]+/ {s += $2} /^ [0-9]+(\.[0-9]+)?: [^0-9 ]/ {m = split($2, c, ":"); s += c[m]}
              END {if (n) print (t == s ? "sum" : "other")}' "$1" | sort | uniq -c; }
check "--update-total-samples" pk uts --use-dwarf-correlation --ignore-stack-samples --update-total-samples
check_eq "--update-total-samples: every total a sum, as llvm-profgen-19's" "0 0" \
    "$(sums "$T/uts.pk" | grep -c other) $(sums "$T/uts.ll" | grep -c other)"
check "--update-total-samples: llvm-profgen-19's functions" same_tops uts
# --use-md5 and --populate-profile-symbol-list (extbinary)
"$PGOKIT" profgen -q --use-md5 --populate-profile-symbol-list --binary "$T/p" --perf "$T/p.data" -o "$T/s.pk"
llvm-profgen-19 --binary "$T/p" --perfscript "$T/p.script" -o "$T/s.ll" --use-md5 --populate-profile-symbol-list 2>/dev/null
syms() { llvm-profdata-19 show --sample --show-prof-sym-list "$1" | sed -n '/Dump profile symbol list/,$p'; }
check "--populate-profile-symbol-list: llvm-profgen-19's list" diff <(syms "$T/s.ll") <(syms "$T/s.pk")
check "the list names every function" test "$(syms "$T/s.pk" | grep -c .)" -ge 7
check "--use-md5: an MD5 name table" grep -q 'NameTableSection.*fixlenmd5' <(llvm-profdata-19 show --sample --show-sec-info-only "$T/s.pk")
# --show-density and the density warning, on LBR text both tools count
# alike (main → sorter → leafwork, 40 times, in a non-PIE probe binary)
clang-19 -O2 -g -fpseudo-probe-for-profiling -fno-pie -no-pie "$src" -o "$T/n"
sym() { nm "$T/n" | awk -v s="$1" '$3 == s {print $1}'; }
first() { objdump -d --no-show-raw-insn "$T/n" | awk -v f="<$1>:" -v p="$2" '$0 ~ f {on = 1; next} on && /^$/ {exit}
          on && $0 ~ p {sub(":", "", $1); print $1; exit}'; }
S=$(sym sorter) L=$(sym leafwork) C1=$(first sorter 'call.*<leafwork>') M=$(first main 'call.*<sorter>') LR=$(first leafwork '\tret')
for i in $(seq 40); do echo " 0x$LR/0x$(printf '%x' $((0x$C1 + 5)))/P/-/-/0  0x$C1/0x$L/P/-/-/0  0x$M/0x$S/P/-/-/0"; done > "$T/n.script"
for extra in "" "--profile-density-cutoff-hot=500000 --profile-density-threshold 100"; do
    "$PGOKIT" profgen --show-density $extra --binary "$T/n" --perfscript "$T/n.script" -o "$T/dn.pk" --format text \
        > "$T/dn.out" 2> "$T/dn.err"
    llvm-profgen-19 --show-density $extra --binary "$T/n" --perfscript "$T/n.script" -o "$T/dn.ll" --format=text \
        > "$T/dn.llout" 2> "$T/dn.llerr"
    check_eq "--show-density $extra: llvm-profgen-19's line" "$(grep density "$T/dn.llout")" "$(cat "$T/dn.out")"
    check_eq "density warning $extra: llvm-profgen-19's factor" \
        "$(grep -o 'better with [0-9.]*x' "$T/dn.llerr")" "$(grep -o 'better with [0-9.]*x' "$T/dn.err")"
done
# wrong values are refused by name
"$PGOKIT" profgen --compress-recursion=x --binary "$T/p" --perf "$T/p.data" -o "$T/x.pk" 2> "$T/x.err"
check "a bad number is refused" grep -q -- "--compress-recursion: 'x' is not a valid value" "$T/x.err"
"$PGOKIT" profgen --trim-cold-profile=maybe --binary "$T/p" --perf "$T/p.data" -o "$T/x.pk" 2> "$T/x.err"
check "a bad boolean is refused" grep -q -- "--trim-cold-profile=maybe: the value must be true or false" "$T/x.err"
check "nothing written on a refused option" test ! -e "$T/x.pk"
finish
