/* perf_write.c — writing a file-mode perf.data the way `perf record` lays it
 * out: header (104) | event ids | one attr entry (128 + ids section) | data |
 * feature table | feature payloads. The header's data size and feature bitmap
 * are patched in at close, and the file only appears under its final name
 * then (pk_out_file: temporary + rename).
 *
 * Speed: each record is assembled in a scratch buffer owned by the writer and
 * handed to the buffered pk_out_file in one call; nothing is allocated per
 * record except the first time a build-id is seen.
 *
 * Threads: a writer is not thread-safe. Several threads may share one only
 * if they serialise every pk_perf_write_* / close call with their own lock. */
#include "perf/perf_internal.h"

#include <stdlib.h>

#define ATTR_SIZE 128
#define IDS_OFF PK_FILE_HEADER_SIZE
#define ATTR_OFF (IDS_OFF + 8)
#define DATA_OFF (ATTR_OFF + ATTR_SIZE + 16)
#define ROUND_EVERY 4096            /* records between FINISHED_ROUND markers */
#define MAX_REC 65528               /* largest 8-aligned record size */
#define NAME_ALIGN 64               /* perf pads build-id names and strings to 64 */

typedef struct wbuild_id {
    char *name;
    uint8_t id[20];
    uint8_t size;
} wbuild_id;

struct pk_perf_writer {
    pk_out_file out;
    pk_perf_writer_opts opts;
    char *hostname, *os_release, *cmdline, *arch;
    uint64_t sample_type, branch_sample_type;
    uint64_t data_bytes;
    uint32_t since_round;
    pk_vec build_ids;               /* wbuild_id */
    uint64_t rec[MAX_REC / 8 + 8];  /* scratch record, 8-aligned */
};

static inline uint8_t *put64(uint8_t *p, uint64_t v) { pk_st64(p, v); return p + 8; }
static inline uint8_t *put32x2(uint8_t *p, uint32_t a, uint32_t b) { pk_st32(p, a); pk_st32(p + 4, b); return p + 8; }

static char *dup_opt(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

static void writer_free(pk_perf_writer *w)
{
    for (size_t i = 0; i < w->build_ids.len; i++)
        free(PK_VEC_AT(&w->build_ids, wbuild_id, i).name);
    pk_vec_free(&w->build_ids);
    free(w->hostname);
    free(w->arch);
    free(w->os_release);
    free(w->cmdline);
    free(w);
}

static int emit(pk_perf_writer *w, uint8_t *end, uint32_t type, uint16_t misc, pk_err *err)
{
    uint8_t *start = (uint8_t *)w->rec;
    size_t size = (size_t)(end - start);
    pk_st32(start, type);
    pk_st16(start + 4, misc);
    pk_st16(start + 6, (uint16_t)size);
    if (pk_out_write(&w->out, start, size, err))
        return -1;
    w->data_bytes += size;
    if (++w->since_round >= ROUND_EVERY) {
        uint8_t fr[8];
        pk_st32(fr, PK_REC_FINISHED_ROUND);
        pk_st16(fr + 4, 0);
        pk_st16(fr + 6, 8);
        if (pk_out_write(&w->out, fr, 8, err))
            return -1;
        w->data_bytes += 8;
        w->since_round = 0;
    }
    return 0;
}

/* sample_id trailer for non-sample records: {pid, tid}, time, [cpu, res] */
static uint8_t *trailer(const pk_perf_writer *w, uint8_t *p, uint32_t pid, uint32_t tid, uint64_t time)
{
    p = put32x2(p, pid, tid);
    p = put64(p, time);
    if (w->opts.cpu)
        p = put32x2(p, 0, 0);
    return p;
}

/* Copies a NUL-terminated string padded with zeros to a multiple of 8, or
 * fails when it would not fit in a record. */
static uint8_t *put_str(uint8_t *p, const uint8_t *limit, const char *s)
{
    size_t n = strlen(s) + 1, padded = (n + 7) & ~(size_t)7;
    if (padded > (size_t)(limit - p))
        return NULL;
    memcpy(p, s, n);
    memset(p + n, 0, padded - n);
    return p + padded;
}

pk_perf_writer *pk_perf_writer_open(const char *path, const pk_perf_writer_opts *opts, pk_err *err)
{
    pk_perf_writer *w = calloc(1, sizeof *w);
    if (!w) {
        pk_err_set(err, "%s: out of memory", path);
        return NULL;
    }
    w->opts = *opts;
    bool oom = false;
    w->hostname = dup_opt(opts->hostname, &oom);
    w->arch = dup_opt(opts->arch, &oom);
    w->os_release = dup_opt(opts->os_release, &oom);
    w->cmdline = dup_opt(opts->cmdline, &oom);
    w->opts.hostname = w->opts.os_release = w->opts.cmdline = w->opts.arch = NULL;
    pk_vec_init(&w->build_ids, sizeof(wbuild_id));
    if (oom) {
        pk_err_set(err, "%s: out of memory", path);
        writer_free(w);
        return NULL;
    }
    w->sample_type = PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_TIME | PK_SAMPLE_PERIOD;
    if (opts->cpu)
        w->sample_type |= PK_SAMPLE_CPU;
    if (opts->callchain)
        w->sample_type |= PK_SAMPLE_CALLCHAIN;
    if (opts->branch_stack) {
        w->sample_type |= PK_SAMPLE_BRANCH_STACK;
        w->branch_sample_type = PK_BRANCH_USER | PK_BRANCH_ANY | (opts->hw_idx ? PK_BRANCH_HW_INDEX : 0);
    }
    if (pk_out_open(&w->out, path, err)) {
        writer_free(w);
        return NULL;
    }
    /* header placeholder, ids, attr: all final except the header's sizes */
    uint8_t head[DATA_OFF];
    memset(head, 0, sizeof head);
    pk_st64(head + IDS_OFF, 1);               /* the one event id */
    uint8_t *a = head + ATTR_OFF;
    pk_st32(a + 0, opts->event_type);
    pk_st32(a + 4, ATTR_SIZE);
    pk_st64(a + 8, opts->event_config);
    pk_st64(a + 16, opts->sample_period);
    pk_st64(a + 24, w->sample_type);
    uint64_t flags = (1ull << 5) | (1ull << 6) |   /* exclude_kernel, exclude_hv */
                     (1ull << 8) | (1ull << 9) |   /* mmap, comm */
                     (1ull << 13) |                /* task */
                     PK_ATTR_FLAG_SAMPLE_ID_ALL |
                     (1ull << 23) | (1ull << 24);  /* mmap2, comm_exec */
    pk_st64(a + 40, flags);
    pk_st64(a + 72, w->branch_sample_type);
    pk_st64(a + ATTR_SIZE, IDS_OFF);
    pk_st64(a + ATTR_SIZE + 8, 8);
    if (pk_out_write(&w->out, head, sizeof head, err)) {
        pk_out_abort(&w->out);
        writer_free(w);
        return NULL;
    }
    return w;
}

int pk_perf_write_comm(pk_perf_writer *w, const pk_comm_event *c, pk_err *err)
{
    uint8_t *p = (uint8_t *)w->rec + 8, *lim = (uint8_t *)w->rec + MAX_REC - 32;
    p = put32x2(p, c->pid, c->tid);
    p = put_str(p, lim, c->comm ? c->comm : "");
    if (!p)
        return pk_err_set(err, "%s: comm name too long", w->out.path);
    p = trailer(w, p, c->pid, c->tid, c->time);
    return emit(w, p, PK_REC_COMM, PK_CPUMODE_USER | (c->exec ? PK_MISC_COMM_EXEC : 0), err);
}

static int remember_build_id(pk_perf_writer *w, const pk_mmap_event *m, pk_err *err)
{
    for (size_t i = 0; i < w->build_ids.len; i++) {
        wbuild_id *b = &PK_VEC_AT(&w->build_ids, wbuild_id, i);
        if (b->size == m->build_id_size && !memcmp(b->id, m->build_id, b->size) && !strcmp(b->name, m->filename))
            return 0;
    }
    wbuild_id *b = pk_vec_push(&w->build_ids);
    if (!b || !(b->name = strdup(m->filename))) {
        if (b)
            w->build_ids.len--;
        return pk_err_set(err, "%s: out of memory", w->out.path);
    }
    memcpy(b->id, m->build_id, 20);
    b->size = m->build_id_size;
    return 0;
}

int pk_perf_write_mmap(pk_perf_writer *w, const pk_mmap_event *m, pk_err *err)
{
    if (m->has_build_id && m->build_id_size > 20)
        return pk_err_set(err, "%s: build-id of %u bytes (at most 20)", w->out.path, m->build_id_size);
    uint8_t *p = (uint8_t *)w->rec + 8, *lim = (uint8_t *)w->rec + MAX_REC - 32;
    const char *name = m->filename ? m->filename : "";
    p = put32x2(p, m->pid, m->tid);
    p = put64(p, m->addr);
    p = put64(p, m->len);
    p = put64(p, m->pgoff);
    if (m->has_build_id) {
        memset(p, 0, 24);
        p[0] = m->build_id_size;
        memcpy(p + 4, m->build_id, m->build_id_size);
        p += 24;
    } else {
        p = put32x2(p, m->maj, m->min);
        p = put64(p, m->ino);
        p = put64(p, m->ino_generation);
    }
    p = put32x2(p, m->prot, m->flags);
    p = put_str(p, lim, name);
    if (!p)
        return pk_err_set(err, "%s: mmap file name too long", w->out.path);
    p = trailer(w, p, m->pid, m->tid, m->time);
    uint16_t misc = PK_CPUMODE_USER | (m->has_build_id ? PK_MISC_MMAP_BUILD_ID : 0);
    if (emit(w, p, PK_REC_MMAP2, misc, err))
        return -1;
    if (m->has_build_id && m->build_id_size)
        return remember_build_id(w, m, err);
    return 0;
}

int pk_perf_write_task(pk_perf_writer *w, const pk_task_event *t, pk_err *err)
{
    uint8_t *p = (uint8_t *)w->rec + 8;
    p = put32x2(p, t->pid, t->ppid);
    p = put32x2(p, t->tid, t->ptid);
    p = put64(p, t->time);
    p = trailer(w, p, t->pid, t->tid, t->time);
    return emit(w, p, t->is_fork ? PK_REC_FORK : PK_REC_EXIT, 0, err);
}

int pk_perf_write_lost(pk_perf_writer *w, uint64_t lost, pk_err *err)
{
    uint8_t *p = (uint8_t *)w->rec + 8;
    p = put64(p, 1);
    p = put64(p, lost);
    p = trailer(w, p, 0, 0, 0);
    return emit(w, p, PK_REC_LOST, 0, err);
}

int pk_perf_write_sample(pk_perf_writer *w, const pk_sample *s, pk_err *err)
{
    uint8_t *p = (uint8_t *)w->rec + 8;
    p = put64(p, s->ip);
    p = put32x2(p, s->pid, s->tid);
    p = put64(p, s->time);
    if (w->opts.cpu)
        p = put32x2(p, s->cpu, 0);
    p = put64(p, s->period ? s->period : w->opts.sample_period);
    uint64_t nbr = 0;
    size_t fixed = (size_t)(p - (uint8_t *)w->rec);
    if (w->opts.branch_stack) {
        nbr = s->branch_nr;
        size_t room = (MAX_REC - fixed - 8 - 8 - (w->opts.callchain ? 8 : 0)) / 24;
        if (nbr > room)
            return pk_err_set(err, "%s: sample with %llu branch entries does not fit in a record", w->out.path,
                              (unsigned long long)nbr);
    }
    if (w->opts.callchain) {
        /* The kernel caps chains too (sample_max_stack); here the record size
         * does: keep the leaf-most frames that fit. */
        size_t bytes_br = w->opts.branch_stack ? 16 + 24 * (size_t)nbr : 0;
        uint64_t room = (MAX_REC - fixed - 8 - bytes_br) / 8;
        uint64_t n = s->callchain_nr < room ? s->callchain_nr : room;
        p = put64(p, n);
        /* as bytes: a sample from the reader may hold unaligned arrays */
        if (n && s->callchain)
            memcpy(p, (const void *)s->callchain, 8 * n);
        p += 8 * n;
    }
    if (w->opts.branch_stack) {
        p = put64(p, nbr);
        if (w->opts.hw_idx)
            p = put64(p, s->has_hw_idx ? s->hw_idx : UINT64_MAX);
        if (nbr && s->branches)
            memcpy(p, (const void *)s->branches, 24 * nbr);
        p += 24 * nbr;
    }
    return emit(w, p, PK_REC_SAMPLE, s->misc ? s->misc : PK_CPUMODE_USER, err);
}

/* ---- features ---- */

static int write_padded_string(pk_perf_writer *w, const char *s, pk_err *err)
{
    size_t n = strlen(s) + 1, len = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
    uint8_t len32[4];
    pk_st32(len32, (uint32_t)len);
    static const uint8_t zeros[NAME_ALIGN];
    if (pk_out_write(&w->out, len32, 4, err) || pk_out_write(&w->out, s, n, err) ||
        pk_out_write(&w->out, zeros, len - n, err))
        return -1;
    return 0;
}

static int write_feature(pk_perf_writer *w, uint32_t id, pk_err *err)
{
    switch (id) {
    case PK_FEAT_BUILD_ID:
        for (size_t i = 0; i < w->build_ids.len; i++) {
            const wbuild_id *b = &PK_VEC_AT(&w->build_ids, wbuild_id, i);
            size_t n = strlen(b->name) + 1, padded = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
            uint8_t hdr[36];
            memset(hdr, 0, sizeof hdr);
            pk_st16(hdr + 4, PK_CPUMODE_USER | 0x8000);  /* BUILD_ID_SIZE: length in byte 20 */
            pk_st16(hdr + 6, (uint16_t)(36 + padded));
            pk_st32(hdr + 8, (uint32_t)-1);
            memcpy(hdr + 12, b->id, b->size);
            hdr[12 + 20] = b->size;
            static const uint8_t zeros[NAME_ALIGN];
            if (36 + padded > 65535)
                continue;   /* a path this long cannot be described; perf would fail too */
            if (pk_out_write(&w->out, hdr, 36, err) || pk_out_write(&w->out, b->name, n, err) ||
                pk_out_write(&w->out, zeros, padded - n, err))
                return -1;
        }
        return 0;
    case PK_FEAT_HOSTNAME:
        return write_padded_string(w, w->hostname, err);
    case PK_FEAT_OSRELEASE:
        return write_padded_string(w, w->os_release, err);
    case PK_FEAT_ARCH:
        return write_padded_string(w, w->arch, err);
    case PK_FEAT_CMDLINE: {
        uint8_t nr[4];
        pk_st32(nr, 1);
        if (pk_out_write(&w->out, nr, 4, err))
            return -1;
        return write_padded_string(w, w->cmdline, err);
    }
    default: /* BRANCH_STACK: an empty marker */
        return 0;
    }
}

int pk_perf_writer_close(pk_perf_writer *w, pk_err *err)
{
    int rc = 0;
    /* An empty data section would read as data_size 0, which perf and our
     * reader take for a recording killed before its header was written
     * (and read on to the end of the file, into the feature table): a file
     * without events still gets one FINISHED_ROUND. */
    if (w->since_round || !w->data_bytes) {
        uint8_t fr[8];
        pk_st32(fr, PK_REC_FINISHED_ROUND);
        pk_st16(fr + 4, 0);
        pk_st16(fr + 6, 8);
        rc = pk_out_write(&w->out, fr, 8, err);
        w->data_bytes += 8;
    }
    uint32_t feats[8];
    int nf = 0;
    if (w->build_ids.len)
        feats[nf++] = PK_FEAT_BUILD_ID;
    if (w->hostname)
        feats[nf++] = PK_FEAT_HOSTNAME;
    if (w->os_release)
        feats[nf++] = PK_FEAT_OSRELEASE;
    if (w->arch)
        feats[nf++] = PK_FEAT_ARCH;
    if (w->cmdline)
        feats[nf++] = PK_FEAT_CMDLINE;
    if (w->opts.branch_stack)
        feats[nf++] = PK_FEAT_BRANCH_STACK;
    uint64_t table = DATA_OFF + w->data_bytes;
    /* The table is patched once the payload sizes are known. */
    uint8_t tab[8 * 16];
    memset(tab, 0, sizeof tab);
    if (!rc)
        rc = pk_out_write(&w->out, tab, 16 * (size_t)nf, err);
    for (int i = 0; i < nf && !rc; i++) {
        uint64_t start = w->out.written;
        rc = write_feature(w, feats[i], err);
        pk_st64(tab + 16 * i, start);
        pk_st64(tab + 16 * i + 8, w->out.written - start);
    }
    if (!rc && nf)
        rc = pk_out_pwrite(&w->out, tab, 16 * (size_t)nf, table, err);
    if (!rc) {
        uint8_t h[PK_FILE_HEADER_SIZE];
        memset(h, 0, sizeof h);
        pk_st64(h, PK_PERF_MAGIC2);
        pk_st64(h + 8, PK_FILE_HEADER_SIZE);
        pk_st64(h + 16, ATTR_SIZE + 16);
        pk_st64(h + 24, ATTR_OFF);
        pk_st64(h + 32, ATTR_SIZE + 16);
        pk_st64(h + 40, DATA_OFF);
        pk_st64(h + 48, w->data_bytes);
        for (int i = 0; i < nf; i++)
            h[72 + feats[i] / 8] |= (uint8_t)(1u << (feats[i] % 8));
        rc = pk_out_pwrite(&w->out, h, sizeof h, 0, err);
    }
    if (!rc)
        rc = pk_out_commit(&w->out, err);
    else
        pk_out_abort(&w->out);
    writer_free(w);
    return rc;
}

void pk_perf_writer_abort(pk_perf_writer *w)
{
    if (!w)
        return;
    pk_out_abort(&w->out);
    writer_free(w);
}
