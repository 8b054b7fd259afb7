#!/usr/bin/env python3
"""raw_v2_synth.py OUT NCTX [SEED] - writes a version-2 raw profile (layout:
src/aggregate/rawprof.c) of NCTX calling contexts, each of two or three
addresses (call sites, then a leaf function entry), with two ranges and a
branch per context, for tests of size and time. Deterministic for a seed."""
import random
import struct
import sys

M64 = (1 << 64) - 1


def fnv(h, data):
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & M64
    return h


def hash64(x):
    x ^= x >> 33
    x = (x * 0xff51afd7ed558ccd) & M64
    x ^= x >> 33
    x = (x * 0xc4ceb9fe1a85ec53) & M64
    x ^= x >> 33
    return x


def main():
    out, nctx = sys.argv[1], int(sys.argv[2])
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    build_id = bytes(rnd.randrange(256) for _ in range(20))
    path = b"/synth/prog"
    ctxs = set()
    while len(ctxs) < nctx:
        depth = rnd.choice((1, 2))
        ctxs.add(tuple(0x1000 + 4 * rnd.randrange(1 << 20) for _ in range(depth)) + (0x400000 + 16 * rnd.randrange(4096),))
    ctxs = sorted(ctxs, key=lambda c: (len(c), c))
    words = []
    for c in ctxs:
        words.append(len(c))
        words.extend(c)
    ranges, branches = [], []
    for k, c in enumerate(ctxs, 1):
        leaf = c[-1]
        ranges.append((k, leaf, leaf + 0x10, rnd.randrange(1, 1000)))
        ranges.append((k, leaf + 0x20, leaf + 0x28, rnd.randrange(1, 1000)))
        branches.append((k, leaf + 0x10, leaf + 0x20, rnd.randrange(1, 1000)))
    ranges.sort()
    branches.sort()
    head = bytearray(64)
    head[0:8] = b"PKRAWPRF"
    struct.pack_into("<IIQ", head, 8, 2, 0, 0x400000)
    head[24] = len(build_id)
    struct.pack_into("<I", head, 28, len(path))
    head[32:52] = build_id
    sections = [(1, 8, []), (2, 8, []), (3, 8, []), (4, 8, words),
                (5, 32, [x for e in ranges for x in e]), (6, 32, [x for e in branches for x in e])]
    struct.pack_into("<I", head, 56, len(sections))
    body = bytearray(head) + path + bytes((8 - len(path) % 8) % 8)
    for sid, size, vals in sections:
        n = len(vals) // (size // 8)
        body += struct.pack("<IIQ", sid, size, n) + struct.pack("<%dQ" % len(vals), *vals)
    body += struct.pack("<Q", hash64(fnv(0xcbf29ce484222325, body)))
    with open(out, "wb") as f:
        f.write(body)


main()
