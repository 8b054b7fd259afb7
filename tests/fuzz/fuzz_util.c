/* fuzz_util.c — oracles and event digests shared by the harnesses. */
#include "fuzz_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void pk_fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pgokit fuzz oracle failed: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

void pk_fuzz_check_error(const pk_err *err, const char *where_word)
{
    const char *m = err->msg;
    if (!m[0])
        pk_fuzz_fail("a reader failed without a message");
    if (strstr(m, "out of memory"))
        return;
    if (strncmp(m, PK_FUZZ_NAME, strlen(PK_FUZZ_NAME)))
        pk_fuzz_fail("error does not start with the file name: %s", m);
    /* conditions of the whole input, with no byte to point at */
    static const char *const whole[] = {"nothing usable", "no sample_type says", "more than the limit",
                                        "no samples", "no LBR line"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        if (strstr(m, whole[i]))
            return;
    if (!strstr(m, "offset") && !(where_word && strstr(m, where_word)))
        pk_fuzz_fail("error names no position (offset%s%s): %s", where_word ? " or " : "",
                     where_word ? where_word : "", m);
}

void pk_fuzz_digest_u64(pk_fuzz_digest *d, uint64_t v)
{
    d->h = pk_hash64(d->h ^ v) + 0x9e3779b97f4a7c15ull;
}

void pk_fuzz_digest_bytes(pk_fuzz_digest *d, const void *p, size_t n)
{
    pk_fuzz_digest_u64(d, n);
    if (n)
        pk_fuzz_digest_u64(d, pk_hash_bytes(p, n));
}

static void digest_str(pk_fuzz_digest *d, const char *s)
{
    pk_fuzz_digest_bytes(d, s ? s : "", s ? strlen(s) : 0);
}

static int on_attr(void *ctx, const pk_perf_attr *a)
{
    pk_fuzz_digest *d = ctx;
    d->events++;
    pk_fuzz_digest_u64(d, a->type);
    pk_fuzz_digest_u64(d, a->sample_type);
    pk_fuzz_digest_u64(d, a->branch_sample_type);
    pk_fuzz_digest_bytes(d, a->ids, 8 * (size_t)a->nr_ids);
    return 0;
}

static int on_sample(void *ctx, const pk_sample *s)
{
    pk_fuzz_digest *d = ctx;
    d->events++;
    uint64_t f[] = {s->misc, s->pid, s->tid, s->cpu, s->ip, s->time, s->addr, s->id, s->period,
                    s->hw_idx, s->has_hw_idx, s->file_offset, s->weight};
    pk_fuzz_digest_bytes(d, f, sizeof f);
    pk_fuzz_digest_bytes(d, s->callchain, 8 * (size_t)s->callchain_nr);
    pk_fuzz_digest_bytes(d, s->branches, sizeof(pk_branch) * (size_t)s->branch_nr);
    if (s->regs_user)
        pk_fuzz_digest_bytes(d, s->regs_user, 8 * (size_t)__builtin_popcountll(s->regs_mask));
    pk_fuzz_digest_bytes(d, s->stack_user, (size_t)s->stack_size);
    if (s->attr)
        pk_fuzz_digest_u64(d, s->attr->sample_type);
    return 0;
}

static int on_mmap(void *ctx, const pk_mmap_event *m)
{
    pk_fuzz_digest *d = ctx;
    d->events++;
    uint64_t f[] = {m->is_mmap2, m->misc, m->pid, m->tid, m->addr, m->len, m->pgoff, m->maj, m->min,
                    m->ino, m->ino_generation, m->prot, m->flags, m->has_build_id, m->build_id_size, m->time};
    pk_fuzz_digest_bytes(d, f, sizeof f);
    pk_fuzz_digest_bytes(d, m->build_id, m->build_id_size <= 20 ? m->build_id_size : 20);
    digest_str(d, m->filename);
    return 0;
}

static int on_comm(void *ctx, const pk_comm_event *c)
{
    pk_fuzz_digest *d = ctx;
    d->events++;
    uint64_t f[] = {c->pid, c->tid, c->exec, c->time};
    pk_fuzz_digest_bytes(d, f, sizeof f);
    digest_str(d, c->comm);
    return 0;
}

static int on_task(void *ctx, const pk_task_event *t)
{
    pk_fuzz_digest *d = ctx;
    d->events++;
    uint64_t f[] = {t->is_fork, t->pid, t->ppid, t->tid, t->ptid, t->time};
    pk_fuzz_digest_bytes(d, f, sizeof f);
    return 0;
}

static int on_build_id(void *ctx, const pk_build_id_event *b)
{
    pk_fuzz_digest *d = ctx;
    d->events++;
    pk_fuzz_digest_u64(d, (uint64_t)b->pid << 16 | b->misc);
    pk_fuzz_digest_bytes(d, b->build_id, b->size <= 20 ? b->size : 20);
    digest_str(d, b->filename);
    return 0;
}

static int on_feature(void *ctx, uint32_t id, const void *data, uint64_t size)
{
    pk_fuzz_digest *d = ctx;
    d->events++;
    pk_fuzz_digest_u64(d, id);
    pk_fuzz_digest_bytes(d, data, (size_t)size);
    return 0;
}

void pk_fuzz_perf_callbacks(pk_perf_callbacks *cb, pk_fuzz_digest *d)
{
    memset(cb, 0, sizeof *cb);
    cb->ctx = d;
    cb->attr = on_attr;
    cb->sample = on_sample;
    cb->mmap = on_mmap;
    cb->comm = on_comm;
    cb->task = on_task;
    cb->build_id = on_build_id;
    cb->feature = on_feature;
    cb->sample_weights = true; /* as profgen reads: repeat counts as weights */
}

void pk_fuzz_read_with_fixed_checksum(const uint8_t *data, size_t size, size_t min_size,
                                      void (*fix_checksum)(uint8_t *data, size_t size),
                                      void (*read_one)(const uint8_t *data, size_t size))
{
    read_one(data, size);
    if (size < min_size)
        return;
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return;
    memcpy(fixed, data, size);
    fix_checksum(fixed, size);
    const char *path = getenv("PK_FUZZ_FIXED_OUT");
    FILE *f = path ? fopen(path, "wb") : NULL;
    if (f) {
        fwrite(fixed, 1, size, f);
        fclose(f);
    }
    read_one(fixed, size);
    free(fixed);
}

static char tmpdir[64];

static void remove_tmpdir(void)
{
    rmdir(tmpdir);
}

const char *pk_fuzz_tmpdir(void)
{
    if (!tmpdir[0]) {
        struct stat st;
        const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
        snprintf(tmpdir, sizeof tmpdir, "%s/pkfuzz.%ld", base, (long)getpid());
        if (mkdir(tmpdir, 0700) && access(tmpdir, W_OK))
            pk_fuzz_fail("cannot create %s", tmpdir);
        atexit(remove_tmpdir);
    }
    return tmpdir;
}
