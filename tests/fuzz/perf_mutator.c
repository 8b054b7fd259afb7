/* perf_mutator.c — a structure-aware mutator for perf.data (see fuzz_util.h).
 *
 * Random bytes rarely get past a perf.data reader's first checks: one flipped
 * bit in a record size desynchronises every record after it, a sample_type
 * bit changes the layout of every sample, and a compressed stream hides its
 * records from byte mutations entirely. So the input is decoded into a model
 * (file header fields, attrs with their ids, the records of the data section
 * or the pipe stream, feature sections), one thing is changed the way a
 * corrupt, truncated or unusual recording differs from a good one, and the
 * file is laid out again with consistent offsets (unless the mutation is to
 * make them inconsistent). Inputs that do not decode go to LLVMFuzzerMutate. */
#include "fuzz_util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define MAX_RECS 4096
#define MAX_ATTRS 8
#define MAX_FEATS 32
#define MAX_REC 0xffff

enum { T_MMAP = 1, T_LOST = 2, T_COMM = 3, T_EXIT = 4, T_FORK = 7, T_SAMPLE = 9, T_MMAP2 = 10,
       T_HEADER_ATTR = 64, T_TRACING = 66, T_BUILD_ID = 67, T_ROUND = 68, T_ID_INDEX = 69,
       T_AUXTRACE = 71, T_FEATURE = 80, T_COMPRESSED = 81, T_COMPRESSED2 = 83 };

typedef struct blob {
    uint8_t *p;
    size_t n;
} blob;

typedef struct model {
    bool pipe;
    blob attrs[MAX_ATTRS];   /* perf_event_attr bytes (file mode: attr_size - 16) */
    blob ids[MAX_ATTRS];     /* that attr's event ids */
    size_t nattrs;
    blob recs[MAX_RECS];     /* whole records; AUXTRACE/TRACING_DATA keep their payload */
    size_t nrecs;
    blob tail;               /* data bytes that did not decode as records */
    uint32_t feat_id[MAX_FEATS];
    blob feats[MAX_FEATS];   /* ascending ids, as the feature table lists them */
    size_t nfeats;
    /* header words patched after layout (file mode), to make them lie */
    int npatch;
    struct { size_t off; uint64_t v; } patch[2];
} model;

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}
static size_t below(rng *r, size_t n) { return n ? (size_t)(rnd(r) % n) : 0; }

static const uint64_t interesting[] = {
    0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 33, 63, 64, 127, 128, 255, 256, 1000, 4095, 4096, 0x7fff, 0xfff8,
    0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull, 1000000000ull, 1ull << 40, 1ull << 60,
    0x0aaaaaaaaaaaaaabull,   /* * 24 wraps to 8 */
    0x2000000000000001ull,   /* * 8 wraps to 8 */
    UINT64_MAX / 24, UINT64_MAX / 8, UINT64_MAX / 32, INT64_MAX, UINT64_MAX - 7, UINT64_MAX,
};
#define NINTERESTING (sizeof interesting / sizeof interesting[0])

static uint64_t pick_value(rng *r, uint64_t cur)
{
    switch (below(r, 4)) {
    case 0: return cur + 1 + below(r, 8);
    case 1: return cur - 1 - below(r, 8);
    default: return interesting[below(r, NINTERESTING)];
    }
}

/* ---- blobs ---- */

static bool blob_set(blob *b, const void *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    if (!q)
        return false;
    if (n)
        memcpy(q, p, n);
    free(b->p);
    b->p = q;
    b->n = n;
    return true;
}

/* Replaces bytes [at, at + del) with ins bytes of `src` (random if NULL). */
static bool blob_splice(blob *b, size_t at, size_t del, const uint8_t *src, size_t ins, rng *r)
{
    if (at > b->n || del > b->n - at)
        return false;
    size_t n = b->n - del + ins;
    uint8_t *q = malloc(n ? n : 1);
    if (!q)
        return false;
    if (at)
        memcpy(q, b->p, at);
    for (size_t i = 0; i < ins; i++)
        q[at + i] = src ? src[i] : (uint8_t)rnd(r);
    if (b->n - at - del)
        memcpy(q + at + ins, b->p + at + del, b->n - at - del);
    free(b->p);
    b->p = q;
    b->n = n;
    return true;
}

static void model_free(model *m)
{
    for (size_t i = 0; i < m->nattrs; i++) {
        free(m->attrs[i].p);
        free(m->ids[i].p);
    }
    for (size_t i = 0; i < m->nrecs; i++)
        free(m->recs[i].p);
    for (size_t i = 0; i < m->nfeats; i++)
        free(m->feats[i].p);
    free(m->tail.p);
    memset(m, 0, sizeof *m);
}

static uint32_t rec_type(const blob *b) { return b->n >= 8 ? pk_ld32(b->p) : 0; }
/* A record's header size follows its length (payload kept with AUXTRACE
 * excepted: the header then counts only the record itself). */
static void rec_fix_size(blob *b)
{
    uint32_t t = rec_type(b);
    if (b->n >= 8 && t != T_AUXTRACE && t != T_TRACING)
        pk_st16(b->p + 6, (uint16_t)(b->n > MAX_REC ? MAX_REC : b->n));
}

/* ---- decoding ---- */

/* Splits [p, end) into records; what does not decode goes to the tail. */
static void split_records(model *m, const uint8_t *p, const uint8_t *end)
{
    while (end - p >= 8 && m->nrecs < MAX_RECS) {
        size_t sz = pk_ld16(p + 6), len = sz;
        if (sz < 8 || sz > (size_t)(end - p))
            break;
        uint32_t t = pk_ld32(p);
        uint64_t extra = 0;
        if (t == T_AUXTRACE && sz >= 16)
            extra = pk_ld64(p + 8);
        else if (t == T_TRACING && sz >= 12)
            extra = ((uint64_t)pk_ld32(p + 8) + 7) & ~7ull;
        if (extra <= (uint64_t)(end - p) - sz)
            len += (size_t)extra;
        if (!blob_set(&m->recs[m->nrecs], p, len))
            break;
        m->nrecs++;
        p += len;
    }
    if (p < end)
        blob_set(&m->tail, p, (size_t)(end - p));
}

static bool in_file(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

static bool decode(model *m, const uint8_t *d, size_t size)
{
    memset(m, 0, sizeof *m);
    if (size < 16 || pk_ld64(d) != 0x32454c4946524550ull)
        return false;
    uint64_t hsize = pk_ld64(d + 8);
    if (hsize == 16) {
        m->pipe = true;
        split_records(m, d + 16, d + size);
        return true;
    }
    if (hsize != 104 || size < 104)
        return false;
    uint64_t attr_size = pk_ld64(d + 16), attrs_off = pk_ld64(d + 24), attrs_size = pk_ld64(d + 32);
    uint64_t data_off = pk_ld64(d + 40), data_size = pk_ld64(d + 48);
    if (attr_size < 24 || attr_size > 4096 || !in_file(attrs_off, attrs_size, size) ||
        !in_file(data_off, data_size, size))
        return false;
    for (uint64_t i = 0; i < attrs_size / attr_size && m->nattrs < MAX_ATTRS; i++) {
        const uint8_t *a = d + attrs_off + i * attr_size;
        uint64_t ids_off = pk_ld64(a + attr_size - 16), ids_size = pk_ld64(a + attr_size - 8);
        size_t k = m->nattrs++;
        blob_set(&m->attrs[k], a, attr_size - 16);
        if (in_file(ids_off, ids_size, size) && ids_size <= 4096)
            blob_set(&m->ids[k], d + ids_off, ids_size & ~7ull);
        else
            blob_set(&m->ids[k], NULL, 0);
    }
    split_records(m, d + data_off, d + data_off + data_size);
    uint64_t table = data_off + data_size, k = 0;
    for (uint32_t id = 0; id < 256 && m->nfeats < MAX_FEATS; id++) {
        if (!(pk_ld64(d + 72 + 8 * (id / 64)) >> (id % 64) & 1))
            continue;
        uint64_t ent = table + 16 * k++;
        if (!in_file(ent, 16, size))
            break;
        uint64_t off = pk_ld64(d + ent), len = pk_ld64(d + ent + 8);
        if (!in_file(off, len, size))
            continue;
        m->feat_id[m->nfeats] = id;
        blob_set(&m->feats[m->nfeats++], d + off, len);
    }
    return true;
}

/* ---- layout ---- */

typedef struct out {
    uint8_t *p;
    size_t n, cap;
    bool full;
} out;

static void put(out *o, const void *p, size_t n)
{
    if (o->full || n > o->cap - o->n) {
        o->full = true;
        return;
    }
    if (n)
        memcpy(o->p + o->n, p, n);
    o->n += n;
}
static void put64(out *o, uint64_t v) { uint8_t b[8]; pk_st64(b, v); put(o, b, 8); }

static size_t encode(const model *m, uint8_t *dst, size_t cap)
{
    out o = {dst, 0, cap, false};
    put64(&o, 0x32454c4946524550ull);
    if (m->pipe) {
        put64(&o, 16);
        for (size_t i = 0; i < m->nrecs; i++)
            put(&o, m->recs[i].p, m->recs[i].n);
        put(&o, m->tail.p, m->tail.n);
        return o.full ? 0 : o.n;
    }
    size_t attr_len = 0;
    for (size_t i = 0; i < m->nattrs; i++)
        attr_len = m->attrs[i].n > attr_len ? m->attrs[i].n : attr_len;
    uint64_t ids_off = 104, ids_total = 0;
    for (size_t i = 0; i < m->nattrs; i++)
        ids_total += m->ids[i].n;
    uint64_t attrs_off = ids_off + ids_total, attrs_size = (attr_len + 16) * m->nattrs;
    uint64_t data_off = attrs_off + attrs_size, data_size = m->tail.n;
    for (size_t i = 0; i < m->nrecs; i++)
        data_size += m->recs[i].n;
    uint8_t h[96];
    memset(h, 0, sizeof h);
    pk_st64(h, 104);
    pk_st64(h + 8, attr_len + 16);
    pk_st64(h + 16, attrs_off);
    pk_st64(h + 24, attrs_size);
    pk_st64(h + 32, data_off);
    pk_st64(h + 40, data_size);
    for (size_t i = 0; i < m->nfeats; i++)
        h[64 + m->feat_id[i] / 8] |= (uint8_t)(1u << (m->feat_id[i] % 8));
    put(&o, h, sizeof h);
    for (size_t i = 0; i < m->nattrs; i++)
        put(&o, m->ids[i].p, m->ids[i].n);
    uint64_t at = ids_off;
    static const uint8_t zeros[256];
    for (size_t i = 0; i < m->nattrs; i++) {
        put(&o, m->attrs[i].p, m->attrs[i].n);
        for (size_t pad = attr_len - m->attrs[i].n; pad;) {
            size_t k = pad < sizeof zeros ? pad : sizeof zeros;
            put(&o, zeros, k);
            pad -= k;
        }
        put64(&o, at);
        put64(&o, m->ids[i].n);
        at += m->ids[i].n;
    }
    for (size_t i = 0; i < m->nrecs; i++)
        put(&o, m->recs[i].p, m->recs[i].n);
    put(&o, m->tail.p, m->tail.n);
    uint64_t foff = o.n + 16 * m->nfeats;
    for (size_t i = 0; i < m->nfeats; i++) {
        put64(&o, foff);
        put64(&o, m->feats[i].n);
        foff += m->feats[i].n;
    }
    for (size_t i = 0; i < m->nfeats; i++)
        put(&o, m->feats[i].p, m->feats[i].n);
    if (o.full)
        return 0;
    for (int i = 0; i < m->npatch; i++)
        if (m->patch[i].off + 8 <= o.n)
            pk_st64(o.p + m->patch[i].off, m->patch[i].v);
    return o.n;
}

/* ---- samples: where the counts are ---- */

typedef struct layout {
    uint64_t sample_type, read_format, branch_sample_type;
    size_t callchain, branches; /* offsets of the nr words in the record; 0 = absent */
} layout;

static blob *attr0(model *m)
{
    if (!m->pipe)
        return m->nattrs ? &m->attrs[0] : NULL;
    for (size_t i = 0; i < m->nrecs; i++)
        if (rec_type(&m->recs[i]) == T_HEADER_ATTR && m->recs[i].n >= 8 + 80)
            return &m->recs[i];
    return NULL;
}
static size_t attr_base(const model *m) { return m->pipe ? 8 : 0; }

static void sample_layout(model *m, const blob *rec, layout *l)
{
    memset(l, 0, sizeof *l);
    blob *a = attr0(m);
    if (!a || a->n < attr_base(m) + 80)
        return;
    const uint8_t *ap = a->p + attr_base(m);
    l->sample_type = pk_ld64(ap + 24);
    l->read_format = pk_ld64(ap + 32);
    l->branch_sample_type = pk_ld64(ap + 72);
    uint64_t st = l->sample_type;
    size_t off = 8;
    off += 8 * (size_t)__builtin_popcountll(st & (PK_SAMPLE_IDENTIFIER | PK_SAMPLE_IP | PK_SAMPLE_TID |
                                                  PK_SAMPLE_TIME | PK_SAMPLE_ADDR | PK_SAMPLE_ID |
                                                  PK_SAMPLE_STREAM_ID | PK_SAMPLE_CPU | PK_SAMPLE_PERIOD));
    if (st & PK_SAMPLE_READ) {
        uint64_t rf = l->read_format, per = 1 + !!(rf & 4) + !!(rf & 16), hdr = !!(rf & 1) + !!(rf & 2);
        if (rf & 8) {
            if (off + 8 > rec->n)
                return;
            uint64_t nr = pk_ld64(rec->p + off);
            if (nr > 4096)
                return;
            off += 8 + 8 * (hdr + per * nr);
        } else {
            off += 8 * (hdr + per);
        }
    }
    if (st & PK_SAMPLE_CALLCHAIN) {
        if (off + 8 > rec->n)
            return;
        l->callchain = off;
        uint64_t nr = pk_ld64(rec->p + off);
        if (nr > MAX_REC)
            return;
        off += 8 + 8 * nr;
    }
    if (st & PK_SAMPLE_RAW) {
        if (off + 4 > rec->n)
            return;
        off += 4 + pk_ld32(rec->p + off);
    }
    if ((st & PK_SAMPLE_BRANCH_STACK) && off + 8 <= rec->n)
        l->branches = off;
}

/* Changes the call-chain or branch-stack count of a sample: to a lie, or to
 * the truth with entries added or removed. */
static bool mutate_counts(model *m, blob *rec, rng *r)
{
    layout l;
    sample_layout(m, rec, &l);
    size_t where = l.callchain && l.branches ? (below(r, 2) ? l.callchain : l.branches)
                                             : (l.callchain ? l.callchain : l.branches);
    if (!where)
        return false;
    bool br = where == l.branches;
    size_t each = br ? 24 : 8, first = where + 8 + (br && (l.branch_sample_type & PK_BRANCH_HW_INDEX) ? 8 : 0);
    uint64_t nr = pk_ld64(rec->p + where);
    switch (below(r, 3)) {
    case 0: /* a lie */
        pk_st64(rec->p + where, pick_value(r, nr));
        return true;
    case 1: { /* more entries, plausible addresses */
        size_t k = 1 + below(r, 32);
        if (first > rec->n || rec->n + k * each > MAX_REC)
            return false;
        uint8_t ent[24 * 32];
        for (size_t i = 0; i < k * each; i += 8)
            pk_st64(ent + i, below(r, 4) ? 0x400000 + below(r, 0x10000) : interesting[below(r, NINTERESTING)]);
        size_t at = first + each * (size_t)(nr < 0x10000 ? nr : 0);
        if (at > rec->n)
            at = rec->n;
        if (!blob_splice(rec, at, 0, ent, k * each, r))
            return false;
        pk_st64(rec->p + where, nr + k);
        rec_fix_size(rec);
        return true;
    }
    default: { /* fewer */
        if (!nr || nr > 0x10000 || first + each * nr > rec->n)
            return false;
        size_t k = 1 + below(r, (size_t)nr);
        if (!blob_splice(rec, first + each * (size_t)(nr - k), each * k, NULL, 0, r))
            return false;
        pk_st64(rec->p + where, nr - k);
        rec_fix_size(rec);
        return true;
    }
    }
}

/* ---- compressed streams ---- */

static bool inflate_payload(const uint8_t *p, size_t n, blob *outb)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    if (!z)
        return false;
    ZSTD_initDStream(z);
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    ZSTD_inBuffer in = {p, n, 0};
    bool ok = buf != NULL;
    while (ok && in.pos < in.size) {
        if (len == cap) {
            if (cap >= (1u << 20))
                break;
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                ok = false;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ZSTD_outBuffer ob = {buf + len, cap - len, 0};
        size_t zr = ZSTD_decompressStream(z, &ob, &in);
        len += ob.pos;
        if (ZSTD_isError(zr) || (zr == 0 && in.pos == in.size) || (ob.pos == 0 && ob.size))
            break;
    }
    ZSTD_freeDStream(z);
    if (ok && len) {
        free(outb->p);
        outb->p = buf;
        outb->n = len;
        return true;
    }
    free(buf);
    return false;
}

/* One COMPRESSED (or COMPRESSED2) record holding recs[i, j). */
static bool compress_range(model *m, size_t i, size_t j, rng *r)
{
    size_t n = 0;
    for (size_t k = i; k < j; k++)
        n += m->recs[k].n;
    uint8_t *plain = malloc(n ? n : 1), *z = malloc(ZSTD_compressBound(n) + 32);
    bool ok = false;
    if (plain && z) {
        size_t at = 0;
        for (size_t k = i; k < j; k++) {
            memcpy(plain + at, m->recs[k].p, m->recs[k].n);
            at += m->recs[k].n;
        }
        bool v2 = below(r, 2);
        size_t hdr = v2 ? 16 : 8;
        size_t zn = ZSTD_compress(z + hdr, ZSTD_compressBound(n), plain, n, 1);
        if (!ZSTD_isError(zn) && zn + hdr <= MAX_REC) {
            size_t len = (zn + hdr + 7) & ~(size_t)7;
            memset(z + hdr + zn, 0, len - hdr - zn);
            pk_st32(z, v2 ? T_COMPRESSED2 : T_COMPRESSED);
            pk_st16(z + 4, 0);
            pk_st16(z + 6, (uint16_t)len);
            if (v2)
                pk_st64(z + 8, zn);
            for (size_t k = i + 1; k < j; k++)
                free(m->recs[k].p);
            free(m->recs[i].p);
            m->recs[i].p = z;
            m->recs[i].n = len;
            z = NULL;
            memmove(&m->recs[i + 1], &m->recs[j], (m->nrecs - j) * sizeof(blob));
            m->nrecs -= j - i - 1;
            ok = true;
        }
    }
    free(plain);
    free(z);
    return ok;
}

static bool mutate_record(model *m, blob *rec, rng *r);

/* Decompresses a COMPRESSED record and either puts its records in its place
 * or changes one of them and compresses them again. */
static bool mutate_compressed(model *m, size_t i, rng *r)
{
    blob *c = &m->recs[i];
    size_t hdr = rec_type(c) == T_COMPRESSED2 ? 16 : 8;
    if (c->n <= hdr)
        return false;
    size_t zn = c->n - hdr;
    if (hdr == 16 && pk_ld64(c->p + 8) < zn)
        zn = (size_t)pk_ld64(c->p + 8);
    blob plain = {NULL, 0};
    if (!inflate_payload(c->p + hdr, zn, &plain))
        return false;
    model inner;
    memset(&inner, 0, sizeof inner);
    inner.pipe = true;
    split_records(&inner, plain.p, plain.p + plain.n);
    free(plain.p);
    bool ok = false;
    size_t room = MAX_RECS - m->nrecs;
    if (inner.nrecs && !inner.tail.n) {
        bool spill = below(r, 3) == 0 && inner.nrecs <= room;
        if (!spill)
            mutate_record(m, &inner.recs[below(r, inner.nrecs)], r);
        if (spill || inner.nrecs <= room) {
            /* splice the inner records in, then (usually) compress them back */
            size_t k = inner.nrecs;
            free(c->p);
            memmove(&m->recs[i + k], &m->recs[i + 1], (m->nrecs - i - 1) * sizeof(blob));
            memcpy(&m->recs[i], inner.recs, k * sizeof(blob));
            m->nrecs += k - 1;
            inner.nrecs = 0;
            ok = spill || compress_range(m, i, i + k, r);
        }
    }
    model_free(&inner);
    return ok;
}

/* ---- records ---- */

static const uint32_t types[] = {T_MMAP, T_LOST, T_COMM, T_EXIT, T_FORK, T_SAMPLE, T_MMAP2, 13, T_HEADER_ATTR,
                                 T_TRACING, T_BUILD_ID, T_ROUND, T_ID_INDEX, T_AUXTRACE, T_FEATURE,
                                 T_COMPRESSED, 82, T_COMPRESSED2, 0, 255};

static bool mutate_record(model *m, blob *rec, rng *r)
{
    if (rec->n < 8)
        return false;
    switch (below(r, 8)) {
    case 0: /* the header size lies */
        pk_st16(rec->p + 6, (uint16_t)pick_value(r, pk_ld16(rec->p + 6)));
        return true;
    case 1:
        pk_st32(rec->p, types[below(r, sizeof types / sizeof types[0])]);
        return true;
    case 2:
        pk_st16(rec->p + 4, (uint16_t)(pk_ld16(rec->p + 4) ^ (1u << below(r, 16))));
        return true;
    case 3: { /* grow or shrink the body */
        size_t k = below(r, 2) ? 8 : 1 + below(r, 24);
        size_t at = 8 + below(r, rec->n - 7);
        bool ok = below(r, 2) ? (rec->n + k <= MAX_REC && blob_splice(rec, at, 0, NULL, k, r))
                              : (at + k <= rec->n && blob_splice(rec, at, k, NULL, 0, r));
        rec_fix_size(rec);
        return ok;
    }
    case 4: { /* a word of the body: an interesting value */
        if (rec->n < 16)
            return false;
        size_t at = 8 + 8 * below(r, (rec->n - 8) / 8);
        pk_st64(rec->p + at, pick_value(r, pk_ld64(rec->p + at)));
        return true;
    }
    case 5: { /* libFuzzer's bytes on the body, the size following */
        size_t body = rec->n - 8, cap = body + 64 < MAX_REC - 8 ? body + 64 : MAX_REC - 8;
        uint8_t *b = malloc(cap ? cap : 1);
        if (!b)
            return false;
        if (body)
            memcpy(b, rec->p + 8, body);
        size_t nb = body ? LLVMFuzzerMutate(b, body, cap) : 0;
        bool ok = blob_splice(rec, 8, body, b, nb, r);
        free(b);
        rec_fix_size(rec);
        return ok;
    }
    default:
        if (rec_type(rec) == T_SAMPLE)
            return mutate_counts(m, rec, r);
        pk_st16(rec->p + 6, (uint16_t)pick_value(r, pk_ld16(rec->p + 6)));
        return true;
    }
}

/* ---- attrs ---- */

static bool mutate_attr(model *m, rng *r)
{
    blob *a = NULL;
    size_t base = attr_base(m);
    if (m->pipe) {
        size_t k = 0, pick = 0;
        for (size_t i = 0; i < m->nrecs; i++)
            if (rec_type(&m->recs[i]) == T_HEADER_ATTR && m->recs[i].n >= 8 + 80 && below(r, ++k) == 0)
                pick = i + 1;
        if (!pick)
            return false;
        a = &m->recs[pick - 1];
    } else if (m->nattrs) {
        a = &m->attrs[below(r, m->nattrs)];
    }
    if (!a || a->n < base + 80)
        return false;
    uint8_t *p = a->p + base;
    switch (below(r, 7)) {
    case 0:
        pk_st64(p + 24, pk_ld64(p + 24) ^ (1ull << (below(r, 8) ? below(r, 25) : below(r, 64))));
        break;
    case 1:
        pk_st64(p + 32, pk_ld64(p + 32) ^ (1ull << below(r, 5)));
        break;
    case 2: {
        static const uint64_t bst[] = {PK_BRANCH_HW_INDEX, 1ull << 19, PK_BRANCH_ANY, PK_BRANCH_USER};
        pk_st64(p + 72, pk_ld64(p + 72) ^ (below(r, 4) ? bst[below(r, 4)] : 1ull << below(r, 64)));
        break;
    }
    case 3: /* sample_id_all, freq */
        pk_st64(p + 40, pk_ld64(p + 40) ^ (below(r, 2) ? 1ull << 18 : 1ull << 10));
        break;
    case 4: {
        static const uint32_t sizes[] = {0, 8, 63, 64, 72, 80, 96, 104, 112, 120, 128, 136, 4096, 0xffffffff};
        pk_st32(p + 4, sizes[below(r, sizeof sizes / sizeof sizes[0])]);
        break;
    }
    case 5:
        pk_st64(p + 16, pick_value(r, pk_ld64(p + 16)));
        break;
    default: /* one more (or one less) event id */
        if (m->pipe) {
            if (a->n + 8 > MAX_REC || !blob_splice(a, a->n, 0, NULL, 8, r))
                return false;
            rec_fix_size(a);
        } else {
            blob *ids = &m->ids[a - m->attrs];
            if (ids->n && below(r, 2))
                blob_splice(ids, ids->n - 8, 8, NULL, 0, r);
            else
                blob_splice(ids, ids->n, 0, NULL, 8, r);
        }
    }
    return true;
}

/* ---- the model as a whole ---- */

static void to_pipe(model *m)
{
    /* attrs become HEADER_ATTR records and features HEADER_FEATURE records,
     * ahead of the others, as perf writes a pipe */
    size_t extra = m->nattrs + m->nfeats;
    if (m->nrecs + extra > MAX_RECS)
        return;
    memmove(&m->recs[extra], &m->recs[0], m->nrecs * sizeof(blob));
    size_t k = 0;
    for (size_t i = 0; i < m->nattrs; i++, k++) {
        blob *b = &m->recs[k];
        b->n = 8 + m->attrs[i].n + m->ids[i].n;
        b->p = calloc(1, b->n);
        if (m->attrs[i].n)
            memcpy(b->p + 8, m->attrs[i].p, m->attrs[i].n);
        if (m->ids[i].n)
            memcpy(b->p + 8 + m->attrs[i].n, m->ids[i].p, m->ids[i].n);
        pk_st32(b->p, T_HEADER_ATTR);
        rec_fix_size(b);
        free(m->attrs[i].p);
        free(m->ids[i].p);
        m->attrs[i] = m->ids[i] = (blob){NULL, 0};
    }
    for (size_t i = 0; i < m->nfeats; i++, k++) {
        blob *b = &m->recs[k];
        size_t n = m->feats[i].n < MAX_REC - 16 ? m->feats[i].n : MAX_REC - 16;
        b->n = 16 + n;
        b->p = calloc(1, b->n);
        pk_st32(b->p, T_FEATURE);
        pk_st64(b->p + 8, m->feat_id[i]);
        if (n)
            memcpy(b->p + 16, m->feats[i].p, n);
        rec_fix_size(b);
        free(m->feats[i].p);
        m->feats[i] = (blob){NULL, 0};
    }
    m->nrecs += extra;
    m->nattrs = m->nfeats = 0;
    m->pipe = true;
}

static void to_file(model *m)
{
    size_t w = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        blob *b = &m->recs[i];
        uint32_t t = rec_type(b);
        if (t == T_HEADER_ATTR && b->n >= 8 + 64 && m->nattrs < MAX_ATTRS) {
            size_t alen = pk_ld32(b->p + 12);
            if (alen < 64 || alen > b->n - 8)
                alen = b->n - 8;
            size_t k = m->nattrs++;
            m->attrs[k] = m->ids[k] = (blob){NULL, 0};
            blob_set(&m->attrs[k], b->p + 8, alen);
            blob_set(&m->ids[k], b->p + 8 + alen, (b->n - 8 - alen) & ~(size_t)7);
            free(b->p);
        } else if (t == T_FEATURE && b->n >= 16 && m->nfeats < MAX_FEATS && pk_ld64(b->p + 8) < 256) {
            uint32_t id = (uint32_t)pk_ld64(b->p + 8);
            size_t at = 0;
            while (at < m->nfeats && m->feat_id[at] < id)
                at++;
            if (at < m->nfeats && m->feat_id[at] == id) {
                m->recs[w++] = *b;
                continue;
            }
            memmove(&m->feat_id[at + 1], &m->feat_id[at], (m->nfeats - at) * sizeof m->feat_id[0]);
            memmove(&m->feats[at + 1], &m->feats[at], (m->nfeats - at) * sizeof m->feats[0]);
            m->feat_id[at] = id;
            m->feats[at].p = NULL;
            blob_set(&m->feats[at], b->p + 16, b->n - 16);
            m->nfeats++;
            free(b->p);
        } else {
            m->recs[w++] = *b;
        }
    }
    m->nrecs = w;
    m->pipe = false;
}

static size_t pick_record(const model *m, rng *r)
{
    /* samples carry the interesting counts: prefer them */
    for (int tries = 0; tries < 4; tries++) {
        size_t i = below(r, m->nrecs);
        if (rec_type(&m->recs[i]) == T_SAMPLE || tries == 3)
            return i;
    }
    return 0;
}

static bool mutate_model(model *m, rng *r)
{
    switch (below(r, 16)) {
    case 0: case 1: case 2: case 3: case 4: case 5:
        return m->nrecs && mutate_record(m, &m->recs[pick_record(m, r)], r);
    case 6: case 7:
        return mutate_attr(m, r);
    case 8: { /* records duplicated, dropped or swapped */
        if (!m->nrecs)
            return false;
        size_t i = below(r, m->nrecs), j = below(r, m->nrecs);
        switch (below(r, 3)) {
        case 0: {
            if (m->nrecs == MAX_RECS)
                return false;
            blob c = {NULL, 0};
            if (!blob_set(&c, m->recs[i].p, m->recs[i].n))
                return false;
            memmove(&m->recs[j + 1], &m->recs[j], (m->nrecs - j) * sizeof(blob));
            m->recs[j] = c;
            m->nrecs++;
            return true;
        }
        case 1:
            free(m->recs[i].p);
            memmove(&m->recs[i], &m->recs[i + 1], (m->nrecs - i - 1) * sizeof(blob));
            m->nrecs--;
            return true;
        default: {
            blob t = m->recs[i];
            m->recs[i] = m->recs[j];
            m->recs[j] = t;
            return true;
        }
        }
    }
    case 9: { /* into a compressed stream, or out of one */
        for (size_t k = 0; k < m->nrecs; k++) {
            uint32_t t = rec_type(&m->recs[k]);
            if ((t == T_COMPRESSED || t == T_COMPRESSED2) && below(r, 2))
                return mutate_compressed(m, k, r);
        }
        if (!m->nrecs)
            return false;
        size_t i = below(r, m->nrecs), j = i + 1 + below(r, 64);
        return compress_range(m, i, j < m->nrecs ? j : m->nrecs, r);
    }
    case 10:
        if (m->pipe)
            to_file(m);
        else
            to_pipe(m);
        return true;
    case 11: { /* a header word lies (file mode) */
        if (m->pipe || m->npatch >= 2)
            return false;
        static const size_t words[] = {8, 16, 24, 32, 40, 48, 72, 80, 88, 96};
        size_t w = words[below(r, sizeof words / sizeof words[0])];
        m->patch[m->npatch].off = w;
        m->patch[m->npatch++].v = w >= 72 ? 1ull << below(r, 64) : interesting[below(r, NINTERESTING)];
        return true;
    }
    case 12: { /* a feature section's bytes */
        if (!m->nfeats)
            return false;
        blob *f = &m->feats[below(r, m->nfeats)];
        size_t cap = f->n + 64;
        uint8_t *b = malloc(cap);
        if (!b)
            return false;
        if (f->n)
            memcpy(b, f->p, f->n);
        size_t nb = f->n ? LLVMFuzzerMutate(b, f->n, cap) : 0;
        bool ok = blob_set(f, b, nb);
        free(b);
        return ok;
    }
    case 13: /* bytes after the last record */
        return blob_splice(&m->tail, m->tail.n, 0, NULL, 1 + below(r, 15), r);
    default: { /* a compressed record's contents */
        for (size_t k = 0; k < m->nrecs; k++) {
            uint32_t t = rec_type(&m->recs[k]);
            if (t == T_COMPRESSED || t == T_COMPRESSED2)
                return mutate_compressed(m, k, r);
        }
        return m->nrecs && mutate_record(m, &m->recs[pick_record(m, r)], r);
    }
    }
}

size_t pk_fuzz_perf_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    /* PK_FUZZ_BYTE_MUTATOR=1: libFuzzer's mutations only (to measure what
     * the structure buys) */
    static int plain = -1;
    if (plain < 0)
        plain = getenv("PK_FUZZ_BYTE_MUTATOR") != NULL;
    if (plain)
        return LLVMFuzzerMutate(data, size, max_size);
    rng r = {((uint64_t)seed << 32 | seed) ^ 0x9e3779b97f4a7c15ull};
    rnd(&r);
    model *m = malloc(sizeof *m);
    size_t n = 0;
    /* one time in eight libFuzzer's own mutation keeps byte-level variety */
    if (m && below(&r, 8) && decode(m, data, size)) {
        uint8_t *tmp = malloc(max_size);
        int changes = 1 + (int)below(&r, 3);
        bool changed = false;
        for (int i = 0; i < changes; i++)
            changed |= mutate_model(m, &r);
        if (tmp && changed)
            n = encode(m, tmp, max_size);
        if (n)
            memcpy(data, tmp, n);
        free(tmp);
        model_free(m);
    }
    free(m);
    return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
