#!/usr/bin/env python3
"""Generates a C program with many large functions for the function-ordering
tests: N functions f<i> (each padded with a NOP sled so .text is large), a
common start-up set and per-mode sets scattered over the whole text, executed
in a fixed order by main(argc, argv) (mode = argv[1]). A few functions are
static, so local symbols are covered too.
usage: layout_gen.py N PAD COMMON PER_MODE MODES > prog.c"""
import sys

n, pad, common, per_mode, modes = (int(x) for x in sys.argv[1:6])
state = 12345
def rnd(k):
    global state
    state = (state * 1103515245 + 12345) & 0x7fffffff
    return state % k

def pick(count, exclude):
    out = []
    while len(out) < count:
        f = rnd(n)
        if f not in exclude and f not in out:
            out.append(f)
    return out

common_set = pick(common, set())
mode_sets = []
used = set(common_set)
for m in range(modes):
    s = pick(per_mode, used)
    used.update(s)
    mode_sets.append(s)

print("#include <stdlib.h>\n#include <stdio.h>")
print("static volatile int sink;")
for i in range(n):
    st = "static " if i % 97 == 5 else ""
    print(f"{st}__attribute__((noinline)) int f{i}(int x) {{ "
          f"__asm__ volatile(\".fill {pad},1,0x90\"); sink += x; return x + {i}; }}")
print("typedef int (*fn)(int);")
print("fn table[] = {" + ",".join(f"f{i}" for i in range(n)) + "};")
print("static const int common_set[] = {" + ",".join(map(str, common_set)) + "};")
for m, s in enumerate(mode_sets):
    print(f"static const int mode{m}[] = {{" + ",".join(map(str, s)) + "};")
print("static const int *modes[] = {" + ",".join(f"mode{m}" for m in range(modes)) + "};")
print("int main(int argc, char **argv) {")
print("  int mode = argc > 1 ? atoi(argv[1]) : 0, r = 0;")
print(f"  if (mode < 0 || mode >= {modes}) mode = 0;")
# interleave: half of the common set, the mode set, the rest of the common set
print(f"  for (int i = 0; i < {common // 2}; i++) r += table[common_set[i]](i);")
print(f"  for (int i = 0; i < {per_mode}; i++) r += table[modes[mode][i]](i);")
print(f"  for (int i = {common // 2}; i < {common}; i++) r += table[common_set[i]](i);")
print("  printf(\"%d\\n\", r & 0xff);\n  return 0;\n}")
