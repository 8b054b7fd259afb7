/* indexed.c — the indexed temporal profile: in-memory model, reservoir
 * sampling of traces, merging, and its versioned file format (temporal.h).
 *
 * Reservoir: Vitter's algorithm R with our own fixed-seed RNG (splitmix64),
 * so the same inputs in the same order always give the same file. Merging two
 * reservoirs draws, without replacement, how many of the merged slots come
 * from each side in proportion to the runs each side has seen, then picks that
 * many traces uniformly from each side: the result is distributed like a
 * reservoir that had seen both streams. */
#include "temporal/temporal.h"

#include <stdio.h>
#include <stdlib.h>

#define FUNC_REC 48u

/* ---- names: an arena whose strings never move ---- */

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    char data[];
};

static char *arena_strdup2(pk_temporal_profile *p, const char *a, size_t alen)
{
    struct arena_block *b = p->arena;
    if (!b || b->cap - b->used < alen + 1) {
        size_t cap = alen + 1 > 65536 ? alen + 1 : 65536;
        struct arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->next = b; nb->used = 0; nb->cap = cap;
        p->arena = b = nb;
    }
    char *d = b->data + b->used;
    memcpy(d, a, alen);
    d[alen] = 0;
    b->used += alen + 1;
    return d;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) (n > 0), without modulo bias. */
static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    uint64_t lim = -n % n;  /* 2^64 mod n */
    for (;;) {
        uint64_t r = rng_next(s);
        if (r >= lim) return r % n;
    }
}

void pk_temporal_init(pk_temporal_profile *p, uint64_t reservoir_size, uint64_t max_trace_len)
{
    memset(p, 0, sizeof *p);
    p->reservoir_size = reservoir_size ? reservoir_size : PK_TEMPORAL_DEFAULT_RESERVOIR;
    p->max_trace_len = max_trace_len ? max_trace_len : PK_TEMPORAL_DEFAULT_MAX_TRACE_LEN;
    p->rng = 0x70676f6b69742d31ull; /* fixed seed: deterministic merges */
}

void pk_temporal_free(pk_temporal_profile *p)
{
    for (struct arena_block *b = p->arena, *n; b; b = n) { n = b->next; free(b); }
    for (uint64_t i = 0; i < p->num_traces; i++) free(p->traces[i].funcs);
    free(p->traces);
    free(p->funcs);
    free(p->image);
    pk_u64map_free(&p->name_index);
    memset(p, 0, sizeof *p);
}

static int index_ready(pk_temporal_profile *p)
{
    return p->name_index.cap || pk_u64map_init(&p->name_index, 1024) == 0;
}

/* Finds name; returns its slot in name_index (value = index + 1, 0 = free). */
static uint64_t *name_slot(pk_temporal_profile *p, const char *name, size_t len, int *found)
{
    uint64_t k = pk_hash_bytes(name, len);
    for (;;) {
        uint64_t *v = pk_u64map_slot(&p->name_index, k);
        if (!v) return NULL;
        if (!*v) { *found = 0; return v; }
        const char *other = p->funcs[*v - 1].name;
        if (!strncmp(other, name, len) && !other[len]) { *found = 1; return v; }
        k = pk_hash64(k + 1);
    }
}

int64_t pk_temporal_intern(pk_temporal_profile *p, const char *name, const char *symbol,
                           uint64_t addr, uint64_t size, uint32_t flags, pk_err *err)
{
    if (!index_ready(p)) return pk_err_set(err, "out of memory");
    size_t len = strlen(name);
    int found;
    uint64_t *slot = name_slot(p, name, len, &found);
    if (!slot) return pk_err_set(err, "out of memory");
    if (found) return (int64_t)(*slot - 1);
    if (p->num_funcs == p->funcs_cap) {
        uint64_t cap = p->funcs_cap ? p->funcs_cap * 2 : 256;
        pk_temporal_func *nf = pk_xrealloc_array(p->funcs, cap, sizeof *nf);
        if (!nf) return pk_err_set(err, "out of memory");
        p->funcs = nf; p->funcs_cap = cap;
    }
    char *copy = arena_strdup2(p, name, len);
    if (!copy) return pk_err_set(err, "out of memory");
    size_t symoff = 0;
    if (symbol) {
        size_t sl = strlen(symbol);
        if (sl <= len && !strcmp(name + len - sl, symbol)) symoff = len - sl;
    }
    pk_temporal_func *f = &p->funcs[p->num_funcs];
    memset(f, 0, sizeof *f);
    f->name = copy;
    f->symbol = copy + symoff;
    f->addr = addr; f->size = size; f->flags = flags;
    *slot = ++p->num_funcs;
    return (int64_t)(p->num_funcs - 1);
}

static int reserve_traces(pk_temporal_profile *p, uint64_t n, pk_err *err)
{
    if (n <= p->traces_cap) return 0;
    uint64_t cap = p->traces_cap ? p->traces_cap : 16;
    while (cap < n) cap *= 2;
    pk_temporal_trace *nt = pk_xrealloc_array(p->traces, cap, sizeof *nt);
    if (!nt) return pk_err_set(err, "out of memory");
    p->traces = nt; p->traces_cap = cap;
    return 0;
}

static uint32_t *copy_funcs(const uint32_t *funcs, uint32_t len)
{
    uint32_t *c = malloc((size_t)len * sizeof *c);
    if (c) memcpy(c, funcs, (size_t)len * sizeof *c);
    return c;
}

int pk_temporal_add_trace(pk_temporal_profile *p, const uint32_t *funcs, uint32_t len,
                          uint64_t weight, pk_err *err)
{
    if (len > p->max_trace_len) len = (uint32_t)p->max_trace_len;
    if (!len) return 0;
    for (uint32_t i = 0; i < len; i++)
        if (funcs[i] >= p->num_funcs)
            return pk_err_set(err, "trace names function %u of %llu", funcs[i], (unsigned long long)p->num_funcs);
    if (p->num_traces < p->reservoir_size) {
        if (reserve_traces(p, p->num_traces + 1, err) != 0) return -1;
        uint32_t *c = copy_funcs(funcs, len);
        if (!c) return pk_err_set(err, "out of memory");
        p->traces[p->num_traces++] = (pk_temporal_trace){weight, len, c};
    } else {
        uint64_t r = rng_below(&p->rng, p->traces_seen + 1);
        if (r < p->reservoir_size) {
            uint32_t *c = copy_funcs(funcs, len);
            if (!c) return pk_err_set(err, "out of memory");
            free(p->traces[r].funcs);
            p->traces[r] = (pk_temporal_trace){weight, len, c};
        }
    }
    p->traces_seen++;
    return 0;
}

/* Picks k of the n items of idx uniformly (partial Fisher–Yates): idx[0..k). */
static void pick(uint64_t *rng, uint64_t *idx, uint64_t n, uint64_t k)
{
    for (uint64_t i = 0; i < k && i < n; i++) {
        uint64_t j = i + rng_below(rng, n - i);
        uint64_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }
}

int pk_temporal_merge(pk_temporal_profile *p, const pk_temporal_profile *src, pk_err *err)
{
    if (p->build_id_len && src->build_id_len &&
        (p->build_id_len != src->build_id_len || memcmp(p->build_id, src->build_id, p->build_id_len)))
        return pk_err_set(err, "build-id mismatch: the profiles describe different binaries");
    uint32_t *map = malloc((src->num_funcs ? src->num_funcs : 1) * sizeof *map);
    if (!map) return pk_err_set(err, "out of memory");
    for (uint64_t i = 0; i < src->num_funcs; i++) {
        const pk_temporal_func *sf = &src->funcs[i];
        int64_t j = pk_temporal_intern(p, sf->name, sf->symbol, sf->addr, sf->size, sf->flags, err);
        if (j < 0) { free(map); return -1; }
        map[i] = (uint32_t)j;
        p->funcs[j].entry_count += sf->entry_count;
        p->funcs[j].covered_runs += sf->covered_runs;
    }
    if (!p->build_id_len && src->build_id_len) {
        memcpy(p->build_id, src->build_id, src->build_id_len);
        p->build_id_len = src->build_id_len;
    }
    p->flags |= src->flags;
    p->num_runs += src->num_runs;

    /* Translate src's traces (truncated to our limit). */
    uint64_t ns = src->num_traces;
    pk_temporal_trace *st = calloc(ns ? ns : 1, sizeof *st);
    if (!st) { free(map); return pk_err_set(err, "out of memory"); }
    int rc = -1;
    for (uint64_t t = 0; t < ns; t++) {
        uint32_t len = src->traces[t].len;
        if (len > p->max_trace_len) len = (uint32_t)p->max_trace_len;
        st[t].weight = src->traces[t].weight;
        st[t].len = len;
        st[t].funcs = malloc((len ? len : 1) * sizeof(uint32_t));
        if (!st[t].funcs) { pk_err_set(err, "out of memory"); goto out; }
        for (uint32_t i = 0; i < len; i++) st[t].funcs[i] = map[src->traces[t].funcs[i]];
    }
    uint64_t seen_p = p->traces_seen, seen_s = src->traces_seen > ns ? src->traces_seen : ns;
    /* saturated: run counts from files can be anything, and a sum wrapped
     * to a small number took every trace in, past the reservoir size */
    uint64_t total = seen_p + seen_s < seen_p ? UINT64_MAX : seen_p + seen_s;
    uint64_t R = p->reservoir_size;
    if (total <= R || (seen_p == p->num_traces && seen_s == ns && p->num_traces + ns <= R)) {
        if (reserve_traces(p, p->num_traces + ns, err) != 0) goto out;
        for (uint64_t t = 0; t < ns; t++) { p->traces[p->num_traces++] = st[t]; st[t].funcs = NULL; }
    } else {
        /* How many of the R merged slots come from p: draws without replacement. */
        uint64_t from_p = 0, left_p = seen_p, left = total;
        for (uint64_t j = 0; j < R && left; j++, left--) {
            if (rng_below(&p->rng, left) < left_p) { from_p++; left_p--; }
        }
        uint64_t from_s = (R < total ? R : total) - from_p;
        if (from_p > p->num_traces) from_p = p->num_traces;
        if (from_s > ns) from_s = ns;
        uint64_t *ip = malloc((p->num_traces + 1) * sizeof *ip), *is = malloc((ns + 1) * sizeof *is);
        if (!ip || !is) { free(ip); free(is); pk_err_set(err, "out of memory"); goto out; }
        for (uint64_t i = 0; i < p->num_traces; i++) ip[i] = i;
        for (uint64_t i = 0; i < ns; i++) is[i] = i;
        pick(&p->rng, ip, p->num_traces, from_p);
        pick(&p->rng, is, ns, from_s);
        pk_temporal_trace *nt = calloc(from_p + from_s + 1, sizeof *nt);
        if (!nt) { free(ip); free(is); pk_err_set(err, "out of memory"); goto out; }
        /* Keep p's survivors in their original relative order, then src's. */
        uint8_t *keep = calloc(p->num_traces + 1, 1);
        if (!keep) { free(ip); free(is); free(nt); pk_err_set(err, "out of memory"); goto out; }
        for (uint64_t i = 0; i < from_p; i++) keep[ip[i]] = 1;
        uint64_t k = 0;
        for (uint64_t i = 0; i < p->num_traces; i++) {
            if (keep[i]) nt[k++] = p->traces[i];
            else free(p->traces[i].funcs);
        }
        for (uint64_t i = 0; i < from_s; i++) { nt[k++] = st[is[i]]; st[is[i]].funcs = NULL; }
        free(keep); free(ip); free(is);
        free(p->traces);
        p->traces = nt;
        p->num_traces = k;
        p->traces_cap = from_p + from_s + 1;
    }
    p->traces_seen = total;
    rc = 0;
out:
    for (uint64_t t = 0; t < ns; t++) free(st[t].funcs);
    free(st);
    free(map);
    return rc;
}

/* ---------------------------------------------------------------- file I/O */

int pk_temporal_write(const pk_temporal_profile *p, const char *path, pk_err *err)
{
    uint64_t strtab = 0;
    for (uint64_t i = 0; i < p->num_funcs; i++) strtab += strlen(p->funcs[i].name) + 1;
    if (strtab > UINT32_MAX) return pk_err_set(err, "%s: names exceed 4 GiB", path);
    uint64_t total = PK_TEMPORAL_INDEXED_HEADER_SIZE + p->num_funcs * FUNC_REC + strtab;
    for (uint64_t t = 0; t < p->num_traces; t++)
        total += 16 + (((uint64_t)p->traces[t].len * 4 + 7) & ~7ull);

    /* Built in memory: the checksum covers the whole file. Profiles are
     * small (≤ reservoir × max length × 4 bytes of traces). */
    uint8_t *buf = calloc(1, total);
    if (!buf) return pk_err_set(err, "%s: out of memory (%llu bytes)", path, (unsigned long long)total);
    memcpy(buf, PK_TEMPORAL_INDEXED_MAGIC, 8);
    pk_st32(buf + 8, PK_TEMPORAL_INDEXED_VERSION);
    pk_st32(buf + 12, p->flags);
    pk_st64(buf + 16, total);
    pk_st64(buf + 32, p->num_funcs);
    pk_st64(buf + 40, p->num_traces);
    pk_st64(buf + 48, p->traces_seen);
    pk_st64(buf + 56, p->reservoir_size);
    pk_st64(buf + 64, p->max_trace_len);
    pk_st64(buf + 72, p->num_runs);
    pk_st32(buf + 80, p->build_id_len);
    memcpy(buf + 88, p->build_id, p->build_id_len);
    pk_st64(buf + 152, strtab);
    uint8_t *o = buf + PK_TEMPORAL_INDEXED_HEADER_SIZE;
    uint8_t *names = buf + total - strtab;
    uint32_t noff = 0;
    for (uint64_t i = 0; i < p->num_funcs; i++, o += FUNC_REC) {
        const pk_temporal_func *f = &p->funcs[i];
        uint32_t nl = (uint32_t)strlen(f->name);
        pk_st64(o, f->addr);
        pk_st64(o + 8, f->size);
        pk_st64(o + 16, f->entry_count);
        pk_st64(o + 24, f->covered_runs);
        pk_st32(o + 32, noff);
        pk_st32(o + 36, nl);
        pk_st32(o + 40, (uint32_t)(f->symbol - f->name));
        pk_st32(o + 44, f->flags);
        memcpy(names + noff, f->name, nl + 1);
        noff += nl + 1;
    }
    for (uint64_t t = 0; t < p->num_traces; t++) {
        const pk_temporal_trace *tr = &p->traces[t];
        pk_st64(o, tr->weight);
        pk_st32(o + 8, tr->len);
        o += 16;
        for (uint32_t i = 0; i < tr->len; i++, o += 4) pk_st32(o, tr->funcs[i]);
        o += ((uint64_t)tr->len * 4) % 8 ? 4 : 0;
    }
    pk_st64(buf + 24, pk_temporal_checksum(buf, total));

    pk_out_file *out = malloc(sizeof *out);
    if (!out) { free(buf); return pk_err_set(err, "out of memory"); }
    int rc = -1;
    if (pk_out_open(out, path, err) == 0) {
        if (pk_out_write(out, buf, total, err) == 0 && pk_out_commit(out, err) == 0) rc = 0;
        else pk_out_abort(out);
    }
    free(out);
    free(buf);
    return rc;
}

#define BAD(off, ...) do { pk_err_set(err, "%s: offset %llu: ", path, (unsigned long long)(off)); \
    size_t l_ = strlen(err->msg); snprintf(err->msg + l_, sizeof err->msg - l_, __VA_ARGS__); goto fail; } while (0)

int pk_temporal_parse(pk_temporal_profile *p, const uint8_t *d, size_t size, const char *path, pk_err *err)
{
    pk_err scratch;
    if (!err) err = &scratch;
    pk_temporal_init(p, 0, 0);
    if (size < 8 || memcmp(d, PK_TEMPORAL_INDEXED_MAGIC, 8)) {
        if (size >= 8 && !memcmp(d, PK_TEMPORAL_RAW_MAGIC, 8))
            BAD(0, "this is a raw temporal profile; index it first with `pgokit merge --temporal --binary BIN`");
        BAD(0, "not an indexed temporal profile (bad magic)");
    }
    if (size < PK_TEMPORAL_INDEXED_HEADER_SIZE)
        BAD(size, "truncated: header needs %u bytes, file has %zu", PK_TEMPORAL_INDEXED_HEADER_SIZE, size);
    uint32_t ver = pk_ld32(d + 8);
    if (ver != PK_TEMPORAL_INDEXED_VERSION)
        BAD(8, "unsupported indexed temporal profile version %u (this pgokit reads %u)", ver, PK_TEMPORAL_INDEXED_VERSION);
    uint64_t total = pk_ld64(d + 16);
    if (total != size)
        BAD(16, "%s: header says %llu bytes, file has %zu", total > size ? "truncated" : "corrupt",
            (unsigned long long)total, size);
    uint64_t sum = pk_temporal_checksum(d, size);
    if (sum != pk_ld64(d + 24))
        BAD(24, "checksum mismatch (stored %016llx, computed %016llx)", (unsigned long long)pk_ld64(d + 24),
            (unsigned long long)sum);
    p->flags = pk_ld32(d + 12);
    uint64_t nf = pk_ld64(d + 32), nt = pk_ld64(d + 40);
    p->traces_seen = pk_ld64(d + 48);
    p->reservoir_size = pk_ld64(d + 56);
    p->max_trace_len = pk_ld64(d + 64);
    p->num_runs = pk_ld64(d + 72);
    p->build_id_len = pk_ld32(d + 80);
    if (p->build_id_len > PK_TEMPORAL_BUILD_ID_MAX) BAD(80, "build-id length %u > %u", p->build_id_len, PK_TEMPORAL_BUILD_ID_MAX);
    memcpy(p->build_id, d + 88, p->build_id_len);
    uint64_t strtab = pk_ld64(d + 152);
    size_t body = size - PK_TEMPORAL_INDEXED_HEADER_SIZE;
    if (strtab > body || nf > (body - strtab) / FUNC_REC)
        BAD(32, "%llu functions and %llu bytes of names do not fit in the file", (unsigned long long)nf,
            (unsigned long long)strtab);
    if (!p->reservoir_size || nt > p->reservoir_size) BAD(40, "%llu traces exceed the reservoir size %llu",
                                                        (unsigned long long)nt, (unsigned long long)p->reservoir_size);
    /* every trace has a 16-byte header: a count the bytes cannot hold is
     * corrupt, and checking it bounds the allocation below */
    if (nt > (body - strtab - nf * FUNC_REC) / 16)
        BAD(40, "%llu traces do not fit in the %llu bytes left for them", (unsigned long long)nt,
            (unsigned long long)(body - strtab - nf * FUNC_REC));
    const char *names = (const char *)d + size - strtab;
    if (strtab && names[strtab - 1]) BAD(size - 1, "string table is not NUL-terminated");
    p->image = malloc(strtab ? strtab : 1);
    p->funcs = calloc(nf ? nf : 1, sizeof *p->funcs);
    p->traces = calloc(nt ? nt : 1, sizeof *p->traces);
    if (!p->image || !p->funcs || !p->traces) BAD(0, "out of memory");
    memcpy(p->image, names, strtab);
    p->funcs_cap = nf ? nf : 1;
    p->traces_cap = nt ? nt : 1;
    if (!index_ready(p)) BAD(0, "out of memory");
    const uint8_t *o = d + PK_TEMPORAL_INDEXED_HEADER_SIZE;
    for (uint64_t i = 0; i < nf; i++, o += FUNC_REC) {
        pk_temporal_func *f = &p->funcs[i];
        uint32_t noff = pk_ld32(o + 32), nl = pk_ld32(o + 36), sym = pk_ld32(o + 40);
        if ((uint64_t)noff + nl >= strtab || p->image[noff + nl] || strlen(p->image + noff) != nl || sym > nl)
            BAD(o - d + 32, "function %llu: name at %u (length %u) is outside the string table or malformed",
                (unsigned long long)i, noff, nl);
        f->addr = pk_ld64(o);
        f->size = pk_ld64(o + 8);
        f->entry_count = pk_ld64(o + 16);
        f->covered_runs = pk_ld64(o + 24);
        f->flags = pk_ld32(o + 44);
        f->name = p->image + noff;
        f->symbol = f->name + sym;
        int found;
        uint64_t *slot = name_slot(p, f->name, nl, &found);
        if (!slot) BAD(0, "out of memory");
        if (found) BAD(o - d + 32, "function %llu: duplicate name \"%s\"", (unsigned long long)i, f->name);
        p->num_funcs = i + 1;
        *slot = i + 1;
    }
    const uint8_t *traces_end = d + size - strtab;
    for (uint64_t t = 0; t < nt; t++) {
        if (traces_end - o < 16) BAD(o - d, "trace %llu header runs into the string table", (unsigned long long)t);
        uint64_t w = pk_ld64(o);
        uint32_t len = pk_ld32(o + 8);
        uint64_t bytes = ((uint64_t)len * 4 + 7) & ~7ull;
        if ((uint64_t)(traces_end - o - 16) < bytes)
            BAD(o - d + 8, "trace %llu of %u functions runs past its section", (unsigned long long)t, len);
        uint32_t *fs = malloc((len ? len : 1) * sizeof *fs);
        if (!fs) BAD(0, "out of memory");
        p->traces[t] = (pk_temporal_trace){w, len, fs};
        p->num_traces = t + 1;
        for (uint32_t i = 0; i < len; i++) {
            fs[i] = pk_ld32(o + 16 + 4 * i);
            if (fs[i] >= nf) BAD(o - d + 16 + 4 * i, "trace %llu names function %u of %llu",
                                 (unsigned long long)t, fs[i], (unsigned long long)nf);
        }
        o += 16 + bytes;
    }
    if (o != traces_end) BAD(o - d, "%lld unexplained bytes before the string table", (long long)(traces_end - o));
    return 0;
fail:
    pk_temporal_free(p);
    return -1;
}

int pk_temporal_load(pk_temporal_profile *p, const char *path, pk_err *err)
{
    pk_mapped_file f;
    if (pk_file_map(&f, path, err) != 0) { memset(p, 0, sizeof *p); return -1; }
    int rc = pk_temporal_parse(p, f.data, f.size, path, err);
    pk_file_unmap(&f);
    return rc;
}
