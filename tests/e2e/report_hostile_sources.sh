#!/bin/bash
# report_hostile_sources: the source view reads only regular files of a
# bounded size under the compilation directories (or --source-root), so a
# binary whose DWARF names a device, a FIFO, /proc, a huge file or a file
# elsewhere neither hangs the report, nor grows it without bound, nor puts
# those bytes into the page.
source "$(dirname "$0")/../lib.sh"
need cc timeout
mkdir -p "$T/build" "$T/elsewhere"
cd "$T/build"

echo 'int good_marker_GOODSRC = 1;' > good.c
printf 'SECRET_OUTSIDE_8d1f\n' > "$T/elsewhere/outside.c"
printf 'SECRET_LINKED_77ab\n' > "$T/elsewhere/linked.c"
ln -s "$T/elsewhere/linked.c" link.c
# under the compilation directory, but hidden (a key in ~/.ssh when the
# DWARF says the compilation directory is a home directory)
mkdir -p .ssh && printf 'SECRET_HIDDEN_3e9d\n' > .ssh/id_key
mkfifo fifo.c
truncate -s 1G big.c
# each function's DW_AT_decl_file is whatever its #line says
{
  echo '#line 1 "'"$T"'/build/good.c"'
  echo 'int f_good(int x) { return x + 1; }'
  for f in zero:/dev/zero fifo:"$T"/build/fifo.c environ:/proc/self/environ big:"$T"/build/big.c \
           outside:"$T"/elsewhere/outside.c link:"$T"/build/link.c hidden:"$T"/build/.ssh/id_key; do
    echo "#line 1 \"${f#*:}\""
    echo "int f_${f%%:*}(int x) { return x * 3; }"
  done
  echo '#line 100 "'"$T"'/build/good.c"'
  echo 'int main(int c, char **v) { (void)v; return f_good(c) + f_zero(c) + f_fifo(c) + f_environ(c) + f_big(c) + f_outside(c) + f_link(c) + f_hidden(c); }'
} > hostile.c
cc -O0 -g -o hostile hostile.c
check "the binary names the hostile files" bash -c "llvm-dwarfdump-19 --debug-line hostile 2>/dev/null | grep -q /dev/zero || objdump --dwarf=rawline hostile | grep -q zero"
{
  for f in good zero fifo environ big outside link hidden; do printf 'f_%s:1000:10\n 0: 500\n 1: 500\n' $f; done
} > hostile.prof

export PGOKIT_TEST_TOKEN=ENVSECRET_c0ffee_5150
start=$SECONDS
( ulimit -v 4000000; timeout 120 "$PGOKIT" report hostile.prof --binary hostile -o page.html ) > out.txt 2> err.txt
rc=$?
check_eq "report finishes (not killed, not hung)" 0 "$rc"
check "report took bounded time" test $((SECONDS - start)) -lt 120
check "the page is small" test "$(stat -c %s page.html 2>/dev/null || echo 999999999)" -lt 5000000
check "the good source file is shown" grep -q 'good_marker_GOODSRC' page.html
check "no environment in the page" bash -c "test -s page.html && ! grep -q ENVSECRET_c0ffee page.html"
check "no file from outside the compilation directory" bash -c "test -s page.html && ! grep -q SECRET_OUTSIDE_8d1f page.html"
check "no file reached through a symlink leaving it" bash -c "test -s page.html && ! grep -q SECRET_LINKED_77ab page.html"
check "no hidden file under the compilation directory" bash -c "test -s page.html && ! grep -q SECRET_HIDDEN_3e9d page.html"
check "the reasons are listed: hidden" grep -q 'a hidden file or in a hidden directory' page.html
check "no device bytes (NULs)" bash -c "test -s page.html && ! grep -q 'u0000' page.html"
check "the reasons are listed: not a regular file" grep -q 'not a regular file' page.html
check "the reasons are listed: size" grep -q 'larger than the limit' page.html
check "the reasons are listed: outside" grep -q 'outside the compilation directories' page.html
check "the reasons are listed: /proc" grep -q 'pseudo file system' page.html

# --source-root widens it
timeout 120 "$PGOKIT" report -q hostile.prof --binary hostile --source-root "$T/elsewhere" -o wide.html 2> err2.txt
check "--source-root: the outside file is shown" grep -q SECRET_OUTSIDE_8d1f wide.html
check "--source-root: the link target is shown" grep -q SECRET_LINKED_77ab wide.html
check "--source-root: /proc still refused" bash -c "test -s wide.html && ! grep -q ENVSECRET_c0ffee wide.html"
finish
