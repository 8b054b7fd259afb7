/* line_cs.c — the context-sensitive line-based generator (binaries without
 * pseudo-probes); shares line.c's pieces through line_int.h. */
#include "profgen/line_int.h"

#include <string.h>

/* ---- context-sensitive, DWARF contexts (binaries without pseudo-probes) ----
 * llvm-profgen.md §4.3. The unwinder's contexts (call-site addresses) first
 * become llvm-profgen's keys (pk_profgen_line_cs_keys, at the end): the call
 * sites' inline frames, then those of the code itself, each range cut where
 * they change; contexts of other addresses with the same frames are one.
 * Then per key, each executed instruction's location gets MAX(count ×
 * duplication factor) of the key's summed ranges and the count is added to
 * the total; branches into entries give call targets and head samples of
 * the callee's context; inlined callees, which no branch enters, give their
 * caller's call site an estimated count afterwards. llvm-profgen's text
 * (--unsymbolized-profile) comes in as keys already. */

/* Appends the inline frames of addr, outermost first. `leaf`: the innermost
 * frame is the context's leaf (location 0). Returns 1 when addr has no
 * debug information. */
static int push_frames(gen *g, pk_vec *out, uint64_t addr, bool leaf, uint32_t *depth, pk_err *err)
{
    pk_frames fs;
    if (pk_symbolize(g->sym, addr, &fs, err))
        return -1;
    if (!fs.count || !fs.frames[fs.count - 1].func)
        return 1;
    for (size_t k = fs.count; k-- > 0;) {
        pk_ctx_frame *f = pk_vec_push(out);
        if (!f)
            return pk_err_set(err, "out of memory");
        if (pk_lg_intern_canon(g, fs.frames[k].func, &f->name, err))
            return -1;
        if (k > 0 || !leaf) {
            f->line = pk_lg_line_off(&fs.frames[k]);
            f->disc = pk_lg_base_disc(g, fs.frames[k].discriminator);
        }
    }
    if (depth)
        *depth = (uint32_t)fs.count;
    return 0;
}

/* The call sites of a csraw context as frames (the last element of the
 * context is the leaf's entry, not a call site). A site without debug
 * information cuts the context there. Named contexts (g->named: llvm-profgen's
 * text as read) are their frames as written, the leaf's included. */
static int cs_prefix(gen *g, const pk_csraw *raw, uint32_t ctx, pk_vec *out, pk_err *err)
{
    uint32_t n;
    const uint64_t *sites = pk_csraw_ctx(raw, ctx, &n);
    out->len = 0;
    if (g->named) {
        if (n != 1 || sites[0] == PK_LINE_CTX_NONE)
            return 0;
        size_t nf;
        const pk_ctx_frame *f = pk_profset_ctx(g->ps, (pk_ctx_id)sites[0], &nf);
        if (pk_vec_reserve(out, nf))
            return pk_err_set(err, "out of memory");
        memcpy(out->data, f, nf * sizeof *f);
        out->len = nf;
        return 0;
    }
    for (uint32_t i = 0; i + 1 < n; i++) {
        int rc = push_frames(g, out, sites[i], false, NULL, err);
        if (rc < 0)
            return -1;
        if (rc > 0) {
            out->len = 0; /* no debug info: the outer frames are unknown */
            continue;
        }
        sites = pk_csraw_ctx(raw, ctx, &n);
    }
    return 0;
}

size_t pk_profgen_shape_context(const pk_profgen_opts *opts, void *ctx, size_t *n, size_t elem)
{
    if (opts->compress_recursion >= 0)
        *n = pk_compress_repeats(ctx, *n, elem, opts->compress_recursion ? opts->compress_recursion : -1);
    return opts->depth_limited && *n > opts->max_context_depth ? *n - opts->max_context_depth : 0;
}

/* The context of inline-expanded frames (the last one the leaf's), shaped:
 * recursion is compressed on these frames, as the compiler sees them, not
 * only on call addresses (two calls of one line, or a recursion through
 * inlined code, repeat the same frames at other addresses). Named contexts
 * are taken as written. */
static int cs_key(gen *g, const pk_vec *frames, pk_ctx_id *id, pk_err *err)
{
    size_t n = frames->len;
    if (g->named)
        return pk_profset_intern_ctx(g->ps, frames->data, n, id, err);
    if (pk_vec_reserve(&g->key, n))
        return pk_err_set(err, "out of memory");
    pk_ctx_frame *k = g->key.data;
    memcpy(k, frames->data, n * sizeof *k);
    size_t callers = n - 1;
    size_t first = pk_profgen_shape_context(g->o, k, &callers, sizeof *k);
    k[callers] = k[n - 1];
    return pk_profset_intern_ctx(g->ps, k + first, callers + 1 - first, id, err);
}

static pk_fprof *cs_profile(gen *g, const pk_vec *frames, pk_err *err)
{
    pk_ctx_id id;
    if (!frames->len || cs_key(g, frames, &id, err))
        return NULL;
    return pk_profset_get_ctx(g->ps, id, err);
}

static int cs_bodies(gen *g, const pk_csraw *raw, pk_vec *frames, pk_err *err)
{
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(&raw->ranges, &n);
    pk_vec touched;
    pk_vec_init(&touched, sizeof(size_t));
    if (!v && raw->ranges.len)
        return pk_err_set(err, "out of memory");
    g->st->ranges_in = n;
    int rc = -1;
    for (size_t i = 0; i < n;) {
        uint32_t ctx = (uint32_t)(v[i].a >> 32);
        if (cs_prefix(g, raw, ctx, frames, err))
            goto out;
        size_t nprefix = frames->len;
        if (!nprefix) { /* "[]": no function to count in */
            while (i < n && (uint32_t)(v[i].a >> 32) == ctx)
                i++;
            continue;
        }
        touched.len = 0;
        for (; i < n && (uint32_t)(v[i].a >> 32) == ctx; i++) {
            uint32_t c;
            uint64_t b, e;
            pk_csraw_key(raw, &v[i], &c, &b, &e);
            fn_range *r;
            int a = pk_lg_add_range(g, b, e, v[i].n, &r, err);
            if (a < 0)
                goto out;
            if (a == 0 && !r->sampled) {
                r->sampled = true;
                size_t *slot = pk_vec_push(&touched);
                if (!slot) {
                    pk_err_set(err, "out of memory");
                    goto out;
                }
                *slot = (size_t)(r - (fn_range *)g->frs.data);
            }
        }
        for (size_t t = 0; t < touched.len; t++) {
            fn_range *r = &PK_VEC_AT(&g->frs, fn_range, PK_VEC_AT(&touched, size_t, t));
            g->prev_func = NULL;
            int64_t c = 0;
            for (size_t k = 0; k < r->n; k++) {
                c += r->delta[k];
                const pk_insn *in = &r->insns[k];
                if (c <= 0 || in->cls == PK_INSN_INVALID)
                    continue; /* contexts carry what ran: no zero lines */
                pk_frames fs; /* the innermost frame, for its location */
                if (pk_symbolize(g->sym, in->addr, &fs, err))
                    goto out;
                g->st->insns_symbolized++;
                if (!fs.count || !fs.frames[fs.count - 1].func) {
                    g->st->insns_no_debug++;
                    continue;
                }
                pk_lg_note_insn(g, &fs, (uint64_t)c);
                uint32_t d = fs.frames[0].discriminator;
                uint64_t dup = g->fs || g->o->no_dup_factor ? 1 : pk_discr_dup_factor(d);
                pk_fprof *p = cs_profile(g, frames, err);
                if (!p || pk_fprof_max_body(p, pk_lg_line_off(&fs.frames[0]), pk_lg_base_disc(g, d),
                                            pk_sat_mul((uint64_t)c, dup ? dup : 1), err))
                    goto out;
                p->total = pk_sat_add(p->total, (uint64_t)c);
            }
            memset(r->delta, 0, (r->n + 1) * sizeof *r->delta);
            r->sampled = false;
            g->st->functions_sampled++;
        }
    }
    rc = 0;
out:
    free(v);
    pk_vec_free(&touched);
    return rc;
}

/* Sets the last frame's location to addr's (its innermost frame's): 1 when
 * addr has no debug information. */
static int site_loc(gen *g, pk_vec *frames, uint64_t addr, pk_err *err)
{
    pk_frames fs;
    if (pk_symbolize(g->sym, addr, &fs, err))
        return -1;
    if (!fs.count || !fs.frames[fs.count - 1].func)
        return 1;
    pk_ctx_frame *f = &PK_VEC_AT(frames, pk_ctx_frame, frames->len - 1);
    f->line = pk_lg_line_off(&fs.frames[0]);
    f->disc = pk_lg_base_disc(g, fs.frames[0].discriminator);
    return 0;
}

static int cs_calls(gen *g, const pk_csraw *raw, pk_vec *frames, pk_err *err)
{
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(&raw->branches, &n);
    if (!v && raw->branches.len)
        return pk_err_set(err, "out of memory");
    g->st->branches_in = n;
    uint32_t have = UINT32_MAX;
    size_t nprefix = 0;
    int rc = -1;
    for (size_t i = 0; i < n; i++) {
        uint32_t ctx;
        uint64_t src, dst, c = v[i].n;
        pk_csraw_key(raw, &v[i], &ctx, &src, &dst);
        const pk_dwarf_func *callee = pk_dwarf_func_at(g->sym, dst);
        if (!callee || !pk_dwarf_func_entered_at(callee, dst))
            continue;
        pk_name_id cid;
        if (pk_lg_intern_canon(g, callee->name, &cid, err))
            goto out;
        if (ctx != have) {
            if (cs_prefix(g, raw, ctx, frames, err))
                goto out;
            nprefix = frames->len;
            have = ctx;
        }
        frames->len = nprefix;
        if (src != PK_AGG_EXTERNAL && nprefix) {
            int k = pk_lg_call_kind(g, src, callee, c, err);
            if (k < 0)
                goto out;
            if (!k)
                continue;
            /* the context is the caller's; the call's line is its location
             * there */
            int pf = site_loc(g, frames, src, err);
            if (pf < 0)
                goto out;
            if (pf > 0)
                continue;
            pk_ctx_frame site = PK_VEC_AT(frames, pk_ctx_frame, frames->len - 1);
            pk_fprof *caller = cs_profile(g, frames, err); /* interning zeroes the leaf location */
            if (!caller || pk_fprof_add_call(caller, site.line, site.disc, cid, c, err))
                goto out;
        } else {
            g->st->external_entries += c;
        }
        pk_ctx_frame *f = pk_vec_push(frames);
        if (!f) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        f->name = cid;
        pk_fprof *cp = cs_profile(g, frames, err);
        if (!cp)
            goto out;
        cp->head = pk_sat_add(cp->head, c);
    }
    rc = 0;
out:
    free(v);
    return rc;
}

/* Inlined callees have no branch from their caller: give the caller's call
 * site the callee's estimated entry count (post-order: deepest first). */
static int infer_inlined_calls(pk_profset *ps, pk_ctx_trie *t, uint32_t node, pk_err *err)
{
    for (uint32_t c = PK_TRIE_NODE(t, node)->first_child; c != PK_TRIE_NONE; c = PK_TRIE_NODE(t, c)->next_sibling)
        if (infer_inlined_calls(ps, t, c, err))
            return -1;
    pk_trie_node *x = PK_TRIE_NODE(t, node);
    if (node == 0 || !x->prof || x->prof->head || x->parent == 0)
        return 0;
    uint64_t est = pk_fprof_head_estimate(x->prof);
    if (!est)
        est = 1;
    uint32_t parent = x->parent, line = x->line, disc = x->disc;
    pk_name_id name = x->name;
    pk_fprof *caller = PK_TRIE_NODE(t, parent)->prof;
    if (!caller) {
        const pk_ctx_frame *fr;
        size_t n = pk_ctx_trie_frames(t, parent, &fr);
        pk_ctx_id id;
        if (!n || pk_profset_intern_ctx(ps, fr, n, &id, err) || !(caller = pk_profset_get_ctx(ps, id, err)))
            return -1;
        PK_TRIE_NODE(t, parent)->prof = caller;
    }
    if (pk_fprof_add_call(caller, line, disc, name, est, err) || pk_fprof_add_body(caller, line, disc, est, err))
        return -1;
    caller->total = pk_sat_add(caller->total, est);
    return 0;
}

static int line_cs(pk_binary *bin, const pk_csraw *raw, const pk_profgen_opts *opts,
                   pk_profset *out, pk_profgen_stats *stats, pk_err *err)
{
    gen g;
    if (pk_lg_gen_open(&g, bin, out, opts, stats, err))
        return -1;
    g.named = true;
    out->kind |= PK_PROF_CS;
    pk_vec frames;
    pk_vec_init(&frames, sizeof(pk_ctx_frame));
    pk_ctx_trie trie;
    bool trie_ok = false;
    int rc = -1;
    if (cs_bodies(&g, raw, &frames, err) || cs_calls(&g, raw, &frames, err))
        goto out;
    if (pk_ctx_trie_init(&trie, err))
        goto out;
    trie_ok = true;
    if (pk_ctx_trie_build(&trie, out, NULL, NULL, err) || infer_inlined_calls(out, &trie, 0, err))
        goto out;
    for (size_t i = 0; i < out->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&out->top, pk_fprof *, i);
        if (f->removed)
            continue;
        if (opts->total_mode == PK_TOTAL_SUM) /* (llvm-profgen's --update-total-samples) */
            pk_fprof_recompute_total(f);
        /* range and branch counts are sampled separately: a line runs at
         * least as often as the calls it makes (after the total, as
         * llvm-profgen) */
        if (pk_fprof_raise_to_calls(out, f, false, err))
            goto out;
        stats->profiles++;
        stats->total_samples = pk_sat_add(stats->total_samples, f->total);
        stats->body_samples = pk_sat_add(stats->body_samples, pk_fprof_body_sum(f));
    }
    rc = 0;
out:
    if (trie_ok)
        pk_ctx_trie_free(&trie);
    pk_vec_free(&frames);
    pk_lg_gen_close(&g);
    return rc;
}

/* The unwinder's contexts become llvm-profgen's keys (pk_profgen_line_cs_keys)
 * before anything is counted: contexts at other addresses with the same
 * source frames (two calls on one line, recursion compressed, depth trimmed)
 * are one context, whose instructions count the sum of their ranges, as in
 * llvm-profgen, not the largest of them. */
typedef struct keyed {
    pk_csraw *named;
    pk_u64map *ran;              /* key → 1: ran inlined, 2: ran outside inlining (bits) */
} keyed;

static int keyed_add(void *cb, pk_ctx_id key, int kind, uint64_t a, uint64_t b, uint64_t n, bool leaf_inlined,
                     pk_err *err)
{
    keyed *k = cb;
    if (key == PK_NO_CTX && !(kind && a == PK_AGG_EXTERNAL))
        return 0; /* no debug information: nothing to count in */
    uint64_t id = key == PK_NO_CTX ? PK_LINE_CTX_NONE : key;
    uint32_t ctx;
    if (pk_csraw_intern(k->named, &id, 1, &ctx, err))
        return -1;
    if (!kind) {
        uint64_t *slot = pk_u64map_slot(k->ran, id);
        if (!slot)
            return pk_err_set(err, "out of memory");
        *slot |= leaf_inlined ? 1 : 2;
    }
    return pk_csraw_add(k->named, ctx, kind, a, b, n, err);
}

int pk_profgen_line_cs(pk_binary *bin, const pk_csraw *raw, const pk_profgen_opts *opts,
                       pk_profset *out, pk_profgen_stats *stats, pk_err *err)
{
    pk_csraw named;
    pk_u64map ran = {0};
    if (pk_csraw_init(&named, raw->base, err))
        return -1;
    keyed k = {&named, &ran};
    pk_profgen_stats ks;
    int rc = pk_profgen_line_cs_keys(bin, raw, opts, out, keyed_add, &k, &ks, err) ||
             line_cs(bin, &named, opts, out, stats, err);
    /* the unwinder's ranges, and those of them that cannot have run, are
     * the keys' (their pieces all can) */
    stats->ranges_in = raw->ranges.len;
    for (int i = 0; !rc && i < PK_RANGE_DROP_N; i++)
        stats->range_drop[i] += ks.range_drop[i];
    /* "was inlined" when all of the context's code ran inlined: contexts
     * merged by recursion compression or depth trimming can hold both
     * (llvm-profgen keeps the flag of whichever frame made the context
     * first, an order its hash tables decide) */
    for (size_t i = 0; !rc && i < pk_u64map_end(&ran); i++) {
        if (!pk_u64map_used(&ran, i) || pk_u64map_val(&ran, i) != 1)
            continue;
        pk_fprof *p = pk_profset_get_ctx(out, (pk_ctx_id)pk_u64map_key(&ran, i), err);
        if (!p)
            rc = -1;
        else
            p->attrs |= PK_ATTR_WAS_INLINED;
    }
    pk_u64map_free(&ran);
    pk_csraw_free(&named);
    return rc ? -1 : 0;
}

int pk_profgen_line_cs_named(pk_binary *bin, const pk_csraw *raw, const pk_profgen_opts *opts,
                             pk_profset *out, pk_profgen_stats *stats, pk_err *err)
{
    return line_cs(bin, raw, opts, out, stats, err);
}

/* ---- llvm-profgen's keys of the line-based unsymbolized text ---- */

typedef struct outer_frames {
    size_t n;                    /* inline frames; 0: no debug information */
    const char *func[16];        /* the callers' frames (innermost's excluded) */
    uint32_t line[16], disc[16];
} outer_frames;

static int outer_of(gen *g, uint64_t addr, outer_frames *o, pk_err *err)
{
    pk_frames fs;
    if (pk_symbolize(g->sym, addr, &fs, err))
        return -1;
    o->n = fs.count && fs.frames[fs.count - 1].func ? fs.count : 0;
    for (size_t k = 1; k < o->n && k <= 16; k++) {
        o->func[k - 1] = fs.frames[k].func;
        o->line[k - 1] = pk_lg_line_off(&fs.frames[k]);
        o->disc[k - 1] = fs.frames[k].discriminator;
    }
    return 0;
}

/* llvm-profgen's "same inline context": as many frames, the same callers
 * (the innermost frame, location and all, is not compared); never for code
 * without debug information. */
static bool same_inline(const outer_frames *a, const outer_frames *b)
{
    if (!a->n || a->n != b->n)
        return false;
    for (size_t k = 0; k + 1 < a->n && k < 16; k++)
        if (a->func[k] != b->func[k] || a->line[k] != b->line[k] || a->disc[k] != b->disc[k])
            return false;
    return true;
}

/* The key of the context's call sites (frames[0..nprefix)) and addr's
 * inline frames; *inlined: addr is in inlined code. */
static int key_at(gen *g, pk_vec *frames, size_t nprefix, uint64_t addr, pk_ctx_id *key, bool *inlined,
                  pk_err *err)
{
    frames->len = nprefix;
    uint32_t depth = 0;
    int pf = push_frames(g, frames, addr, true, &depth, err);
    if (pf < 0)
        return -1;
    *inlined = depth > 1;
    if (pf > 0) {
        *key = PK_NO_CTX;
        return 0;
    }
    return cs_key(g, frames, key, err);
}

/* A range of a context, cut where the inline frames change. 1: not a range
 * that ran straight in one DWARF function (left out). */
static int key_range(gen *g, pk_vec *frames, size_t nprefix, uint64_t b, uint64_t e, uint64_t c,
                     pk_line_key_fn emit, void *cb, pk_err *err)
{
    fn_range *r;
    size_t ib, ie;
    int span = pk_lg_range_span(g, b, e, c, &r, &ib, &ie, err);
    if (span)
        return span;
    if (!r->cut) { /* once per function range: where its inline frames change */
        if (!(r->cut = calloc(r->n ? r->n : 1, 1)))
            return pk_err_set(err, "out of memory");
        outer_frames cur, prev;
        for (size_t k = 0; k < r->n; k++) {
            if (outer_of(g, r->insns[k].addr, &cur, err))
                return -1;
            r->cut[k] = k && !same_inline(&prev, &cur);
            prev = cur;
        }
    }
    size_t piece_end = ie;
    for (size_t k = ie; k > ib; k--) {
        if (r->cut[k]) {
            pk_ctx_id key;
            bool inl;
            if (key_at(g, frames, nprefix, r->insns[k].addr, &key, &inl, err) ||
                emit(cb, key, 0, r->insns[k].addr, r->insns[piece_end].addr, c, inl, err))
                return -1;
            piece_end = k - 1;
        }
    }
    pk_ctx_id key;
    bool inl;
    if (key_at(g, frames, nprefix, r->insns[ib].addr, &key, &inl, err) ||
        emit(cb, key, 0, r->insns[ib].addr, r->insns[piece_end].addr, c, inl, err))
        return -1;
    return 0;
}

int pk_profgen_line_cs_keys(pk_binary *bin, const pk_csraw *raw, const pk_profgen_opts *opts,
                            pk_profset *names, pk_line_key_fn emit, void *cb, pk_profgen_stats *stats, pk_err *err)
{
    gen g;
    pk_profgen_stats own;
    if (pk_lg_gen_open(&g, bin, names, opts, stats ? stats : &own, err))
        return -1;
    pk_vec frames;
    pk_vec_init(&frames, sizeof(pk_ctx_frame));
    int rc = -1;
    for (int kind = 0; kind < 2; kind++) {
        const pk_pairmap *m = kind ? &raw->branches : &raw->ranges;
        size_t n;
        pk_pair_count *v = pk_pairmap_sorted(m, &n);
        if (!v && m->len) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        uint32_t have = UINT32_MAX;
        size_t nprefix = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t ctx;
            uint64_t a, b;
            pk_csraw_key(raw, &v[i], &ctx, &a, &b);
            if (ctx != have) {
                if (cs_prefix(&g, raw, ctx, &frames, err)) {
                    free(v);
                    goto out;
                }
                nprefix = frames.len;
                have = ctx;
            }
            int k = 0;
            if (!kind) {
                k = key_range(&g, &frames, nprefix, a, b, v[i].n, emit, cb, err);
            } else if (a == PK_AGG_EXTERNAL) {
                k = emit(cb, PK_NO_CTX, 1, a, b, v[i].n, false, err);
            } else {
                pk_ctx_id key;
                bool inl;
                k = key_at(&g, &frames, nprefix, a, &key, &inl, err) || emit(cb, key, 1, a, b, v[i].n, inl, err);
            }
            if (k < 0 || (kind && k)) {
                free(v);
                goto out;
            }
        }
        free(v);
    }
    rc = 0;
out:
    pk_vec_free(&frames);
    pk_lg_gen_close(&g);
    return rc;
}
