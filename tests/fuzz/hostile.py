#!/usr/bin/env python3
"""hostile.py OUT — small inputs that declare huge things (issue 15 item 5),
written as OUT/<harness>/bad-<what>: a declared size of 2^60, a billion-entry
branch stack, a DWARF unit claiming 4 GB, a profile nested a million levels
deep (cut where the readers' depth limits stop it), counts that would size
allocations. Each must be an error naming the file and an offset, or a
bounded allocation: never an out-of-memory kill. The fuzz harnesses replay
them under -malloc_limit_mb=512 and tests/e2e/fuzz_smoke.sh runs the command
line on them (exit 1, a position in the message, no output file).
Made at test time (seeds.sh calls this), so nothing binary is committed."""
import os
import struct
import sys
import zlib

OUT = sys.argv[1]
P60 = 1 << 60


def put(harness, name, data):
    os.makedirs(os.path.join(OUT, harness), exist_ok=True)
    with open(os.path.join(OUT, harness, 'bad-' + name), 'wb') as f:
        f.write(data)


# ---------------------------------------------------------------- perf.data
def perf_attr(sample_type, branch_sample_type=0):
    a = bytearray(128)
    struct.pack_into('<IIQQQQQ', a, 0, 1, 128, 0, 4000, sample_type, 0, 1 << 18)  # sample_id_all
    struct.pack_into('<Q', a, 72, branch_sample_type)
    return bytes(a)


def perf_file(attr, records, data_size=None):
    ids = struct.pack('<Q', 1)
    ids_off = 104
    attrs_off = ids_off + len(ids)
    data_off = attrs_off + len(attr) + 16
    data = b''.join(records)
    h = struct.pack('<8sQQQQQQQQ', b'PERFILE2', 104, len(attr) + 16, attrs_off, len(attr) + 16, data_off,
                    len(data) if data_size is None else data_size, 0, 0)
    h += bytes(104 - len(h))
    return h + ids + attr + struct.pack('<QQ', ids_off, len(ids)) + data


IP, TID, TIME, CALLCHAIN, PERIOD, BRANCH = 1, 2, 4, 32, 256, 2048
st = IP | TID | TIME | PERIOD | BRANCH
# a sample whose branch stack claims a billion entries (24 GB), 3 present
br = struct.pack('<QIIQQQ', 0x401000, 7, 7, 1, 1, 1_000_000_000) + struct.pack('<QQQ', 0x401010, 0x401000, 0) * 3
put('perf_data', 'billion-entry-branch-stack',
    perf_file(perf_attr(st, 1 | 8), [struct.pack('<IHH', 9, 2, 8 + len(br)) + br]))
# a call chain of 2^60 entries
cc = struct.pack('<QIIQQQ', 0x401000, 7, 7, 1, 1, P60) + struct.pack('<Q', 0x401000) * 2
put('perf_data', 'call-chain-2p60',
    perf_file(perf_attr(IP | TID | TIME | PERIOD | CALLCHAIN), [struct.pack('<IHH', 9, 2, 8 + len(cc)) + cc]))
# a data section of 2^60 bytes
put('perf_data', 'data-size-2p60', perf_file(perf_attr(st), [struct.pack('<IHH', 68, 0, 8)], data_size=P60))
# an AUXTRACE record whose payload claims 2^60 bytes after it
aux = struct.pack('<IHHQQQIII', 71, 0, 48, P60, 0, 0, 0, 0, 0) + bytes(4)
put('perf_data', 'auxtrace-payload-2p60', perf_file(perf_attr(st), [aux]))


# ---------------------------------------------------------------- ELF / DWARF
def elf(sections):
    """sections: [(name, type, flags, data)] -> ELF64 x86-64 with a .shstrtab."""
    names = b'\0' + b''.join(n.encode() + b'\0' for n, _, _, _ in sections) + b'.shstrtab\0'
    body, offs, at = b'', [], 64
    for _, _, _, d in sections:
        offs.append(at + len(body))
        body += d + bytes(-len(d) % 8)
    shstr_off = at + len(body)
    body += names + bytes(-len(names) % 8)
    shoff = at + len(body)
    n = len(sections) + 2
    eh = b'\x7fELF' + bytes([2, 1, 1]) + bytes(9)
    eh += struct.pack('<HHIQQQIHHHHHH', 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64, n, n - 1)
    sh = bytes(64)
    ni = 1
    for (name, typ, flags, d), off in zip(sections, offs):
        sh += struct.pack('<IIQQQQIIQQ', ni, typ, flags, 0, off, len(d), 0, 0, 1, 0)
        ni += len(name) + 1
    sh += struct.pack('<IIQQQQIIQQ', ni, 3, 0, 0, shstr_off, len(names), 0, 0, 1, 0)
    return eh + body + sh


abbrev = bytes([1, 0x11, 0, 0x03, 0x08, 0, 0, 0])  # DW_TAG_compile_unit, no children, DW_AT_name string
# a 64-bit unit claiming 4 GB (2^32 bytes) in a section of a few bytes
info64 = struct.pack('<IQHQB', 0xffffffff, 1 << 32, 4, 0, 8) + b'\x01cu\0'
put('elf_dwarf', 'dwarf-unit-claims-4gb',
    elf([('.debug_info', 1, 0, info64), ('.debug_abbrev', 1, 0, abbrev)]))
# a 32-bit unit length just below the reserved range (~4 GB)
info32 = struct.pack('<IHIB', 0xffffffef, 4, 0, 8) + b'\x01cu\0'
put('elf_dwarf', 'dwarf-unit-claims-4gb-32bit',
    elf([('.debug_info', 1, 0, info32), ('.debug_abbrev', 1, 0, abbrev)]))
# a zlib-compressed section whose header promises 2^60 bytes
chdr = struct.pack('<IIQQ', 1, 0, P60, 1) + zlib.compress(b'\0' * 64)
put('elf_dwarf', 'compressed-section-2p60',
    elf([('.debug_info', 1, 0x800, chdr), ('.debug_abbrev', 1, 0, abbrev)]))
# a line table whose header length claims 2^60 (64-bit DWARF)
line = struct.pack('<IQHQ', 0xffffffff, 2 + 8 + 24, 4, P60) + bytes(24)
cu = b'\x01cu\0' + struct.pack('<IQQ', 0, 0x1000, 0x100)     # name, stmt_list, low_pc, high_pc
info = struct.pack('<IHIB', 7 + len(cu), 4, 0, 8) + cu
put('elf_dwarf', 'line-header-2p60',
    elf([('.debug_info', 1, 0, info),
         ('.debug_abbrev', 1, 0, bytes([1, 0x11, 0, 0x03, 0x08, 0x10, 0x17, 0x11, 0x01, 0x12, 0x07, 0, 0, 0])),
         ('.debug_line', 1, 0, line)]))


# a DWARF 5 skeleton unit whose .dwo is /dev/zero (read until memory ran out)
# and a debug link to a FIFO-like device: only regular files are opened
skel_abbrev = bytes([1, 0x4a, 0, 0x76, 0x08, 0x11, 0x01, 0x12, 0x07, 0, 0, 0])
die = b'\x01' + b'/dev/zero\0' + struct.pack('<QQ', 0x1000, 0x100)
hdr = struct.pack('<HBBIQ', 5, 4, 8, 0, 0x1234)
put('elf_dwarf', 'dwo-name-dev-zero',
    elf([('.debug_info', 1, 0, struct.pack('<I', len(hdr) + len(die)) + hdr + die),
         ('.debug_abbrev', 1, 0, skel_abbrev)]))

# ---------------------------------------------------------------- profiles
def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


# GCC .afdo nested a million levels deep (the readers stop at 1024: the file
# holds 1100 levels, enough to reach the limit)
g = struct.pack('<III', 0x67636461, 2, 0)
strings = struct.pack('<I', 2) + struct.pack('<I', 2) + b'f\0' + struct.pack('<I', 2) + b'g\0'
g += struct.pack('<II', 0xaa000000, (len(strings) + 3) // 4) + strings
body = struct.pack('<QI', 1, 0)                     # head, name index 0 ("f")
for _ in range(1100):
    body += struct.pack('<II', 0, 1) + struct.pack('<II', 1 << 16, 1)  # no positions, 1 callsite -> "g"
body += struct.pack('<II', 0, 0)
g += struct.pack('<III', 0xac000000, len(body) // 4, 1) + body
put('prof_gcc', 'million-nested-inlinees', g)

# extbinary whose name table claims 2^60 names, and a binary profile whose
# function claims 2^60 body records
magic_ext = uleb(0x5350524f46343200 | 0x04) + uleb(103)
names = uleb(P60) + b'f\0'
table_end = len(magic_ext) + 8 + 32
put('prof_extbinary', 'name-table-2p60',
    magic_ext + struct.pack('<QQQQQ', 1, 2, 0, table_end, len(names)) + names)
summary = uleb(0) * 5 + uleb(0)
prof = uleb(1) + b'f\0' + uleb(0) + uleb(0) + uleb(0) + uleb(P60)     # head, name, total, records
put('prof_binary', 'body-records-2p60', uleb(0x5350524f46343200 | 0xff) + uleb(103) + summary + prof)

# pseudo-probes: an inline tree 100000 levels deep (the decoder stops at 512)
rec = b''
for d in range(600):
    rec += struct.pack('<Q', 2 * d) + uleb(0) + uleb(1) + uleb(1)  # guid, no probes, one inlinee at probe 1
rec += struct.pack('<Q', 4) + uleb(0) + uleb(0)
put('probes', 'deeply-nested-inlinees', struct.pack('<I', 0) + rec)
# a record claiming 2^60 probes
put('probes', 'probe-count-2p60', struct.pack('<I', 0) + struct.pack('<Q', 2) + uleb(P60) + uleb(0) + bytes(16))


# ---------------------------------------------------------------- pgokit's own files
def fnv(d):
    h = 0xcbf29ce484222325
    for i, b in enumerate(d):
        h ^= 0 if 24 <= i < 32 else b
        h = (h * 0x100000001b3) & 0xffffffffffffffff
    return h


def temporal(magic, header_len, fields):
    d = bytearray(header_len)
    d[0:8] = magic
    for off, fmt, v in fields:
        struct.pack_into(fmt, d, off, v)
    struct.pack_into('<Q', d, 16, len(d))
    struct.pack_into('<Q', d, 24, fnv(d))
    return bytes(d)


put('temporal_indexed', 'traces-2p52',
    temporal(b'PGOKTMP\n', 176, [(8, '<I', 1), (40, '<Q', 1 << 52), (56, '<Q', P60)]))
put('temporal_indexed', 'funcs-2p60', temporal(b'PGOKTMP\n', 176, [(8, '<I', 1), (32, '<Q', P60), (56, '<Q', 1)]))
put('temporal_raw', 'records-2p60', temporal(b'PGOKRAW\n', 64, [(8, '<I', 1), (48, '<Q', P60)]))
put('temporal_raw', 'modules-4g', temporal(b'PGOKRAW\n', 64, [(8, '<I', 1), (40, '<I', 0xffffffff)]))

x = bytearray(b'PKEXACT1' + struct.pack('<IIQQ', 1, 1, 0, 0))
x += struct.pack('<IB3x20sI', 1, 0, bytes(20), 0) + b'a' + bytes(7) + struct.pack('<QQ', P60, 0)
put('exact_counts', 'ranges-2p60', bytes(x))

r = bytearray(80)
r[0:8] = b'PKRAWPRF'
struct.pack_into('<I', r, 8, 1)
struct.pack_into('<QQI', r, 56, P60, P60, 0)
r += struct.pack('<Q', 0)
put('rawprof', 'counts-2p60', bytes(r))

# pprof: a 2^60-byte length-delimited field, and a gzip trailer claiming 1 GiB for a few bytes
put('pprof', 'field-length-2p60', b'\x1a' + uleb(P60) + b'\x08\x01')
gz = bytearray(zlib.compress(b'\x08\x01', 9))
stream = b'\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff' + bytes(gz[2:-4]) + struct.pack('<II', zlib.crc32(b'\x08\x01'), 0x3fffffff)
put('pprof', 'gzip-claims-1gib', stream)
