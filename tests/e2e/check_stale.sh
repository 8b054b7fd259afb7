#!/usr/bin/env bash
# check_stale.sh — `pgokit check`: profiles of profgen_demo.c (recorded under
# emulated LBR; line-based AutoFDO and CSSPGO probe profiles, a gcc .afdo)
# checked against binaries of edited sources:
#   (a) the same source: fresh (exit 0), also against the PGO builds;
#   (b) 10 comment lines inside run_vm, before its loop: the line profile is
#       stale for run_vm with a large share, the probe profile fresh;
#   (c) a branch added to run_vm: the probe profile's checksum mismatch, the
#       same function and samples clang-19 reports with -report-profile-staleness
#       (and the function whose branch weights clang drops without salvage);
#   (d) scan_text renamed: missing, for both kinds.
# Plus the JSON report, --max-stale-share, errors (exit 1, 2) and the ASan build.
source "$(dirname "$0")/../lib.sh"
need clang-19 qemu-x86_64 python3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
SAN=${PGOKIT_SAN:-$PGOKIT}; [ -x "$SAN" ] || SAN=$PGOKIT
CF="-O2 -g -fdebug-info-for-profiling"
PF="$CF -fpseudo-probe-for-profiling"

# Each variant sits in its own directory under the same file name and is
# compiled from there: probe builds name static functions with a .__uniq.
# suffix that hashes the source path given to the compiler.
for v in base comments cfg renamed; do mkdir -p "$T/$v"; done
cp "$PK_ROOT/tests/programs/profgen_demo.c" "$T/base/"
awk '{print} /^    int pc = 0;$/ && !done {for (i = 1; i <= 10; i++) print "    /* comment line " i " */"; done = 1}' \
    "$T/base/profgen_demo.c" > "$T/comments/profgen_demo.c"
sed 's/case OP_XOR: sp--; stack\[sp - 1\] ^= stack\[sp\]; break;/case OP_XOR: sp--; if (stack[sp]) stack[sp - 1] ^= stack[sp]; break;/' \
    "$T/base/profgen_demo.c" > "$T/cfg/profgen_demo.c"
sed 's/scan_text/scan_words/g' "$T/base/profgen_demo.c" > "$T/renamed/profgen_demo.c"
for v in comments cfg renamed; do
    check "variant $v differs from the base source" bash -c "! cmp -s '$T/base/profgen_demo.c' '$T/$v/profgen_demo.c'"
done
for v in base comments cfg renamed; do
    (cd "$T/$v" && clang-19 $CF profgen_demo.c -o line && clang-19 $PF profgen_demo.c -o probe) ||
        fail "build $v"
done

"$PGOKIT" record --emulate -q -o "$T/line.data" -- "$T/base/line" 6 >/dev/null 2>&1
"$PGOKIT" record --emulate -q -o "$T/probe.data" -- "$T/base/probe" 6 >/dev/null 2>&1
"$PGOKIT" profgen -q --binary "$T/base/line" --perf "$T/line.data" -o "$T/line.prof"
"$PGOKIT" profgen -q --binary "$T/base/probe" --perf "$T/probe.data" -o "$T/probe.prof"
check "line profile written" test -s "$T/line.prof"
check "probe (CSSPGO) profile written" test -s "$T/probe.prof"

# run_check NAME BINARY PROFILE [options]: the JSON report in $T/NAME.json, exit status in $T/NAME.rc
run_check() {
    local name=$1 bin=$2 prof=$3; shift 3
    "$PGOKIT" check --json --binary "$bin" "$prof" "$@" > "$T/$name.json" 2> "$T/$name.err"
    echo $? > "$T/$name.rc"
}
rc() { cat "$T/$1.rc"; }
# j NAME PYTHON-EXPRESSION (on the report r): prints its value
j() { python3 -c "import json,sys; r = json.load(open(sys.argv[1])); print($2)" "$T/$1.json"; }
top_func() { j "$1" "(r['stale_functions'][0]['name'].split('.')[0] if r['stale_functions'] else '-')"; }
stale_names() { j "$1" "' '.join(sorted(f['name'] for f in r['stale_functions']))"; }
# the share of the whole profile flagged, in percent
share() { j "$1" "round(100 * r['stale_share'], 2)"; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# (a) the same source: fresh
run_check a_line "$T/base/line" "$T/line.prof"
run_check a_probe "$T/base/probe" "$T/probe.prof"
check_eq "(a) line profile vs its own binary: exit 0" 0 "$(rc a_line)"
check_eq "(a) line profile: no stale sample" 0 "$(j a_line "r['stale_samples']")"
check_eq "(a) probe profile vs its own binary: exit 0" 0 "$(rc a_probe)"
check_eq "(a) probe profile: no stale sample" 0 "$(j a_probe "r['stale_samples']")"
check "(a) the JSON report counts samples" ge "$(j a_line "r['samples']")" 1000
# the binaries built with the profile (what a CI gate would check): within the default 1 %
(cd "$T/base" && clang-19 $CF -fprofile-sample-use="$T/line.prof" profgen_demo.c -o line.pgo &&
    clang-19 $PF -fprofile-sample-use="$T/probe.prof" profgen_demo.c -o probe.pgo)
run_check a_line_pgo "$T/base/line.pgo" "$T/line.prof"
run_check a_probe_pgo "$T/base/probe.pgo" "$T/probe.prof"
check_eq "(a) line profile vs the PGO build of the same source: exit 0 ($(share a_line_pgo) %)" 0 "$(rc a_line_pgo)"
check_eq "(a) probe profile vs the PGO build of the same source: exit 0" 0 "$(rc a_probe_pgo)"

# (b) 10 comment lines inside run_vm
run_check b_line "$T/comments/line" "$T/line.prof"
run_check b_probe "$T/comments/probe" "$T/probe.prof"
echo "(b) line profile: $(share b_line) % of the samples stale; run_vm: $(j b_line "[(f['stale_locations'], f['locations']) for f in r['stale_functions'] if f['name'] == 'run_vm']") stale/profiled locations"
check_eq "(b) line profile: exit 3 (stale)" 3 "$(rc b_line)"
check_eq "(b) line profile: run_vm is the stalest function" run_vm "$(top_func b_line)"
check_eq "(b) line profile: only run_vm is stale" run_vm "$(stale_names b_line)"
check "(b) line profile: more than 20 % of the samples stale ($(share b_line) %)" ge "$(share b_line)" 20
check_eq "(b) line profile: run_vm flagged for its lines" True "$(j b_line "'line' in r['stale_functions'][0]['reasons']")"
check_eq "(b) probe profile: exit 0 (checksums unchanged)" 0 "$(rc b_probe)"
check_eq "(b) probe profile: no stale sample" 0 "$(j b_probe "r['stale_samples']")"
# the text report names the function and a stale location
"$PGOKIT" check --binary "$T/comments/line" "$T/line.prof" > "$T/b_line.txt"
check "(b) text report: run_vm with gone locations" grep -q 'run_vm: [0-9]*/[0-9]* locations gone' "$T/b_line.txt"
check "(b) text report: the verdict" grep -q '^STALE: ' "$T/b_line.txt"
# an MD5 profile (names as GUIDs): the same findings, named from the binary
"$PGOKIT" merge -q --use-md5 -o "$T/md5.prof" "$T/line.prof"
run_check b_md5 "$T/comments/line" "$T/md5.prof"
check_eq "(b) MD5 profile: the same stale samples, run_vm named" "$(j b_line "r['stale_samples']") run_vm" \
    "$(j b_md5 "r['stale_samples']") $(top_func b_md5)"
"$PGOKIT" check --binary "$T/comments/line" "$T/line.prof" --max-stale-share 100 > /dev/null
check_eq "(b) --max-stale-share 100: exit 0" 0 "$?"
"$PGOKIT" check -q --binary "$T/comments/line" "$T/line.prof" > "$T/q.out"
check_eq "(b) -q: exit 3, nothing printed" "3:0" "$?:$(wc -c < "$T/q.out")"
"$SAN" check --binary "$T/comments/line" "$T/line.prof" -v > "$T/san.txt" 2> "$T/san.err"
check_eq "(b) ASan+UBSan build: exit 3, no report" "3:" "$?:$(grep -m1 -E 'Sanitizer|runtime error' "$T/san.err")"

# (c) a branch added to run_vm: the probe checksum changes
run_check c_probe "$T/cfg/probe" "$T/probe.prof"
check_eq "(c) probe profile: exit 3" 3 "$(rc c_probe)"
check_eq "(c) probe profile: run_vm's checksum" "_ZL6run_vmPK4insnPl checksum" \
    "$(j c_probe "' '.join(f['name'].split('.')[0] + ' ' + ','.join(f['reasons']) for f in r['stale_functions'])")"
# clang-19 on the same source with the same profile
(cd "$T/cfg" && clang-19 $PF -fprofile-sample-use="$T/probe.prof" -mllvm -report-profile-staleness \
    -mllvm -salvage-stale-profile=false -S -emit-llvm profgen_demo.c -o pgo.ll 2> clang.txt)
(cd "$T/base" && clang-19 $PF -fprofile-sample-use="$T/probe.prof" -S -emit-llvm profgen_demo.c -o pgo.ll)
sed 's/^/  clang-19: /' "$T/cfg/clang.txt"
clang_n=$(sed -n "s/^(\([0-9]*\)\/[0-9]*) of functions' profile are invalid and (\([0-9]*\)\/[0-9]*) of samples.*/\1 \2/p" "$T/cfg/clang.txt")
check_eq "(c) clang-19 -report-profile-staleness: the same functions and samples (hash mismatch)" \
    "$clang_n" "$(j c_probe "str(r['functions']['checksum']) + ' ' + str(r['stale_samples_by_reason']['checksum'])")"
# which function clang gave up: the one whose branches lost their weights
weighted() { awk '/^define / { match($0, /@[^(]+/); n = substr($0, RSTART + 1, RLENGTH - 1); w = 0; next }
    /^}/ { if (n != "" && w) print n; n = ""; next } n != "" && /^ +(br|switch) .*!prof / { w = 1 }' "$1" | sort; }
dropped=$(comm -23 <(weighted "$T/base/pgo.ll") <(weighted "$T/cfg/pgo.ll") | tr '\n' ' ' | sed 's/ $//')
check_eq "(c) the function clang-19 drops (no branch weights left) is the one flagged" \
    "$dropped" "$(stale_names c_probe)"
run_check c_line "$T/cfg/line" "$T/line.prof"
echo "(c) line profile after the CFG edit (no line moved): exit $(rc c_line), $(share c_line) % stale"

# (d) scan_text renamed: missing
run_check d_line "$T/renamed/line" "$T/line.prof"
run_check d_probe "$T/renamed/probe" "$T/probe.prof"
check_eq "(d) line profile: exit 3" 3 "$(rc d_line)"
check_eq "(d) line profile: scan_text missing" "scan_text missing" \
    "$(j d_line "' '.join(f['name'] + ' ' + ','.join(f['reasons']) for f in r['stale_functions'])")"
check_eq "(d) probe profile: exit 3" 3 "$(rc d_probe)"
check_eq "(d) probe profile: scan_text missing" "_ZL9scan_textPKhm missing" \
    "$(j d_probe "' '.join(f['name'].split('.')[0] + ' ' + ','.join(f['reasons']) for f in r['stale_functions'])")"
# the share of a missing function is the share of its samples in the profile
check_eq "(d) line profile: the missing share is scan_text's body samples" \
    "$("$PGOKIT" show "$T/line.prof" --function scan_text --json | python3 -c '
import json, sys
def body(f):
    return sum(b.get("samples", 0) for b in f.get("body", [])) + sum(body(c) for s in f.get("callsites", []) for c in s.get("samples", []))
print(sum(body(f) for f in json.load(sys.stdin)))')" "$(j d_line "r['stale_samples']")"

# a gcc-12 build and its .afdo: fresh, then stale after the comment lines
if command -v gcc-12 > /dev/null; then
    (cd "$T/base" && gcc-12 -O2 -g profgen_demo.c -o gline) && (cd "$T/comments" && gcc-12 -O2 -g profgen_demo.c -o gline)
    "$PGOKIT" record --emulate -q -o "$T/g.data" -- "$T/base/gline" 6 > /dev/null 2>&1
    "$PGOKIT" profgen -q --binary "$T/base/gline" --perf "$T/g.data" --format gcc -o "$T/g.afdo"
    run_check g_fresh "$T/base/gline" "$T/g.afdo"
    run_check g_stale "$T/comments/gline" "$T/g.afdo"
    check_eq "gcc .afdo vs its binary: exit 0" 0 "$(rc g_fresh)"
    check_eq "gcc .afdo: discriminators ignored (gcc's format has none)" True "$(j g_fresh "r['discriminators_ignored']")"
    check_eq "gcc .afdo after the comment lines: exit 3, run_vm" "3 run_vm" "$(rc g_stale) $(top_func g_stale)"
fi

# errors
"$PGOKIT" check --binary "$T/base/line" "$T/base/profgen_demo.c" > "$T/e1.out" 2> "$T/e1.err"
check_eq "not a profile: exit 1" 1 "$?"
check "not a profile: the message names the file" grep -q "profgen_demo.c" "$T/e1.err"
"$PGOKIT" check --binary "$T/base/line" "$T/probe.prof" > /dev/null 2> "$T/e2.err"
check_eq "probe profile, binary without probes: exit 1" 1 "$?"
check "probe profile, binary without probes: says so" grep -q "pseudo_probe_desc" "$T/e2.err"
"$PGOKIT" check --binary "$T/nonexistent" "$T/line.prof" > /dev/null 2>&1
check_eq "no such binary: exit 1" 1 "$?"
"$PGOKIT" check "$T/line.prof" > /dev/null 2>&1
check_eq "no --binary: exit 2" 2 "$?"
"$PGOKIT" check --binary "$T/base/line" "$T/line.prof" --max-stale-share x > /dev/null 2>&1
check_eq "bad --max-stale-share: exit 2" 2 "$?"
"$PGOKIT" check --help | grep -q -- '-report-profile-staleness'
check_eq "--help mentions clang's -report-profile-staleness" 0 "$?"

finish
