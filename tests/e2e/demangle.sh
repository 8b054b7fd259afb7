#!/usr/bin/env bash
# demangle.sh — the human views print C++ names as c++filt does; profiles and
# machine output keep linkage names. A C++ program with templates, a lambda,
# exceptions and anonymous namespaces (tests/programs/demangle_cpp.cc), built
# with clang++-19 -O2 -g, recorded under emulation; AutoFDO and CSSPGO
# profiles. show (top list, hot list), check (against a build of edited
# sources, so functions and call sites are listed) and report print, with
# demangling on, exactly what their --no-demangle output gives through
# c++filt; the profile files, show --json and check --json hold linkage names.
source "$(dirname "$0")/../lib.sh"
need qemu-x86_64 clang++-19 c++filt llvm-profdata-19 python3
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }

src=$PK_ROOT/tests/programs/demangle_cpp.cc
cxx() { clang++-19 -O2 -g -fno-omit-frame-pointer "$@"; }
cxx "$src" -o "$T/cpp" && cxx -DEDITED "$src" -o "$T/cpp_edited" &&
cxx -fpseudo-probe-for-profiling "$src" -o "$T/cpp_probe" || { fail "build the C++ program"; finish; exit; }
"$PGOKIT" record --emulate -q --period 997 -o "$T/cpp.data" -- "$T/cpp" 100000 >/dev/null
"$PGOKIT" record --emulate -q --period 997 -o "$T/probe.data" -- "$T/cpp_probe" 100000 >/dev/null
"$PGOKIT" profgen --binary "$T/cpp" --perf "$T/cpp.data" -o "$T/afdo.prof" 2>/dev/null
"$PGOKIT" profgen --binary "$T/cpp" --perf "$T/cpp.data" --format text -o "$T/afdo.txt" 2>/dev/null
# (the flat context profile: which functions the pre-inliner leaves
# top-level moves with the samples, and here it folds nearly all into main)
"$PGOKIT" profgen --binary "$T/cpp_probe" --perf "$T/probe.data" --no-preinline -o "$T/cs.prof" 2>/dev/null
check "AutoFDO and CSSPGO profiles written" test -s "$T/afdo.prof" -a -s "$T/afdo.txt" -a -s "$T/cs.prof"

# ---- profiles and machine output keep linkage names ----
llvm-profdata-19 show --sample --function=main --show-format=text "$T/afdo.prof" >/dev/null
funcs=$(llvm-profdata-19 show --sample "$T/afdo.txt" --topn=100 2>/dev/null | awk '/^  *[0-9]+ /{print $NF}')
check "llvm-profdata lists mangled names in the profile ($(grep -c '^_Z' <<<"$funcs") of $(wc -l <<<"$funcs"))" \
    test "$(grep -c '^_Z' <<<"$funcs")" -ge 5
check "the text profile has no demangled name" bash -c "! grep -qE 'anonymous namespace|operator\\(\\)|<long' '$T/afdo.txt'"
"$PGOKIT" show --json "$T/afdo.prof" >"$T/afdo.json"
check "show --json keeps linkage names" bash -c "grep -q '\"_ZN' '$T/afdo.json' && ! grep -q 'anonymous namespace' '$T/afdo.json'"

# ---- show ----
for p in afdo cs; do
    "$PGOKIT" show --top 0 "$T/$p.prof" >"$T/$p.show"
    "$PGOKIT" show --top 0 --no-demangle "$T/$p.prof" | c++filt >"$T/$p.show.filt"
    check "$p: show --no-demangle lists linkage names" bash -c "'$PGOKIT' show --top 0 --no-demangle '$T/$p.prof' | grep -q '_Z'"
    check "$p: show lists no linkage name" bash -c "! grep -q '_Z' '$T/$p.show'"
    check "$p: show prints what c++filt prints" cmp -s "$T/$p.show.filt" "$T/$p.show"
    if [ $p = afdo ]; then
        check "$p: templates, lambdas, anonymous namespaces readable" bash -c \
            "grep -q 'pipeline::scaled_sum<long, 3>' '$T/$p.show' && grep -q '(anonymous namespace)::Accumulator<long>::add(long)' '$T/$p.show' && grep -q 'main::\$_0::operator()(int) const' '$T/$p.show'"
    else # clang's unique internal names of the probe build
        check "$p: an internal function's unique name reads as a clone" \
            grep -q '(anonymous namespace)::[^ ]*(.*) \[clone .__uniq.[0-9]*\]' "$T/$p.show"
    fi
    "$PGOKIT" show --hot-func-list "$T/$p.prof" >"$T/$p.hot"
    check "$p: show --hot-func-list prints what c++filt prints" \
        bash -c "'$PGOKIT' show --hot-func-list --no-demangle '$T/$p.prof' | c++filt | cmp -s - '$T/$p.hot'"
done
check "show --function takes the demangled name" \
    bash -c "'$PGOKIT' show --function '(anonymous namespace)::parse_value(int)' '$T/afdo.prof' | grep -q '^_ZN12_GLOBAL__N_111parse_valueEi:'"

# ---- check, against the edited sources ----
"$PGOKIT" check --binary "$T/cpp_edited" "$T/afdo.prof" --top 0 -v >"$T/check.txt"
check_eq "check finds the edited functions stale (exit 3)" 3 $?
"$PGOKIT" check --binary "$T/cpp_edited" "$T/afdo.prof" --top 0 -v --no-demangle | c++filt >"$T/check.filt"
check "check lists the missing function and the stale call, readable" bash -c \
    "grep -q '(anonymous namespace)::parse_value(int): missing' '$T/check.txt' && grep -q 'call to long pipeline::scaled_sum<long, 3>' '$T/check.txt'"
check "check prints what c++filt prints" cmp -s "$T/check.filt" "$T/check.txt"
"$PGOKIT" check --binary "$T/cpp_edited" "$T/afdo.prof" --top 0 --json >"$T/check.json"
check "check --json keeps linkage names" bash -c "grep -q '\"_ZN12_GLOBAL__N_111parse_valueEi\"' '$T/check.json'"

# ---- report: the page's names are c++filt's ----
names() { # the page's name table, one a line
    python3 -c '
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<script type=\"application/json\" id=\"pk-data\">(.*?)</script>", page, re.S)
for n in json.loads(m.group(1))["names"]:
    print(n)' "$1"
}
for p in afdo cs; do
    bin=$T/cpp; [ $p = cs ] && bin=$T/cpp_probe
    "$PGOKIT" report -q "$T/$p.prof" --binary "$bin" -o "$T/$p.html"
    "$PGOKIT" report -q --no-demangle "$T/$p.prof" --binary "$bin" -o "$T/$p.raw.html"
    names "$T/$p.html" >"$T/$p.names"
    names "$T/$p.raw.html" >"$T/$p.raw.names"
    check "$p: report --no-demangle names linkage names" grep -q '^_Z' "$T/$p.raw.names"
    check "$p: report's names are what c++filt prints" bash -c "c++filt <'$T/$p.raw.names' | cmp -s - '$T/$p.names'"
    check "$p: report shows a template and a lambda" bash -c \
        "grep -q 'scaled_sum<long, 5>' '$T/$p.names' && grep -q 'main::\$_0::operator()' '$T/$p.names'"
done
finish
