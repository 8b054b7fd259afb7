/* ip_ranges.c — hits per context → ranges and branches (see ip_ranges.h). */
#include "infer/ip_ranges.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "infer/infer.h"

#define DEFAULT_SCALE 64

/* One function's CFG, built once for all its contexts. */
typedef struct func_cfg {
    uint64_t entry;
    bool ok;
    pk_cfg cfg;
} func_cfg;

/* One context: its function and counts. */
typedef struct ctx_state {
    uint32_t func;               /* index into funcs */
    bool dirty;                  /* a call-site weight was raised: infer again */
    uint64_t hits;               /* samples of this context */
    int64_t *weight;             /* per block */
    uint64_t *block, *edge;      /* inferred */
} ctx_state;

typedef struct ipr {
    pk_binary *bin;
    pk_ipraw *ip;
    const pk_ip_infer_opts *o;
    pk_flow_opts fo;
    pk_cfg_noreturn *nr;         /* calls that do not return end their block's flow */
    pk_ip_infer_stats *st;
    pk_vec funcs;                /* func_cfg */
    pk_u64map func_of;           /* entry → index + 1 */
    ctx_state *ctx;
    size_t nctx;
} ipr;

static int func_index(ipr *r, uint64_t entry, uint32_t *out, pk_err *err)
{
    uint64_t *slot = pk_u64map_slot(&r->func_of, entry);
    if (!slot)
        return pk_err_set(err, "out of memory");
    if (*slot) {
        *out = (uint32_t)(*slot - 1);
        return 0;
    }
    func_cfg *f = pk_vec_push(&r->funcs);
    if (!f)
        return pk_err_set(err, "out of memory");
    f->entry = entry;
    *slot = r->funcs.len;
    *out = (uint32_t)(r->funcs.len - 1);
    const pk_elf_symbol *sym = pk_elf_func_at(pk_binary_elf(r->bin), entry);
    if (!sym || sym->addr != entry || !sym->size) {
        r->st->cfg_failed++;
        return 0;
    }
    pk_addr_range range = {sym->addr, sym->addr + sym->size};
    pk_err cerr;
    /* A function that does not decode into a CFG is dropped, not fatal: its
     * hits are counted as dropped in the summary. */
    if (pk_cfg_build_binary(&f->cfg, r->bin, r->nr, &range, 1, entry, &cerr)) {
        r->st->cfg_failed++;
        return 0;
    }
    f->ok = true;
    r->st->functions++;
    r->st->blocks += f->cfg.nblocks;
    r->st->ijumps_resolved += f->cfg.ijumps_resolved;
    r->st->ijumps_unresolved += f->cfg.ijumps_unresolved;
    r->st->ijumps_untabled += f->cfg.ijumps_untabled;
    return 0;
}

static const pk_cfg *cfg_of(const ipr *r, uint32_t c)
{
    const func_cfg *f = &PK_VEC_AT(&r->funcs, func_cfg, r->ctx[c].func);
    return f->ok ? &f->cfg : NULL;
}

/* Every context gets its function's CFG and zero weights. */
static int setup_contexts(ipr *r, pk_err *err)
{
    r->nctx = pk_csraw_num_ctxs(&r->ip->ctxs);
    if (!(r->ctx = calloc(r->nctx + 1, sizeof *r->ctx)))
        return pk_err_set(err, "out of memory");
    for (uint32_t c = 0; c < r->nctx; c++) {
        uint32_t n;
        const uint64_t *fr = pk_csraw_ctx(&r->ip->ctxs, c, &n);
        if (func_index(r, fr[n - 1], &r->ctx[c].func, err))
            return -1;
        const pk_cfg *g = cfg_of(r, c);
        if (!g)
            continue;
        ctx_state *s = &r->ctx[c];
        s->weight = calloc(g->nblocks + 1, sizeof *s->weight);
        s->block = calloc(g->nblocks + 1, sizeof *s->block);
        s->edge = calloc(g->nedges + 1, sizeof *s->edge);
        if (!s->weight || !s->block || !s->edge)
            return pk_err_set(err, "out of memory");
    }
    return 0;
}

/* Block weights from the hits, context by context (hits sorted by key). */
static int weigh(ipr *r, pk_err *err)
{
    size_t n;
    pk_pair_count *h = pk_pairmap_sorted(&r->ip->hits, &n);
    if (!h && n)
        return pk_err_set(err, "out of memory");
    uint64_t *addrs = malloc((n + 1) * sizeof *addrs), *hits = malloc((n + 1) * sizeof *hits);
    int rc = 0;
    if (!addrs || !hits) {
        rc = pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n;) {
        uint32_t c = (uint32_t)(h[i].a >> 32);
        size_t k = 0;
        for (; i < n && (uint32_t)(h[i].a >> 32) == c; i++) {
            addrs[k] = r->ip->ctxs.base + (uint32_t)h[i].a;
            hits[k++] = h[i].n;
        }
        const pk_cfg *g = cfg_of(r, c);
        if (!g) {
            for (size_t j = 0; j < k; j++)
                r->st->hits_dropped += hits[j];
            continue;
        }
        for (size_t j = 0; j < k; j++) {
            if (pk_cfg_block_at(g, addrs[j]) == UINT32_MAX)
                r->st->hits_dropped += hits[j];
            else
                r->ctx[c].hits += hits[j];
        }
        pk_flow_block_weights(g, addrs, hits, k, r->o->scale ? r->o->scale : DEFAULT_SCALE, r->ctx[c].weight);
    }
out:
    free(h);
    free(addrs);
    free(hits);
    return rc;
}

/* Shrinks each context's weights toward its function's merged shape (see
 * ip_ranges.h). */
static int borrow_shape(ipr *r, pk_err *err)
{
    double prior = r->o->context_prior;
    if (prior <= 0)
        return 0;
    size_t nf = r->funcs.len;
    double **merged = calloc(nf + 1, sizeof *merged);
    uint32_t *nctx = calloc(nf + 1, sizeof *nctx);
    int rc = 0;
    if (!merged || !nctx) {
        rc = pk_err_set(err, "out of memory");
        goto out;
    }
    for (uint32_t c = 0; c < r->nctx; c++) {
        const pk_cfg *g = cfg_of(r, c);
        if (!g || !r->ctx[c].hits)
            continue;
        uint32_t f = r->ctx[c].func;
        if (!merged[f] && !(merged[f] = calloc(g->nblocks + 1, sizeof **merged))) {
            rc = pk_err_set(err, "out of memory");
            goto out;
        }
        nctx[f]++;
        for (uint32_t b = 0; b < g->nblocks; b++)
            merged[f][b] += (double)r->ctx[c].weight[b];
    }
    for (uint32_t c = 0; c < r->nctx; c++) {
        const pk_cfg *g = cfg_of(r, c);
        uint32_t f = r->ctx[c].func;
        if (!g || !r->ctx[c].hits || nctx[f] < 2)
            continue;
        pk_flow_shrink_weights(r->ctx[c].weight, g->nblocks, r->ctx[c].hits, merged[f], prior);
    }
out:
    for (size_t f = 0; merged && f < nf; f++)
        free(merged[f]);
    free(merged);
    free(nctx);
    return rc;
}

static int infer_ctx(ipr *r, uint32_t c, pk_err *err)
{
    const pk_cfg *g = cfg_of(r, c);
    if (!g)
        return 0;
    ctx_state *s = &r->ctx[c];
    s->dirty = false;
    return pk_flow_infer(g, s->weight, PK_FLOW_UNKNOWN, &r->fo, s->block, s->edge, err);
}

/* Infers every context (only the dirty ones when `dirty_only`), on
 * r->o->threads threads: contexts are taken one at a time from a shared
 * counter, largest CFG first, since their costs differ by orders of
 * magnitude (one interpreter loop can take as long as all the rest; started
 * last, it would run alone at the end). */
typedef struct todo_item {
    size_t size;                 /* blocks + edges of the context's CFG */
    uint32_t ctx;
} todo_item;

typedef struct infer_pool {
    ipr *r;
    const todo_item *todo;       /* contexts, in the order they are taken */
    uint32_t ntodo;
    uint32_t next;               /* the next index into todo (atomic) */
    int failed;                  /* set once (atomic); its error in err */
    pk_err err;
} infer_pool;

static void *infer_worker(void *arg)
{
    infer_pool *p = arg;
    for (;;) {
        if (__atomic_load_n(&p->failed, __ATOMIC_RELAXED))
            break;
        uint32_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->ntodo)
            break;
        pk_err e;
        if (infer_ctx(p->r, p->todo[i].ctx, &e) && !__atomic_exchange_n(&p->failed, 1, __ATOMIC_ACQ_REL))
            p->err = e;
    }
    return NULL;
}

static int by_size_desc(const void *a, const void *b)
{
    const todo_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return (x->ctx > y->ctx) - (x->ctx < y->ctx);
}

static int infer_all(ipr *r, bool dirty_only, pk_err *err)
{
    unsigned want = r->o->threads > PK_IP_MAX_THREADS ? PK_IP_MAX_THREADS : r->o->threads;
    todo_item *todo = malloc((r->nctx + 1) * sizeof *todo);
    if (!todo)
        return pk_err_set(err, "out of memory");
    uint32_t n = 0;
    for (uint32_t c = 0; c < r->nctx; c++) {
        const pk_cfg *g = cfg_of(r, c);
        if (!dirty_only || r->ctx[c].dirty)
            todo[n++] = (todo_item){g ? g->nblocks + g->nedges : 0, c};
    }
    if (want > 1)
        qsort(todo, n, sizeof *todo, by_size_desc);
    infer_pool p = {.r = r, .todo = todo, .ntodo = n};
    pthread_t th[PK_IP_MAX_THREADS];
    unsigned started = 0;
    for (; started + 1 < want && started + 1 < n; started++)
        if (pthread_create(&th[started], NULL, infer_worker, &p) != 0)
            break; /* fewer threads: the work is the same */
    infer_worker(&p);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(todo);
    if (p.failed) {
        *err = p.err;
        return -1;
    }
    return 0;
}

static uint64_t entry_count(const ipr *r, uint32_t c)
{
    const pk_cfg *g = cfg_of(r, c);
    return g ? r->ctx[c].block[g->entry_block] : 0;
}

/* One call observation, resolved: the callee context it lands in. */
typedef struct call_obs {
    uint32_t parent, child;
    uint64_t site, callee, weight;
} call_obs;

static int resolve_calls(ipr *r, call_obs **out, size_t *nout, pk_err *err)
{
    size_t n;
    pk_pair_count *cs = pk_pairmap_sorted(&r->ip->calls, &n);
    if (!cs && n)
        return pk_err_set(err, "out of memory");
    call_obs *obs = calloc(n + 1, sizeof *obs);
    if (!obs) {
        free(cs);
        return pk_err_set(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t p;
        uint64_t site, callee;
        pk_ipraw_key(r->ip, &cs[i], &p, &site, &callee);
        uint32_t child;
        if (pk_ipraw_child(r->ip, p, site, callee, &child, err)) {
            free(cs);
            free(obs);
            return -1;
        }
        obs[i] = (call_obs){p, child, site, callee, cs[i].n};
    }
    free(cs);
    *out = obs;
    *nout = n;
    return 0;
}

/* Raises every call-site block to what its callees' entries say it ran. */
static int tie_calls(ipr *r, const call_obs *obs, size_t n, pk_err *err)
{
    /* observations per child context: a child reached from several sites
     * (a flat profile's function, or contexts merged by the depth limit)
     * owes each site its share of the entries */
    pk_u64map per_child = {0};
    if (pk_u64map_init(&per_child, 64))
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        uint64_t *v = pk_u64map_slot(&per_child, obs[i].child);
        if (!v) {
            pk_u64map_free(&per_child);
            return pk_err_set(err, "out of memory");
        }
        *v += obs[i].weight;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double calls = 0;
        for (; j < n && obs[j].parent == obs[i].parent && obs[j].site == obs[i].site; j++) {
            if (obs[j].child >= r->nctx)
                continue; /* a context interned only now: no samples of its own */
            uint64_t total = *pk_u64map_get(&per_child, obs[j].child);
            calls += (double)entry_count(r, obs[j].child) * (double)obs[j].weight / (double)total;
        }
        uint32_t p = obs[i].parent;
        const pk_cfg *g = cfg_of(r, p);
        uint32_t b = g ? pk_cfg_block_at(g, obs[i].site) : UINT32_MAX;
        if (b != UINT32_MAX) {
            int64_t want = (int64_t)(calls + 0.5);
            if (want > r->ctx[p].weight[b]) {
                r->ctx[p].weight[b] = want;
                r->ctx[p].dirty = true;
                r->st->sites_raised++;
            }
        }
        i = j;
    }
    pk_u64map_free(&per_child);
    return infer_all(r, true, err);
}

/* ---- sampling density ---- */

static int by_mass_desc(const void *a, const void *b)
{
    const pk_ip_block_mass *x = a, *y = b;
    if (x->mass != y->mass)
        return x->mass < y->mass ? 1 : -1;
    return (x->ninsns > y->ninsns) - (x->ninsns < y->ninsns);
}

uint64_t pk_ip_hot_instructions(pk_ip_block_mass *b, size_t n, double share)
{
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += b[i].mass;
    if (total <= 0)
        return 0;
    qsort(b, n, sizeof *b, by_mass_desc);
    double acc = 0;
    uint64_t insns = 0;
    for (size_t i = 0; i < n && acc < share * total; i++) {
        acc += b[i].mass;
        insns += b[i].ninsns;
    }
    return insns;
}

double pk_ip_density(const pk_ip_infer_stats *st)
{
    if (!st->hot_instructions)
        return 0;
    return PK_IP_HOT_SHARE * (double)st->samples_inferred / (double)st->hot_instructions;
}

int pk_ip_density_warning(const pk_ip_infer_stats *st, char *buf, size_t cap)
{
    if (cap)
        buf[0] = 0;
    double d = pk_ip_density(st);
    if (!st->hot_instructions || d >= PK_IP_THIN_DENSITY)
        return 0;
    int n = snprintf(buf, cap,
                     "thin IP samples: %.2f samples per hot instruction (%llu samples; %llu instructions ran %.0f %% "
                     "of the work), below %.1f: probe-only and CSSPGO profiles this thin have given 75 to 84 %% of "
                     "the gain of LBR profiles of the same runs, against 82 %% or more at 1.2 and above; merge more "
                     "runs or record longer",
                     d, (unsigned long long)st->samples_inferred, (unsigned long long)st->hot_instructions,
                     100 * PK_IP_HOT_SHARE, PK_IP_THIN_DENSITY);
    return pk_snprintf_len(n, cap);
}

int pk_ip_icall_warning(const pk_ip_infer_stats *st, char *buf, size_t cap)
{
    if (cap)
        buf[0] = 0;
    if (!st->icall_calls || st->icall_calls_untargeted * 2 < st->icall_calls)
        return 0;
    int n = snprintf(buf, cap,
                     "calls through pointers without a callee: %llu of %llu indirect call sites that ran (%.0f %% of "
                     "their calls) have no callee in any sample's call chain, so the profile names no target for "
                     "them and clang can neither promote nor inline those calls (SQLite's AutoFDO from such samples "
                     "kept 76 %% of LBR's gain, 91 %% with whole chains); a build without frame pointers recorded "
                     "with frame-pointer chains loses every caller: record with --call-graph dwarf, or build with "
                     "-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer",
                     (unsigned long long)st->icall_sites_untargeted, (unsigned long long)st->icall_sites,
                     100.0 * (double)st->icall_calls_untargeted / (double)st->icall_calls);
    return pk_snprintf_len(n, cap);
}

/* A block of a function, all its contexts' counts together. */
typedef struct func_block_mass {
    uint32_t func, block;
    double mass;
} func_block_mass;

static int by_func_block(const void *a, const void *b)
{
    const func_block_mass *x = a, *y = b;
    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    return (x->block > y->block) - (x->block < y->block);
}

/* The blocks that ran, for pk_ip_density. Each function's contexts are
 * summed: a context borrows its function's shape (borrow_shape), so what
 * the samples must cover is the functions' code, not every context's copy. */
static int measure_density(ipr *r, pk_err *err)
{
    size_t n = 0;
    for (uint32_t c = 0; c < r->nctx; c++) {
        const pk_cfg *g = cfg_of(r, c);
        r->st->samples_inferred += r->ctx[c].hits;
        for (uint32_t b = 0; g && b < g->nblocks; b++)
            n += r->ctx[c].block[b] > 0;
    }
    func_block_mass *fb = malloc((n + 1) * sizeof *fb);
    pk_ip_block_mass *m = malloc((n + 1) * sizeof *m);
    if (!fb || !m) {
        free(fb);
        free(m);
        return pk_err_set(err, "out of memory");
    }
    size_t k = 0;
    for (uint32_t c = 0; c < r->nctx; c++) {
        const pk_cfg *g = cfg_of(r, c);
        for (uint32_t b = 0; g && b < g->nblocks; b++)
            if (r->ctx[c].block[b] > 0)
                fb[k++] = (func_block_mass){r->ctx[c].func, b, (double)r->ctx[c].block[b] * g->blocks[b].ninsns};
    }
    qsort(fb, k, sizeof *fb, by_func_block);
    size_t nm = 0;
    for (size_t i = 0; i < k;) {
        size_t j = i;
        double mass = 0;
        for (; j < k && fb[j].func == fb[i].func && fb[j].block == fb[i].block; j++)
            mass += fb[j].mass;
        const pk_cfg *g = &PK_VEC_AT(&r->funcs, func_cfg, fb[i].func).cfg;
        m[nm++] = (pk_ip_block_mass){mass, g->blocks[fb[i].block].ninsns};
        i = j;
    }
    r->st->hot_instructions = pk_ip_hot_instructions(m, nm, PK_IP_HOT_SHARE);
    free(fb);
    free(m);
    return 0;
}

/* ---- output ---- */

typedef struct sink {
    pk_csraw *cs;
    pk_rawprof *flat;
    uint32_t *cs_ctx;            /* ip context → cs context */
    pk_ip_infer_stats *st;
} sink;

static int put_range(sink *k, uint32_t c, uint64_t begin, uint64_t last, uint64_t n, pk_err *err)
{
    if (!n)
        return 0;
    int rc = k->cs ? pk_pairmap_add(&k->cs->ranges, (uint64_t)k->cs_ctx[c] << 32 | (begin - k->cs->base),
                                    last - k->cs->base, n)
                   : pk_pairmap_add(&k->flat->ranges, begin, last, n);
    return rc ? pk_err_set(err, "out of memory") : 0;
}

static int put_branch(sink *k, uint32_t c, uint64_t from, uint64_t to, uint64_t n, pk_err *err)
{
    if (!n)
        return 0;
    int rc;
    if (k->cs) {
        uint64_t fo = from == PK_AGG_EXTERNAL ? PK_CS_EXTERNAL_OFF : from - k->cs->base;
        rc = pk_pairmap_add(&k->cs->branches, (uint64_t)k->cs_ctx[c] << 32 | fo, to - k->cs->base, n);
    } else {
        rc = pk_pairmap_add(&k->flat->branches, from, to, n);
    }
    return rc ? pk_err_set(err, "out of memory") : 0;
}

/* Blocks as ranges, taken jumps and tail calls as branches. */
static int emit_blocks(ipr *r, sink *k, uint32_t c, pk_err *err)
{
    const pk_cfg *g = cfg_of(r, c);
    if (!g)
        return 0;
    const ctx_state *s = &r->ctx[c];
    for (uint32_t b = 0; b < g->nblocks; b++) {
        const pk_cfg_block *bl = &g->blocks[b];
        if (put_range(k, c, bl->begin, bl->last, s->block[b], err))
            return -1;
        bool jumps_inside = false;
        for (uint32_t e = bl->first_succ; e < bl->first_succ + bl->nsucc; e++) {
            const pk_cfg_edge *ed = &g->edges[e];
            if (ed->kind == PK_CFG_FALL || ed->kind == PK_CFG_AFTER_CALL)
                continue;
            jumps_inside = true;
            if (put_branch(k, c, bl->last, g->blocks[ed->to].begin, s->edge[e], err))
                return -1;
        }
        /* a direct jump out of the function: a tail call, as LBR sees it */
        if (bl->term == PK_INSN_JMP && !jumps_inside && s->block[b]) {
            pk_insn in;
            if (!pk_binary_decode_one(r->bin, bl->last, &in) && in.cls == PK_INSN_JMP &&
                put_branch(k, c, bl->last, in.target, s->block[b], err))
                return -1;
        }
    }
    return 0;
}

/* Call targets: each call-site block's count shared out by observation;
 * entries not explained by observed calls come from other code. */
static int emit_calls(ipr *r, sink *k, const call_obs *obs, size_t n, pk_err *err)
{
    uint64_t *called = calloc(r->nctx + 1, sizeof *called); /* calls landing per context */
    if (!called)
        return pk_err_set(err, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t j = i;
        uint64_t total = 0;
        for (; j < n && obs[j].parent == obs[i].parent && obs[j].site == obs[i].site; j++)
            total += obs[j].weight;
        uint32_t p = obs[i].parent;
        const pk_cfg *g = cfg_of(r, p);
        uint32_t b = g ? pk_cfg_block_at(g, obs[i].site) : UINT32_MAX;
        uint64_t count = b == UINT32_MAX ? 0 : r->ctx[p].block[b];
        uint64_t given = 0;
        for (size_t m = i; m < j && !rc; m++) {
            /* the last callee takes the rounding remainder */
            uint64_t c = m + 1 == j ? count - given
                                    : (uint64_t)((double)count * (double)obs[m].weight / (double)total);
            given += c;
            if (obs[m].child < r->nctx)
                called[obs[m].child] += c;
            rc = put_branch(k, p, obs[m].site, obs[m].callee, c, err);
        }
        i = j;
    }
    for (uint32_t c = 0; c < r->nctx && !rc; c++) {
        uint64_t e = entry_count(r, c);
        if (e > called[c]) {
            uint32_t len;
            const uint64_t *fr = pk_csraw_ctx(&r->ip->ctxs, c, &len);
            rc = put_branch(k, c, PK_AGG_EXTERNAL, fr[len - 1], e - called[c], err);
        }
    }
    free(called);
    return rc;
}

/* Calls through pointers that ran and that no chain gave a callee for: the
 * profile can name no target there (no promotion, no inlining of the
 * callee). obs is sorted by context, then site. A call into another
 * binary's code through the GOT is left out: its callee is never in this
 * binary's profile, whatever the chains. */
static void count_icall_targets(ipr *r, const call_obs *obs, size_t n)
{
    size_t i = 0;
    for (uint32_t c = 0; c < r->nctx; c++) {
        while (i < n && obs[i].parent < c)
            i++;
        const pk_cfg *g = cfg_of(r, c);
        if (!g)
            continue;
        size_t j = i;
        for (size_t b = 0; b < g->nblocks; b++) {
            const pk_cfg_block *k = &g->blocks[b];
            uint64_t calls = r->ctx[c].block[b];
            if (k->term != PK_INSN_ICALL || !calls ||
                pk_cfg_icall_to_import(r->nr, k->last, (uint32_t)(k->end - k->last)))
                continue;
            while (j < n && obs[j].parent == c && obs[j].site < k->begin)
                j++;
            bool targeted = j < n && obs[j].parent == c && obs[j].site < k->end;
            r->st->icall_sites++;
            r->st->icall_calls += calls;
            if (!targeted) {
                r->st->icall_sites_untargeted++;
                r->st->icall_calls_untargeted += calls;
            }
        }
    }
}

static int emit(ipr *r, pk_csraw *cs, pk_rawprof *flat, const call_obs *obs, size_t nobs, pk_err *err)
{
    sink k = {.cs = cs, .flat = flat, .st = r->st};
    int rc = 0;
    if (cs) {
        /* (contexts interned after the samples, for call observations
         * whose callee context had no sample, carry nothing) */
        if (!(k.cs_ctx = malloc((r->nctx + 1) * sizeof *k.cs_ctx)))
            return pk_err_set(err, "out of memory");
        for (uint32_t c = 0; c < r->nctx && !rc; c++) {
            uint32_t len;
            const uint64_t *fr = pk_csraw_ctx(&r->ip->ctxs, c, &len);
            rc = pk_csraw_intern(cs, fr, len, &k.cs_ctx[c], err);
        }
    }
    for (uint32_t c = 0; c < r->nctx && !rc; c++)
        rc = emit_blocks(r, &k, c, err);
    if (!rc)
        rc = emit_calls(r, &k, obs, nobs, err);
    if (!rc) {
        r->st->ranges = cs ? cs->ranges.len : flat->ranges.len;
        r->st->branches = cs ? cs->branches.len : flat->branches.len;
    }
    free(k.cs_ctx);
    return rc;
}

int pk_ip_to_ranges(pk_binary *bin, pk_ipraw *ip, const pk_ip_infer_opts *o, pk_csraw *cs, pk_rawprof *flat,
                    pk_ip_infer_stats *st, pk_err *err)
{
    memset(st, 0, sizeof *st);
    ipr r = {.bin = bin, .ip = ip, .o = o, .st = st};
    pk_flow_defaults(&r.fo);
    r.fo.method = o->method;
    r.fo.weight_scale = o->scale ? o->scale : DEFAULT_SCALE;
    r.fo.cost_model = o->costs == PK_IP_COSTS_PROFI ? PK_FLOW_COSTS_FLAT : PK_FLOW_COSTS_POISSON;
    r.fo.convex_costs = o->costs == PK_IP_COSTS_DEFAULT || o->costs == PK_IP_COSTS_CONVEX;
    pk_vec_init(&r.funcs, sizeof(func_cfg));
    call_obs *obs = NULL;
    size_t nobs = 0;
    int rc = -1;
    if (pk_u64map_init(&r.func_of, 256)) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    if (pk_cfg_noreturn_open(&r.nr, bin, err))
        goto out;
    if (setup_contexts(&r, err) || weigh(&r, err) || borrow_shape(&r, err))
        goto out;
    if (infer_all(&r, false, err))
        goto out;
    st->contexts = r.nctx;
    if (resolve_calls(&r, &obs, &nobs, err))
        goto out;
    if (!o->no_call_tie && tie_calls(&r, obs, nobs, err))
        goto out;
    if (measure_density(&r, err))
        goto out;
    count_icall_targets(&r, obs, nobs);
    rc = emit(&r, cs, flat, obs, nobs, err);
out:
    free(obs);
    for (size_t i = 0; i < r.funcs.len; i++) {
        func_cfg *f = &PK_VEC_AT(&r.funcs, func_cfg, i);
        if (f->ok)
            pk_cfg_free(&f->cfg);
    }
    for (size_t c = 0; c < r.nctx && r.ctx; c++) {
        free(r.ctx[c].weight);
        free(r.ctx[c].block);
        free(r.ctx[c].edge);
    }
    free(r.ctx);
    pk_cfg_noreturn_close(r.nr);
    pk_vec_free(&r.funcs);
    pk_u64map_free(&r.func_of);
    return rc;
}
