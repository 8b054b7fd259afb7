#!/bin/bash
# cli_escapes: names read from profiles and stores reach a person's terminal
# with their control bytes, escape sequences, C1 controls and bidi overrides
# escaped; a file or a pipe of `show --counts` still gets the exact profile.
source "$(dirname "$0")/../lib.sh"
cd "$T"
ESC=$'\e'
# an OSC title change, an SGR colour, a C1 CSI (U+009B) and a right-to-left override (U+202E)
evil="main${ESC}]0;pwned"$'\a'"${ESC}[31mred"$'\xc2\x9b'"2J"$'\xe2\x80\xae'"cba"
# A text profile cannot hold control bytes: the name goes into a binary
# profile (LLVM extbinary, uncompressed) in place of a placeholder as long.
mk_prof() { # NAME OUT
  local ph
  ph=$(printf '%s' "$1" | python3 -c 'import sys; print("Z" * len(sys.stdin.buffer.read()))')
  printf 'other:50:5\n 1: 50\n%s:1000:10\n 1: 600\n 2: 400\n' "$ph" > ph.prof
  "$PGOKIT" convert ph.prof -o ph.extbin
  python3 -c 'import sys; d = open("ph.extbin", "rb").read(); ph, ev = sys.argv[1].encode(), sys.argv[2].encode("utf-8", "surrogateescape")
assert d.count(ph) == 1; open(sys.argv[3], "wb").write(d.replace(ph, ev))' "$ph" "$1" "$2"
}
mk_prof "$evil" evil.prof
# valid UTF-8 that still acts on a terminal: a text profile may hold it
evil8="main"$'\xc2\x9b'"2J"$'\xe2\x80\xae'"cba"
mk_prof "$evil8" evil8.prof
no_raw() { # FILE: true when it holds no raw ESC, BEL, C1 CSI or U+202E
  python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); sys.exit(any(x in d for x in (b"\x1b", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae")))' "$1"
}
holds() { # FILE BYTES: true when FILE holds BYTES exactly
  python3 -c 'import sys; sys.exit(sys.argv[2].encode("utf-8", "surrogateescape") not in open(sys.argv[1], "rb").read())' "$1" "$2"
}
"$PGOKIT" show evil.prof > show.txt 2>&1
check "show: the profile is read" grep -q 'main' show.txt
check "show: no raw control sequence" no_raw show.txt
check "show: escaped visibly" grep -qF 'main\x1b]0;pwned\x07\x1b[31mred\xc2\x9b2J\xe2\x80\xaecba' show.txt
"$PGOKIT" show --hot-func-list evil.prof > hot.txt 2>&1
check "show (hot list): no raw control sequence" no_raw hot.txt
# --counts into a file: the exact text profile (a program reads it back)
"$PGOKIT" show --counts evil8.prof > counts.txt 2>&1
check "show --counts to a file: the exact name (for programs)" holds counts.txt "$evil8"
# --counts on a terminal (script(1) gives it one)
if command -v script > /dev/null; then
  script -qec "'$PGOKIT' show --counts '$T/evil8.prof'" /dev/null > tty.txt 2>&1
  check "show --counts on a terminal: the profile is shown" grep -qF 'main\xc2\x9b2J\xe2\x80\xaecba' tty.txt
  check "show --counts on a terminal: no raw control sequence" no_raw tty.txt
fi

# store list: a binary name given at add time
printf 'volatile long n; int main(void){for (long i = 0; i < 3000000; i++) n += i; return 0;}\n' | cc -O1 -g -x c - -o prog
"$PGOKIT" record -q -o p.data -- ./prog > /dev/null 2>&1
"$PGOKIT" store init -q s.db
"$PGOKIT" store add -q s.db --binary prog --name "$evil" --host "h${ESC}[2Jx" p.data
check "store add with a hostile name" test $? -eq 0
"$PGOKIT" store list s.db > list.txt 2>&1
check "store list: the binary is listed" grep -q 'pwned' list.txt
check "store list: no raw control sequence" no_raw list.txt
finish
