/* perf_fixtures.c — perf.data fixtures for the unit tests (perf_fixtures.h). */
#include "perf_fixtures.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* ---- a growable byte buffer for handcrafted files ---- */

void pf_bput(pf_bbuf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 256;
        b->d = realloc(b->d, b->cap);
    }
    memcpy(b->d + b->len, p, n);
    b->len += n;
}
void pf_b64(pf_bbuf *b, uint64_t v) { pf_bput(b, &v, 8); }
void pf_b32(pf_bbuf *b, uint32_t v) { pf_bput(b, &v, 4); }
void pf_b16(pf_bbuf *b, uint16_t v) { pf_bput(b, &v, 2); }
void pf_bzero(pf_bbuf *b, size_t n) { static const uint8_t z[256]; while (n) { size_t k = n < 256 ? n : 256; pf_bput(b, z, k); n -= k; } }
void pf_rec_hdr(pf_bbuf *b, uint32_t type, uint16_t misc, uint16_t size) { pf_b32(b, type); pf_b16(b, misc); pf_b16(b, size); }

void pf_write_file(const char *path, const void *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(d, 1, n, f);
    fclose(f);
}

/* ---- writing a reference file ---- */
const uint8_t pf_BID[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

void pf_sample_fill(int i, pk_sample *s, uint64_t *chain, pk_branch *br)
{
    memset(s, 0, sizeof *s);
    s->pid = 100;
    s->tid = 100 + (uint32_t)(i & 1);
    s->cpu = (uint32_t)i % 3;
    s->time = 5000 + (uint64_t)i * 10;
    s->ip = 0x401000 + (uint64_t)i;
    s->period = i == 2 ? 0 : 777 + (uint64_t)i;  /* 0 → opts.sample_period */
    chain[0] = PK_CONTEXT_USER;
    for (int k = 1; k < 5; k++)
        chain[k] = 0x402000 + (uint64_t)(i * 16 + k);
    s->callchain = chain;
    s->callchain_nr = (uint64_t)(i % 5);
    for (int k = 0; k < 32; k++) {
        br[k].from = 0x403000 + (uint64_t)(i * 100 + k);
        br[k].to = 0x404000 + (uint64_t)(i * 100 + k);
        br[k].flags = (uint64_t)(k & 3) | ((uint64_t)k << 4) | ((uint64_t)(k % 7) << 20);
    }
    s->branches = br;
    s->branch_nr = i == 3 ? 0 : (uint64_t)(32 - i % 32);
    s->hw_idx = 7 + (uint64_t)i;
    s->has_hw_idx = true;
}

int pf_write_reference(const char *path, bool hw_idx, bool cpu, int nsamples, pk_err *e)
{
    pk_perf_writer_opts o = {.sample_period = 4999, .branch_stack = true, .callchain = true, .hw_idx = hw_idx,
                             .cpu = cpu, .hostname = "host-x", .os_release = "rel-y", .cmdline = "a b c"};
    pk_perf_writer *w = pk_perf_writer_open(path, &o, e);
    if (!w)
        return -1;
    pk_comm_event c = {.pid = 100, .tid = 100, .exec = true, .comm = "prog", .time = 1000};
    pk_mmap_event m1 = {.is_mmap2 = true, .pid = 100, .tid = 100, .addr = 0x401000, .len = 0x2000, .pgoff = 0x1000,
                        .prot = 5, .flags = 2, .filename = "/bin/prog", .time = 1001, .has_build_id = true,
                        .build_id_size = 20};
    memcpy(m1.build_id, pf_BID, 20);
    pk_mmap_event m2 = {.is_mmap2 = true, .pid = 100, .tid = 101, .addr = 0x7f0000, .len = 0x3000, .pgoff = 0x2000,
                        .maj = 8, .min = 1, .ino = 123456, .ino_generation = 9, .prot = 5, .flags = 2,
                        .filename = "/lib/libc.so.6", .time = 1002};
    /* the same mapping again (its build-id is listed once), written in time order */
    pk_mmap_event m1_again = m1;
    m1_again.time = 1002;
    pk_task_event f = {.is_fork = true, .pid = 100, .ppid = 100, .tid = 101, .ptid = 100, .time = 1003};
    if (pk_perf_write_comm(w, &c, e) || pk_perf_write_mmap(w, &m1, e) || pk_perf_write_mmap(w, &m2, e) ||
        pk_perf_write_mmap(w, &m1_again, e) || pk_perf_write_task(w, &f, e))
        goto fail;
    for (int i = 0; i < nsamples; i++) {
        pk_sample s;
        uint64_t chain[5];
        pk_branch br[32];
        pf_sample_fill(i, &s, chain, br);
        if (pk_perf_write_sample(w, &s, e))
            goto fail;
    }
    pk_task_event x = {.is_fork = false, .pid = 100, .ppid = 100, .tid = 101, .ptid = 100, .time = 9000};
    if (pk_perf_write_lost(w, 5, e) || pk_perf_write_task(w, &x, e))
        goto fail;
    return pk_perf_writer_close(w, e);
fail:
    pk_perf_writer_abort(w);
    return -1;
}

/* ---- compression: rewrite a file's data section as COMPRESSED records ---- */

void pf_compress_copy(const char *src, const char *dst, size_t chunk)
{
    FILE *f = fopen(src, "rb");
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(n);
    if (fread(d, 1, n, f) != n)
        abort();
    fclose(f);
    uint64_t data_off = pk_ld64(d + 40), data_size = pk_ld64(d + 48);
    pf_bbuf out = {0};
    pf_bput(&out, d, data_off);
    ZSTD_CStream *cs = ZSTD_createCStream();
    ZSTD_initCStream(cs, 3);
    uint8_t zbuf[60000];
    /* one continuous stream, flushed every `chunk` input bytes: records
     * straddle COMPRESSED records, and the frame is never closed (like perf) */
    for (uint64_t pos = 0; pos < data_size; pos += chunk) {
        size_t len = data_size - pos < chunk ? (size_t)(data_size - pos) : chunk;
        ZSTD_inBuffer in = {d + data_off + pos, len, 0};
        for (;;) {
            ZSTD_outBuffer ob = {zbuf, 30000, 0};
            size_t r = ZSTD_compressStream2(cs, &ob, &in, ZSTD_e_flush);
            if (ob.pos) {
                /* COMPRESSED (81) records are not padded: every byte after
                 * the header is zstd data, so later records are unaligned */
                pf_rec_hdr(&out, 81, 0, (uint16_t)(8 + ob.pos));
                pf_bput(&out, zbuf, ob.pos);
            }
            if (r == 0 && in.pos == in.size)
                break;
        }
    }
    ZSTD_freeCStream(cs);
    uint64_t new_size = out.len - data_off;
    /* copy the feature table and payloads, shifting their offsets */
    int64_t shift = (int64_t)new_size - (int64_t)data_size;
    uint64_t table = data_off + data_size;
    int nf = 0;
    for (int i = 0; i < 4; i++)
        nf += __builtin_popcountll(pk_ld64(d + 72 + 8 * i));
    size_t tail_start = out.len;
    pf_bput(&out, d + table, n - table);
    for (int i = 0; i < nf; i++) {
        uint8_t *ent = out.d + tail_start + 16 * i;
        pk_st64(ent, (uint64_t)((int64_t)pk_ld64(ent) + shift));
    }
    pk_st64(out.d + 48, new_size);
    pf_write_file(dst, out.d, out.len);
    free(out.d);
    free(d);
}

/* ---- pipe mode through a real pipe ---- */

void pf_pipe_stream(pf_bbuf *b)
{
    pf_b64(b, 0x32454c4946524550ull);
    pf_b64(b, 16);
    /* HEADER_ATTR: attr of 120 bytes (VER6), then two ids */
    size_t at = b->len;
    pf_rec_hdr(b, 64, 0, 8 + 120 + 16);
    pf_b32(b, 0);   /* type */
    pf_b32(b, 120);
    pf_b64(b, 0);   /* config */
    pf_b64(b, 1000);
    pf_b64(b, PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_TIME | PK_SAMPLE_ID | PK_SAMPLE_BRANCH_STACK);
    pf_b64(b, 0);
    pf_b64(b, 1ull << 18);  /* sample_id_all */
    pf_bzero(b, 72 - 48);
    pf_b64(b, PK_BRANCH_ANY | PK_BRANCH_HW_INDEX);
    pf_bzero(b, 120 - 80);
    pf_b64(b, 77);
    pf_b64(b, 78);
    (void)at;
    /* HEADER_FEATURE hostname with an odd size: everything after is unaligned */
    pf_rec_hdr(b, 80, 0, 8 + 8 + 4 + 9);
    pf_b64(b, 3);
    pf_b32(b, 9);
    pf_bput(b, "pipehost", 9);
    /* HEADER_BUILD_ID */
    pf_rec_hdr(b, 67, 0x8002, 36 + 16);
    pf_b32(b, (uint32_t)-1);
    pf_bput(b, pf_BID, 20);
    pf_b32(b, 20);
    pf_bput(b, "/bin/piped\0\0\0\0\0\0", 16);
    /* MMAP2 (inode) with trailer {pid,tid}{time}{id} */
    pf_rec_hdr(b, 10, 2, 72 + 8 + 24);
    pf_b32(b, 5); pf_b32(b, 6);
    pf_b64(b, 0x1000); pf_b64(b, 0x2000); pf_b64(b, 0);
    pf_b32(b, 1); pf_b32(b, 2); pf_b64(b, 3); pf_b64(b, 4);
    pf_b32(b, 5); pf_b32(b, 2);
    pf_bput(b, "/bin/x\0", 8);
    pf_b32(b, 5); pf_b32(b, 6); pf_b64(b, 4444); pf_b64(b, 77);
    /* AUXTRACE with 5 bytes of payload after it, to be skipped */
    pf_rec_hdr(b, 71, 0, 48);
    pf_b64(b, 5);
    pf_bzero(b, 32);
    pf_bput(b, "AUXAU", 5);
    /* SAMPLE: ip, pid/tid, time, id, branch nr 2, hw_idx, 2 entries */
    pf_rec_hdr(b, 9, 2, 8 + 32 + 16 + 48);
    pf_b64(b, 0x1234);
    pf_b32(b, 5); pf_b32(b, 6);
    pf_b64(b, 4500);
    pf_b64(b, 78);
    pf_b64(b, 2);
    pf_b64(b, 99);
    pf_b64(b, 0x10); pf_b64(b, 0x20); pf_b64(b, 1);
    pf_b64(b, 0x30); pf_b64(b, 0x40); pf_b64(b, 2);
    /* an unknown record type: skipped and counted */
    pf_rec_hdr(b, 200, 0, 12);
    pf_b32(b, 0);
    /* LOST_SAMPLES */
    pf_rec_hdr(b, 13, 0, 16 + 24);
    pf_b64(b, 11);
    pf_bzero(b, 24);
}

/* ---- several attrs tied by IDENTIFIER ---- */

void pf_multi_attr_file(pf_bbuf *b)
{
    uint64_t st0 = PK_SAMPLE_IDENTIFIER | PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_TIME;
    uint64_t st1 = st0 | PK_SAMPLE_PERIOD | PK_SAMPLE_CALLCHAIN | PK_SAMPLE_CPU;
    pf_b64(b, 0x32454c4946524550ull);
    pf_b64(b, 104);
    pf_b64(b, 136 + 16);           /* attr_size: a VER8 attr (136) */
    pf_b64(b, 104 + 24);           /* attrs at 128 (after 3 ids) */
    pf_b64(b, 2 * 152);
    uint64_t data_off = 128 + 2 * 152;
    pf_b64(b, data_off);
    size_t data_size_at = b->len;
    pf_b64(b, 0);
    pf_b64(b, 0); pf_b64(b, 0);
    pf_b64(b, 0); pf_b64(b, 0); pf_b64(b, 0); pf_b64(b, 0);
    pf_b64(b, 10); pf_b64(b, 20); pf_b64(b, 21);    /* ids at 104 */
    for (int a = 0; a < 2; a++) {
        pf_b32(b, 1);
        pf_b32(b, 136);
        pf_b64(b, (uint64_t)a);
        pf_b64(b, 1);
        pf_b64(b, a ? st1 : st0);
        pf_b64(b, 0);
        pf_b64(b, 1ull << 18);
        pf_bzero(b, 136 - 48);
        pf_b64(b, a ? 112 : 104);
        pf_b64(b, a ? 16 : 8);
    }
    size_t start = b->len;
    /* COMM with trailer {pid,tid}{time}{identifier} */
    pf_rec_hdr(b, 3, 0, 8 + 8 + 8 + 24);
    pf_b32(b, 1); pf_b32(b, 1);
    pf_bput(b, "two\0\0\0\0\0", 8);
    pf_b32(b, 1); pf_b32(b, 1); pf_b64(b, 50); pf_b64(b, 20);
    for (int i = 0; i < 4; i++) {
        if (i % 2 == 0) {
            pf_rec_hdr(b, 9, 2, 8 + 32);
            pf_b64(b, 10);
            pf_b64(b, 0x100 + (uint64_t)i);
            pf_b32(b, 1); pf_b32(b, 1);
            pf_b64(b, 60 + (uint64_t)i);
        } else {
            pf_rec_hdr(b, 9, 2, 8 + 32 + 8 + 8 + 8 + 16);
            pf_b64(b, i == 1 ? 20 : 21);
            pf_b64(b, 0x200 + (uint64_t)i);
            pf_b32(b, 1); pf_b32(b, 1);
            pf_b64(b, 60 + (uint64_t)i);
            pf_b32(b, 3); pf_b32(b, 0);
            pf_b64(b, 999);
            pf_b64(b, 2); pf_b64(b, 0xaaa); pf_b64(b, 0xbbb);
        }
    }
    pk_st64(b->d + data_size_at, b->len - start);
}

/* ---- every SAMPLE field, in the kernel's order: decoding stays in sync ---- */

void pf_all_fields_sample(pf_bbuf *b, uint64_t ip, uint64_t stack_size)
{
    size_t at = b->len;
    pf_rec_hdr(b, 9, 2, 0);
    pf_b64(b, ip);                           /* IP */
    pf_b32(b, 7); pf_b32(b, 8);                 /* TID */
    pf_b64(b, 1234);                         /* TIME */
    pf_b64(b, 0xadd);                        /* ADDR */
    pf_b64(b, 55);                           /* ID */
    pf_b64(b, 56);                           /* STREAM_ID */
    pf_b32(b, 3); pf_b32(b, 0);                 /* CPU */
    pf_b64(b, 4321);                         /* PERIOD */
    pf_b64(b, 2); pf_b64(b, 111);               /* READ group: nr, time_enabled */
    pf_b64(b, 1); pf_b64(b, 55); pf_b64(b, 0);     /*   value, id, lost */
    pf_b64(b, 2); pf_b64(b, 56); pf_b64(b, 0);
    pf_b64(b, 2); pf_b64(b, PK_CONTEXT_USER); pf_b64(b, ip);   /* CALLCHAIN */
    pf_b32(b, 12); pf_bput(b, "raw-payload!", 12);          /* RAW: 4 + 12 = 16 */
    pf_b64(b, 1); pf_b64(b, 0xf0); pf_b64(b, 0xf1); pf_b64(b, 1); /* BRANCH_STACK (no hw_idx) */
    pf_b64(b, 2); pf_b64(b, 1); pf_b64(b, 2); pf_b64(b, 3);       /* REGS_USER: abi, 3 regs */
    pf_b64(b, stack_size); pf_bzero(b, 16); pf_b64(b, 16);    /* STACK_USER */
    pf_b64(b, 9);                            /* WEIGHT */
    pf_b64(b, 10);                           /* DATA_SRC */
    pf_b64(b, 11);                           /* TRANSACTION */
    pf_b64(b, 0);                            /* REGS_INTR: abi 0, no regs */
    pf_b64(b, 12); pf_b64(b, 13); pf_b64(b, 14); pf_b64(b, 15);   /* PHYS_ADDR CGROUP DATA/CODE_PAGE_SIZE */
    pf_b64(b, 8); pf_b64(b, 0xa0a0);            /* AUX */
    pk_st16(b->d + at + 6, (uint16_t)(b->len - at));
}

void pf_all_fields_stream(pf_bbuf *b, uint64_t stack_size)
{
    uint64_t st = PK_SAMPLE_IP | PK_SAMPLE_TID | PK_SAMPLE_TIME | PK_SAMPLE_ADDR | PK_SAMPLE_ID |
                  PK_SAMPLE_STREAM_ID | PK_SAMPLE_CPU | PK_SAMPLE_PERIOD | PK_SAMPLE_READ |
                  PK_SAMPLE_CALLCHAIN | PK_SAMPLE_RAW | PK_SAMPLE_BRANCH_STACK | PK_SAMPLE_REGS_USER |
                  PK_SAMPLE_STACK_USER | PK_SAMPLE_WEIGHT | PK_SAMPLE_DATA_SRC | (1ull << 17) |
                  (1ull << 18) | (1ull << 19) | (1ull << 20) | (1ull << 21) | (1ull << 22) | (1ull << 23);
    pf_b64(b, 0x32454c4946524550ull);
    pf_b64(b, 16);
    pf_rec_hdr(b, 64, 0, 8 + 128 + 8);
    pf_b32(b, 1); pf_b32(b, 128); pf_b64(b, 0); pf_b64(b, 1);
    pf_b64(b, st);
    pf_b64(b, 1 | 4 | 8 | 16);               /* read_format: ENABLED|ID|GROUP|LOST */
    pf_b64(b, 1ull << 18);                   /* sample_id_all */
    pf_bzero(b, 72 - 48);
    pf_b64(b, PK_BRANCH_ANY);
    pf_b64(b, 0x7);                          /* sample_regs_user: 3 registers */
    pf_b32(b, 64); pf_b32(b, 0);
    pf_b64(b, 0x3);                          /* sample_regs_intr */
    pf_bzero(b, 128 - 104);
    pf_b64(b, 55);
    /* MMAP (v1) with the trailer {pid,tid}{time}{id}{stream_id}{cpu,res} */
    pf_rec_hdr(b, 1, 2, 40 + 8 + 40);
    pf_b32(b, 7); pf_b32(b, 8); pf_b64(b, 0x1000); pf_b64(b, 0x100); pf_b64(b, 0);
    pf_bput(b, "/v1map\0", 8);
    pf_b32(b, 7); pf_b32(b, 8); pf_b64(b, 777); pf_b64(b, 55); pf_b64(b, 56); pf_b32(b, 3); pf_b32(b, 0);
    pf_all_fields_sample(b, 0x5000, stack_size);
    pf_all_fields_sample(b, 0x6000, 16);
}


/* ---- collecting everything the reader reports ---- */

static int g_attr(void *ctx, const pk_perf_attr *a)
{
    pf_got *g = ctx;
    g->order++;
    if (g->nattr < 4) {
        g->attr_ptr[g->nattr] = a;
        g->attr_sample_type[g->nattr] = a->sample_type;
        g->attr[g->nattr] = *a;
        for (uint32_t k = 0; k < a->nr_ids && k < 4; k++)
            g->attr_ids[g->nattr][k] = a->ids[k];
    }
    g->nattr++;
    return 0;
}
static void mark_record(pf_got *g) { if (!g->first_record_at) g->first_record_at = ++g->order; }
static int g_sample(void *ctx, const pk_sample *s)
{
    pf_got *g = ctx;
    mark_record(g);
    if (g->nsamples < 64) {
        int i = g->nsamples;
        g->s[i] = *s;
        g->sattr[i] = s->attr;
        for (uint64_t k = 0; k < s->callchain_nr && k < 16; k++)
            g->chain[i][k] = pk_ld64((const uint8_t *)s->callchain + 8 * k);
        for (uint64_t k = 0; k < s->branch_nr && k < 40; k++) {
            const uint8_t *e = (const uint8_t *)s->branches + 24 * k;
            g->br[i][k].from = pk_ld64(e);
            g->br[i][k].to = pk_ld64(e + 8);
            g->br[i][k].flags = pk_ld64(e + 16);
        }
    }
    g->nsamples++;
    return 0;
}
static int g_mmap(void *ctx, const pk_mmap_event *m)
{
    pf_got *g = ctx;
    mark_record(g);
    if (g->nmmap < 8) {
        g->m[g->nmmap] = *m;
        snprintf(g->mname[g->nmmap], 128, "%s", m->filename);
    }
    g->nmmap++;
    return 0;
}
static int g_comm(void *ctx, const pk_comm_event *c)
{
    pf_got *g = ctx;
    mark_record(g);
    if (g->ncomm < 4) {
        g->c[g->ncomm] = *c;
        snprintf(g->cname[g->ncomm], 32, "%s", c->comm);
    }
    g->ncomm++;
    return 0;
}
static int g_task(void *ctx, const pk_task_event *t)
{
    pf_got *g = ctx;
    mark_record(g);
    if (g->ntask < 8)
        g->t[g->ntask] = *t;
    g->ntask++;
    return 0;
}
static int g_bid(void *ctx, const pk_build_id_event *b)
{
    pf_got *g = ctx;
    if (!g->build_id_at)
        g->build_id_at = ++g->order;
    if (g->nbid < 4) {
        g->b[g->nbid] = *b;
        snprintf(g->bname[g->nbid], 128, "%s", b->filename);
    }
    g->nbid++;
    return 0;
}
static int g_feature(void *ctx, uint32_t id, const void *data, uint64_t size)
{
    pf_got *g = ctx;
    g->features_seen++;
    if (id == 3 && size > 4)
        snprintf(g->hostname, sizeof g->hostname, "%s", (const char *)data + 4);
    return 0;
}

pk_perf_callbacks pf_callbacks(pf_got *g)
{
    memset(g, 0, sizeof *g);
    pk_perf_callbacks cb = {.ctx = g, .attr = g_attr, .sample = g_sample, .mmap = g_mmap, .comm = g_comm,
                            .task = g_task, .build_id = g_bid, .feature = g_feature};
    return cb;
}

