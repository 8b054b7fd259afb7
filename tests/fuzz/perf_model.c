/* perf_model.c — decoding perf.data into the mutator's model and laying a
 * model out again with consistent offsets (see perf_model.h). */
#include "perf_model.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* ---- blobs ---- */

bool pm_blob_set(blob *b, const void *p, size_t n)
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
bool pm_blob_splice(blob *b, size_t at, size_t del, const uint8_t *src, size_t ins, rng *r)
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

void pm_model_free(model *m)
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

uint32_t pm_rec_type(const blob *b) { return b->n >= 8 ? pk_ld32(b->p) : 0; }
/* A record's header size follows its length (payload kept with AUXTRACE
 * excepted: the header then counts only the record itself). */
void pm_rec_fix_size(blob *b)
{
    uint32_t t = pm_rec_type(b);
    if (b->n >= 8 && t != T_AUXTRACE && t != T_TRACING)
        pk_st16(b->p + 6, (uint16_t)(b->n > MAX_REC ? MAX_REC : b->n));
}

/* ---- decoding ---- */

/* Splits [p, end) into records; what does not decode goes to the tail. */
void pm_split_records(model *m, const uint8_t *p, const uint8_t *end)
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
        if (!pm_blob_set(&m->recs[m->nrecs], p, len))
            break;
        m->nrecs++;
        p += len;
    }
    if (p < end)
        pm_blob_set(&m->tail, p, (size_t)(end - p));
}

static bool in_file(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

bool pm_decode(model *m, const uint8_t *d, size_t size)
{
    memset(m, 0, sizeof *m);
    if (size < 16 || pk_ld64(d) != 0x32454c4946524550ull)
        return false;
    uint64_t hsize = pk_ld64(d + 8);
    if (hsize == 16) {
        m->pipe = true;
        pm_split_records(m, d + 16, d + size);
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
        pm_blob_set(&m->attrs[k], a, attr_size - 16);
        if (in_file(ids_off, ids_size, size) && ids_size <= 4096)
            pm_blob_set(&m->ids[k], d + ids_off, ids_size & ~7ull);
        else
            pm_blob_set(&m->ids[k], NULL, 0);
    }
    pm_split_records(m, d + data_off, d + data_off + data_size);
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
        pm_blob_set(&m->feats[m->nfeats++], d + off, len);
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

size_t pm_encode(const model *m, uint8_t *dst, size_t cap)
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

/* ---- compressed streams ---- */

bool pm_inflate_payload(const uint8_t *p, size_t n, blob *outb)
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
bool pm_compress_range(model *m, size_t i, size_t j, bool v2)
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

/* ---- the model as a whole ---- */

void pm_to_pipe(model *m)
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
        pm_rec_fix_size(b);
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
        pm_rec_fix_size(b);
        free(m->feats[i].p);
        m->feats[i] = (blob){NULL, 0};
    }
    m->nrecs += extra;
    m->nattrs = m->nfeats = 0;
    m->pipe = true;
}

void pm_to_file(model *m)
{
    size_t w = 0;
    for (size_t i = 0; i < m->nrecs; i++) {
        blob *b = &m->recs[i];
        uint32_t t = pm_rec_type(b);
        if (t == T_HEADER_ATTR && b->n >= 8 + 64 && m->nattrs < MAX_ATTRS) {
            size_t alen = pk_ld32(b->p + 12);
            if (alen < 64 || alen > b->n - 8)
                alen = b->n - 8;
            size_t k = m->nattrs++;
            m->attrs[k] = m->ids[k] = (blob){NULL, 0};
            pm_blob_set(&m->attrs[k], b->p + 8, alen);
            pm_blob_set(&m->ids[k], b->p + 8 + alen, (b->n - 8 - alen) & ~(size_t)7);
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
            pm_blob_set(&m->feats[at], b->p + 16, b->n - 16);
            m->nfeats++;
            free(b->p);
        } else {
            m->recs[w++] = *b;
        }
    }
    m->nrecs = w;
    m->pipe = false;
}
