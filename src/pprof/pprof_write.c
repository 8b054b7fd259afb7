/* pprof_write.c — perf.data callbacks → a gzip-compressed pprof profile
 * (see pprof.h, WRITER).
 *
 * The writer follows the recording's address spaces as perf does: MMAP
 * records add mappings to their process, FORK copies the parent's, an exec
 * COMM empties the process's; kernel mappings (pid -1) are shared by all.
 * Each frame is placed in the newest mapping of its process that holds it.
 * Locations are distinct (mapping, address) pairs and samples distinct
 * stacks of locations; both live in flat arrays with hash indexes, so
 * memory grows with distinct stacks, not with samples. */
#include "pprof/pprof_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#define KERNEL_PID UINT32_MAX
#define NONE UINT32_MAX

typedef struct w_map {          /* one distinct mmap */
    char *file;
    uint64_t start, len, pgoff;
    uint8_t bid[20], bid_size;
    uint64_t leaf_hits;
    uint32_t out_id;            /* id in the output (0: unused) */
} w_map;

typedef struct w_span {         /* a mapping as placed in one address space */
    uint64_t start, end;
    uint32_t map;
} w_span;

typedef struct w_space {
    uint32_t pid;
    pk_vec spans;               /* w_span, in mmap order: the newest wins */
    uint32_t last;              /* index of the last hit (a cheap cache) */
} w_space;

typedef struct w_loc {
    uint64_t addr;
    uint32_t map;               /* NONE: unmapped */
    uint32_t next;              /* next location in the same hash chain */
} w_loc;

typedef struct w_stack {
    size_t first;               /* into frames */
    uint32_t n;
    uint32_t next;              /* hash chain */
    uint64_t count, period;
} w_stack;

typedef struct w_bid {          /* BUILD_ID feature entries */
    char *file;
    uint8_t bid[20], size;
} w_bid;

struct pk_pprof_writer {
    pk_pprof_writer_opts o;
    pk_err *cb_err;
    pk_vec maps;                /* w_map */
    pk_u64map map_index;        /* hash(file, range) → first w_map index + 1 (chain by rehash) */
    pk_vec spaces;              /* w_space */
    pk_u64map space_index;      /* pid → w_space index */
    pk_vec locs;                /* w_loc */
    pk_u64map loc_index;        /* hash(map, addr) → head of chain in locs */
    pk_vec stacks;              /* w_stack */
    pk_u64map stack_index;      /* hash(frames) → head of chain in stacks */
    pk_vec frames;              /* uint32_t location indexes, leaf first */
    pk_vec bids;                /* w_bid */
    pk_vec scratch;             /* uint32_t: the stack being built */
    int kind;                   /* -1 none yet, 0 cpu time, 1 other events, 2 mixed */
    uint64_t attr_period;       /* the fixed period of the attrs (0: frequency mode or mixed) */
    bool period_mixed;
    uint64_t tmin, tmax;
    pk_pprof_write_stats st;
};

pk_pprof_writer *pk_pprof_writer_new(const pk_pprof_writer_opts *opts, pk_err *err)
{
    pk_pprof_writer *w = calloc(1, sizeof *w);
    if (!w) {
        pk_err_set(err, "out of memory");
        return NULL;
    }
    if (opts)
        w->o = *opts;
    pk_vec_init(&w->maps, sizeof(w_map));
    pk_vec_init(&w->spaces, sizeof(w_space));
    pk_vec_init(&w->locs, sizeof(w_loc));
    pk_vec_init(&w->stacks, sizeof(w_stack));
    pk_vec_init(&w->frames, sizeof(uint32_t));
    pk_vec_init(&w->bids, sizeof(w_bid));
    pk_vec_init(&w->scratch, sizeof(uint32_t));
    w->kind = -1;
    w->tmin = UINT64_MAX;
    return w;
}

void pk_pprof_writer_free(pk_pprof_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->maps.len; i++)
        free(PK_VEC_AT(&w->maps, w_map, i).file);
    for (size_t i = 0; i < w->spaces.len; i++)
        pk_vec_free(&PK_VEC_AT(&w->spaces, w_space, i).spans);
    for (size_t i = 0; i < w->bids.len; i++)
        free(PK_VEC_AT(&w->bids, w_bid, i).file);
    pk_vec_free(&w->maps);
    pk_vec_free(&w->spaces);
    pk_vec_free(&w->locs);
    pk_vec_free(&w->stacks);
    pk_vec_free(&w->frames);
    pk_vec_free(&w->bids);
    pk_vec_free(&w->scratch);
    pk_u64map_free(&w->map_index);
    pk_u64map_free(&w->space_index);
    pk_u64map_free(&w->loc_index);
    pk_u64map_free(&w->stack_index);
    free(w);
}

static int oom(pk_err *err) { return pk_err_set(err, "out of memory"); }

int pk_pprof_writer_on_attr(pk_pprof_writer *w, const pk_perf_attr *a, pk_err *err)
{
    /* cpu-clock and task-clock count nanoseconds; anything else, events. */
    int kind = a->type == 1 && (a->config == 0 || a->config == 1) ? 0 : 1;
    w->kind = w->kind < 0 || w->kind == kind ? kind : 2;
    bool freq = a->flags & (1u << 10);
    uint64_t p = freq ? 0 : a->sample_period;
    if (w->attr_period && p != w->attr_period)
        w->period_mixed = true;
    w->attr_period = p;
    return 0;
}

static w_space *space_get(pk_pprof_writer *w, uint32_t pid, bool create)
{
    uint64_t *i = pk_u64map_get(&w->space_index, pid);
    if (i)
        return &PK_VEC_AT(&w->spaces, w_space, *i);
    if (!create)
        return NULL;
    w_space *s = pk_vec_push(&w->spaces);
    uint64_t *slot = s ? pk_u64map_slot(&w->space_index, pid) : NULL;
    if (!slot) {
        if (s)
            w->spaces.len--;
        return NULL;
    }
    *slot = w->spaces.len - 1;
    s->pid = pid;
    pk_vec_init(&s->spans, sizeof(w_span));
    return s;
}

static uint64_t map_hash(const char *file, uint64_t start, uint64_t len, uint64_t pgoff)
{
    return pk_hash_bytes(file, strlen(file)) ^ pk_hash64(start) ^ pk_hash64(len * 31 + 7) ^ pk_hash64(pgoff + 3);
}

int pk_pprof_writer_on_mmap(pk_pprof_writer *w, const pk_mmap_event *m, pk_err *err)
{
    /* For MMAP records bit 13 of misc means a data mapping (perf -d). */
    if ((m->misc & (1u << 13)) || (m->is_mmap2 && m->prot && !(m->prot & 4)) || !m->len)
        return 0;
    const char *file = m->filename ? m->filename : "";
    uint64_t h = map_hash(file, m->addr, m->len, m->pgoff);
    uint32_t mi = NONE;
    for (;; h++) { /* open chain by rehash: collisions of different mappings are rare */
        uint64_t *v = pk_u64map_get(&w->map_index, h);
        if (!v)
            break;
        w_map *x = &PK_VEC_AT(&w->maps, w_map, *v);
        if (x->start == m->addr && x->len == m->len && x->pgoff == m->pgoff && !strcmp(x->file, file)) {
            mi = (uint32_t)*v;
            break;
        }
    }
    if (mi == NONE) {
        w_map *x = pk_vec_push(&w->maps);
        if (!x || !(x->file = strdup(file))) {
            if (x)
                w->maps.len--;
            return oom(err);
        }
        x->start = m->addr;
        x->len = m->len;
        x->pgoff = m->pgoff;
        uint64_t *slot = pk_u64map_slot(&w->map_index, h);
        if (!slot)
            return oom(err);
        mi = (uint32_t)(w->maps.len - 1);
        *slot = mi;
    }
    w_map *x = &PK_VEC_AT(&w->maps, w_map, mi);
    if (m->has_build_id && !x->bid_size && m->build_id_size <= 20) {
        memcpy(x->bid, m->build_id, m->build_id_size);
        x->bid_size = m->build_id_size;
    }
    w_space *s = space_get(w, m->pid == UINT32_MAX || (m->misc & 7) == PK_CPUMODE_KERNEL ? KERNEL_PID : m->pid, true);
    w_span *sp = s ? pk_vec_push(&s->spans) : NULL;
    if (!sp)
        return oom(err);
    *sp = (w_span){m->addr, m->addr + m->len, mi};
    return 0;
}

int pk_pprof_writer_on_task(pk_pprof_writer *w, const pk_task_event *t, pk_err *err)
{
    if (!t->is_fork || t->pid == t->ppid) /* exits and new threads change no address space */
        return 0;
    w_space *parent = space_get(w, t->ppid, false);
    if (!parent || !parent->spans.len)
        return 0;
    size_t pi = (size_t)(parent - (w_space *)w->spaces.data);
    w_space *child = space_get(w, t->pid, true);
    if (!child)
        return oom(err);
    parent = &PK_VEC_AT(&w->spaces, w_space, pi); /* the push may have moved it */
    child->spans.len = 0;
    if (pk_vec_reserve(&child->spans, parent->spans.len))
        return oom(err);
    memcpy(child->spans.data, parent->spans.data, parent->spans.len * sizeof(w_span));
    child->spans.len = parent->spans.len;
    return 0;
}

int pk_pprof_writer_on_comm(pk_pprof_writer *w, const pk_comm_event *c, pk_err *err)
{
    if (c->exec) { /* a new program image: the old mappings are gone */
        w_space *s = space_get(w, c->pid, false);
        if (s)
            s->spans.len = 0;
    }
    return 0;
}

int pk_pprof_writer_on_build_id(pk_pprof_writer *w, const pk_build_id_event *b, pk_err *err)
{
    if (!b->filename || !b->size || b->size > 20)
        return 0;
    w_bid *x = pk_vec_push(&w->bids);
    if (!x || !(x->file = strdup(b->filename))) {
        if (x)
            w->bids.len--;
        return oom(err);
    }
    memcpy(x->bid, b->build_id, b->size);
    x->size = b->size;
    return 0;
}

static uint32_t find_map(pk_pprof_writer *w, uint32_t pid, uint64_t addr)
{
    w_space *s = space_get(w, pid, false);
    if (!s || !s->spans.len)
        return NONE;
    const w_span *v = s->spans.data;
    if (s->last < s->spans.len && addr >= v[s->last].start && addr < v[s->last].end) {
        /* the cached span still wins if nothing newer covers addr */
        size_t i = s->spans.len;
        while (--i > s->last)
            if (addr >= v[i].start && addr < v[i].end)
                break;
        s->last = (uint32_t)i;
        return v[i].map;
    }
    for (size_t i = s->spans.len; i-- > 0;)
        if (addr >= v[i].start && addr < v[i].end) {
            s->last = (uint32_t)i;
            return v[i].map;
        }
    return NONE;
}

/* The location index of (map, addr), created on first use; NONE on OOM. */
static uint32_t loc_get(pk_pprof_writer *w, uint32_t map, uint64_t addr)
{
    uint64_t h = pk_hash64(addr ^ ((uint64_t)map << 40) ^ ((uint64_t)map >> 24));
    uint64_t *head = pk_u64map_slot(&w->loc_index, h);
    if (!head)
        return NONE;
    /* Chains hold index + 1 (0: empty slot value). */
    for (uint64_t i = *head; i;) {
        const w_loc *l = &PK_VEC_AT(&w->locs, w_loc, i - 1);
        if (l->addr == addr && l->map == map)
            return (uint32_t)(i - 1);
        i = l->next;
    }
    w_loc *l = pk_vec_push(&w->locs);
    if (!l)
        return NONE;
    l->addr = addr;
    l->map = map;
    l->next = (uint32_t)*head;
    *head = w->locs.len;
    return (uint32_t)(w->locs.len - 1);
}

static int add_frame(pk_pprof_writer *w, uint32_t pid, uint64_t addr, bool kernel, bool leaf)
{
    uint32_t map = find_map(w, kernel ? KERNEL_PID : pid, addr);
    if (map == NONE && kernel)
        map = find_map(w, pid, addr);
    if (map == NONE)
        w->st.frames_unmapped++;
    else if (leaf)
        PK_VEC_AT(&w->maps, w_map, map).leaf_hits++;
    uint32_t li = loc_get(w, map, addr);
    uint32_t *f = li == NONE ? NULL : pk_vec_push(&w->scratch);
    if (!f)
        return -1;
    *f = li;
    return 0;
}

static int add_stack(pk_pprof_writer *w, uint64_t period)
{
    const uint32_t *fr = w->scratch.data;
    uint32_t n = (uint32_t)w->scratch.len;
    uint64_t h = pk_hash_bytes(fr, n * sizeof *fr) ^ n;
    uint64_t *head = pk_u64map_slot(&w->stack_index, h);
    if (!head)
        return -1;
    for (uint64_t i = *head; i;) {
        w_stack *s = &PK_VEC_AT(&w->stacks, w_stack, i - 1);
        if (s->n == n && !memcmp((uint32_t *)w->frames.data + s->first, fr, n * sizeof *fr)) {
            s->count++;
            s->period += period;
            return 0;
        }
        i = s->next;
    }
    if (pk_vec_reserve(&w->frames, w->frames.len + n))
        return -1;
    w_stack *s = pk_vec_push(&w->stacks);
    if (!s)
        return -1;
    s->first = w->frames.len;
    s->n = n;
    s->next = (uint32_t)*head;
    s->count = 1;
    s->period = period;
    memcpy((uint32_t *)w->frames.data + w->frames.len, fr, n * sizeof *fr);
    w->frames.len += n;
    *head = w->stacks.len;
    return 0;
}

int pk_pprof_writer_on_sample(pk_pprof_writer *w, const pk_sample *s, pk_err *err)
{
    w->st.samples_in++;
    w->scratch.len = 0;
    /* The leaf is the ip (perf puts it first in the call chain as well);
     * then the chain's entries after its first, each a return address,
     * written as return address - 1 (see pprof.h). */
    bool kernel = (s->misc & 7) == PK_CPUMODE_KERNEL;
    uint64_t ip = s->ip;
    size_t i = 0;
    bool skipped_first = false;
    if (!ip) { /* no ip: the chain's first frame is the leaf */
        bool k = false;
        for (; i < s->callchain_nr; i++) {
            uint64_t a = pk_ld64(s->callchain + i);
            if (a >= PK_CONTEXT_MAX) {
                k = a == PK_CONTEXT_KERNEL;
                continue;
            }
            ip = a;
            kernel = k;
            i++;
            skipped_first = true;
            break;
        }
    }
    if (!ip) {
        w->st.samples_no_ip++;
        return 0;
    }
    if (add_frame(w, s->pid, ip, kernel, true))
        return oom(err);
    int ctx = -1; /* 1 kernel, 0 user, 2 other (guest, hypervisor): skipped */
    for (; i < s->callchain_nr; i++) {
        uint64_t a = pk_ld64(s->callchain + i);
        if (a >= PK_CONTEXT_MAX) {
            ctx = a == PK_CONTEXT_KERNEL ? 1 : a == PK_CONTEXT_USER ? 0 : 2;
            continue;
        }
        if (!skipped_first) {
            skipped_first = true;
            continue;
        }
        if (ctx == 2 || a < 2)
            continue;
        if (add_frame(w, s->pid, a - 1, ctx == 1, false))
            return oom(err);
    }
    if (add_stack(w, s->period))
        return oom(err);
    w->st.period_total += s->period;
    if (s->time) {
        if (s->time < w->tmin)
            w->tmin = s->time;
        if (s->time > w->tmax)
            w->tmax = s->time;
    }
    return 0;
}

/* ---- callbacks ---- */
#define CB(name, T)                                                           \
    static int cb_##name(void *ctx, const T *e)                               \
    {                                                                         \
        pk_pprof_writer *w = ctx;                                             \
        return pk_pprof_writer_on_##name(w, e, w->cb_err);                    \
    }
CB(attr, pk_perf_attr)
CB(mmap, pk_mmap_event)
CB(comm, pk_comm_event)
CB(task, pk_task_event)
CB(build_id, pk_build_id_event)
CB(sample, pk_sample)
#undef CB

void pk_pprof_writer_callbacks(pk_pprof_writer *w, pk_err *err, pk_perf_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    w->cb_err = err;
    cb->ctx = w;
    cb->attr = cb_attr;
    cb->mmap = cb_mmap;
    cb->comm = cb_comm;
    cb->task = cb_task;
    cb->build_id = cb_build_id;
    cb->sample = cb_sample;
}

/* ---- output ---- */
typedef struct strtab {
    pk_vec v;                   /* char * (owned) */
    pk_u64map idx;              /* hash → index + 1, chained by rehash */
} strtab;

static int64_t str_id(strtab *t, const char *s)
{
    uint64_t h = pk_hash_bytes(s, strlen(s));
    for (;; h++) {
        uint64_t *v = pk_u64map_get(&t->idx, h);
        if (!v)
            break;
        if (!strcmp(PK_VEC_AT(&t->v, char *, *v - 1), s))
            return (int64_t)*v - 1;
    }
    char **slot = pk_vec_push(&t->v);
    uint64_t *v = slot ? pk_u64map_slot(&t->idx, h) : NULL;
    if (!v || !(*slot = strdup(s))) {
        if (slot)
            t->v.len--;
        return -1;
    }
    *v = t->v.len;
    return (int64_t)t->v.len - 1;
}

typedef struct gz_sink {
    ProtobufCBuffer base;
    z_stream z;
    pk_out_file *out;
    pk_err *err;
    int failed;
    uint8_t buf[1 << 16];
} gz_sink;

/* Deflates what is in g->z.next_in into the output: with Z_NO_FLUSH until
 * zlib has taken all of it, with Z_FINISH until the stream is closed. */
static int gz_pump(gz_sink *g, int flush)
{
    for (;;) {
        g->z.next_out = g->buf;
        g->z.avail_out = sizeof g->buf;
        int zr = deflate(&g->z, flush);
        if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && flush == Z_NO_FLUSH))
            return pk_err_set(g->err, "gzip compression failed (zlib %d)", zr);
        size_t have = sizeof g->buf - g->z.avail_out;
        if (have && pk_out_write(g->out, g->buf, have, g->err))
            return -1;
        if (zr == Z_STREAM_END || (flush == Z_NO_FLUSH && g->z.avail_out))
            return 0;
    }
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    gz_sink *g = (gz_sink *)b;
    while (len && !g->failed) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        g->z.next_in = (Bytef *)data;
        g->z.avail_in = n;
        if (gz_pump(g, Z_NO_FLUSH))
            g->failed = 1;
        data += n;
        len -= n;
    }
}

static const char *const nonleaf_comment = "pgokit: non-leaf addresses are return address - 1 (the call instruction)";

int pk_pprof_writer_write(pk_pprof_writer *w, const char *path, pk_pprof_write_stats *stp, pk_err *err)
{
    int rc = -1;
    strtab t = {0};
    pk_vec_init(&t.v, sizeof(char *));
    Pk__Pprof__Mapping *maps = NULL, **mapp = NULL;
    Pk__Pprof__Location *locs = NULL, **locp = NULL;
    Pk__Pprof__Sample *samples = NULL, **samplep = NULL;
    uint64_t *ids = NULL;
    int64_t *vals = NULL;
    gz_sink *g = NULL;
    pk_out_file *out = NULL;
    size_t nmaps_used = 0;
    w_map *wm = w->maps.data;

    /* Mappings: those some location uses, the one with most leaves first. */
    uint32_t main_map = NONE;
    for (size_t i = 0; i < w->locs.len; i++) {
        uint32_t m = PK_VEC_AT(&w->locs, w_loc, i).map;
        if (m != NONE && !wm[m].out_id)
            wm[m].out_id = 1;
    }
    for (size_t i = 0; i < w->maps.len; i++)
        if (wm[i].out_id && (main_map == NONE || wm[i].leaf_hits > wm[main_map].leaf_hits))
            main_map = (uint32_t)i;
    if (main_map != NONE)
        wm[main_map].out_id = (uint32_t)++nmaps_used;
    for (size_t i = 0; i < w->maps.len; i++)
        if (wm[i].out_id && i != main_map)
            wm[i].out_id = (uint32_t)++nmaps_used;

    const char *ptype = w->kind == 0 ? "cpu" : "events", *punit = w->kind == 0 ? "nanoseconds" : "count";
    int64_t s_empty = str_id(&t, ""), s_samples = str_id(&t, "samples"), s_count = str_id(&t, "count");
    int64_t s_ptype = str_id(&t, ptype), s_punit = str_id(&t, punit);
    int64_t comments[2] = {str_id(&t, nonleaf_comment), w->o.comment ? str_id(&t, w->o.comment) : 0};
    if (s_empty || s_samples < 0 || s_count < 0 || s_ptype < 0 || s_punit < 0 || comments[0] < 0 || comments[1] < 0)
        goto oom;

    maps = calloc(nmaps_used + 1, sizeof *maps);
    mapp = calloc(nmaps_used + 1, sizeof *mapp);
    locs = calloc(w->locs.len + 1, sizeof *locs);
    locp = calloc(w->locs.len + 1, sizeof *locp);
    samples = calloc(w->stacks.len + 1, sizeof *samples);
    samplep = calloc(w->stacks.len + 1, sizeof *samplep);
    ids = pk_xrealloc_array(NULL, w->frames.len + 1, sizeof *ids);
    vals = pk_xrealloc_array(NULL, 2 * w->stacks.len + 1, sizeof *vals);
    if (!maps || !mapp || !locs || !locp || !samples || !samplep || !ids || !vals)
        goto oom;
    for (size_t i = 0; i < w->maps.len; i++) {
        if (!wm[i].out_id)
            continue;
        /* A BUILD_ID feature entry names the file when the MMAP2 did not. */
        for (size_t k = 0; !wm[i].bid_size && k < w->bids.len; k++) {
            const w_bid *b = &PK_VEC_AT(&w->bids, w_bid, k);
            if (!strcmp(b->file, wm[i].file)) {
                memcpy(wm[i].bid, b->bid, b->size);
                wm[i].bid_size = b->size;
            }
        }
        char hex[41];
        for (unsigned k = 0; k < wm[i].bid_size; k++)
            snprintf(hex + 2 * k, 3, "%02x", wm[i].bid[k]);
        hex[2 * wm[i].bid_size] = 0;
        Pk__Pprof__Mapping *m = &maps[wm[i].out_id - 1];
        pk__pprof__mapping__init(m);
        m->id = wm[i].out_id;
        m->memory_start = wm[i].start;
        m->memory_limit = wm[i].start + wm[i].len;
        m->file_offset = wm[i].pgoff;
        if ((m->filename = str_id(&t, wm[i].file)) < 0 || (m->build_id = str_id(&t, hex)) < 0)
            goto oom;
        mapp[wm[i].out_id - 1] = m;
    }
    for (size_t i = 0; i < w->locs.len; i++) {
        const w_loc *l = &PK_VEC_AT(&w->locs, w_loc, i);
        pk__pprof__location__init(&locs[i]);
        locs[i].id = i + 1;
        locs[i].address = l->addr;
        locs[i].mapping_id = l->map == NONE ? 0 : wm[l->map].out_id;
        locp[i] = &locs[i];
    }
    for (size_t i = 0; i < w->frames.len; i++)
        ids[i] = (uint64_t)PK_VEC_AT(&w->frames, uint32_t, i) + 1;
    for (size_t i = 0; i < w->stacks.len; i++) {
        const w_stack *s = &PK_VEC_AT(&w->stacks, w_stack, i);
        pk__pprof__sample__init(&samples[i]);
        samples[i].n_location_id = s->n;
        samples[i].location_id = ids + s->first;
        vals[2 * i] = (int64_t)s->count;
        vals[2 * i + 1] = (int64_t)s->period;
        samples[i].n_value = 2;
        samples[i].value = vals + 2 * i;
        samplep[i] = &samples[i];
    }

    Pk__Pprof__ValueType vt[2], period_type;
    pk__pprof__value_type__init(&vt[0]);
    pk__pprof__value_type__init(&vt[1]);
    pk__pprof__value_type__init(&period_type);
    vt[0].type = s_samples;
    vt[0].unit = s_count;
    vt[1].type = period_type.type = s_ptype;
    vt[1].unit = period_type.unit = s_punit;
    Pk__Pprof__ValueType *vtp[2] = {&vt[0], &vt[1]};
    Pk__Pprof__Profile p;
    pk__pprof__profile__init(&p);
    p.n_sample_type = 2;
    p.sample_type = vtp;
    p.n_sample = w->stacks.len;
    p.sample = samplep;
    p.n_mapping = nmaps_used;
    p.mapping = mapp;
    p.n_location = w->locs.len;
    p.location = locp;
    p.period_type = &period_type;
    p.period = w->period_mixed ? 0 : (int64_t)w->attr_period;
    p.n_comment = w->o.comment ? 2 : 1;
    p.comment = comments;
    if (w->tmax > w->tmin)
        p.duration_nanos = (int64_t)(w->tmax - w->tmin);
    p.n_string_table = t.v.len;
    p.string_table = t.v.data;

    g = calloc(1, sizeof *g);
    out = malloc(sizeof *out);
    if (!g || !out)
        goto oom;
    if (pk_out_open(out, path, err)) {
        free(out);
        out = NULL;
        goto done;
    }
    g->base.append = gz_append;
    g->out = out;
    g->err = err;
    if (deflateInit2(&g->z, w->o.level > 0 && w->o.level <= 9 ? w->o.level : 6, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        pk_err_set(err, "%s: cannot start gzip compression", path);
        goto abort;
    }
    protobuf_c_message_pack_to_buffer(&p.base, &g->base);
    g->z.next_in = NULL;
    g->z.avail_in = 0;
    if (g->failed || gz_pump(g, Z_FINISH)) {
        deflateEnd(&g->z);
        pk_err_prefix(err, "%s", path);
        goto abort;
    }
    deflateEnd(&g->z);
    w->st.samples = w->stacks.len;
    w->st.locations = w->locs.len;
    w->st.mappings = nmaps_used;
    w->st.bytes = out->written;
    if (pk_out_commit(out, err))
        goto done;
    if (stp)
        *stp = w->st;
    rc = 0;
    goto done;
abort:
    pk_out_abort(out);
    goto done;
oom:
    pk_err_set(err, "%s: out of memory", path);
done:
    for (size_t i = 0; i < t.v.len; i++)
        free(PK_VEC_AT(&t.v, char *, i));
    pk_vec_free(&t.v);
    pk_u64map_free(&t.idx);
    free(maps);
    free(mapp);
    free(locs);
    free(locp);
    free(samples);
    free(samplep);
    free(ids);
    free(vals);
    free(g);
    free(out);
    return rc;
}
