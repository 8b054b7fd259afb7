#!/bin/bash
# llvm-profgen's own lit tests (Debian's llvm-toolchain-19 source package) run
# through the drop-in `pgokit llvm-profgen` and through llvm-profgen-19: every
# RUN line of every test, %S/%s/%p/%t/%T substituted as lit does. Each profile
# pgokit writes is compared with llvm-profgen-19's from the same command line
# (identical, or the same once both are read back by llvm-profdata-19; else the
# similarity `llvm-profdata-19 overlap --sample` gives). A command line whose
# stdout (or stderr, `2>&1 |`) the test pipes into FileCheck (a dump, warnings,
# --help) is judged by the test's own FileCheck command on each side's output.
# Prints a Markdown report: per test agrees / differs / cannot run (why).
#
# usage: bench/compat_llvm_profgen.sh [-o REPORT.md]
# The source package is fetched once (apt-get source through a private APT
# configuration, deb-src entries derived from the machine's Debian list) into
# ${XDG_CACHE_HOME:-$HOME/.cache}/pgokit/llvm-toolchain-19, and only
# llvm/test/tools/llvm-profgen/ is extracted. LLVM's inputs never enter the repo.
# Needs: apt-get, xz, FileCheck (llvm-19-tools), llvm-profgen-19, llvm-profdata-19, llvm-objcopy-19, yaml2obj-19, llvm-dwp-19.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
report=
[ "${1:-}" = -o ] && report=$2
PGOKIT=${PGOKIT:-$root/build/pgokit}
[ -x "$PGOKIT" ] || { echo "compat_llvm_profgen: $PGOKIT not built (make all)" >&2; exit 2; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pgokit/llvm-toolchain-19
testdir=$(ls -d "$cache"/src/llvm-toolchain-19_*/llvm/test/tools/llvm-profgen 2>/dev/null | head -n 1 || true)
if [ -z "$testdir" ]; then
    mkdir -p "$cache/apt/parts" "$cache/apt/lists/partial" "$cache/apt/archives/partial" "$cache/src"
    sys=/etc/apt/sources.list.d/debian.sources
    [ -r "$sys" ] || { echo "compat_llvm_profgen: $sys not found (deb822 Debian sources expected)" >&2; exit 2; }
    # the security suite's source pool does not serve every file: left out
    awk 'BEGIN{RS="";ORS="\n\n"} !/Suites:[^\n]*-security/ {gsub(/Types: deb\n/,"Types: deb-src\n"); print}' \
        "$sys" > "$cache/apt/parts/debian.sources"
    cat > "$cache/apt/apt.conf" <<CONF
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$cache/apt/parts";
Dir::State::Lists "$cache/apt/lists";
Dir::Cache::Archives "$cache/apt/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CONF
    export APT_CONFIG=$cache/apt/apt.conf
    apt-get update -qq
    (cd "$cache/src" && apt-get source -qq --download-only llvm-toolchain-19)
    orig=$(ls "$cache"/src/llvm-toolchain-19_*.orig.tar.xz | head -n 1)
    (cd "$cache/src" && tar xJf "$orig" --wildcards '*/llvm/test/tools/llvm-profgen/*')
    testdir=$(ls -d "$cache"/src/llvm-toolchain-19_*/llvm/test/tools/llvm-profgen | head -n 1)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/compat_llvm_profgen.XXXXXX")
# KEEP=1: leave the outputs of both sides for a look (the path is printed)
if [ -n "${KEEP:-}" ]; then echo "compat_llvm_profgen: outputs in $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/ref" "$work/ours"
{
    echo "# pgokit llvm-profgen against llvm-profgen-19 on llvm-profgen's lit tests"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ); pgokit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "- llvm-profgen: $(llvm-profgen-19 --version 2>&1 | sed -n 's/.*LLVM version //p' | head -n 1)," \
         "tests from $(basename "$(dirname "$(dirname "$(dirname "$(dirname "$testdir")")")")") (Debian source package)"
    echo "- command: \`bench/compat_llvm_profgen.sh -o bench/results/...\`"
    echo "- every RUN line runs as lit would run it, once with llvm-profgen = \`pgokit llvm-profgen\`,"
    echo "  once with llvm-profgen-19; each profile is compared: agrees = identical, or the same profile once both"
    echo "  are read back by \`llvm-profdata-19 merge --sample --text\`; differs = the similarity from"
    echo "  \`llvm-profdata-19 overlap --sample\` (unsymbolized text: the share of lines alike)."
    echo "- a run whose stdout (or stderr, \`2>&1 |\`) the test pipes into FileCheck (dumps, warnings, --help) is"
    echo "  judged by the test's own FileCheck command (/usr/lib/llvm-19/bin/FileCheck, the RUN line's options and"
    echo "  prefix, on the test file), on each side's output: agrees = pgokit and llvm-profgen-19 both pass;"
    echo "  differs = pgokit fails (FileCheck's first error); where pgokit passes and llvm-profgen-19 cannot run the"
    echo "  line (\`--debug-only\` in a release build) the test counts apart, not as agreeing."
    echo
    python3 "$here/lib/compat_lit.py" "$testdir" "$work" "$PGOKIT"
} > "$work/report.md"
if [ -n "$report" ]; then cp "$work/report.md" "$report"; fi
cat "$work/report.md"
