#!/usr/bin/env python3
"""record_ip_chains.py DUMP BINARY — the call chains of a recording against
the binary, with llvm-symbolizer-19 as the oracle (used by record_ip.sh).

DUMP is `pgokit dump` output. Each sample's call chain (leaf first: the
sample's ip, then return addresses) is mapped through the MMAP2 records of
BINARY to file offsets, then through its PT_LOAD segments to ELF virtual
addresses, which llvm-symbolizer-19 names. Prints one line:
  samples N leaf_bin A leaf_known B leaf_hot C chain D ip_is_leaf E
N samples; A whose leaf is in BINARY; B whose leaf is one of the fixture's
functions; C in ip_hot; D whose frames in BINARY read ip_hot, ip_middle,
ip_outer, main (leaf first); E whose chain starts with the sample's ip."""
import re
import struct
import subprocess
import sys

dump, binary = sys.argv[1], sys.argv[2]

data = open(binary, "rb").read()
phoff, = struct.unpack_from("<Q", data, 32)
phentsize, phnum = struct.unpack_from("<HH", data, 54)
loads = []
for i in range(phnum):
    p_type, _, off, va, _, filesz, _ = struct.unpack_from("<IIQQQQQ", data, phoff + i * phentsize)
    if p_type == 1:
        loads.append((off, va, filesz))

maps, samples, cur = [], [], None
mmap_re = re.compile(r"PERF_RECORD_MMAP2 \S+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (?:0x)?([0-9a-f]+) .*\]: \S+ (\S+)$")
sample_re = re.compile(r"^\d+/\d+ \S+: ip 0x([0-9a-f]+)")
for line in open(dump):
    m = mmap_re.search(line)
    if m:
        if m.group(4) == binary:
            maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
        continue
    m = sample_re.match(line)
    if m:
        cur = {"ip": int(m.group(1), 16), "chain": []}
        samples.append(cur)
        continue
    if cur is not None and line.startswith("\t"):
        tok = line.strip()
        if re.fullmatch(r"[0-9a-f]+", tok):
            cur["chain"].append(int(tok, 16))
        elif not tok.startswith("["):   # [user] / [kernel] markers; anything else ends the chain
            cur = None
    elif not line.startswith("\t"):
        cur = None


def vaddr(a):
    for start, length, pgoff in maps:
        if start <= a < start + length:
            off = a - start + pgoff
            for o, va, fs in loads:
                if o <= off < o + fs:
                    return off - o + va
    return None


wanted = sorted({v for s in samples for v in map(vaddr, s["chain"]) if v is not None})
names = {}
if wanted:
    out = subprocess.run(["llvm-symbolizer-19", "--obj=" + binary, "--no-inlines", "--functions=linkage"],
                         input="".join("0x%x\n" % v for v in wanted), capture_output=True, text=True,
                         check=True).stdout
    blocks = [b.split("\n") for b in out.strip().split("\n\n")]
    for v, b in zip(wanted, blocks):
        names[v] = b[0]

known = {"ip_hot", "ip_middle", "ip_outer", "main"}
n = leaf_bin = leaf_known = leaf_hot = chain_ok = ip_leaf = 0
for s in samples:
    n += 1
    if s["chain"] and s["chain"][0] == s["ip"]:
        ip_leaf += 1
    frames = [names.get(v) for v in map(vaddr, s["chain"]) if v is not None]
    leaf = vaddr(s["chain"][0]) if s["chain"] else None
    if leaf is None:
        continue
    leaf_bin += 1
    name = names.get(leaf)
    leaf_known += name in known
    leaf_hot += name == "ip_hot"
    if frames[:4] == ["ip_hot", "ip_middle", "ip_outer", "main"]:
        chain_ok += 1
print("samples %d leaf_bin %d leaf_known %d leaf_hot %d chain %d ip_is_leaf %d" %
      (n, leaf_bin, leaf_known, leaf_hot, chain_ok, ip_leaf))
