#!/usr/bin/env python3
"""cfi_frames.py READELF_FRAMES_INTERP LLVM_OBJDUMP: the functions (FDEs) of
a binary that have a frame and those that set up a frame pointer, counted
from readelf --debug-dump=frames-interp and llvm-objdump -d
--no-show-raw-insn, independently of pgokit's decoders. Prints the line
`pgokit decode --cfi --stats` prints:
  fdes N framed M with-frame-pointer F bytes B framed-bytes MB with-frame-pointer-bytes FB
The rule (see src/binary/cfi.h): a function has a frame when its table has
more than one row; it sets up a frame pointer when one of its first 8 rows
has its CFA on rbp/x29, or when its entry holds the prologue:
  x86-64   [endbr64] push %rbp; mov %rsp,%rbp
  AArch64  [bti c|paciasp|pacibsp]{0,2} [sub sp, sp, #N]
           stp x29, x30, [sp, #-N]! (or [sp, #N] after the sub),
           then `mov x29, sp` or `add x29, sp, #N` within the first 8 words."""
import re, sys

readelf, objdump = sys.argv[1], sys.argv[2]

fdes = []  # [begin, end, rows, cfa_on_fp_early]
for line in open(readelf, errors='replace'):
    m = re.match(r'^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+)', line)
    if m:
        fdes.append([int(m.group(1), 16), int(m.group(2), 16), 0, False])
        continue
    if re.match(r'^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ CIE', line):
        fdes.append(None)  # a CIE's rows belong to no FDE
        continue
    m = re.match(r'^([0-9a-f]{8,}) +(\S+)', line)
    if m and fdes and fdes[-1] is not None:
        f = fdes[-1]
        if f[2] < 8 and re.match(r'^(rbp|x29)\+', m.group(2)):
            f[3] = True
        f[2] += 1
fdes = [f for f in fdes if f is not None]

insns = {}  # address -> (mnemonic, operands)
order = []
for line in open(objdump, errors='replace'):
    m = re.match(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$', line)
    if m:
        a = int(m.group(1), 16)
        insns[a] = (m.group(2), re.sub(r'\s+', ' ', m.group(3).strip()))
        order.append(a)
order.sort()
index = {a: i for i, a in enumerate(order)}

def following(a, n):
    i = index.get(a)
    return [] if i is None else [insns[x] for x in order[i:i + n] if x < a + 4 * n + 16]

def x86_prologue(a):
    s = following(a, 3)
    if s and s[0][0] == 'endbr64':
        s = s[1:]
    return len(s) >= 2 and s[0] == ('pushq', '%rbp') and s[1] == ('movq', '%rsp, %rbp')

def a64_prologue(a):
    s = following(a, 8)
    i = 0
    while i < 2 and i < len(s) and (s[i] in (('bti', 'c'),) or s[i][0] in ('paciasp', 'pacibsp')):
        i += 1
    sub = i < len(s) and s[i][0] == 'sub' and s[i][1].startswith('sp, sp, #')
    if sub:
        i += 1
    if i >= len(s) or s[i][0] != 'stp':
        return False
    ops = s[i][1]
    if not (re.match(r'^x29, x30, \[sp, #-?0x[0-9a-f]+\]!$', ops) or
            (sub and re.match(r'^x29, x30, \[sp(, #0x[0-9a-f]+)?\]$', ops))):
        return False
    for mn, op in s[i + 1:8]:
        if (mn, op) == ('mov', 'x29, sp') or (mn == 'add' and re.match(r'^x29, sp, #0x[0-9a-f]+$', op)):
            return True
    return False

arm = any(mn in ('stp', 'ldp', 'bl', 'adrp') for mn, _ in insns.values())
n = framed = fp = 0
nb = framed_b = fp_b = 0
for begin, end, rows, cfa_fp in fdes:
    if end <= begin:
        continue
    n += 1
    nb += end - begin
    sets_fp = cfa_fp or (a64_prologue(begin) if arm else x86_prologue(begin))
    if rows > 1 or sets_fp:
        framed += 1
        framed_b += end - begin
    if sets_fp:
        fp += 1
        fp_b += end - begin
print(f'fdes {n} framed {framed} with-frame-pointer {fp} bytes {nb} framed-bytes {framed_b} '
      f'with-frame-pointer-bytes {fp_b}')
