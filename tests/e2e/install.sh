#!/usr/bin/env bash
# install.sh — `make install` into a temporary PREFIX, then the demo loop run
# with the installed files only (record --emulate with the plugin found in
# PREFIX/lib/pgokit/, profgen, a clang rebuild that takes the profile), the
# runtime through pkg-config (an instrumented program, its raw profile read
# by the installed pgokit), the man pages (groff without warnings, man -l),
# bash completion, --version and `help CMD`; `make uninstall` removes every
# file install wrote. A second install with DESTDIR stages the same files.
source "$(dirname "$0")/../lib.sh"
need make qemu-x86_64 clang-19 gcc-12 groff pkg-config
[ -f "$PK_BUILD/pgokit-lbr.so" ] || { echo "skipped: $PK_BUILD/pgokit-lbr.so not built"; exit 77; }
BUILD_REL=$(realpath --relative-to="$PK_ROOT" "$PK_BUILD")
P=$T/prefix
make -s -C "$PK_ROOT" BUILD="$BUILD_REL" install PREFIX="$P" > "$T/install.log" 2>&1
check "make install PREFIX=$P" test $? -eq 0 -a -x "$P/bin/pgokit"
find "$P" -type f | sort > "$T/installed.txt"
for f in bin/pgokit lib/pgokit/pgokit-lbr.so lib/libpgokit_rt.so lib/libpgokit_rt.a lib/pkgconfig/pgokit-rt.pc \
         include/pgokit_rt.h share/man/man1/pgokit.1 share/man/man1/pgokit-record.1 \
         share/bash-completion/completions/pgokit; do
  grep -qx "$P/$f" "$T/installed.txt" || fail "installed: $f"
done
ncmds=$("$P/bin/pgokit" help | awk '/^commands:/ {f = 1; next} f && !NF {exit} f {n++} END {print n}')
check_eq "a man page per subcommand, plus pgokit.1" $((ncmds + 1)) "$(ls "$P/share/man/man1" | wc -l)"

# ---- only the installed files from here: a clean PATH, no plugin override ----
cd "$T" || exit 1
unset PGOKIT_LBR_PLUGIN
export PATH="$P/bin:/usr/bin:/bin"
check_eq "pgokit found in the prefix" "$P/bin/pgokit" "$(command -v pgokit)"
check "--version: VERSION's release" bash -c "pgokit --version | grep -q '^pgokit $(cat "$PK_ROOT/VERSION")\\b'"
check_eq "help CMD = CMD --help" "$(pgokit show --help)" "$(pgokit help show)"
pgokit help nosuch > /dev/null 2>&1
check_eq "help of an unknown command: usage error" 2 $?

SRC=$PK_ROOT/tests/programs/profgen_demo.c
clang-19 -O2 -g "$SRC" -o demo || { fail "build demo"; finish; exit; }
pgokit record --emulate --period 1009 -o demo.data -- ./demo 3 > demo.out 2> record.err
check "record --emulate with the installed plugin" test $? -eq 0 -a -s demo.data
check_eq "the program's output is unchanged" "$(./demo 3)" "$(cat demo.out)"
pgokit profgen -q --binary demo --perf demo.data -o demo.prof
check "profgen" test -s demo.prof
clang-19 -O2 -g -fprofile-sample-use=demo.prof -S -emit-llvm "$SRC" -o demo.ll 2> clang.err
check "clang takes the profile (function entry counts in the IR)" grep -q 'function_entry_count' demo.ll
clang-19 -O2 -g -S -emit-llvm "$SRC" -o base.ll
check "(and without the profile there are none)" bash -c "! grep -q function_entry_count base.ll"
mv "$P/lib/pgokit/pgokit-lbr.so" "$T/moved.so"
pgokit record --emulate -o x.data -- ./demo 1 > /dev/null 2> noplug.err
check "the plugin was the one in lib/pgokit (moved away: record fails)" grep -q "cannot find pgokit-lbr.so" noplug.err
mv "$T/moved.so" "$P/lib/pgokit/pgokit-lbr.so"

# ---- the runtime through pkg-config ----
export PKG_CONFIG_PATH=$P/lib/pkgconfig
check_eq "pkg-config finds the runtime" "-I$P/include -L$P/lib -lpgokit_rt" "$(pkg-config --cflags --libs pgokit-rt | xargs)"
RT=$PK_ROOT/tests/programs
gcc-12 -O2 -g $(pkg-config --variable=instrument_cflags pgokit-rt) $(pkg-config --cflags pgokit-rt) \
  -c "$RT/rt_order.c" "$RT/rt_order_b.c" &&
  gcc-12 -o rtprog rt_order.o rt_order_b.o $(pkg-config --libs pgokit-rt) -Wl,-rpath,"$P/lib" -lpthread
check "an instrumented program builds against the installed runtime" test -x rtprog
check "it loads the installed libpgokit_rt.so" bash -c "ldd rtprog | grep -q '$P/lib/libpgokit_rt.so'"
PGOKIT_RT_FILE=run%p.pgoraw ./rtprog > /dev/null
raw=$(ls run*.pgoraw 2>/dev/null | head -n 1)
check "the instrumented run wrote its raw profile" test -n "$raw"
check_eq "the installed pgokit reads it: first functions" "main alpha beta" \
  "$(pgokit show "$raw" | awk '$1 == "rec" {print $6}' | head -n 3 | xargs)"

# ---- man pages and completion ----
bad=""
for m in "$P"/share/man/man1/*.1; do
  groff -man -Tutf8 -ww -z "$m" 2> groff.err || bad="$bad $(basename "$m")"
  [ -s groff.err ] && bad="$bad $(basename "$m"):warnings"
done
check_eq "every man page renders without groff warnings" "" "$bad"
if command -v man > /dev/null; then
  MANWIDTH=100 MANPAGER=cat man -l "$P/share/man/man1/pgokit-show.1" > show.man 2>&1
  check "man -l pgokit-show.1 shows its options" grep -q -- '--hot-func-list' show.man
fi
# a line of today's `record --help`, whatever it says, is in the page
helpline=$("$P/bin/pgokit" record --help 2>&1 | grep -m1 -- '--exact-counts FILE' | tr -s ' ' | sed 's/^ //')
check "the man page holds the --help text (one source)" bash -c \
  "groff -man -Tascii -P-c '$P/share/man/man1/pgokit-record.1' 2>/dev/null | tr -s ' ' | grep -qF -- '${helpline:-no help line}'"
comp=$(bash --norc -c "source '$P/share/bash-completion/completions/pgokit' && complete -p pgokit &&
  COMP_WORDS=(pgokit pro); COMP_CWORD=1; _pgokit; echo \"\${COMPREPLY[*]}\";
  COMP_WORDS=(pgokit show --to); COMP_CWORD=2; _pgokit; echo \"\${COMPREPLY[*]}\";
  COMP_WORDS=(pgokit merge --sk); COMP_CWORD=2; _pgokit; echo \"\${COMPREPLY[*]}\"" 2>&1)
check "completion loads in bash" grep -q "complete .*-F _pgokit pgokit" <<<"$comp"
check_eq "completion: subcommands" "probes profgen" "$(sed -n 2p <<<"$comp")"
check_eq "completion: a subcommand's options" "--top --topn" "$(sed -n 3p <<<"$comp")"
check_eq "completion: merge's temporal options" "--skip-bad" "$(sed -n 4p <<<"$comp")"

# ---- uninstall removes everything install wrote ----
cd "$PK_ROOT" || exit 1
make -s BUILD="$BUILD_REL" uninstall PREFIX="$P" > "$T/uninstall.log" 2>&1
check_eq "make uninstall leaves no file" "" "$(find "$P" -type f)"
check "lib/pgokit/ removed" test ! -e "$P/lib/pgokit"

# ---- DESTDIR stages the same files under a prefix ----
make -s BUILD="$BUILD_REL" install DESTDIR="$T/stage" PREFIX=/opt/pgokit > "$T/stage.log" 2>&1
check_eq "DESTDIR install: the same files" "$(sed "s|^$P/||" "$T/installed.txt")" \
  "$(find "$T/stage/opt/pgokit" -type f | sort | sed "s|^$T/stage/opt/pgokit/||")"
check "DESTDIR install: the .pc names the final prefix" grep -q '^prefix=/opt/pgokit$' "$T/stage/opt/pgokit/lib/pkgconfig/pgokit-rt.pc"
make -s BUILD="$BUILD_REL" uninstall DESTDIR="$T/stage" PREFIX=/opt/pgokit > /dev/null 2>&1
check_eq "DESTDIR uninstall leaves no file" "" "$(find "$T/stage" -type f)"
finish
