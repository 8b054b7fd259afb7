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
#include "perf_model.h"

#include <stdlib.h>
#include <string.h>

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
        if (pm_rec_type(&m->recs[i]) == T_HEADER_ATTR && m->recs[i].n >= 8 + 80)
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
        if (!pm_blob_splice(rec, at, 0, ent, k * each, r))
            return false;
        pk_st64(rec->p + where, nr + k);
        pm_rec_fix_size(rec);
        return true;
    }
    default: { /* fewer */
        if (!nr || nr > 0x10000 || first + each * nr > rec->n)
            return false;
        size_t k = 1 + below(r, (size_t)nr);
        if (!pm_blob_splice(rec, first + each * (size_t)(nr - k), each * k, NULL, 0, r))
            return false;
        pk_st64(rec->p + where, nr - k);
        pm_rec_fix_size(rec);
        return true;
    }
    }
}

static bool mutate_record(model *m, blob *rec, rng *r);

/* Decompresses a COMPRESSED record and either puts its records in its place
 * or changes one of them and compresses them again. */
static bool mutate_compressed(model *m, size_t i, rng *r)
{
    blob *c = &m->recs[i];
    size_t hdr = pm_rec_type(c) == T_COMPRESSED2 ? 16 : 8;
    if (c->n <= hdr)
        return false;
    size_t zn = c->n - hdr;
    if (hdr == 16 && pk_ld64(c->p + 8) < zn)
        zn = (size_t)pk_ld64(c->p + 8);
    blob plain = {NULL, 0};
    if (!pm_inflate_payload(c->p + hdr, zn, &plain))
        return false;
    model inner;
    memset(&inner, 0, sizeof inner);
    inner.pipe = true;
    pm_split_records(&inner, plain.p, plain.p + plain.n);
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
            ok = spill || pm_compress_range(m, i, i + k, below(r, 2));
        }
    }
    pm_model_free(&inner);
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
        bool ok = below(r, 2) ? (rec->n + k <= MAX_REC && pm_blob_splice(rec, at, 0, NULL, k, r))
                              : (at + k <= rec->n && pm_blob_splice(rec, at, k, NULL, 0, r));
        pm_rec_fix_size(rec);
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
        bool ok = pm_blob_splice(rec, 8, body, b, nb, r);
        free(b);
        pm_rec_fix_size(rec);
        return ok;
    }
    default:
        if (pm_rec_type(rec) == T_SAMPLE)
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
            if (pm_rec_type(&m->recs[i]) == T_HEADER_ATTR && m->recs[i].n >= 8 + 80 && below(r, ++k) == 0)
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
            if (a->n + 8 > MAX_REC || !pm_blob_splice(a, a->n, 0, NULL, 8, r))
                return false;
            pm_rec_fix_size(a);
        } else {
            blob *ids = &m->ids[a - m->attrs];
            if (ids->n && below(r, 2))
                pm_blob_splice(ids, ids->n - 8, 8, NULL, 0, r);
            else
                pm_blob_splice(ids, ids->n, 0, NULL, 8, r);
        }
    }
    return true;
}
static size_t pick_record(const model *m, rng *r)
{
    /* samples carry the interesting counts: prefer them */
    for (int tries = 0; tries < 4; tries++) {
        size_t i = below(r, m->nrecs);
        if (pm_rec_type(&m->recs[i]) == T_SAMPLE || tries == 3)
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
            if (!pm_blob_set(&c, m->recs[i].p, m->recs[i].n))
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
            uint32_t t = pm_rec_type(&m->recs[k]);
            if ((t == T_COMPRESSED || t == T_COMPRESSED2) && below(r, 2))
                return mutate_compressed(m, k, r);
        }
        if (!m->nrecs)
            return false;
        size_t i = below(r, m->nrecs), j = i + 1 + below(r, 64);
        return pm_compress_range(m, i, j < m->nrecs ? j : m->nrecs, below(r, 2));
    }
    case 10:
        if (m->pipe)
            pm_to_file(m);
        else
            pm_to_pipe(m);
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
        bool ok = pm_blob_set(f, b, nb);
        free(b);
        return ok;
    }
    case 13: /* bytes after the last record */
        return pm_blob_splice(&m->tail, m->tail.n, 0, NULL, 1 + below(r, 15), r);
    default: { /* a compressed record's contents */
        for (size_t k = 0; k < m->nrecs; k++) {
            uint32_t t = pm_rec_type(&m->recs[k]);
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
    if (m && below(&r, 8) && pm_decode(m, data, size)) {
        uint8_t *tmp = malloc(max_size);
        int changes = 1 + (int)below(&r, 3);
        bool changed = false;
        for (int i = 0; i < changes; i++)
            changed |= mutate_model(m, &r);
        if (tmp && changed)
            n = pm_encode(m, tmp, max_size);
        if (n)
            memcpy(data, tmp, n);
        free(tmp);
        pm_model_free(m);
    }
    free(m);
    return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
