/* probe_gen.c — probe-only and context-sensitive probe profiles (see
 * probe_gen.h for the semantics). */
#include "profgen/probe_gen.h"
#include "profgen/profgen.h"

#include <stddef.h>
#include <stdlib.h>

#include "common/md5.h"

#define NO_NAME UINT32_MAX
#define UNRESOLVED (UINT32_MAX - 1) /* node name not looked up yet */

/* Per-run state shared by both generators. */
struct gen {
    pk_binary *bin;
    const pk_probe_info *pi;
    pk_profset *ps;
    pk_probe_gen_stats *st;
    pk_err *err;
    pk_name_id *node_name;      /* per inline-tree node: interned function name */
    uint32_t *node_first;       /* probes of node n: probe_of[node_first[n] .. node_first[n+1]) */
    uint32_t *probe_of;
    uint64_t *locs;             /* scratch: the locations of one body's probes */
    size_t nlocs;
    pk_ctx_frame *frames;       /* scratch for contexts */
    size_t frames_cap;
    pk_u64map callee_of;        /* call target address → name id + 2 (1: not an entry) */
    uint8_t *lost;              /* per top-level node: 0 not known yet, LOST_NO, LOST_YES */
    const pk_profgen_opts *opts;  /* CS: context depth (NULL: unlimited) */
};

enum { LOST_NO = 1, LOST_YES = 2 };

static int gen_init(struct gen *g, pk_binary *bin, const pk_probe_info *pi, pk_profset *ps,
                    pk_probe_gen_stats *st, pk_err *err)
{
    memset(g, 0, sizeof *g);
    memset(st, 0, sizeof *st);
    g->bin = bin, g->pi = pi, g->ps = ps, g->st = st, g->err = err;
    const pk_probe_table *t = &pi->table;
    g->node_name = malloc((t->n_nodes + 1) * sizeof *g->node_name);
    g->node_first = pk_zalloc(t->n_nodes + 2, sizeof *g->node_first);
    g->probe_of = malloc((t->n + 1) * sizeof *g->probe_of);
    g->lost = pk_zalloc(t->n_nodes + 1, sizeof *g->lost);
    if (!g->node_name || !g->node_first || !g->probe_of || !g->lost)
        return pk_err_set(err, "out of memory");
    /* names are interned when a node is first used (chain_named): most
     * nodes of the decoded functions never get a sample */
    for (size_t i = 0; i < t->n_nodes; i++)
        g->node_name[i] = UNRESOLVED;
    /* probes grouped by node (counting sort), for zero filling */
    for (size_t i = 0; i < t->n; i++)
        g->node_first[t->probes[i].node + 1]++;
    for (size_t n = 0; n < t->n_nodes; n++)
        g->node_first[n + 1] += g->node_first[n];
    uint32_t *fill = pk_zalloc(t->n_nodes + 1, sizeof *fill);
    if (!fill)
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < t->n; i++) {
        uint32_t n = t->probes[i].node;
        g->probe_of[g->node_first[n] + fill[n]++] = (uint32_t)i;
    }
    free(fill);
    return 0;
}

static void gen_free(struct gen *g)
{
    free(g->node_name);
    free(g->node_first);
    free(g->probe_of);
    free(g->lost);
    free(g->locs);
    free(g->frames);
    pk_u64map_free(&g->callee_of);
}

static int frames_reserve(struct gen *g, size_t n)
{
    if (n <= g->frames_cap)
        return 0;
    size_t cap = g->frames_cap ? g->frames_cap * 2 : 64;
    while (cap < n)
        cap *= 2;
    pk_ctx_frame *f = realloc(g->frames, cap * sizeof *f);
    if (!f)
        return pk_err_set(g->err, "out of memory");
    g->frames = f;
    g->frames_cap = cap;
    return 0;
}

/* 1 when every body on the node's inline chain has a descriptor (their
 * names interned on the way), 0 when one has none, -1 out of memory. */
static int chain_named(struct gen *g, uint32_t node)
{
    for (; node != PK_PROBE_NO_NODE; node = g->pi->table.nodes[node].parent) {
        if (g->node_name[node] == UNRESOLVED) {
            const pk_probe_desc *d = pk_probe_descs_find(&g->pi->descs, g->pi->table.nodes[node].guid);
            g->node_name[node] = NO_NAME;
            if (d && pk_profset_intern(g->ps, d->name, d->name_len, &g->node_name[node], g->err)) {
                g->node_name[node] = NO_NAME;
                return -1;
            }
        }
        if (g->node_name[node] == NO_NAME)
            return 0;
    }
    return 1;
}

/* The shallowest body of node's inline chain that the context keeps: the
 * chain restarts below an inline site without a call-site probe (id 0: the
 * compiler merged the call site). No call in the program bears that id, so
 * a context through it would match nothing and its samples would be lost;
 * the inlinee's own profile gets them instead, as llvm-profgen's
 * getInlineContextForProbe does (it clears the whole context there,
 * callers included). */
static uint32_t chain_start(const pk_probe_table *t, uint32_t node)
{
    for (uint32_t n = node; t->nodes[n].parent != PK_PROBE_NO_NODE; n = t->nodes[n].parent)
        if (t->nodes[n].callsite_probe == 0)
            return n; /* the innermost such site */
    return PK_PROBE_NO_NODE;
}

/* Appends the inline chain of `node` at frames[at], outermost first: each
 * inliner with the call-site probe, then the node itself with `leaf_loc`.
 * A chain through an unknown inline site (chain_start) replaces the frames
 * before it: it is written at frames[0]. */
static int append_chain(struct gen *g, size_t at, uint32_t node, uint32_t leaf_loc, size_t *n)
{
    uint32_t depth = g->pi->table.nodes[node].depth;
    uint32_t start = chain_start(&g->pi->table, node);
    if (start != PK_PROBE_NO_NODE) {
        at = 0;
        depth -= g->pi->table.nodes[start].depth;
    }
    if (frames_reserve(g, at + depth + 1))
        return -1;
    uint32_t loc = leaf_loc;
    for (size_t k = at + depth + 1; k-- > at;) {
        const pk_probe_node *pn = &g->pi->table.nodes[node];
        g->frames[k].name = g->node_name[node];
        g->frames[k].line = loc;
        g->frames[k].disc = 0;
        loc = pn->callsite_probe;
        node = pn->parent;
    }
    *n = at + depth + 1;
    return 0;
}

static uint64_t checksum_of(const struct gen *g, uint32_t node)
{
    const pk_probe_desc *d = pk_probe_descs_find(&g->pi->descs, g->pi->table.nodes[node].guid);
    return d ? d->cfg_hash : 0;
}

/* The name a call target is recorded under: the function whose entry is
 * exactly `addr`, canonicalized as clang looks it up. */
static int callee_at(struct gen *g, uint64_t addr, pk_name_id *id)
{
    /* a handful of call targets, looked up for every branch to them */
    uint64_t *c = pk_u64map_slot(&g->callee_of, addr);
    if (!c) {
        pk_err_set(g->err, "out of memory");
        return -2;
    }
    if (*c) { /* name id + 2; 1: not a function entry */
        *id = (pk_name_id)(*c - 2);
        return *c == 1 ? -1 : 0;
    }
    const pk_elf_symbol *f = pk_elf_func_at(pk_binary_elf(g->bin), addr);
    if (!f || f->addr != addr) {
        *c = 1;
        return -1;
    }
    if (pk_profset_intern(g->ps, f->name, pk_profgen_canonical_len(f->name), id, g->err))
        return -2;
    *c = (uint64_t)*id + 2;
    return 0;
}

/* The first call probe at addr (as llvm-profgen's getCallProbeForAddr). */
static const pk_probe *call_probe_at(const pk_probe_table *t, uint64_t addr)
{
    size_t n;
    const pk_probe *p = pk_probe_table_at(t, addr, &n);
    for (size_t i = 0; i < n; i++)
        if (p[i].type != PK_PROBE_BLOCK)
            return &p[i];
    return NULL;
}

/* ---- probe-only ---- */



static pk_fprof *node_profile(struct gen *g, pk_fprof **cache, uint32_t node)
{
    if (cache[node])
        return cache[node];
    const pk_probe_node *pn = &g->pi->table.nodes[node];
    pk_fprof *f;
    if (pn->parent == PK_PROBE_NO_NODE) {
        f = pk_profset_get_func(g->ps, g->node_name[node], g->err);
    } else {
        pk_fprof *parent = node_profile(g, cache, pn->parent);
        f = parent ? pk_fprof_callsite(g->ps, parent, pn->callsite_probe, 0, g->node_name[node], g->err) : NULL;
    }
    if (f)
        f->checksum = checksum_of(g, node);
    return cache[node] = f;
}

static uint32_t root_of(const pk_probe_table *t, uint32_t node)
{
    while (t->nodes[node].parent != PK_PROBE_NO_NODE)
        node = t->nodes[node].parent;
    return node;
}

/* Whether the probe at `addr` of body `node` belongs to an inlinee whose
 * inline stack the compiler lost: its top-level record names a function
 * with no symbol of its own while the code lies in another function's
 * symbol. clang emits such records for callees inlined without a debug
 * location (the SSE intrinsics of its headers are __nodebug__): their
 * probes sit in the inliner's code with no call site to hang them on, so
 * a context would put them directly under the caller's call site (zstd:
 * [... @ ZSTD_searchMax:34 @ _mm_movemask_epi8], beside the real callee
 * at that site). llvm-profgen decodes only the records of profiled
 * functions and never sees them. Code outside every function symbol (a
 * stripped binary) keeps its records. */
static bool lost_inlinee(struct gen *g, uint32_t node, uint64_t addr)
{
    uint32_t root = root_of(&g->pi->table, node);
    if (!g->lost[root]) {
        uint64_t guid = g->pi->table.nodes[root].guid;
        const pk_elf_symbol *f = pk_elf_func_at(pk_binary_elf(g->bin), addr);
        bool own = !f || pk_u64map_get(&g->pi->by_guid, guid) ||
                   pk_md5_guid(f->name, pk_profgen_canonical_len(f->name)) == guid;
        g->lost[root] = own ? LOST_NO : LOST_YES;
    }
    return g->lost[root] == LOST_YES;
}

int pk_profgen_probe(pk_binary *bin, const pk_probe_info *probes, const pk_rawprof *raw,
                     pk_profset *out, pk_probe_gen_stats *stats, pk_err *err)
{
    return pk_profgen_probe_opts(bin, probes, raw, NULL, out, stats, err);
}

int pk_profgen_probe_opts(pk_binary *bin, const pk_probe_info *probes, const pk_rawprof *raw,
                          const pk_profgen_opts *opts, pk_profset *out, pk_probe_gen_stats *stats, pk_err *err)
{
    bool as_given = opts && opts->ranges_as_given;
    struct gen g;
    const pk_probe_table *t = &probes->table;
    uint64_t *counts = calloc(t->n + 1, sizeof *counts);
    bool *touched = calloc(t->n_nodes + 1, sizeof *touched);
    pk_fprof **cache = calloc(t->n_nodes + 1, sizeof *cache);
    int rc = -1;
    if (gen_init(&g, bin, probes, out, stats, err))
        goto done;
    if (!counts || !touched || !cache) {
        pk_err_set(err, "out of memory");
        goto done;
    }
    out->kind |= PK_PROF_PROBE;
    for (size_t i = 0; i < raw->ranges.cap; i++) {
        const pk_pair_count *e = &raw->ranges.e[i];
        if (!e->n)
            continue;
        stats->ranges++;
        if (!as_given && pk_binary_range_crosses_uncond(bin, e->a, e->b)) {
            stats->ranges_cross_uncond += e->n;
            continue;
        }
        for (size_t k = pk_probe_table_lower_bound(t, e->a); k < t->n && t->probes[k].addr <= e->b; k++)
            counts[k] += e->n;
    }
    for (size_t k = 0; k < t->n; k++)
        if (counts[k]) {
            stats->probes_hit++;
            touched[root_of(t, t->probes[k].node)] = true;
        }
    for (size_t k = 0; k < t->n; k++) {
        const pk_probe *p = &t->probes[k];
        if (!touched[root_of(t, p->node)])
            continue;
        int named = chain_named(&g, p->node);
        if (named < 0)
            goto done;
        if (!named) {
            stats->missing_desc++;
            continue;
        }
        pk_fprof *f = node_profile(&g, cache, p->node);
        if (!f || pk_fprof_add_body(f, p->index, p->discriminator, counts[k], err))
            goto done;
        if (p->index == 1 && p->node != PK_PROBE_NO_NODE && t->nodes[p->node].parent == PK_PROBE_NO_NODE)
            f->head += counts[k];
    }
    for (size_t i = 0; i < raw->branches.cap; i++) {
        const pk_pair_count *e = &raw->branches.e[i];
        if (!e->n)
            continue;
        stats->branches++;
        if (e->a == PK_AGG_EXTERNAL)
            continue;
        const pk_probe *cp = call_probe_at(t, e->a);
        pk_name_id callee;
        int named = cp ? chain_named(&g, cp->node) : 0;
        if (named < 0)
            goto done;
        if (!named)
            continue;
        int c = callee_at(&g, e->b, &callee);
        if (c == -2)
            goto done;
        if (c < 0)
            continue;
        pk_fprof *f = node_profile(&g, cache, cp->node);
        if (!f || pk_fprof_add_call(f, cp->index, 0, callee, e->n, err))
            goto done;
        stats->call_targets++;
    }
    for (size_t i = 0; i < out->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&out->top, pk_fprof *, i);
        if (f->removed)
            continue;
        if (pk_fprof_raise_to_calls(out, f, false, err)) /* llvm-profgen: top level only */
            goto done;
        pk_fprof_recompute_total(f);
        stats->profiles++;
    }
    rc = 0;
done:
    gen_free(&g);
    free(counts);
    free(touched);
    free(cache);
    return rc;
}

/* ---- context-sensitive ---- */

static bool is_tail_jump(struct gen *g, uint64_t site)
{
    pk_insn in;
    return pk_binary_decode_one(g->bin, site, &in) == 0 && pk_insn_tailcall_candidate(in.cls);
}

/* Context frames of a csraw context: the call probes at its call sites, each
 * with its inline chain, from the innermost site outwards until a site has
 * no call probe (the context is cut there). */
static int ctx_prefix(struct gen *g, const pk_csraw *raw, uint32_t ctx, pk_ctx_frame **out, size_t *n)
{
    const pk_probe_table *t = &g->pi->table;
    uint32_t nsites;
    const uint64_t *sites = pk_csraw_ctx(raw, ctx, &nsites);
    if (nsites)
        nsites--; /* the last element is the leaf function's entry */
    /* A site without a call probe cuts the context there, except a
     * tail-call jump spliced in by missing-frame inference whose probe the
     * compiler dropped (conditional tail calls): that frame is left out. */
    uint32_t first = nsites;
    while (first > 0) {
        const pk_probe *cp = call_probe_at(t, sites[first - 1]);
        if (!cp && is_tail_jump(g, sites[first - 1])) {
            first--;
            continue;
        }
        int named = cp ? chain_named(g, cp->node) : 0;
        if (named < 0)
            return -1;
        if (!named)
            break;
        first--;
    }
    /* (a context whose leaf is no function, a PLT stub entered by a call
     * the compiler gave no probe, e.g. memcpy for a struct copy, loses
     * nothing: it has no probes of its own) */
    if (first > 0 && !(first == nsites && !sites[nsites]))
        g->st->contexts_truncated++;
    size_t len = 0;
    for (uint32_t i = first; i < nsites; i++) {
        const pk_probe *cp = call_probe_at(t, sites[i]);
        if (!cp)
            continue;
        if (append_chain(g, len, cp->node, cp->index, &len))
            return -1;
    }
    pk_ctx_frame *copy = malloc((len + 1) * sizeof *copy);
    if (!copy)
        return pk_err_set(g->err, "out of memory");
    if (len)
        memcpy(copy, g->frames, len * sizeof *copy);
    *out = copy;
    *n = len;
    return 0;
}

/* The profile of the context prefix + the inline chain of `node`. */
static pk_fprof *ctx_profile(struct gen *g, const pk_ctx_frame *prefix, size_t nprefix, uint32_t node)
{
    size_t n;
    if (frames_reserve(g, nprefix + 1))
        return NULL;
    if (nprefix)
        memcpy(g->frames, prefix, nprefix * sizeof *prefix);
    if (append_chain(g, nprefix, node, 0, &n))
        return NULL;
    /* a depth limit keeps the innermost callers of the expanded context
     * (the call sites were trimmed already, but one site can stand for
     * several inline frames) */
    size_t first = 0;
    if (g->opts && g->opts->depth_limited && n - 1 > g->opts->max_context_depth)
        first = n - 1 - g->opts->max_context_depth;
    pk_ctx_id id;
    if (pk_profset_intern_ctx(g->ps, g->frames + first, n - first, &id, g->err))
        return NULL;
    pk_fprof *f = pk_profset_get_ctx(g->ps, id, g->err);
    if (f && !f->checksum) {
        f->checksum = checksum_of(g, node);
        if (g->pi->table.nodes[node].parent != PK_PROBE_NO_NODE)
            f->attrs |= PK_ATTR_WAS_INLINED;
    }
    return f;
}

/* Explicit zeros for every probe of a body the first time a context's
 * profile gets counts there (llvm-profgen lists unsampled probes as 0). The
 * profile pointer is stable (arena), so (profile, node) keys the set. */
static int zero_fill(struct gen *g, pk_pairmap *touched, pk_fprof *f, uint32_t node)
{
    if (pk_pairmap_get(touched, (uint64_t)(uintptr_t)f, node))
        return 0;
    if (pk_pairmap_add(touched, (uint64_t)(uintptr_t)f, node, 1))
        return pk_err_set(g->err, "out of memory");
    const pk_probe_table *t = &g->pi->table;
    size_t n = g->node_first[node + 1] - g->node_first[node];
    if (n > g->nlocs) {
        uint64_t *l = realloc(g->locs, n * sizeof *l);
        if (!l)
            return pk_err_set(g->err, "out of memory");
        g->locs = l;
        g->nlocs = n;
    }
    for (size_t k = 0; k < n; k++) {
        const pk_probe *p = &t->probes[g->probe_of[g->node_first[node] + k]];
        g->locs[k] = pk_loc(p->index, p->discriminator);
    }
    return pk_fprof_touch_bodies(f, g->locs, n, g->err);
}

/* ctx_profile through a (context, node) → profile cache: the same pair
 * comes back for every probe and branch of a body. */
static pk_fprof *ctx_node_profile(struct gen *g, pk_pairmap *cache, uint32_t ctx, const pk_ctx_frame *prefix,
                                  size_t nprefix, uint32_t node)
{
    uint64_t hit = pk_pairmap_get(cache, ctx, node);
    if (hit)
        return (pk_fprof *)(uintptr_t)hit;
    pk_fprof *f = ctx_profile(g, prefix, nprefix, node);
    if (f && pk_pairmap_add(cache, ctx, node, (uint64_t)(uintptr_t)f)) {
        pk_err_set(g->err, "out of memory");
        return NULL;
    }
    return f;
}

/* One block probe inside one sampled range of a context. */
struct probe_hit {
    uint64_t key; /* context << 32 | probe number in the table */
    uint64_t n;
};

int pk_profgen_probe_cs(pk_binary *bin, const pk_probe_info *probes, pk_csraw *raw,
                        pk_profset *out, pk_probe_gen_stats *stats, pk_err *err)
{
    return pk_profgen_probe_cs_opts(bin, probes, raw, NULL, out, stats, err);
}

int pk_profgen_probe_cs_opts(pk_binary *bin, const pk_probe_info *probes, pk_csraw *raw, const pk_profgen_opts *opts,
                             pk_profset *out, pk_probe_gen_stats *stats, pk_err *err)
{
    struct gen g;
    const pk_probe_table *t = &probes->table;
    size_t nctx = pk_csraw_num_ctxs(raw);
    pk_ctx_frame **prefix = calloc(nctx + 1, sizeof *prefix);
    size_t *nprefix = calloc(nctx + 1, sizeof *nprefix);
    pk_pairmap touched = {0}, profile_of = {0}; /* profile_of: (ctx, node) → profile */
    pk_vec hit_vec;                               /* struct probe_hit */
    pk_vec_init(&hit_vec, sizeof(struct probe_hit));
    int rc = -1;
    if (gen_init(&g, bin, probes, out, stats, err))
        goto done;
    g.opts = opts;
    if (!prefix || !nprefix || pk_pairmap_init(&touched, 1 << 10) ||
        pk_pairmap_init(&profile_of, 1 << 10)) {
        pk_err_set(err, "out of memory");
        goto done;
    }
    out->kind |= PK_PROF_PROBE | PK_PROF_CS;
    for (size_t c = 0; c < nctx; c++)
        if (ctx_prefix(&g, raw, (uint32_t)c, &prefix[c], &nprefix[c]))
            goto done;

    /* block probes inside each context's ranges: (ctx, probe) → count.
     * Few (ctx, probe) pairs repeat (37,674 hits on 31,991 pairs at 10k
     * samples), so the hits are appended and sorted, then equal keys summed:
     * no hash table (its inserts and growth were a fifth of this function). */
    if (pk_vec_reserve(&hit_vec, raw->ranges.len * 2 + 16)) {
        pk_err_set(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < raw->ranges.cap; i++) {
        const pk_pair_count *e = &raw->ranges.e[i];
        if (!e->n)
            continue;
        stats->ranges++;
        uint32_t ctx;
        uint64_t b, end;
        pk_csraw_key(raw, e, &ctx, &b, &end);
        if (pk_binary_range_crosses_uncond(bin, b, end)) {
            stats->ranges_cross_uncond += e->n;
            continue;
        }
        for (size_t k = pk_probe_table_lower_bound(t, b); k < t->n && t->probes[k].addr <= end; k++) {
            if (t->probes[k].type != PK_PROBE_BLOCK)
                continue;
            struct probe_hit *h = pk_vec_push(&hit_vec);
            if (!h) {
                pk_err_set(err, "out of memory");
                goto done;
            }
            *h = (struct probe_hit){((uint64_t)ctx << 32) | k, e->n};
        }
    }
    pk_pairmap_free(&raw->ranges);
    struct probe_hit *hits = hit_vec.data;
    size_t nhits = hit_vec.len;
    if (pk_sort_by_u64(hits, nhits, sizeof *hits, offsetof(struct probe_hit, key))) {
        pk_err_set(err, "out of memory");
        goto done;
    }
    size_t ncounts = 0;
    for (size_t i = 0; i < nhits; i++) {
        if (ncounts && hits[ncounts - 1].key == hits[i].key)
            hits[ncounts - 1].n += hits[i].n;
        else
            hits[ncounts++] = hits[i];
    }
    /* sorted by context, then probe: runs of one (context, inline node) */
    uint32_t last_ctx = UINT32_MAX, last_node = PK_PROBE_NO_NODE;
    pk_fprof *cur = NULL;
    for (size_t i = 0; i < ncounts; i++) {
        uint32_t ctx = (uint32_t)(hits[i].key >> 32);
        const pk_probe *p = &t->probes[(uint32_t)hits[i].key];
        uint64_t n = hits[i].n;
        if (lost_inlinee(&g, p->node, p->addr)) {
            stats->lost_inlinee_probes++;
            continue;
        }
        int named = chain_named(&g, p->node);
        if (named < 0)
            goto done;
        if (!named) {
            stats->missing_desc++;
            continue;
        }
        stats->probes_hit++;
        if (ctx != last_ctx || p->node != last_node) {
            cur = ctx_node_profile(&g, &profile_of, ctx, prefix[ctx], nprefix[ctx], p->node);
            if (!cur || zero_fill(&g, &touched, cur, p->node))
                goto done;
            last_ctx = ctx;
            last_node = p->node;
        }
        if (pk_fprof_add_body(cur, p->index, p->discriminator, n, err))
            goto done;
        if (p->index != 1)
            continue;
        cur->head += n;
        const pk_probe_node *pn = &t->nodes[p->node];
        /* (a body inlined at an unknown site heads its context: no caller) */
        if (pn->parent == PK_PROBE_NO_NODE || pn->callsite_probe == 0)
            continue;
        /* An inlined body was entered: the inliner's call-site probe gets
         * the count and a call target, as no LBR branch shows inlined calls. */
        pk_fprof *caller = ctx_node_profile(&g, &profile_of, ctx, prefix[ctx], nprefix[ctx], pn->parent);
        if (!caller || pk_fprof_add_body(caller, pn->callsite_probe, 0, n, err) ||
            pk_fprof_add_call(caller, pn->callsite_probe, 0, g.node_name[p->node], n, err))
            goto done;
    }
    pk_vec_free(&hit_vec);

    /* call targets from branches leaving call probes */
    for (size_t i = 0; i < raw->branches.cap; i++) {
        const pk_pair_count *e = &raw->branches.e[i];
        if (!e->n)
            continue;
        stats->branches++;
        uint32_t ctx;
        uint64_t src, dst;
        pk_csraw_key(raw, e, &ctx, &src, &dst);
        if (src == PK_AGG_EXTERNAL)
            continue;
        const pk_probe *cp = call_probe_at(t, src);
        pk_name_id callee;
        int named = cp ? chain_named(&g, cp->node) : 0;
        if (named < 0)
            goto done;
        if (!named)
            continue;
        int c = callee_at(&g, dst, &callee);
        if (c == -2)
            goto done;
        if (c < 0)
            continue;
        /* block probes only got range counts: the call probe's count is
         * the branch's, as llvm-profgen records it */
        pk_fprof *f = ctx_node_profile(&g, &profile_of, ctx, prefix[ctx], nprefix[ctx], cp->node);
        if (!f || pk_fprof_add_body(f, cp->index, 0, e->n, err) ||
            pk_fprof_add_call(f, cp->index, 0, callee, e->n, err))
            goto done;
        stats->call_targets++;
    }
    for (size_t i = 0; i < out->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&out->top, pk_fprof *, i);
        if (!f->removed) {
            pk_fprof_recompute_total(f);
            stats->profiles++;
        }
    }
    stats->contexts = stats->profiles;
    rc = 0;
done:
    gen_free(&g);
    if (prefix)
        for (size_t c = 0; c < nctx; c++)
            free(prefix[c]);
    free(prefix);
    free(nprefix);
    pk_pairmap_free(&touched);
    pk_pairmap_free(&profile_of);
    pk_vec_free(&hit_vec);
    return rc;
}

/* ---- which functions to decode ---- */

struct guid_set {
    const pk_elf *elf;
    const pk_elf_symbol *funcs;
    size_t nfuncs;
    pk_u64map seen;       /* function symbol address → 1 */
    pk_u64map *keep;
};

/* Adds the GUIDs of the function containing vaddr (every name at its
 * address: a record may be keyed by an alias). */
static int want_function_at(struct guid_set *g, uint64_t vaddr)
{
    const pk_elf_symbol *f = pk_elf_func_at(g->elf, vaddr);
    if (!f)
        return 0; /* code without a symbol: its probe record is always decoded */
    uint64_t *seen = pk_u64map_slot(&g->seen, f->addr);
    if (!seen)
        return -1;
    if (*seen)
        return 0;
    *seen = 1;
    for (const pk_elf_symbol *s = f; s < g->funcs + g->nfuncs && s->addr == f->addr; s++) {
        uint64_t *k = pk_u64map_slot(g->keep, pk_md5_guid(s->name, strlen(s->name)));
        if (!k)
            return -1;
        *k = 1;
    }
    return 0;
}

/* The functions at both ends of a raw profile's ranges or branches (plain
 * vaddrs). Branch targets are included though call targets are named from
 * symbols: their functions are nearly always sampled anyway. */
static int want_pairs(struct guid_set *g, const pk_pairmap *m)
{
    for (size_t i = 0; i < m->cap; i++) {
        const pk_pair_count *e = &m->e[i];
        if (e->n && ((e->a != PK_AGG_EXTERNAL && want_function_at(g, e->a)) || want_function_at(g, e->b)))
            return -1;
    }
    return 0;
}

/* A context's words are its call sites and, last, its leaf function's
 * entry: those functions are wanted. Range and branch-source addresses lie
 * in the leaf function, save the odd range running past its end, so pairs
 * only need a look when they leave it; branch targets need no probes (a
 * call target is named by its symbol). */
static int want_cs(struct guid_set *g, const pk_csraw *cs)
{
    size_t nctx = pk_csraw_num_ctxs(cs);
    uint64_t *bounds = pk_zalloc(2 * nctx + 2, sizeof *bounds); /* leaf function [lo, hi) per context */
    if (!bounds)
        return -1;
    int rc = -1;
    for (size_t c = 0; c < nctx; c++) {
        uint32_t len;
        const uint64_t *w = pk_csraw_ctx(cs, (uint32_t)c, &len);
        for (uint32_t i = 0; i < len; i++)
            if (w[i] && want_function_at(g, w[i]))
                goto done;
        const pk_elf_symbol *f = len && w[len - 1] ? pk_elf_func_at(g->elf, w[len - 1]) : NULL;
        if (f) {
            bounds[2 * c] = f->addr;
            bounds[2 * c + 1] = f->addr + (f->size ? f->size : 1);
        }
    }
    for (int which = 0; which < 2; which++) {
        const pk_pairmap *m = which ? &cs->branches : &cs->ranges;
        for (size_t i = 0; i < m->cap; i++) {
            const pk_pair_count *e = &m->e[i];
            if (!e->n)
                continue;
            uint32_t ctx;
            uint64_t a, b;
            pk_csraw_key(cs, e, &ctx, &a, &b);
            uint64_t lo = bounds[2 * ctx], hi = bounds[2 * ctx + 1];
            if (a != PK_AGG_EXTERNAL && (a < lo || a >= hi) && want_function_at(g, a))
                goto done;
            if (!which && (b < lo || b >= hi) && want_function_at(g, b))
                goto done;
        }
    }
    rc = 0;
done:
    free(bounds);
    return rc;
}

int pk_probe_sampled_guids(const pk_elf *elf, const pk_csraw *cs, const pk_rawprof *raw, pk_u64map *keep,
                           pk_err *err)
{
    struct guid_set g = {.elf = elf, .keep = keep};
    g.funcs = pk_elf_funcs(elf, &g.nfuncs);
    int rc = -1;
    if (pk_u64map_init(&g.seen, 1024))
        return pk_err_set(err, "out of memory");
    if (cs && want_cs(&g, cs))
        goto done;
    if (raw && (want_pairs(&g, &raw->ranges) || want_pairs(&g, &raw->branches)))
        goto done;
    rc = 0;
done:
    pk_u64map_free(&g.seen);
    return rc ? pk_err_set(err, "out of memory") : 0;
}

int pk_probe_guids_at_sites(const pk_elf *elf, const pk_u64map *sites, pk_u64map *keep, pk_u64map *more,
                            pk_err *err)
{
    pk_u64map now = {0};
    struct guid_set g = {.elf = elf, .keep = &now};
    g.funcs = pk_elf_funcs(elf, &g.nfuncs);
    int rc = 0;
    if (pk_u64map_init(&g.seen, 64))
        return pk_err_set(err, "out of memory");
    for (size_t i = 0; i < pk_u64map_end(sites) && !rc; i++)
        if (pk_u64map_used(sites, i) && want_function_at(&g, pk_u64map_key(sites, i)))
            rc = pk_err_set(err, "out of memory");
    for (size_t i = 0; i < pk_u64map_end(&now) && !rc; i++) {
        if (!pk_u64map_used(&now, i) || pk_u64map_get(keep, pk_u64map_key(&now, i)))
            continue;
        uint64_t *a = pk_u64map_slot(keep, pk_u64map_key(&now, i)), *b = a ? pk_u64map_slot(more, pk_u64map_key(&now, i)) : NULL;
        if (!b)
            rc = pk_err_set(err, "out of memory");
        else
            *a = *b = 1;
    }
    pk_u64map_free(&g.seen);
    pk_u64map_free(&now);
    return rc;
}
