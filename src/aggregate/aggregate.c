/* aggregate.c — address spaces and LBR → ranges/branches.
 *
 * Address spaces: pid → sorted, non-overlapping mappings, each flagged as the
 * target binary or not. FORK of a new process copies the parent's mappings
 * (threads share the pid and so the mappings), COMM with the exec flag drops
 * them (the new image's mmaps follow). A sample whose pid has no address space
 * (perf-script text printed without pids, processes started before the
 * recording without synthesized mmaps) falls back to the union of all mappings
 * of the target seen so far — what llvm-profgen's single global base does.
 */
#include "aggregate/aggregate.h"

#include <stdlib.h>

typedef struct agg_map {
    uint64_t start, end, pgoff;  /* [start, end) */
    int target;
} agg_map;

typedef struct agg_proc {
    uint32_t pid;
    pk_vec maps;                 /* agg_map, sorted by start */
    size_t last;                 /* index of the last hit */
} agg_proc;

typedef struct agg_bid {
    uint64_t hash;
    char *name;
    uint8_t id[20];
    uint8_t size;
} agg_bid;

struct pk_agg {
    char *path;
    const char *base_name;
    uint8_t build_id[20];
    uint8_t build_id_size;
    pk_agg_segment *segs;
    size_t nsegs;
    pk_agg_opts o;
    pk_u64map pid_index;         /* pid → index + 1 into procs */
    uint32_t last_pid, last_idx; /* the last pid found (index + 1; 0: none): samples come in runs */
    pk_vec procs;                /* agg_proc */
    pk_vec bids;                 /* agg_bid: BUILD_ID feature, filename → id */
    agg_proc global;             /* every target mapping seen, any pid */
    bool seen_target_mmap;
    /* The last translation's linear piece: runtime [fast_lo, fast_lo +
     * fast_len) of process fast_proc is vaddr ip + fast_delta (one mapping
     * within one segment). Cleared by every event that changes mappings. */
    const agg_proc *fast_proc;
    uint64_t fast_lo, fast_len, fast_delta;
    pk_rawprof prof;
    pk_err *cb_err;
};

static const char *basename_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

pk_agg *pk_agg_new(const pk_agg_target *t, const pk_agg_opts *opts, pk_err *err)
{
    pk_agg *a = calloc(1, sizeof *a);
    if (!a)
        return pk_err_set(err, "out of memory"), NULL;
    a->o = *opts;
    if (!a->o.max_range_len)
        a->o.max_range_len = 1u << 20;
    a->path = strdup(t->path ? t->path : "");
    a->segs = calloc(t->nsegs ? t->nsegs : 1, sizeof *a->segs);
    if (!a->path || !a->segs || pk_u64map_init(&a->pid_index, 64))
        goto oom;
    a->base_name = basename_of(a->path);
    if (t->build_id_size > 20) {
        pk_err_set(err, "build-id of %u bytes is longer than 20", t->build_id_size);
        goto fail;
    }
    memcpy(a->build_id, t->build_id, t->build_id_size);
    a->build_id_size = t->build_id_size;
    memcpy(a->segs, t->segs, t->nsegs * sizeof *a->segs);
    a->nsegs = t->nsegs;
    pk_vec_init(&a->procs, sizeof(agg_proc));
    pk_vec_init(&a->bids, sizeof(agg_bid));
    pk_vec_init(&a->global.maps, sizeof(agg_map));
    if (pk_rawprof_init(&a->prof, a->path, a->build_id, a->build_id_size, t->preferred_base, err))
        goto fail;
    return a;
oom:
    pk_err_set(err, "out of memory");
fail:
    pk_agg_free(a);
    return NULL;
}

void pk_agg_free(pk_agg *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->procs.len; i++)
        pk_vec_free(&PK_VEC_AT(&a->procs, agg_proc, i).maps);
    pk_vec_free(&a->procs);
    for (size_t i = 0; i < a->bids.len; i++)
        free(PK_VEC_AT(&a->bids, agg_bid, i).name);
    pk_vec_free(&a->bids);
    pk_vec_free(&a->global.maps);
    pk_u64map_free(&a->pid_index);
    pk_rawprof_free(&a->prof);
    free(a->segs);
    free(a->path);
    free(a);
}

pk_rawprof *pk_agg_profile(pk_agg *a) { return &a->prof; }

int pk_agg_take_profile(pk_agg *a, pk_rawprof *out, pk_err *err)
{
    *out = a->prof;
    return pk_rawprof_init(&a->prof, a->path, a->build_id, a->build_id_size,
                           out->preferred_base, err);
}

/* ---- processes and mappings ---- */

static agg_proc *find_proc(pk_agg *a, uint32_t pid)
{
    if (a->last_idx && a->last_pid == pid) /* procs are never removed: the index stays right */
        return &PK_VEC_AT(&a->procs, agg_proc, a->last_idx - 1);
    uint64_t *v = pk_u64map_get(&a->pid_index, pid);
    if (!v)
        return NULL;
    a->last_pid = pid;
    a->last_idx = (uint32_t)*v;
    return &PK_VEC_AT(&a->procs, agg_proc, *v - 1);
}

static agg_proc *get_proc(pk_agg *a, uint32_t pid, pk_err *err)
{
    agg_proc *p = find_proc(a, pid);
    if (p)
        return p;
    uint64_t *slot = pk_u64map_slot(&a->pid_index, pid);
    p = slot ? pk_vec_push(&a->procs) : NULL;
    if (!p)
        return pk_err_set(err, "out of memory"), NULL;
    p->pid = pid;
    pk_vec_init(&p->maps, sizeof(agg_map));
    *slot = a->procs.len;
    a->prof.stats.processes++;
    return p;
}

/* Inserts [m.start, m.end), cutting whatever it overlaps (a new mmap replaces
 * the old pages), keeping the array sorted. */
static int insert_map(agg_proc *p, agg_map m)
{
    pk_vec *v = &p->maps;
    for (size_t i = 0; i < v->len;) {
        agg_map *o = &PK_VEC_AT(v, agg_map, i);
        if (o->end <= m.start || o->start >= m.end) {
            i++;
            continue;
        }
        if (o->start < m.start && o->end > m.end) {
            /* new one strictly inside: split the old one */
            agg_map tail = *o;
            tail.pgoff += m.end - o->start;
            tail.start = m.end;
            o->end = m.start;
            if (!pk_vec_push(v))
                return -1;
            memmove(&PK_VEC_AT(v, agg_map, i + 2), &PK_VEC_AT(v, agg_map, i + 1),
                    (v->len - i - 2) * sizeof(agg_map));
            PK_VEC_AT(v, agg_map, i + 1) = tail;
            i += 2;
        } else if (o->start < m.start) {
            o->end = m.start;
            i++;
        } else if (o->end > m.end) {
            o->pgoff += m.end - o->start;
            o->start = m.end;
            i++;
        } else {
            memmove(o, o + 1, (v->len - i - 1) * sizeof(agg_map));
            v->len--;
        }
    }
    size_t lo = 0, hi = v->len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (PK_VEC_AT(v, agg_map, mid).start < m.start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!pk_vec_push(v))
        return -1;
    memmove(&PK_VEC_AT(v, agg_map, lo + 1), &PK_VEC_AT(v, agg_map, lo),
            (v->len - lo - 1) * sizeof(agg_map));
    PK_VEC_AT(v, agg_map, lo) = m;
    p->last = 0;
    return 0;
}

static const agg_bid *find_bid(const pk_agg *a, const char *name)
{
    uint64_t h = pk_hash_bytes(name, strlen(name));
    for (size_t i = a->bids.len; i-- > 0;) {
        const agg_bid *b = &PK_VEC_AT(&a->bids, agg_bid, i);
        if (b->hash == h && !strcmp(b->name, name))
            return b;
    }
    return NULL;
}

int pk_agg_on_build_id(pk_agg *a, const pk_build_id_event *b, pk_err *err)
{
    if (!b->filename)
        return 0;
    agg_bid *x = pk_vec_push(&a->bids);
    if (!x || !(x->name = strdup(b->filename)))
        return pk_err_set(err, "out of memory");
    x->hash = pk_hash_bytes(x->name, strlen(x->name));
    x->size = b->size && b->size <= 20 ? b->size : 20;
    memcpy(x->id, b->build_id, x->size);
    return 0;
}

enum { MATCH_NO, MATCH_YES, MATCH_STALE };

static int name_matches(const pk_agg *a, const char *fn)
{
    return !strcmp(fn, a->path) || !strcmp(basename_of(fn), a->base_name);
}

static int classify(const pk_agg *a, const pk_mmap_event *m)
{
    const char *fn = m->filename ? m->filename : "";
    const uint8_t *id = NULL;
    unsigned size = 0;
    if (m->has_build_id) {
        id = m->build_id;
        size = m->build_id_size;
    } else {
        const agg_bid *b = find_bid(a, fn);
        if (b) {
            id = b->id;
            size = b->size;
        }
    }
    if (id && a->build_id_size) {
        if (size >= a->build_id_size && !memcmp(id, a->build_id, a->build_id_size))
            return MATCH_YES;
        return name_matches(a, fn) ? MATCH_STALE : MATCH_NO;
    }
    return name_matches(a, fn) ? MATCH_YES : MATCH_NO;
}

int pk_agg_on_mmap(pk_agg *a, const pk_mmap_event *m, pk_err *err)
{
    a->fast_proc = NULL;
    a->prof.stats.mmaps++;
    if (!m->len || m->addr + m->len < m->addr)
        return 0;
    int c = classify(a, m);
    if (c == MATCH_STALE)
        a->prof.stats.mmaps_build_id_mismatch++;
    agg_map map = {m->addr, m->addr + m->len, m->pgoff, c == MATCH_YES};
    agg_proc *p = get_proc(a, m->pid, err);
    if (!p || insert_map(p, map))
        return pk_err_set(err, "out of memory");
    if (c == MATCH_YES) {
        a->prof.stats.mmaps_target++;
        a->seen_target_mmap = true;
        if (insert_map(&a->global, map))
            return pk_err_set(err, "out of memory");
    }
    return 0;
}

int pk_agg_on_comm(pk_agg *a, const pk_comm_event *c, pk_err *err)
{
    a->fast_proc = NULL;
    if (!c->exec)
        return 0;
    a->prof.stats.execs++;
    agg_proc *p = find_proc(a, c->pid);
    if (p) {
        p->maps.len = 0;
        p->last = 0;
    }
    return 0;
}

int pk_agg_on_task(pk_agg *a, const pk_task_event *t, pk_err *err)
{
    a->fast_proc = NULL;
    if (!t->is_fork || t->pid == t->ppid)
        return 0;  /* EXIT, or a new thread sharing its process's mappings */
    a->prof.stats.forks++;
    agg_proc *child = get_proc(a, t->pid, err);
    if (!child)
        return -1;
    agg_proc *parent = find_proc(a, t->ppid); /* after get_proc, which may move the array */
    child->maps.len = 0;
    child->last = 0;
    if (parent) {
        if (pk_vec_reserve(&child->maps, parent->maps.len))
            return pk_err_set(err, "out of memory");
        memcpy(child->maps.data, parent->maps.data, parent->maps.len * sizeof(agg_map));
        child->maps.len = parent->maps.len;
    }
    return 0;
}

/* ---- address translation ---- */

static const agg_map *lookup(agg_proc *p, uint64_t ip)
{
    agg_map *m = p->maps.data;
    size_t n = p->maps.len;
    if (!n)
        return NULL;
    if (p->last < n && ip >= m[p->last].start && ip < m[p->last].end)
        return &m[p->last];
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || ip >= m[lo - 1].end)
        return NULL;
    p->last = lo - 1;
    return &m[lo - 1];
}

static const pk_agg_segment *segment_of_offset(const pk_agg *a, uint64_t off)
{
    for (size_t i = 0; i < a->nsegs; i++) {
        const pk_agg_segment *s = &a->segs[i];
        if (off >= s->offset && off - s->offset < s->filesz)
            return s;
    }
    return NULL;
}

static uint64_t translate_slow(pk_agg *a, agg_proc *p, uint64_t ip);

static inline uint64_t translate(pk_agg *a, agg_proc *p, uint64_t ip)
{
    if (p == a->fast_proc && ip - a->fast_lo < a->fast_len)
        return ip + a->fast_delta;
    return translate_slow(a, p, ip);
}

static uint64_t translate_slow(pk_agg *a, agg_proc *p, uint64_t ip)
{
    if (!a->seen_target_mmap) {
        if (!a->o.assume_unrelocated_without_mmap)
            return PK_AGG_EXTERNAL;
        for (size_t i = 0; i < a->nsegs; i++)
            if (ip >= a->segs[i].vaddr && ip - a->segs[i].vaddr < a->segs[i].memsz)
                return ip;
        return PK_AGG_EXTERNAL;
    }
    const agg_map *m = lookup(p, ip);
    if (!m || !m->target)
        return PK_AGG_EXTERNAL;
    uint64_t off = ip - m->start + m->pgoff;
    const pk_agg_segment *sg = segment_of_offset(a, off);
    if (!sg)
        return PK_AGG_EXTERNAL;
    /* remember the piece of the mapping that lies in this segment */
    uint64_t lo_off = m->pgoff > sg->offset ? m->pgoff : sg->offset;
    uint64_t hi_off = m->pgoff + (m->end - m->start), seg_end = sg->offset + sg->filesz;
    if (hi_off > seg_end)
        hi_off = seg_end;
    a->fast_proc = p;
    a->fast_lo = m->start + (lo_off - m->pgoff);
    a->fast_len = hi_off - lo_off;
    a->fast_delta = sg->vaddr - sg->offset + m->pgoff - m->start;
    return sg->vaddr + (off - sg->offset);
}

/* Translates an LBR into out, (from, to, 0) per entry, up to the first
 * unused slot; returns the entries. The translation cache is kept in locals
 * (stores to out could alias it) and reloaded after a slow lookup. */
static uint64_t translate_lbr(pk_agg *a, agg_proc *p, const uint8_t *e, uint64_t nr, pk_branch *restrict out)
{
    bool hot = p == a->fast_proc;
    uint64_t lo = a->fast_lo, len = a->fast_len, delta = a->fast_delta;
    uint64_t n = 0;
    for (; n < nr; n++, e += sizeof(pk_branch)) {
        uint64_t rf = pk_ld64(e), rt = pk_ld64(e + 8), f, t;
        if (!rf && !rt)
            break; /* unused LBR slot */
        if (hot && rf - lo < len) {
            f = rf + delta;
        } else {
            f = translate_slow(a, p, rf);
            hot = p == a->fast_proc, lo = a->fast_lo, len = a->fast_len, delta = a->fast_delta;
        }
        if (hot && rt - lo < len) {
            t = rt + delta;
        } else {
            t = translate_slow(a, p, rt);
            hot = p == a->fast_proc, lo = a->fast_lo, len = a->fast_len, delta = a->fast_delta;
        }
        out[n] = (pk_branch){f, t, pk_ld64(e + 16) & PK_BRANCH_TYPE_MASK}; /* the type, not the cycles */
    }
    return n;
}

uint64_t pk_agg_translate(pk_agg *a, uint32_t pid, uint64_t ip)
{
    agg_proc *p = find_proc(a, pid);
    return translate(a, p ? p : &a->global, ip);
}

size_t pk_agg_translate_user_chain(pk_agg *a, uint32_t pid, const uint8_t *chain, uint64_t n, uint64_t *out)
{
    agg_proc *p = find_proc(a, pid); /* once for the whole chain */
    if (!p)
        p = &a->global;
    size_t k = 0;
    bool user = true;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t ip = pk_ld64(chain + 8 * i);
        if (ip >= PK_CONTEXT_MAX) {
            user = ip == PK_CONTEXT_USER;
            continue;
        }
        if (user)
            out[k++] = translate(a, p, ip);
    }
    return k;
}

/* ---- samples ---- */

/* One sample: statistics always; the range and branch counts unless
 * `lbr_out` is given, which receives the translated entries instead. */
static int on_sample(pk_agg *a, const pk_sample *s, pk_branch *lbr_out, size_t *nlbr_out, pk_err *err)
{
    pk_agg_stats *st = &a->prof.stats;
    uint64_t w = pk_sample_weight(s);   /* identical samples it stands for */
    st->samples += w;
    if (a->o.pid >= 0 && s->pid != (uint32_t)a->o.pid) {
        st->samples_other_pid += w;
        return 0;
    }
    if (!s->branch_nr) {
        st->samples_no_lbr += w;
        return 0;
    }
    agg_proc *p = find_proc(a, s->pid);
    if (!p) {  /* never seen (an exec'd process with no mappings yet is seen) */
        if (a->seen_target_mmap)
            st->samples_no_mapping += w;
        p = &a->global;
    }
    /* counters kept local: the stores to lbr_out could alias them */
    uint64_t entries = 0, branches = 0, external = 0, ranges = 0, drop_ext = 0, drop_back = 0, drop_long = 0;
    size_t nout = 0;
    const uint8_t *e = (const uint8_t *)s->branches;
    uint64_t prev_from = PK_AGG_EXTERNAL;
    bool used = false, any_inside = false;
    if (lbr_out) {
        /* translated first in a tight loop, counted after */
        uint64_t n = translate_lbr(a, p, e, s->branch_nr, lbr_out);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t from = lbr_out[i].from, to = lbr_out[i].to;
            any_inside |= from != PK_AGG_EXTERNAL || to != PK_AGG_EXTERNAL;
            external += to == PK_AGG_EXTERNAL;
            if (i > 0) {
                if (to == PK_AGG_EXTERNAL && prev_from == PK_AGG_EXTERNAL)
                    ; /* entirely in other code: not ours */
                else if (to == PK_AGG_EXTERNAL || prev_from == PK_AGG_EXTERNAL)
                    drop_ext++;
                else if (to > prev_from)
                    drop_back++;
                else if (prev_from - to >= a->o.max_range_len)
                    drop_long++;
                else
                    ranges++;
            }
            prev_from = from;
        }
        entries = n;
        branches = n - external;
        used = branches || ranges;
        nout = n;
        goto counted;
    }
    for (uint64_t i = 0; i < s->branch_nr; i++, e += sizeof(pk_branch)) {
        uint64_t rf = pk_ld64(e), rt = pk_ld64(e + 8);
        if (!rf && !rt)
            break;  /* unused LBR slot */
        entries++;
        uint64_t from = translate(a, p, rf), to = translate(a, p, rt);
        if (from != PK_AGG_EXTERNAL || to != PK_AGG_EXTERNAL)
            any_inside = true;
        if (to != PK_AGG_EXTERNAL) {
            if (pk_pairmap_add(&a->prof.branches, from, to, w))
                return pk_err_set(err, "out of memory");
            branches++;
            used = true;
        } else {
            external++;
        }
        /* the code run between this branch's target and the newer branch */
        if (i > 0) {
            if (to == PK_AGG_EXTERNAL && prev_from == PK_AGG_EXTERNAL) {
                /* entirely in other code: not ours */
            } else if (to == PK_AGG_EXTERNAL || prev_from == PK_AGG_EXTERNAL) {
                drop_ext++;
            } else if (to > prev_from) {
                drop_back++;
            } else if (prev_from - to >= a->o.max_range_len) {
                drop_long++;
            } else {
                if (pk_pairmap_add(&a->prof.ranges, to, prev_from, w))
                    return pk_err_set(err, "out of memory");
                ranges++;
                used = true;
            }
        }
        prev_from = from;
    }
counted:
    st->lbr_entries += entries * w;
    st->branches += branches * w;
    st->branches_external += external * w;
    st->ranges += ranges * w;
    st->range_drop[PK_RANGE_DROP_EXTERNAL] += drop_ext * w;
    st->range_drop[PK_RANGE_DROP_BACKWARDS] += drop_back * w;
    st->range_drop[PK_RANGE_DROP_TOO_LONG] += drop_long * w;
    if (nlbr_out)
        *nlbr_out = nout;
    if (used)
        st->samples_used += w;
    else if (!any_inside)
        st->samples_outside += w;
    return 0;
}

int pk_agg_add_translated(pk_agg *a, const pk_branch *lbr, size_t n, uint64_t weight, pk_err *err)
{
    /* the counts of the loop above (without lbr_out), statistics aside */
    uint64_t prev_from = PK_AGG_EXTERNAL;
    for (size_t i = 0; i < n; i++) {
        uint64_t from = lbr[i].from, to = lbr[i].to;
        if (to != PK_AGG_EXTERNAL && pk_pairmap_add(&a->prof.branches, from, to, weight))
            return pk_err_set(err, "out of memory");
        if (i > 0 && to != PK_AGG_EXTERNAL && prev_from != PK_AGG_EXTERNAL && to <= prev_from &&
            prev_from - to < a->o.max_range_len && pk_pairmap_add(&a->prof.ranges, to, prev_from, weight))
            return pk_err_set(err, "out of memory");
        prev_from = from;
    }
    return 0;
}

int pk_agg_on_sample(pk_agg *a, const pk_sample *s, pk_err *err)
{
    return on_sample(a, s, NULL, NULL, err);
}

int pk_agg_count_sample(pk_agg *a, const pk_sample *s, pk_branch *lbr_out, size_t *nlbr_out, pk_err *err)
{
    *nlbr_out = 0;
    return on_sample(a, s, lbr_out, nlbr_out, err);
}

/* ---- perf reader glue ---- */

static int cb_sample(void *c, const pk_sample *s) { pk_agg *a = c; return pk_agg_on_sample(a, s, a->cb_err); }
static int cb_mmap(void *c, const pk_mmap_event *m) { pk_agg *a = c; return pk_agg_on_mmap(a, m, a->cb_err); }
static int cb_comm(void *c, const pk_comm_event *e) { pk_agg *a = c; return pk_agg_on_comm(a, e, a->cb_err); }
static int cb_task(void *c, const pk_task_event *t) { pk_agg *a = c; return pk_agg_on_task(a, t, a->cb_err); }
static int cb_bid(void *c, const pk_build_id_event *b) { pk_agg *a = c; return pk_agg_on_build_id(a, b, a->cb_err); }

void pk_agg_callbacks(pk_agg *a, pk_err *err, pk_perf_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    a->cb_err = err;
    cb->ctx = a;
    cb->sample = cb_sample;
    cb->mmap = cb_mmap;
    cb->comm = cb_comm;
    cb->task = cb_task;
    cb->build_id = cb_bid;
    cb->sample_weights = true;
}
