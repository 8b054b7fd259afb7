/* preinline.c — the CSSPGO pre-inliner (see preinline.h). */
#include "profgen/preinline.h"

#include <pthread.h>
#include <stdlib.h>

#include "profgen/cg_order.h"
#include "profgen/ctx_trie.h"

#define NONE PK_TRIE_NONE
enum { ST_DEAD = PK_TRIE_DEAD, ST_INLINED = 2, ST_MERGED = 4 };

struct trie {
    pk_profset *ps;
    pk_ctx_trie tr;
    pk_listmap lists;         /* name → uint32_t nodes holding a profile of that function */
    pk_preinline_stats *st;
    pk_err *err;
};

#define NODE(t, i) PK_TRIE_NODE(&(t)->tr, i)

static uint32_t get_child(struct trie *t, uint32_t parent, pk_name_id name, uint32_t line, uint32_t disc)
{
    return pk_ctx_trie_child(&t->tr, parent, name, line, disc, true, t->err);
}

static uint32_t find_child(struct trie *t, uint32_t parent, pk_name_id name, uint32_t line, uint32_t disc)
{
    return pk_ctx_trie_child(&t->tr, parent, name, line, disc, false, t->err);
}

static int list_add(struct trie *t, pk_name_id name, uint32_t node)
{
    uint32_t *slot = pk_listmap_push(&t->lists, name);
    if (!slot)
        return pk_err_set(t->err, "out of memory");
    *slot = node;
    return 0;
}

/* A fresh, empty profile for the node's context. */
static pk_fprof *node_new_profile(struct trie *t, uint32_t node)
{
    const pk_ctx_frame *fr;
    size_t n = pk_ctx_trie_frames(&t->tr, node, &fr);
    pk_ctx_id id;
    if (!n || pk_profset_intern_ctx(t->ps, fr, n, &id, t->err))
        return NULL;
    return pk_profset_get_ctx(t->ps, id, t->err);
}

/* Merges the subtree of `from` into `to` (LLVM's promoteMergeContextSamplesTree
 * below the destination): profiles merged or moved, children recursively. */
static int merge_subtree(struct trie *t, uint32_t from, uint32_t to)
{
    pk_trie_node *f = NODE(t, from);
    if (f->prof) {
        pk_fprof *src = f->prof;
        if (NODE(t, to)->prof) {
            pk_fprof *dst = NODE(t, to)->prof;
            if (pk_fprof_merge(t->ps, dst, t->ps, src, 1, t->err))
                return -1;
            dst->attrs |= src->attrs & PK_ATTR_SHOULD_BE_INLINED;
            f = NODE(t, from);
            f->state |= ST_MERGED;
        } else {
            /* a fresh profile takes src's counts without copying them */
            pk_fprof *dst = node_new_profile(t, to);
            if (!dst || (!pk_fprof_take(dst, src) && pk_fprof_merge(t->ps, dst, t->ps, src, 1, t->err)))
                return -1;
            dst->checksum = src->checksum;
            dst->attrs = src->attrs;
            NODE(t, to)->prof = dst;
            NODE(t, to)->state &= ~(uint32_t)(ST_INLINED | ST_MERGED);
            if (list_add(t, NODE(t, to)->name, to))
                return -1;
        }
        pk_profset_remove(t->ps, src);
        t->st->merged_into_base++;
        f = NODE(t, from);
        f->prof = NULL;
    }
    for (uint32_t c = NODE(t, from)->first_child; c != NONE; c = NODE(t, c)->next_sibling) {
        pk_trie_node *cn = NODE(t, c);
        if (cn->state & ST_DEAD)
            continue;
        uint32_t tc = get_child(t, to, cn->name, cn->line, cn->disc);
        if (tc == NONE || merge_subtree(t, c, tc))
            return -1;
    }
    NODE(t, from)->state |= ST_DEAD;
    return 0;
}

/* The base profile of a function, after merging into it every context of
 * the function that no caller decided to inline. */
static int base_of(struct trie *t, pk_name_id name, uint32_t *base)
{
    *base = find_child(t, 0, name, 0, 0);
    pk_vec *l = pk_listmap_get(&t->lists, name);
    if (l) {
        for (size_t i = 0; i < l->len; i++) { /* the list can grow meanwhile */
            uint32_t n = PK_VEC_AT(l, uint32_t, i);
            pk_trie_node *x = NODE(t, n);
            if ((x->state & (ST_DEAD | ST_INLINED | ST_MERGED)) || !x->prof || n == *base)
                continue;
            uint32_t to = get_child(t, 0, name, 0, 0);
            if (to == NONE || merge_subtree(t, n, to))
                return -1;
            *base = to;
            l = pk_listmap_get(&t->lists, name);
        }
    }
    if (*base != NONE && !NODE(t, *base)->prof)
        *base = NONE;
    return 0;
}

/* ---- candidate counts ---- */

static uint64_t call_count(const pk_fprof *caller, uint32_t line, uint32_t disc, pk_name_id callee)
{
    uint64_t count = 0;
    pk_fprof_get_call(caller, line, disc, callee, &count);
    return count;
}

/* ---- the profiled call graph and its top-down order ---- */

/* Functions (as name ids) in top-down order (pk_cg_top_down) over the graph
 * whose edges are the trie's parent → child calls, weighted by the larger of
 * the call-site count and the callee's head estimate, summed over contexts;
 * functions numbered in breadth-first discovery order, as llvm-profgen's
 * ProfiledCallGraph. */
static int top_down_order(struct trie *t, uint64_t cold, int cycle_order, pk_name_id **order, size_t *norder)
{
    pk_u64map fid;                 /* name → function index + 1 */
    pk_vec funcs, edges;           /* pk_name_id; pk_cg_edge */
    pk_vec_init(&funcs, sizeof(pk_name_id));
    pk_vec_init(&edges, sizeof(pk_cg_edge));
    uint32_t *queue = malloc(t->tr.nodes.len * sizeof *queue);
    uint32_t *idx = NULL;
    pk_name_id *out = NULL;
    int rc = -1;
    if (!queue || pk_u64map_init(&fid, 256)) {
        free(queue);
        return pk_err_set(t->err, "out of memory");
    }
    size_t qh = 0, qt = 0;
    queue[qt++] = 0;
    while (qh < qt) {
        uint32_t n = queue[qh++];
        pk_trie_node *caller = NODE(t, n);
        for (uint32_t c = caller->first_child; c != NONE; c = NODE(t, c)->next_sibling) {
            pk_trie_node *cn = NODE(t, c);
            if (cn->state & ST_DEAD)
                continue;
            queue[qt++] = c;
            uint64_t *slot = pk_u64map_slot(&fid, cn->name);
            pk_name_id *fn = slot && !*slot ? pk_vec_push(&funcs) : NULL;
            if (!slot || (!*slot && !fn))
                goto oom;
            if (!*slot) {
                *fn = cn->name;
                *slot = funcs.len;
            }
            if (n == 0)
                continue;
            uint64_t w = 0;
            if (cn->prof && caller->prof) {
                uint64_t entry = pk_fprof_head_estimate(cn->prof);
                uint64_t site = call_count(caller->prof, cn->line, cn->disc, cn->name);
                w = entry > site ? entry : site;
                caller = NODE(t, n);
            }
            pk_cg_edge *e = pk_vec_push(&edges);
            if (!e)
                goto oom;
            e->from = (uint32_t)*pk_u64map_get(&fid, caller->name) - 1;
            e->to = (uint32_t)*pk_u64map_get(&fid, cn->name) - 1;
            e->weight = w;
        }
    }
    size_t nf = funcs.len;
    idx = malloc((nf ? nf : 1) * sizeof *idx);
    out = malloc((nf ? nf : 1) * sizeof *out);
    if (!idx || !out)
        goto oom;
    if (pk_cg_top_down(nf, edges.data, edges.len, cold, cycle_order, idx, t->err))
        goto done;
    for (size_t i = 0; i < nf; i++)
        out[i] = PK_VEC_AT(&funcs, pk_name_id, idx[i]);
    *order = out;
    *norder = nf;
    out = NULL;
    rc = 0;
    goto done;
oom:
    pk_err_set(t->err, "out of memory");
done:
    free(queue);
    free(idx);
    free(out);
    pk_u64map_free(&fid);
    pk_vec_free(&funcs);
    pk_vec_free(&edges);
    return rc;
}

/* ---- decisions ---- */

struct cand {
    uint32_t node;
    uint64_t count;
    uint32_t size;
    uint64_t guid;
};

/* llvm-profgen's order: zero-size first, then hotter, then smaller, then GUID. */
static bool cand_before(const struct cand *a, const struct cand *b)
{
    if ((a->size == 0 || b->size == 0) && a->size != b->size)
        return a->size == 0;
    if (a->count != b->count)
        return a->count > b->count;
    if (a->size != b->size)
        return a->size < b->size;
    return a->guid > b->guid;
}

struct heap {
    struct cand *c;
    size_t n, cap;
};

static int heap_push(struct heap *h, struct cand c)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        struct cand *nc = realloc(h->c, cap * sizeof *nc);
        if (!nc)
            return -1;
        h->c = nc, h->cap = cap;
    }
    size_t i = h->n++;
    while (i && cand_before(&c, &h->c[(i - 1) / 2])) {
        h->c[i] = h->c[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->c[i] = c;
    return 0;
}

static struct cand heap_pop(struct heap *h)
{
    struct cand top = h->c[0], last = h->c[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct cand *best = &last;
        if (l < h->n && cand_before(&h->c[l], best))
            m = l, best = &h->c[l];
        if (r < h->n && cand_before(&h->c[r], best))
            m = r;
        if (m == i)
            break;
        h->c[i] = h->c[m];
        i = m;
    }
    if (h->n)
        h->c[i] = last;
    return top;
}

struct ctx {
    struct trie *t;
    const pk_ctx_sizes *sizes;
    const pk_preinline_opts *o;
    uint64_t cold, p10;
};

static uint32_t node_size(struct ctx *c, uint32_t node)
{
    if (c->o->use_sample_count_size || !c->sizes)
        return pk_fprof_num_body(NODE(c->t, node)->prof);
    const pk_ctx_frame *fr;
    size_t n = pk_ctx_trie_frames(&c->t->tr, node, &fr);
    return pk_ctx_sizes_lookup(c->sizes, fr, n);
}

static int add_candidates(struct ctx *c, struct heap *h, uint32_t caller)
{
    struct trie *t = c->t;
    for (uint32_t k = NODE(t, caller)->first_child; k != NONE; k = NODE(t, k)->next_sibling) {
        pk_trie_node *kn = NODE(t, k);
        if ((kn->state & ST_DEAD) || !kn->prof)
            continue;
        uint64_t entry = pk_fprof_head_estimate(kn->prof);
        uint64_t site = call_count(NODE(t, caller)->prof, kn->line, kn->disc, kn->name);
        struct cand cd = {k, entry > site ? entry : site, node_size(c, k),
                          pk_profset_name_guid(t->ps, NODE(t, k)->name)};
        if (heap_push(h, cd))
            return pk_err_set(t->err, "out of memory");
    }
    return 0;
}

/* The size under which a candidate is inlined: the cold threshold, growing
 * linearly with the call count up to the hot threshold (× 100) at the 10 %
 * cutoff's count, × prev_inline_multiplier where the binary had inlined it. */
static double inline_threshold(struct ctx *c, const struct cand *cd)
{
    const pk_fprof *f = NODE(c->t, cd->node)->prof;
    double threshold = c->o->cold_threshold;
    if (cd->count > c->cold) {
        double hot = c->p10 > c->cold ? ((double)cd->count - (double)c->cold) / ((double)c->p10 - (double)c->cold) : 1.0;
        if (hot > 1.0)
            hot = 1.0;
        threshold = (double)c->o->hot_threshold * hot * 100 + c->o->cold_threshold;
        if (f->attrs & PK_ATTR_WAS_INLINED)
            threshold *= c->o->prev_inline_multiplier;
    }
    return threshold;
}

static bool in_reach(struct ctx *c, pk_name_id root, const struct cand *cd)
{
    if (!c->o->can_inline)
        return true;
    const pk_profset *ps = c->t->ps;
    return c->o->can_inline(c->o->can_inline_ctx, pk_profset_name(ps, root),
                            pk_profset_name(ps, NODE(c->t, cd->node)->name));
}

static bool should_inline(struct ctx *c, const struct cand *cd, double threshold)
{
    if (c->o->replay)
        return NODE(c->t, cd->node)->prof->attrs & PK_ATTR_WAS_INLINED;
    return (double)cd->size <= threshold;
}

static void trace(struct ctx *c, int what, uint32_t node, uint64_t count, uint32_t size, double threshold,
                  uint64_t final_size, uint64_t limit)
{
    if (!c->o->trace)
        return;
    pk_preinline_step st = {.what = what, .count = count, .size = size, .threshold = threshold,
                            .final_size = final_size, .limit = limit,
                            .was_inlined = NODE(c->t, node)->prof->attrs & PK_ATTR_WAS_INLINED};
    st.nframes = pk_ctx_trie_frames(&c->t->tr, node, &st.frames);
    c->o->trace(c->o->trace_ctx, c->t->ps, &st);
}

static int process_function(struct ctx *c, pk_name_id name, struct heap *h)
{
    struct trie *t = c->t;
    uint32_t base;
    if (base_of(t, name, &base))
        return -1;
    if (base == NONE)
        return 0;
    t->st->functions++;
    uint64_t size = node_size(c, base), final_size = size;
    uint64_t limit = size * c->o->growth_limit;
    if (limit > c->o->limit_max)
        limit = c->o->limit_max;
    if (limit < c->o->limit_min)
        limit = c->o->limit_min;
    h->n = 0;
    trace(c, PK_PI_FUNCTION, base, pk_fprof_head_estimate(NODE(t, base)->prof), (uint32_t)size, 0, size, limit);
    if (add_candidates(c, h, base))
        return -1;
    while (h->n && final_size < limit) {
        struct cand cd = heap_pop(h);
        double threshold = inline_threshold(c, &cd);
        bool yes = should_inline(c, &cd, threshold), elsewhere = yes && !in_reach(c, name, &cd);
        yes = yes && !elsewhere;
        trace(c, yes ? PK_PI_INLINE : elsewhere ? PK_PI_OTHER_UNIT : PK_PI_KEEP_CALL, cd.node, cd.count, cd.size,
              threshold, final_size, limit);
        if (yes) {
            pk_trie_node *n = NODE(t, cd.node);
            n->state |= ST_INLINED;
            n->prof->attrs |= PK_ATTR_SHOULD_BE_INLINED;
            final_size += cd.size;
            t->st->inlined++;
            if (add_candidates(c, h, cd.node))
                return -1;
        } else {
            t->st->not_inlined++;
            t->st->other_unit += elsewhere;
        }
    }
    if (h->n)
        t->st->hit_size_limit++;
    while (c->o->trace && h->n) {
        struct cand cd = heap_pop(h);
        trace(c, PK_PI_OVER_LIMIT, cd.node, cd.count, cd.size, inline_threshold(c, &cd), final_size, limit);
    }
    return 0;
}

static int on_added(void *ctx, uint32_t node)
{
    struct trie *t = ctx;
    t->st->contexts_before++;
    return list_add(t, NODE(t, node)->name, node);
}

void pk_preinline_defaults(pk_preinline_opts *o)
{
    *o = (pk_preinline_opts){.hot_threshold = 1500, .cold_threshold = 0, .growth_limit = 12,
                             .limit_min = 100, .limit_max = 50000, .prev_inline_multiplier = 100};
}

struct pk_preinline_job {
    struct trie t;
    pk_preinline_stats st;        /* contexts_before, counted while the trie is built */
    pk_err err;
    pk_summary sum;
    bool trie_ok, threaded;
    int rc;
    pthread_t th;
};

/* What needs no code sizes: the trie of every live context profile, and
 * the summary (hot and cold thresholds). */
static void *job_main(void *arg)
{
    pk_preinline_job *j = arg;
    j->rc = -1;
    if (pk_ctx_trie_init(&j->t.tr, &j->err))
        return NULL;
    j->trie_ok = true;
    if (pk_ctx_trie_build(&j->t.tr, j->t.ps, on_added, &j->t, &j->err) ||
        pk_profset_summary(j->t.ps, &j->sum, &j->err))
        return NULL;
    j->rc = 0;
    return NULL;
}

static int job_start(pk_preinline_job **out, pk_profset *ps, bool thread, pk_err *err)
{
    *out = NULL;
    if (!(ps->kind & PK_PROF_CS))
        return pk_err_set(err, "pre-inliner: the profile is not context-sensitive");
    pk_preinline_job *j = calloc(1, sizeof *j);
    if (!j)
        return pk_err_set(err, "out of memory");
    j->t.ps = ps;
    j->t.st = &j->st;
    j->t.err = &j->err;
    pk_listmap_init(&j->t.lists, sizeof(uint32_t));
    j->threaded = thread && pthread_create(&j->th, NULL, job_main, j) == 0;
    if (!j->threaded)
        job_main(j);
    *out = j;
    return 0;
}

int pk_preinline_start(pk_preinline_job **job, pk_profset *ps, pk_err *err)
{
    return job_start(job, ps, true, err);
}

int pk_preinline_finish(pk_preinline_job *j, const pk_ctx_sizes *sizes, const pk_preinline_opts *o,
                        pk_preinline_stats *st, pk_err *err)
{
    if (j->threaded)
        pthread_join(j->th, NULL);
    memset(st, 0, sizeof *st);
    struct trie *t = &j->t;
    pk_profset *ps = t->ps;
    struct heap h = {0};
    pk_name_id *order = NULL;
    size_t norder = 0;
    int rc = -1;
    if (j->rc) {
        *err = j->err;
        goto done;
    }
    *st = j->st;
    t->st = st;
    t->err = err;
    struct ctx c = {t, sizes, o, pk_summary_threshold(&j->sum, 999999), pk_summary_threshold(&j->sum, 100000)};
    if (top_down_order(t, c.cold, o->cycle_order, &order, &norder))
        goto done;
    for (size_t i = 0; i < norder; i++)
        if (process_function(&c, order[i], &h))
            goto done;
    /* contexts nobody inlined were merged into base profiles: drop them */
    for (size_t i = 1; i < t->tr.nodes.len; i++) {
        pk_trie_node *n = NODE(t, i);
        if (!n->prof)
            continue;
        /* (a dead node can only hold a profile after merging a recursive
         * context into its own ancestor: never emit it as a stray context) */
        if ((n->state & ST_DEAD) || (n->parent != 0 && !(n->state & ST_INLINED))) {
            pk_profset_remove(ps, n->prof);
            n->prof = NULL;
        }
    }
    ps->kind |= PK_PROF_PREINLINED;
    st->contexts_after = pk_profset_count(ps);
    rc = 0;
done:
    pk_listmap_free(&t->lists);
    if (j->trie_ok)
        pk_ctx_trie_free(&t->tr);
    free(h.c);
    free(order);
    free(j);
    return rc;
}

void pk_preinline_cancel(pk_preinline_job *j)
{
    if (!j)
        return;
    if (j->threaded)
        pthread_join(j->th, NULL);
    pk_listmap_free(&j->t.lists);
    if (j->trie_ok)
        pk_ctx_trie_free(&j->t.tr);
    free(j);
}

int pk_preinline(pk_profset *ps, const pk_ctx_sizes *sizes, const pk_preinline_opts *o,
                 pk_preinline_stats *st, pk_err *err)
{
    pk_preinline_job *j;
    if (job_start(&j, ps, false, err))
        return -1;
    return pk_preinline_finish(j, sizes, o, st, err);
}
