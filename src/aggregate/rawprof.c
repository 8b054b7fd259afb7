/* rawprof.c — the raw (unsymbolized) profile: in memory, on disk, merged.
 *
 * Two versions of the file exist; both are read. All integers are
 * little-endian, every address is an offset from the binary's preferred base
 * (so a profile stays valid if the binary is relinked at another base with
 * the same code) except PK_AGG_EXTERNAL (other code), kept as all ones.
 * Counts are never 0. Both end in a u64 checksum: pk_hash_bytes of every
 * byte before it.
 *
 * Version 1 (flat counts only; IP samples were inferred into ranges first):
 *   0   char[8]  magic "PKRAWPRF"
 *   8   u32      version (1)
 *   12  u32      flags (0)
 *   16  u64      preferred base of the binary
 *   24  u8       build-id size (0..20), u8[3] zero, u32 path length
 *   32  u8[20]   build-id (zero padded), u8[4] zero
 *   56  u64      number of ranges
 *   64  u64      number of branches
 *   72  u32      number of statistics words, u32 zero
 *   80  path bytes, zero padded to a multiple of 8
 *       u64[nstats]          pk_agg_stats words in declaration order
 *       {u64 begin, u64 end, u64 count}[nranges]     sorted
 *       {u64 source, u64 target, u64 count}[nbranches] sorted
 *       u64      checksum
 *
 * Version 2 (per calling context; IP observations as recorded, nothing
 * inferred):
 *   0   char[8]  magic "PKRAWPRF"
 *   8   u32      version (2)
 *   12  u32      flags: bit 0 (PK_RAW_CALLS_ONLY) the branches of non-empty
 *                contexts are only calls and jumps to function entries (the
 *                unwinder kept only those: probe-based contexts need no more)
 *   16  u64      preferred base of the binary
 *   24  u8       build-id size (0..20), u8[3] zero, u32 path length
 *   32  u8[20]   build-id (zero padded), u8[4] zero
 *   56  u32      number of sections, u32 zero
 *   64  path bytes, zero padded to a multiple of 8
 *       sections until the checksum, each at most once, ids increasing
 *       (the three statistics always, the others only when not empty):
 *         u32 id, u32 entry size in bytes, u64 number of entries, entries
 *       u64      checksum
 *   Sections (id: entry size, entry; entries sorted, no duplicate keys):
 *     1 AGG_STATS    8: pk_agg_stats words in declaration order
 *     2 UNWIND_STATS 8: pk_unwind_stats words (LBR + stack unwinding)
 *     3 IP_STATS     8: pk_ip_stats words (IP samples)
 *     4 CONTEXTS     8: words; context k (k = 1, 2, ...) is u64 length n then
 *                    n addresses: the call sites, outermost first (recursion
 *                    compressed as the unwinder does, never depth-trimmed),
 *                    then the entry of the function the counts are in (the
 *                    leaf: tail-call frames are inferred from it at
 *                    generation; an unknown leaf, vaddr 0, is stored as
 *                    0 - base modulo 2^64). Context 0 is the empty context:
 *                    flat counts. Addresses in a non-empty context's entries
 *                    lie below 4 GiB from the base.
 *                    Contexts are numbered in the order of their address
 *                    lists, so equal data gives equal bytes.
 *     5 RANGES      32: ctx, begin, end (inclusive), count
 *     6 BRANCHES    32: ctx, source (or external), target, count
 *     7 IP_HITS     24: ctx, address, samples with the leaf there
 *     8 IP_CALLS    32: ctx of the caller, call site, callee entry, samples
 *                       the stacks show below that call
 *     9 IP_UNPLACED 24: function entry, address, samples whose direct caller
 *                       the stack did not show (a leaf in a prologue or at a
 *                       ret): shared out over the function's contexts once
 *                       every input is merged
 *   Statistics sections of more words than this build knows are read up to
 *   what it knows; an unknown section id is an error (its counts would be
 *   lost). The version-2 container (contexts, IP observations) is
 *   unwind/rawprof2.h; pk_rawprof_read reads a version-2 file that holds
 *   flat counts only and refuses one with contexts or IP observations.
 */
#include "aggregate/aggregate.h"

#include <stdlib.h>

#define RAW_MAGIC "PKRAWPRF"
#define RAW_VERSION 1u
#define RAW_HEADER 80u
#define RAW_NSTATS (sizeof(pk_agg_stats) / sizeof(uint64_t))

_Static_assert(sizeof(pk_agg_stats) % sizeof(uint64_t) == 0, "stats are u64 words");

const char *const pk_range_drop_names[PK_RANGE_DROP_N] = {
    [PK_RANGE_DROP_BACKWARDS] = "backwards (start after end)",
    [PK_RANGE_DROP_TOO_LONG] = "implausibly long",
    [PK_RANGE_DROP_EXTERNAL] = "one end outside the binary",
    [PK_RANGE_DROP_CROSS_UNCOND] = "crosses an unconditional branch",
    [PK_RANGE_DROP_NO_FUNC] = "outside every function with debug info (PLT...)",
    [PK_RANGE_DROP_NOT_CODE] = "not on instruction boundaries",
    [PK_RANGE_DROP_CROSS_FUNC] = "runs past the end of its function",
};

void pk_agg_stats_add(pk_agg_stats *into, const pk_agg_stats *s)
{
    uint64_t *d = (uint64_t *)into;
    const uint64_t *x = (const uint64_t *)s;
    for (size_t i = 0; i < RAW_NSTATS; i++)
        d[i] += x[i];
}

int pk_rawprof_init(pk_rawprof *r, const char *path, const uint8_t *build_id,
                    uint8_t build_id_size, uint64_t preferred_base, pk_err *err)
{
    memset(r, 0, sizeof *r);
    if (build_id_size > 20)
        return pk_err_set(err, "build-id of %u bytes is longer than 20", build_id_size);
    r->path = strdup(path ? path : "");
    if (build_id_size)
        memcpy(r->build_id, build_id, build_id_size);
    r->build_id_size = build_id_size;
    r->preferred_base = preferred_base;
    if (!r->path || pk_pairmap_init(&r->ranges, 1024) || pk_pairmap_init(&r->branches, 1024)) {
        pk_rawprof_free(r);
        return pk_err_set(err, "out of memory");
    }
    return 0;
}

void pk_rawprof_free(pk_rawprof *r)
{
    free(r->path);
    r->path = NULL;
    pk_pairmap_free(&r->ranges);
    pk_pairmap_free(&r->branches);
}

/* ---- writing ---- */

typedef struct hashing_out {
    pk_out_file *o;
    uint64_t h;  /* FNV-1a state, finalised like pk_hash_bytes */
} hashing_out;

static void fnv(uint64_t *h, const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t x = *h;
    for (size_t i = 0; i < n; i++) {
        x ^= b[i];
        x *= 0x100000001b3ULL;
    }
    *h = x;
}

static int hw(hashing_out *w, const void *p, size_t n, pk_err *err)
{
    fnv(&w->h, p, n);
    return pk_out_write(w->o, p, n, err);
}

static uint64_t to_off(uint64_t addr, uint64_t base)
{
    return addr == PK_AGG_EXTERNAL ? addr : addr - base;
}

static int write_pairs(hashing_out *w, const pk_pairmap *m, uint64_t base, pk_err *err)
{
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(m, &n);
    if (!v && m->len)
        return pk_err_set(err, "out of memory");
    uint8_t buf[24 * 256];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        pk_st64(buf + k, to_off(v[i].a, base));
        pk_st64(buf + k + 8, to_off(v[i].b, base));
        pk_st64(buf + k + 16, v[i].n);
        k += 24;
        if (k == sizeof buf) {
            if (hw(w, buf, k, err)) {
                free(v);
                return -1;
            }
            k = 0;
        }
    }
    free(v);
    return k ? hw(w, buf, k, err) : 0;
}

int pk_rawprof_write(const pk_rawprof *r, const char *path, pk_err *err)
{
    pk_out_file *o = malloc(sizeof *o);
    if (!o)
        return pk_err_set(err, "out of memory");
    if (pk_out_open(o, path, err)) {
        free(o);
        return -1;
    }
    hashing_out w = {o, 0xcbf29ce484222325ULL};
    size_t plen = strlen(r->path);
    uint8_t h[RAW_HEADER] = {0};
    memcpy(h, RAW_MAGIC, 8);
    pk_st32(h + 8, RAW_VERSION);
    pk_st64(h + 16, r->preferred_base);
    h[24] = r->build_id_size;
    pk_st32(h + 28, (uint32_t)plen);
    memcpy(h + 32, r->build_id, r->build_id_size);
    pk_st64(h + 56, r->ranges.len);
    pk_st64(h + 64, r->branches.len);
    pk_st32(h + 72, (uint32_t)RAW_NSTATS);
    static const uint8_t zeros[8];
    uint64_t stats[RAW_NSTATS];
    memcpy(stats, &r->stats, sizeof stats);
    int rc = hw(&w, h, sizeof h, err) || hw(&w, r->path, plen, err) ||
             hw(&w, zeros, (8 - plen % 8) % 8, err) || hw(&w, stats, sizeof stats, err) ||
             write_pairs(&w, &r->ranges, r->preferred_base, err) ||
             write_pairs(&w, &r->branches, r->preferred_base, err);
    if (!rc) {
        uint8_t sum[8];
        pk_st64(sum, pk_hash64(w.h));
        rc = pk_out_write(o, sum, 8, err) || pk_out_commit(o, err);
    }
    if (rc) {
        pk_out_abort(o);
        pk_err_prefix(err, "writing raw profile %s", path);
    }
    free(o);
    return rc ? -1 : 0;
}

/* ---- version 2 ---- */

#define RAW2_HEADER 64u

unsigned pk_raw_section_entry_size(int id)
{
    switch (id) {
    case PK_RAWSEC_AGG_STATS:
    case PK_RAWSEC_UNWIND_STATS:
    case PK_RAWSEC_IP_STATS:
    case PK_RAWSEC_CONTEXTS: return 8;
    case PK_RAWSEC_IP_HITS:
    case PK_RAWSEC_IP_UNPLACED: return 24;
    case PK_RAWSEC_RANGES:
    case PK_RAWSEC_BRANCHES:
    case PK_RAWSEC_IP_CALLS: return 32;
    default: return 0;
    }
}

int pk_raw_file_version(const uint8_t *d, size_t size, const char *path, uint32_t *version, pk_err *err)
{
    if (size < 8 || memcmp(d, RAW_MAGIC, 8))
        return pk_err_set(err, "%s: offset 0: not a pgokit raw profile (bad magic)", path);
    if (size < 16)
        return pk_err_set(err, "%s: offset %zu: truncated header (%zu bytes)", path, size, size);
    *version = pk_ld32(d + 8);
    if (*version < 1 || *version > PK_RAW_VERSION_MAX)
        return pk_err_set(err, "%s: offset 8: unsupported raw profile version %u (this build reads 1 and 2)", path,
                          *version);
    return 0;
}

int pk_raw_file_parse_v2(const uint8_t *d, size_t size, const char *path, pk_raw_file *f, pk_err *err)
{
    memset(f, 0, sizeof *f);
    if (pk_raw_file_version(d, size, path, &f->version, err))
        return -1;
    if (f->version != 2)
        return pk_err_set(err, "%s: offset 8: raw profile version %u, not 2", path, f->version);
    if (size < RAW2_HEADER + 8)
        return pk_err_set(err, "%s: offset %zu: truncated header (%zu of %u bytes)", path, size, size,
                          RAW2_HEADER + 8);
    uint64_t sum = pk_ld64(d + size - 8);
    if (pk_hash_bytes(d, size - 8) != sum)
        return pk_err_set(err, "%s: offset %zu: checksum mismatch (file corrupt or truncated)", path, size - 8);
    f->flags = pk_ld32(d + 12);
    f->base = pk_ld64(d + 16);
    f->build_id_size = d[24];
    f->path_len = pk_ld32(d + 28);
    if (f->build_id_size > 20)
        return pk_err_set(err, "%s: offset 24: build-id size %u exceeds 20", path, f->build_id_size);
    memcpy(f->build_id, d + 32, f->build_id_size);
    if (f->flags & ~PK_RAW_CALLS_ONLY)
        return pk_err_set(err, "%s: offset 12: unknown flags 0x%x", path, f->flags & ~PK_RAW_CALLS_ONLY);
    uint64_t end = size - 8, off = RAW2_HEADER + ((uint64_t)f->path_len + 7) / 8 * 8;
    if (off > end)
        return pk_err_set(err, "%s: offset 28: path length %u runs past the end (%zu bytes)", path, f->path_len, size);
    f->path_bytes = d + RAW2_HEADER;
    uint32_t want_sections = pk_ld32(d + 56), nsec = 0;
    int last = 0;
    while (off < end) {
        if (end - off < 16)
            return pk_err_set(err, "%s: offset %llu: truncated section header", path, (unsigned long long)off);
        uint32_t id = pk_ld32(d + off), esz = pk_ld32(d + off + 4);
        uint64_t n = pk_ld64(d + off + 8);
        unsigned want = pk_raw_section_entry_size((int)id);
        if (!want)
            return pk_err_set(err, "%s: offset %llu: unknown section %u", path, (unsigned long long)off, id);
        if ((int)id <= last)
            return pk_err_set(err, "%s: offset %llu: section %u after section %d (out of order or repeated)", path,
                              (unsigned long long)off, id, last);
        if (esz != want)
            return pk_err_set(err, "%s: offset %llu: section %u has %u-byte entries, not %u", path,
                              (unsigned long long)off + 4, id, esz, want);
        off += 16;
        if (n > (end - off) / esz)
            return pk_err_set(err, "%s: offset %llu: section %u of %llu entries runs past the end (%zu bytes)", path,
                              (unsigned long long)off - 8, id, (unsigned long long)n, size);
        f->sec[id] = (pk_raw_section){d + off, n, off};
        off += n * esz;
        last = (int)id;
        nsec++;
    }
    if (nsec != want_sections)
        return pk_err_set(err, "%s: offset %llu: truncated: %u of the %u sections the header announces", path,
                          (unsigned long long)off, nsec, want_sections);
    return 0;
}

static int read_v2_flat(pk_rawprof *r, const uint8_t *d, size_t size, const char *path, pk_err *err)
{
    pk_raw_file f;
    if (pk_raw_file_parse_v2(d, size, path, &f, err))
        return -1;
    const pk_raw_section *s = f.sec;
    if (s[PK_RAWSEC_CONTEXTS].n || s[PK_RAWSEC_IP_HITS].n || s[PK_RAWSEC_IP_CALLS].n || s[PK_RAWSEC_IP_UNPLACED].n)
        return pk_err_set(err, "%s: offset %llu: this raw profile (version 2) holds %s: a reader of flat "
                          "counts would lose them (read it with pk_rawprof2_read; `pgokit profgen --raw` does)",
                          path, (unsigned long long)(s[PK_RAWSEC_CONTEXTS].n ? s[PK_RAWSEC_CONTEXTS].off - 16 : 0),
                          s[PK_RAWSEC_CONTEXTS].n ? "calling contexts" : "IP observations");
    char *pbuf = strndup((const char *)f.path_bytes, f.path_len);
    if (!pbuf)
        return pk_err_set(err, "%s: out of memory", path);
    int irc = pk_rawprof_init(r, pbuf, f.build_id, f.build_id_size, f.base, err);
    free(pbuf);
    if (irc)
        return -1;
    uint64_t stats[RAW_NSTATS] = {0};
    for (uint64_t i = 0; i < s[PK_RAWSEC_AGG_STATS].n && i < RAW_NSTATS; i++)
        stats[i] = pk_ld64(s[PK_RAWSEC_AGG_STATS].data + 8 * i);
    memcpy(&r->stats, stats, sizeof stats);
    for (int w = 0; w < 2; w++) {
        const pk_raw_section *x = &s[w ? PK_RAWSEC_BRANCHES : PK_RAWSEC_RANGES];
        pk_pairmap *m = w ? &r->branches : &r->ranges;
        for (uint64_t i = 0; i < x->n; i++) {
            const uint8_t *e = x->data + 32 * i;
            uint64_t a = pk_ld64(e + 8), b = pk_ld64(e + 16), c = pk_ld64(e + 24);
            if (pk_ld64(e) || !c) {
                pk_rawprof_free(r);
                return pk_err_set(err, "%s: offset %llu: %s", path, (unsigned long long)(x->off + 32 * i),
                                  pk_ld64(e) ? "context id of an empty context table" : "entry with count 0");
            }
            if (pk_pairmap_add(m, a == PK_AGG_EXTERNAL ? a : a + f.base, b == PK_AGG_EXTERNAL ? b : b + f.base, c)) {
                pk_rawprof_free(r);
                return pk_err_set(err, "%s: out of memory", path);
            }
        }
    }
    return 0;
}

int pk_raw_writer_open(pk_raw_writer *w, const char *path, const pk_rawprof *id, uint32_t flags, uint32_t nsections,
                       pk_err *err)
{
    w->h = 0xcbf29ce484222325ULL;
    if (!(w->o = malloc(sizeof *w->o)))
        return pk_err_set(err, "out of memory");
    if (pk_out_open(w->o, path, err)) {
        free(w->o);
        w->o = NULL;
        return -1;
    }
    size_t plen = strlen(id->path);
    uint8_t h[RAW2_HEADER] = {0};
    memcpy(h, RAW_MAGIC, 8);
    pk_st32(h + 8, 2);
    pk_st32(h + 12, flags);
    pk_st64(h + 16, id->preferred_base);
    h[24] = id->build_id_size;
    pk_st32(h + 28, (uint32_t)plen);
    memcpy(h + 32, id->build_id, id->build_id_size);
    pk_st32(h + 56, nsections);
    static const uint8_t zeros[8];
    hashing_out ho = {w->o, w->h};
    int rc = hw(&ho, h, sizeof h, err) || hw(&ho, id->path, plen, err) || hw(&ho, zeros, (8 - plen % 8) % 8, err);
    w->h = ho.h;
    if (rc) {
        pk_raw_writer_abort(w);
        return -1;
    }
    return 0;
}

int pk_raw_writer_section(pk_raw_writer *w, int id, uint64_t n, pk_err *err)
{
    uint8_t h[16];
    pk_st32(h, (uint32_t)id);
    pk_st32(h + 4, pk_raw_section_entry_size(id));
    pk_st64(h + 8, n);
    hashing_out ho = {w->o, w->h};
    int rc = hw(&ho, h, sizeof h, err);
    w->h = ho.h;
    return rc;
}

int pk_raw_writer_words(pk_raw_writer *w, const uint64_t *v, size_t n, pk_err *err)
{
    uint8_t buf[8 * 512];
    hashing_out ho = {w->o, w->h};
    while (n) {
        size_t k = n < 512 ? n : 512;
        for (size_t i = 0; i < k; i++)
            pk_st64(buf + 8 * i, v[i]);
        if (hw(&ho, buf, 8 * k, err))
            return -1;
        v += k;
        n -= k;
    }
    w->h = ho.h;
    return 0;
}

int pk_raw_writer_commit(pk_raw_writer *w, pk_err *err)
{
    uint8_t sum[8];
    pk_st64(sum, pk_hash64(w->h));
    if (pk_out_write(w->o, sum, 8, err) || pk_out_commit(w->o, err)) {
        pk_raw_writer_abort(w);
        return -1;
    }
    free(w->o);
    w->o = NULL;
    return 0;
}

void pk_raw_writer_abort(pk_raw_writer *w)
{
    if (w->o) {
        pk_out_abort(w->o);
        free(w->o);
        w->o = NULL;
    }
}

/* ---- reading ---- */

static int read_pairs(pk_pairmap *m, const uint8_t *p, uint64_t n, uint64_t base,
                      const char *path, uint64_t off, pk_err *err)
{
    for (uint64_t i = 0; i < n; i++, p += 24) {
        uint64_t a = pk_ld64(p), b = pk_ld64(p + 8), c = pk_ld64(p + 16);
        if (!c)
            return pk_err_set(err, "%s: offset %llu: entry with count 0", path,
                              (unsigned long long)(off + i * 24 + 16));
        if (a != PK_AGG_EXTERNAL)
            a += base;
        if (b != PK_AGG_EXTERNAL)
            b += base;
        if (pk_pairmap_add(m, a, b, c))
            return pk_err_set(err, "%s: out of memory", path);
    }
    return 0;
}

int pk_rawprof_read(pk_rawprof *r, const char *path, pk_err *err)
{
    memset(r, 0, sizeof *r);
    pk_mapped_file f;
    if (pk_file_map(&f, path, err))
        return -1;
    int rc = pk_rawprof_read_mem(r, f.data, f.size, path, err);
    pk_file_unmap(&f);
    return rc;
}

int pk_rawprof_read_mem(pk_rawprof *r, const uint8_t *d, size_t size, const char *path, pk_err *err)
{
    memset(r, 0, sizeof *r);
    int rc = -1;
    if (size < 8 || memcmp(d, RAW_MAGIC, 8)) {
        pk_err_set(err, "%s: offset 0: not a pgokit raw profile (bad magic)", path);
        goto out;
    }
    if (size >= 12 && pk_ld32(d + 8) == 2) {
        rc = read_v2_flat(r, d, size, path, err);
        goto out;
    }
    if (size < RAW_HEADER) {
        pk_err_set(err, "%s: offset %zu: truncated header (%zu of %u bytes)", path, size, size,
                   RAW_HEADER);
        goto out;
    }
    uint32_t version = pk_ld32(d + 8);
    if (version != RAW_VERSION) {
        pk_err_set(err, "%s: offset 8: unsupported raw profile version %u (this build reads 1 and 2)",
                   path, version);
        goto out;
    }
    uint8_t bid_size = d[24];
    uint32_t plen = pk_ld32(d + 28);
    uint64_t nr = pk_ld64(d + 56), nb = pk_ld64(d + 64);
    uint32_t nstats = pk_ld32(d + 72);
    if (bid_size > 20) {
        pk_err_set(err, "%s: offset 24: build-id size %u exceeds 20", path, bid_size);
        goto out;
    }
    uint64_t ppad = ((uint64_t)plen + 7) / 8 * 8;
    /* Compute the expected size in 128-bit-safe steps: counts come from the file. */
    if (nr > size / 24 || nb > size / 24 || nstats > size / 8 || ppad > size) {
        pk_err_set(err, "%s: offset 56: counts (%llu ranges, %llu branches) exceed the file size %zu",
                   path, (unsigned long long)nr, (unsigned long long)nb, size);
        goto out;
    }
    uint64_t need = RAW_HEADER + ppad + (uint64_t)nstats * 8 + nr * 24 + nb * 24 + 8;
    if (need != size) {
        pk_err_set(err, "%s: offset %zu: %s (header implies %llu bytes, file has %zu)", path,
                   need > size ? size : (size_t)need, need > size ? "truncated" : "trailing bytes",
                   (unsigned long long)need, size);
        goto out;
    }
    uint64_t sum = pk_ld64(d + size - 8);
    if (pk_hash_bytes(d, size - 8) != sum) {
        pk_err_set(err, "%s: offset %zu: checksum mismatch (file corrupt)", path, size - 8);
        goto out;
    }
    char *pbuf = malloc((size_t)plen + 1);
    if (!pbuf) {
        pk_err_set(err, "%s: out of memory", path);
        goto out;
    }
    memcpy(pbuf, d + RAW_HEADER, plen);
    pbuf[plen] = 0;
    uint64_t base = pk_ld64(d + 16);
    int irc = pk_rawprof_init(r, pbuf, d + 32, bid_size, base, err);
    free(pbuf);
    if (irc)
        goto out;
    uint64_t off = RAW_HEADER + ppad;
    uint64_t stats[RAW_NSTATS] = {0};
    for (uint32_t i = 0; i < nstats && i < RAW_NSTATS; i++)
        stats[i] = pk_ld64(d + off + 8 * i);
    memcpy(&r->stats, stats, sizeof stats);
    off += (uint64_t)nstats * 8;
    if (read_pairs(&r->ranges, d + off, nr, base, path, off, err))
        goto fail;
    off += nr * 24;
    if (read_pairs(&r->branches, d + off, nb, base, path, off, err))
        goto fail;
    rc = 0;
    goto out;
fail:
    pk_rawprof_free(r);
out:
    return rc;
}

/* ---- merging ---- */

static char hexdig(unsigned v) { return "0123456789abcdef"[v & 15]; }

static void bid_hex(char *out, const uint8_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        out[2 * i] = hexdig(b[i] >> 4);
        out[2 * i + 1] = hexdig(b[i]);
    }
    out[2 * n] = 0;
}

static int merge_pairs(pk_pairmap *dst, const pk_pairmap *src, int64_t delta)
{
    if (pk_pairmap_reserve(dst, dst->len + src->len))
        return -1;
    for (size_t i = 0; i < src->cap; i++) {
        const pk_pair_count *p = &src->e[i];
        if (!p->n)
            continue;
        uint64_t a = p->a == PK_AGG_EXTERNAL ? p->a : p->a + (uint64_t)delta;
        uint64_t b = p->b == PK_AGG_EXTERNAL ? p->b : p->b + (uint64_t)delta;
        if (pk_pairmap_add(dst, a, b, p->n))
            return -1;
    }
    return 0;
}

int pk_rawprof_merge(pk_rawprof *dst, const pk_rawprof *src, pk_err *err)
{
    if (dst->build_id_size && src->build_id_size) {
        if (dst->build_id_size != src->build_id_size ||
            memcmp(dst->build_id, src->build_id, dst->build_id_size)) {
            char a[41], b[41];
            bid_hex(a, dst->build_id, dst->build_id_size);
            bid_hex(b, src->build_id, src->build_id_size);
            return pk_err_set(err, "cannot merge profiles of different binaries: build-id %s (%s) vs %s (%s)",
                              a, dst->path, b, src->path);
        }
    } else if (strcmp(dst->path, src->path)) {
        return pk_err_set(err, "cannot merge profiles of different binaries: %s vs %s (no build-id)",
                          dst->path, src->path);
    }
    int64_t delta = (int64_t)(dst->preferred_base - src->preferred_base);
    if (merge_pairs(&dst->ranges, &src->ranges, delta) ||
        merge_pairs(&dst->branches, &src->branches, delta))
        return pk_err_set(err, "out of memory");
    pk_agg_stats_add(&dst->stats, &src->stats);
    return 0;
}
