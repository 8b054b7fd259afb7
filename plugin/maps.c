/* maps.c — which guest file is mapped where, learned lazily.
 *
 * qemu-user maps guest memory 1:1 on x86-64 hosts, so /proc/self/maps of the
 * QEMU process lists the guest's mappings next to QEMU's own (host libc,
 * host ld.so: same paths as the guest's!). Only the line that holds a
 * translated guest block is taken, which tells guest mappings from host ones
 * without any syscall tracking: QEMU never translates host code. The file is
 * read again only when a block starts outside every known mapping, i.e. once
 * per executed mapping (main binary, ld.so, each shared library, dlopen). */
#include "lbr.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

const lbr_map *lbr_maps_find(const lbr_maps *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->v[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n && m->v[lo].start <= addr && addr < m->v[lo].end)
        return &m->v[lo];
    return NULL;
}

static int bin_index(lbr_maps *m, const char *path)
{
    for (size_t i = 0; i < m->nbins; i++)
        if (!strcmp(m->bin_paths[i], path))
            return (int)i;
    char **nv = realloc(m->bin_paths, (m->nbins + 1) * sizeof *nv);
    if (!nv)
        return -1;
    m->bin_paths = nv;
    nv[m->nbins] = strdup(path);
    return nv[m->nbins] ? (int)m->nbins++ : -1;
}

static lbr_map *insert(lbr_maps *m, uint64_t start, uint64_t end)
{
    /* Drop entries the new mapping replaces (munmap + mmap at the same place). */
    size_t w = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->v[i].start < end && start < m->v[i].end)
            continue;   /* path and facts leak deliberately: addresses may still refer to them */
        m->v[w++] = m->v[i];
    }
    m->n = w;
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        lbr_map *nv = realloc(m->v, nc * sizeof *nv);
        if (!nv)
            return NULL;
        m->v = nv;
        m->cap = nc;
    }
    size_t at = 0;
    while (at < m->n && m->v[at].start < start)
        at++;
    memmove(&m->v[at + 1], &m->v[at], (m->n - at) * sizeof *m->v);
    m->n++;
    lbr_map *e = &m->v[at];
    memset(e, 0, sizeof *e);
    e->start = start;
    e->end = end;
    e->bin = -1;
    return e;
}

/* The load bias (run-time address - ELF vaddr) of a file mapped by the
 * maps line [start, end) from file offset pgoff, found through the PT_LOAD
 * with PF_X that holds the executed address addr. The line maps file offset
 * x at start + (x - pgoff), so a segment's vaddr lands at start - pgoff +
 * offset. pgoff alone cannot name the segment: lld packs segments so that
 * the text shares its first file page with the read-only headers (text at
 * file offset 0x740, vaddr 0x1740), and both are then mapped from pgoff 0. */
static bool load_bias(const pk_elf_facts *f, uint64_t start, uint64_t end, uint64_t pgoff, uint64_t addr,
                      uint64_t *bias)
{
    for (unsigned i = 0; i < f->nloads; i++) {
        const pk_elf_load *l = &f->loads[i];
        if (!(l->flags & 1))
            continue;
        uint64_t b = start - pgoff + l->offset - l->vaddr;
        if (addr >= b + l->vaddr && addr < b + l->vaddr + l->memsz && addr >= start && addr < end) {
            *bias = b;
            return true;
        }
    }
    return false;
}

/* Writes the MMAP2 records of a known file mapping. QEMU may map a whole
 * file as one region where the kernel would show one mapping per segment.
 * Consumers (llvm-profgen) expect the kernel's view: an executable mapping
 * whose pgoff is the page-aligned file offset of the PT_LOAD with PF_X. So
 * the records are derived from the program headers; each segment is written
 * by the maps line holding its start. */
static int announce(const lbr_map *e, pk_perf_writer *w, uint32_t pid, uint64_t time, pk_err *werr)
{
    uint64_t start = e->start, end = e->end, pgoff = e->pgoff;
    for (unsigned i = 0; i < e->facts.nloads; i++) {
        const pk_elf_load *l = &e->facts.loads[i];
        uint64_t seg_start, seg_len, seg_pgoff;
        if (!e->has_bias) {
            /* no executable segment holds addr: the raw line */
            if (i > 0)
                break;
            seg_start = start, seg_len = end - start, seg_pgoff = pgoff;
        } else {
            if (!(l->flags & 1))
                continue;
            uint64_t va0 = l->vaddr & ~4095ull, va1 = (l->vaddr + l->memsz + 4095) & ~4095ull;
            seg_start = e->bias + va0;
            seg_len = va1 - va0;
            seg_pgoff = l->offset & ~4095ull;
            if (seg_start < start || seg_start >= end)
                continue;
        }
        pk_mmap_event ev;
        memset(&ev, 0, sizeof ev);
        ev.is_mmap2 = true;
        ev.misc = PK_CPUMODE_USER;
        ev.pid = ev.tid = pid;
        ev.addr = seg_start;
        ev.len = seg_len;
        ev.pgoff = seg_pgoff;
        ev.prot = PROT_READ | PROT_EXEC;
        ev.flags = MAP_PRIVATE;
        ev.filename = e->path;
        ev.time = time;
        if (e->facts.build_id_size) {
            ev.has_build_id = true;
            ev.misc |= PK_MISC_MMAP_BUILD_ID;
            ev.build_id_size = e->facts.build_id_size;
            memcpy(ev.build_id, e->facts.build_id, e->facts.build_id_size);
        }
        if (pk_perf_write_mmap(w, &ev, werr) != 0)
            return -1;
    }
    return 0;
}

/* lbr_maps_ensure, with the load bias when the caller knows it (bias_hint,
 * else NULL: found from addr, an executed address). */
static int ensure(lbr_maps *m, uint64_t addr, const uint64_t *bias_hint, pk_perf_writer *w, uint32_t pid,
                  uint64_t time, pk_err *werr)
{
    if (lbr_maps_find(m, addr))
        return 0;
    FILE *f = fopen("/proc/self/maps", "re");
    char line[4096 + 256];
    uint64_t start = addr & ~4095ull, end = start + 4096, pgoff = 0;
    char path[4096] = "";
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long s, e, off;
        char perms[8];
        int n = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &n) < 4)
            continue;
        if (addr < s || addr >= e)
            continue;
        start = s;
        end = e;
        pgoff = off;
        char *p = line + n;
        p[strcspn(p, "\n")] = 0;
        size_t len = strlen(p);
        if (len > 10 && !strcmp(p + len - 10, " (deleted)"))
            p[len - 10] = 0;
        if (p[0] == '/')
            snprintf(path, sizeof path, "%s", p);
        found = true;
        break;
    }
    if (f)
        fclose(f);
    (void)found;
    lbr_map *e = insert(m, start, end);
    if (!e || !path[0])
        return 0;
    pk_err err;
    e->pgoff = pgoff;
    e->path = strdup(path);
    e->has_facts = pk_record_elf_facts(path, &e->facts, &err) == 0;
    if (!e->path || !e->has_facts)
        return 0;
    e->bin = bin_index(m, path);
    if (bias_hint) {
        e->has_bias = true;
        e->bias = *bias_hint;
    } else {
        e->has_bias = load_bias(&e->facts, start, end, pgoff, addr, &e->bias);
    }
    if (!w)
        return 0;
    return announce(e, w, pid, time, werr);
}

int lbr_maps_ensure(lbr_maps *m, uint64_t addr, pk_perf_writer *w, uint32_t pid, uint64_t time, pk_err *werr)
{
    return ensure(m, addr, NULL, w, pid, time, werr);
}

int lbr_maps_announce_all(const lbr_maps *m, pk_perf_writer *w, uint32_t pid, uint64_t time, pk_err *werr)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].path && m->v[i].has_facts && announce(&m->v[i], w, pid, time, werr) != 0)
            return -1;
    return 0;
}

/* The program's lines are announced before anything of it has run, so no
 * executed address tells the segments apart (QEMU's host mappings of guest
 * code are all r--p, and lld's share file pages): its load bias is that of
 * an ELF loader, the lowest line's start minus its lowest PT_LOAD page. */
int lbr_maps_preload(lbr_maps *m, const char *path, pk_perf_writer *w, uint32_t pid, uint64_t time,
                     pk_err *werr)
{
    uint64_t starts[64];
    unsigned n = 0;
    FILE *f = fopen("/proc/self/maps", "re");
    char line[4096 + 256];
    while (f && n < 64 && fgets(line, sizeof line, f)) {
        unsigned long long s, e;
        int at = 0;
        if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &s, &e, &at) < 2 || !at)
            continue;
        char *p = line + at;
        p[strcspn(p, "\n")] = 0;
        if (!strcmp(p, path))
            starts[n++] = s;
    }
    if (f)
        fclose(f);
    pk_elf_facts facts;
    pk_err err;
    if (!n || pk_record_elf_facts(path, &facts, &err) != 0 || !facts.nloads)
        return 0;   /* not mapped (yet), or not an ELF file: learned when it runs */
    uint64_t lowest = starts[0], first = facts.loads[0].vaddr;
    for (unsigned i = 1; i < n; i++)
        lowest = starts[i] < lowest ? starts[i] : lowest;
    for (unsigned i = 1; i < facts.nloads; i++)
        first = facts.loads[i].vaddr < first ? facts.loads[i].vaddr : first;
    uint64_t bias = lowest - (first & ~4095ull);
    for (unsigned i = 0; i < n; i++)
        if (ensure(m, starts[i], &bias, w, pid, time, werr) != 0)
            return -1;
    return 0;
}

bool lbr_maps_to_vaddr(const lbr_maps *m, uint64_t addr, int *bin, uint64_t *vaddr)
{
    const lbr_map *e = lbr_maps_find(m, addr);
    if (!e || e->bin < 0)
        return false;
    *bin = e->bin;
    if (e->has_bias) {
        *vaddr = addr - e->bias;
        return true;
    }
    return pk_record_elf_offset_to_vaddr(&e->facts, addr - e->start + e->pgoff, vaddr);
}
