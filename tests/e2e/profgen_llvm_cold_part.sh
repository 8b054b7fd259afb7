#!/usr/bin/env bash
# A function split into a hot part and a cold part (gcc
# -freorder-blocks-and-partition) whose "foo.cold" symbol has no type (built
# through assembly with its .type line removed, as some compilers emit it):
# the cold part is still code of the binary and part of foo, as for
# llvm-profgen. A call from there keeps its caller's context
# ([... @ foo:LINE @ bar], not bar's base profile), and the jumps between
# the parts are no tail calls (no [... @ foo:LINE @ foo] frame).
# Compared with llvm-profgen-19 on a recording of the fixture (samples
# llvm-profgen drops left out: leaf outside the binary or in a prologue).
source "$(dirname "$0")/../lib.sh"
need gcc-12 llvm-profgen-19 llvm-readelf-19 qemu-x86_64
gcc-12 -O2 -g -freorder-blocks-and-partition -S "$PK_ROOT/tests/programs/profgen_cold_part.c" -o "$T/cp.s"
sed '/\.type[[:space:]]*foo\.cold/d' "$T/cp.s" > "$T/cp2.s"
gcc-12 "$T/cp2.s" -o "$T/cp"
check "the fixture's foo.cold: a sized symbol without a type" \
    grep -qE '[1-9][0-9]* NOTYPE +LOCAL +DEFAULT +[0-9]+ foo\.cold$' <(llvm-readelf-19 -s "$T/cp")
"$PGOKIT" record --emulate -q -o "$T/cp.data" -- "$T/cp" 20000 >/dev/null
"$PGOKIT" dump --perfscript "$T/cp.data" > "$T/cp.all.script"
map=$(awk '/PERF_RECORD_MMAP2/ && / r-xp / && $NF ~ /\/cp$/ {print $3, $5; exit}' "$T/cp.all.script")
lo=${map%% *}; lo=${lo#[0x}; lo=${lo%%(*}; len=${map#*(0x}; len=${len%%)*}; pgoff=${map##* }
python3 "$PK_ROOT/tests/e2e/leaf_in_binary.py" "$lo" "$(printf '%x' $((0x$lo + 0x$len)))" "$T/cp.all.script" > "$T/cp.in.script"
# (and those whose leaf is in llvm-profgen's prologue/epilogue heuristic)
python3 "$PK_ROOT/tests/e2e/leaf_not_prologue.py" "$T/cp" "$(printf '%x' $((0x$lo - pgoff)))" "$T/cp.in.script" > "$T/cp.script"
# the same contexts and lines as llvm-profgen-19, counts no lower (pgokit
# infers tail-call frames, llvm-profgen 19 not for line-based contexts)
same_keys() {
    python3 - "$1" "$2" <<'PY'
import re, sys
def keys(path):
    out, cur = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("["):
            m = re.match(r"(\[.*\])(?::(\d+):(\d+))?$", line)
            cur = m.group(1)
            out[(cur, "")] = int(m.group(2) or 0)
        elif line.strip() and not line.strip().startswith("!"):
            f = line.split()
            if f[0].isdigit():
                continue  # a count of entries
            if f[0].endswith(":"):  # "LOC: N [TARGET:N...]"
                k, n = " ".join([f[0]] + [t.rsplit(":", 1)[0] for t in f[2:]]), int(f[1])
            else:  # "A-B:N", "A->B:N"
                k, n = f[0].rsplit(":", 1)[0], int(f[0].rsplit(":", 1)[1])
            out[(cur, k)] = n
    return out
ref, ours = keys(sys.argv[1]), keys(sys.argv[2])
lower = [k for k in ref if k in ours and ours[k] < ref[k]]
print("keys: llvm-profgen-19 %d, pgokit %d; only one side: %s; lower: %s"
      % (len(ref), len(ours), sorted(set(ref) ^ set(ours))[:4] or "none", lower[:3] or "none"))
sys.exit(1 if set(ref) != set(ours) or lower else 0)
PY
}
check "--skip-symbolization" "$PGOKIT" llvm-profgen -q --format=text --binary="$T/cp" --perfscript="$T/cp.script" \
    --output="$T/cp.pk.raw" --skip-symbolization
llvm-profgen-19 --format=text --binary="$T/cp" --perfscript="$T/cp.script" --output="$T/cp.ll.raw" --skip-symbolization 2>/dev/null
check "--skip-symbolization: llvm-profgen-19's text" cmp "$T/cp.ll.raw" "$T/cp.pk.raw"
check "the cold part's ranges are in foo's context" grep -q '^\[main:[0-9.]* @ foo\]$' "$T/cp.pk.raw"
args=(--format=text --binary="$T/cp" --perfscript="$T/cp.script" --csspgo-preinliner=0 --gen-cs-nested-profile=0)
check "profile" "$PGOKIT" llvm-profgen -q "${args[@]}" --output="$T/cp.pk.prof"
llvm-profgen-19 "${args[@]}" --output="$T/cp.ll.prof" 2>/dev/null
check "profile: llvm-profgen-19's contexts and lines" same_keys "$T/cp.ll.prof" "$T/cp.pk.prof"
check "bar called from foo's cold part, in foo's context" grep -q '^\[main:[0-9.]* @ foo:[0-9.]* @ bar\]' "$T/cp.pk.prof"
check "no tail call between foo's parts" bash -c "! grep -q '@ foo:[0-9.]* @ foo' '$T/cp.pk.prof'"
finish
