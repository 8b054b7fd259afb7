#!/usr/bin/env python3
"""Instructions a binary's .text executed, from pgokit's exact counts, in total
and by kind: exact_insns.py PGOKIT EXACT BINARY -> "total=N call=N ret=N ...".
(.text only: the PLT stubs run as often in every build of one program.)

The exact counts (record --exact-counts) hold fall-through ranges with their
execution counts; every instruction llvm-objdump-19 lists inside a range ran
that many times. The kinds put the two targets' instructions side by side:
  call, ret      call / bl, blr;  ret
  jmp, jcc       unconditional / conditional branches (cbz, tbz on AArch64)
  save, restore  push / pop;  stp / ldp addressing sp (prologue, epilogue)
  data           mov, lea, and on AArch64 the loads and stores (x86 folds
                 them into mov) and adrp
  cmp            cmp, test / cmp, cmn, tst, ccmp
  other          the rest (arithmetic, vector, nop, ...)
"""
import bisect, re, subprocess, sys

def kind_x86(m, ops):
    if m.startswith('call'): return 'call'
    if m.startswith('ret'): return 'ret'
    if m.startswith('jmp'): return 'jmp'
    if m.startswith('j'): return 'jcc'
    if m.startswith('push'): return 'save'
    if m.startswith('pop'): return 'restore'
    if m.startswith(('mov', 'lea')): return 'data'
    if m.startswith(('cmp', 'test')): return 'cmp'
    return 'other'

def kind_a64(m, ops):
    if m in ('bl', 'blr') or m.startswith('blra'): return 'call'
    if m.startswith('ret'): return 'ret'
    if m in ('b', 'br') or m.startswith('bra'): return 'jmp'
    if m.startswith('b.') or m in ('cbz', 'cbnz', 'tbz', 'tbnz'): return 'jcc'
    if m == 'stp' and 'sp' in ops: return 'save'
    if m == 'ldp' and 'sp' in ops: return 'restore'
    if m.startswith(('mov', 'ld', 'st')) or m == 'adrp': return 'data'
    if m.startswith(('cmp', 'cmn', 'tst', 'ccmp', 'ccmn')): return 'cmp'
    return 'other'

KINDS = ('call', 'ret', 'jmp', 'jcc', 'save', 'restore', 'data', 'cmp', 'other')

def main():
    pgokit, exact, binary = sys.argv[1:4]
    dis = subprocess.run(['llvm-objdump-19', '-d', '--no-show-raw-insn', '--section=.text', binary],
                         capture_output=True, text=True, check=True).stdout
    kind = kind_a64 if 'file format elf64-littleaarch64' in dis else kind_x86
    addrs, prefix = [], {k: [0] for k in KINDS}
    insn = re.compile(r'\s*([0-9a-f]+):\s+(\S+)\s*(.*)')
    for line in dis.splitlines():
        m = insn.match(line)
        if not m:
            continue
        addrs.append(int(m.group(1), 16))
        k = kind(m.group(2), m.group(3))
        for name in KINDS:
            prefix[name].append(prefix[name][-1] + (name == k))
    ran = dict.fromkeys(KINDS, 0)
    in_binary = False
    out = subprocess.run([pgokit, 'record', '--print-exact', exact],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith('binary '):
            in_binary = line.split()[1] == binary
            continue
        s = line.strip()
        if not in_binary or ':' not in s or '->' in s or '-' not in s:
            continue
        span, n = s.rsplit(':', 1)
        lo, hi = (int(x, 16) for x in span.split('-'))
        i, j = bisect.bisect_left(addrs, lo), bisect.bisect_right(addrs, hi)
        for name in KINDS:
            ran[name] += int(n) * (prefix[name][j] - prefix[name][i])
    print('total=%d' % sum(ran.values()), ' '.join('%s=%d' % (k, ran[k]) for k in KINDS))

if __name__ == '__main__':
    main()
