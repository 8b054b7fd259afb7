#!/usr/bin/env python3
"""cfi_rows.py READELF_FRAMES_INTERP PGOKIT_DECODE_CFI: every row of every
FDE as readelf --debug-dump=frames-interp interprets .eh_frame, checked
against `pgokit decode --cfi` at the same address: the CFA (register+offset
or exp) and each register column readelf prints ('u': no rule, which pgokit
prints as "same" or "undef"; c-N: saved at CFA-N; ra: the return-address
column; vector registers are not compared: pgokit keeps the rules of
registers 0-32, what unwinding reads). An FDE without instructions has its
CIE's initial row. Prints
"fdes N rows R same S" and one line per difference; exit 0."""
import re, sys

readelf, ours = sys.argv[1], sys.argv[2]

# pgokit: FDE ranges, each with its rows (start, cfa, {col: rule})
fdes = []
for line in open(ours):
    f = line.split()
    if not f:
        continue
    if f[0] == 'FDE':
        b, e = f[1].split('..')
        fdes.append((int(b, 16), int(e, 16), []))
        continue
    cols = dict(x.split('=', 1) for x in f[2:])
    fdes[-1][2].append((int(f[0], 16), f[1], cols))

def our_row(at):
    for b, e, rows in fdes:
        if b <= at < e:
            best = None
            for r in rows:
                if r[0] <= at:
                    best = r
            return best
    return None

def norm(v):
    return 'u' if v in ('same', 'undef', 's') else v

cies = {}        # offset -> (header, initial row)
n_fde = n_rows = same = 0
diffs = []
cur = None       # ('cie', off) or ('fde', begin)
header = None
lines = open(readelf, errors='replace').read().splitlines()
i = 0
pending = None   # an FDE whose table has not been seen (yet)

def check(at, cfa, cols):
    global n_rows, same
    n_rows += 1
    r = our_row(at)
    if r is None:
        diffs.append(f'{at:#x}: no row in pgokit')
        return
    ok = r[1] == cfa
    for col, val in cols.items():
        if re.match(r'^(v|xmm|d|q)\d+$', col):
            continue    # vector registers: rows keep registers 0-32 only
        if norm(r[2].get(col, 'same')) != norm(val):
            ok = False
    if ok:
        same += 1
    else:
        diffs.append(f'{at:#x}: readelf {cfa} {cols} / pgokit {r[1]} {r[2]}')

def close_pending():
    global pending
    if pending is not None:
        begin, cie = pending
        if cie in cies and cies[cie]:
            cfa, cols = cies[cie]
            check(begin, cfa, cols)
        pending = None

for line in lines:
    m = re.match(r'^([0-9a-f]+) [0-9a-f]+ ([0-9a-f]+) CIE', line)
    if m:
        close_pending()
        cur = ('cie', int(m.group(1), 16)); header = None
        cies[cur[1]] = None
        continue
    m = re.match(r'^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)', line)
    if m:
        close_pending()
        n_fde += 1
        cur = ('fde', int(m.group(2), 16)); header = None
        pending = (int(m.group(2), 16), int(m.group(1), 16))
        continue
    # a register rule reads "r1 (rdx)": the number, then the name pgokit prints
    s = re.sub(r'\br\d+ \((\w+)\)', r'\1', line).split()
    if 'ZERO terminator' in line:
        close_pending(); cur = None; continue
    if not s or cur is None:
        continue
    if s[0] == 'LOC':
        header = s[2:]    # LOC CFA regs...
        continue
    if header is not None and re.match(r'^[0-9a-f]{8,}$', s[0]):
        cols = dict(zip(header, s[2:]))
        if cur[0] == 'cie':
            cies[cur[1]] = (s[1], cols)
        else:
            pending = None
            check(int(s[0], 16), s[1], cols)
close_pending()
print(f'fdes {n_fde} rows {n_rows} same {same}')
for d in diffs[:20]:
    print('diff', d)
