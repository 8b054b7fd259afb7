/* line.c — the line-based (AutoFDO) profile generator.
 *
 * Work is per sampled function range only: a DWARF function range is decoded
 * the first time a range or branch lands in it. Range counts are added into a
 * per-instruction difference array (two writes per range, whatever its
 * length) and a prefix count of unconditional transfers makes the "crosses an
 * unconditional branch" check O(1); the prefix sum then gives every
 * instruction its count, and each instruction is symbolized exactly once.
 */
#include "profgen/profgen.h"
#include "profgen/ctx_trie.h"
#include "unwind/unwind.h"

#include <stdlib.h>

typedef struct fn_range {
    const pk_dwarf_func *func;
    uint64_t begin, end;         /* [begin, end) */
    pk_insn *insns;
    size_t n;
    int64_t *delta;              /* n + 1: difference array of counts */
    uint32_t *uncond;            /* n + 1: unconditional transfers before index i */
    bool sampled;                /* a range landed here (else decoded for a branch only) */
} fn_range;

typedef struct gen {
    pk_binary *bin;
    pk_symbolizer *sym;
    pk_profset *ps;
    const pk_profgen_opts *o;
    pk_profgen_stats *st;
    pk_vec frs;                  /* fn_range */
    pk_u64map fr_of;             /* range begin → index + 1 */
    size_t last;                 /* index + 1 of the last hit */
    pk_u64map name_of;           /* symbolizer string pointer → name id + 1 */
    pk_vec key;                  /* pk_ctx_frame: a context being shaped */
    bool fs;
} gen;

size_t pk_profgen_canonical_len(const char *name)
{
    static const char *const sufs[] = {".llvm.", ".part."};
    size_t len = strlen(name);
    for (size_t k = 0; k < 2; k++) {
        size_t sl = strlen(sufs[k]);
        /* last occurrence of the suffix, and of '.', within name[0, len) */
        size_t it = SIZE_MAX, dot = SIZE_MAX;
        for (size_t i = 0; i < len; i++) {
            if (name[i] == '.')
                dot = i;
            if (i + sl <= len && !memcmp(name + i, sufs[k], sl))
                it = i;
        }
        if (it != SIZE_MAX && it > 0 && dot == it + sl - 1)
            len = it;
    }
    return len;
}

/* Symbolizer strings live as long as the symbolizer, so their address
 * identifies them: canonicalize and intern each name once. */
static int intern_canon(gen *g, const char *name, pk_name_id *id, pk_err *err)
{
    if (!name)
        name = "??";
    uint64_t *slot = pk_u64map_slot(&g->name_of, (uint64_t)(uintptr_t)name);
    if (!slot)
        return pk_err_set(err, "out of memory");
    if (*slot) {
        *id = (pk_name_id)(*slot - 1);
        return 0;
    }
    if (pk_profset_intern(g->ps, name, pk_profgen_canonical_len(name), id, err))
        return -1;
    *slot = (uint64_t)*id + 1;
    return 0;
}

static void fr_free(fn_range *r)
{
    free(r->insns);
    free(r->delta);
    free(r->uncond);
}


/* The decoded function range containing addr, or NULL (not in any DWARF
 * function). Decodes on first use. */
static fn_range *range_for(gen *g, uint64_t addr, pk_err *err, int *failed)
{
    *failed = 0;
    if (g->last) {
        fn_range *r = &PK_VEC_AT(&g->frs, fn_range, g->last - 1);
        if (addr >= r->begin && addr < r->end)
            return r;
    }
    const pk_dwarf_func *f = pk_dwarf_func_at(g->sym, addr);
    if (!f)
        return NULL;
    const pk_addr_range *ar = NULL;
    for (uint32_t i = 0; i < f->nranges; i++)
        if (addr >= f->ranges[i].begin && addr < f->ranges[i].end)
            ar = &f->ranges[i];
    if (!ar)
        return NULL;
    uint64_t *slot = pk_u64map_slot(&g->fr_of, ar->begin);
    if (!slot) {
        *failed = 1;
        return pk_err_set(err, "out of memory"), NULL;
    }
    if (*slot) {
        g->last = *slot;
        return &PK_VEC_AT(&g->frs, fn_range, *slot - 1);
    }
    fn_range r = {.func = f, .begin = ar->begin, .end = ar->end};
    if (pk_binary_decode_range(g->bin, r.begin, r.end, &r.insns, &r.n, err)) {
        *failed = 1;
        return NULL;
    }
    r.delta = calloc(r.n + 1, sizeof *r.delta);
    r.uncond = calloc(r.n + 1, sizeof *r.uncond);
    fn_range *dst = pk_vec_push(&g->frs);
    if (!r.delta || !r.uncond || !dst) {
        fr_free(&r);
        *failed = 1;
        return pk_err_set(err, "out of memory"), NULL;
    }
    for (size_t i = 0; i < r.n; i++)
        r.uncond[i + 1] = r.uncond[i] + pk_insn_is_uncond(r.insns[i].cls);
    *dst = r;
    *slot = g->frs.len;
    g->last = g->frs.len;
    g->st->insns_decoded += r.n;
    return dst;
}

/* Index of the instruction starting exactly at addr, or SIZE_MAX. */
static size_t insn_index(const fn_range *r, uint64_t addr)
{
    return pk_insn_index(r->insns, r->n, addr);
}

/* Adds one range's count to the instructions it covers (difference array).
 * Returns 0 when used (*hit = its function range), 1 when dropped (counted
 * by reason), -1 on error. */
static int add_range(gen *g, uint64_t b, uint64_t e, uint64_t c, fn_range **hit, pk_err *err)
{
    int failed;
    fn_range *r = range_for(g, b, err, &failed);
    if (failed)
        return -1;
    int reason = -1;
    size_t ib = SIZE_MAX, ie = SIZE_MAX;
    if (!r)
        reason = PK_RANGE_DROP_NO_FUNC;
    else if ((ib = insn_index(r, b)) == SIZE_MAX)
        reason = PK_RANGE_DROP_NOT_CODE;
    else if (e >= r->end)
        reason = PK_RANGE_DROP_CROSS_FUNC;
    else if ((ie = insn_index(r, e)) == SIZE_MAX)
        reason = PK_RANGE_DROP_NOT_CODE;
    else if (r->uncond[ie] != r->uncond[ib])
        reason = PK_RANGE_DROP_CROSS_UNCOND;
    if (reason >= 0) {
        g->st->range_drop[reason] += c;
        return 1;
    }
    r->delta[ib] += (int64_t)c;
    r->delta[ie + 1] -= (int64_t)c;
    g->st->ranges_used++;
    g->st->range_samples_used += c;
    *hit = r;
    return 0;
}

static int add_ranges(gen *g, const pk_rawprof *raw, pk_err *err)
{
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(&raw->ranges, &n);
    if (!v && raw->ranges.len)
        return pk_err_set(err, "out of memory");
    g->st->ranges_in = n;
    if (g->o->fill_zero_all) {
        const pk_dwarf_func *funcs;
        size_t nfuncs;
        if (pk_dwarf_funcs(g->sym, &funcs, &nfuncs, err)) {
            free(v);
            return -1;
        }
        for (size_t f = 0; f < nfuncs; f++)
            for (uint32_t k = 0; k < funcs[f].nranges; k++) {
                int failed;
                fn_range *r = range_for(g, funcs[f].ranges[k].begin, err, &failed);
                if (failed) {
                    free(v);
                    return -1;
                }
                if (r)
                    r->sampled = true;
            }
    }
    for (size_t i = 0; i < n; i++) {
        fn_range *r;
        int rc = add_range(g, v[i].a, v[i].b, v[i].n, &r, err);
        if (rc < 0) {
            free(v);
            return -1;
        }
        if (rc == 0)
            r->sampled = true;
    }
    free(v);
    return 0;
}

static uint32_t line_off(const pk_frame *f)
{
    return (f->line - f->start_line) & 0xffff;
}

static uint32_t base_disc(const gen *g, uint32_t d)
{
    return g->fs ? d : pk_discr_base(d);
}

/* Walks the inline stack (innermost first in fr[0..n)) from the outermost
 * function down to the innermost one, creating callsite profiles, adding
 * `total` to every profile on the way. Returns the innermost profile. */
static pk_fprof *leaf_profile(gen *g, const pk_frame *fr, size_t n, uint64_t total, pk_err *err)
{
    pk_name_id id;
    if (intern_canon(g, fr[n - 1].func, &id, err))
        return NULL;
    pk_fprof *p = pk_profset_get_func(g->ps, id, err);
    if (!p)
        return NULL;
    p->total = pk_sat_add(p->total, total);
    for (size_t k = n - 1; k > 0; k--) {
        if (intern_canon(g, fr[k - 1].func, &id, err))
            return NULL;
        p = pk_fprof_callsite(g->ps, p, line_off(&fr[k]), base_disc(g, fr[k].discriminator), id, err);
        if (!p)
            return NULL;
        p->total = pk_sat_add(p->total, total);
    }
    return p;
}

static int emit_bodies(gen *g, pk_err *err)
{
    for (size_t i = 0; i < g->frs.len; i++) {
        fn_range *r = &PK_VEC_AT(&g->frs, fn_range, i);
        if (!r->sampled)
            continue;
        g->st->functions_sampled++;
        int64_t c = 0;
        for (size_t k = 0; k < r->n; k++) {
            c += r->delta[k];
            const pk_insn *in = &r->insns[k];
            if (in->cls == PK_INSN_INVALID)
                continue;
            pk_frames fs;
            if (pk_symbolize(g->sym, in->addr, &fs, err))
                return -1;
            g->st->insns_symbolized++;
            if (!fs.count || !fs.frames[fs.count - 1].func) {
                g->st->insns_no_debug++;
                continue;
            }
            uint64_t count = c > 0 ? (uint64_t)c : 0;
            uint64_t bytes = g->o->total_mode == PK_TOTAL_PER_BYTE ? pk_sat_mul(count, in->len) : 0;
            pk_fprof *p = leaf_profile(g, fs.frames, fs.count, bytes, err);
            if (!p)
                return -1;
            uint32_t d = fs.frames[0].discriminator;
            if (g->o->sum_lines) {
                if (pk_fprof_add_body(p, line_off(&fs.frames[0]), base_disc(g, d), count, err))
                    return -1;
                continue;
            }
            uint64_t dup = g->fs || g->o->no_dup_factor ? 1 : pk_discr_dup_factor(d);
            if (pk_fprof_max_body(p, line_off(&fs.frames[0]), base_disc(g, d), pk_sat_mul(count, dup ? dup : 1), err))
                return -1;
        }
    }
    return 0;
}

/* Whether a branch from src into callee's entry is a call (or a tail call
 * into another function): 1, counted in the stats; 0 for other branches;
 * -1 on error. */
static int call_kind(gen *g, uint64_t src, const pk_dwarf_func *callee, uint64_t c, pk_err *err)
{
    int failed;
    fn_range *r = range_for(g, src, err, &failed);
    if (failed)
        return -1;
    size_t is = r ? insn_index(r, src) : SIZE_MAX;
    int cls = is != SIZE_MAX ? r->insns[is].cls : PK_INSN_CALL;
    if (cls == PK_INSN_CALL || cls == PK_INSN_ICALL) {
        g->st->calls += c;
        return 1;
    }
    if ((cls == PK_INSN_JMP || cls == PK_INSN_IJMP) && r && r->func != callee) {
        g->st->tail_calls += c;
        return 1;
    }
    g->st->branches_not_call += c;
    return 0;
}

/* Branches into function entries: call targets and head samples. */
static int add_calls(gen *g, const pk_rawprof *raw, pk_err *err)
{
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(&raw->branches, &n);
    if (!v && raw->branches.len)
        return pk_err_set(err, "out of memory");
    g->st->branches_in = n;
    int rc = -1;
    for (size_t i = 0; i < n; i++) {
        uint64_t src = v[i].a, dst = v[i].b, c = v[i].n;
        const pk_dwarf_func *callee = pk_dwarf_func_at(g->sym, dst);
        if (!callee || callee->entry_pc != dst)
            continue;
        pk_name_id cid;
        if (intern_canon(g, callee->name, &cid, err))
            goto out;
        if (src != PK_AGG_EXTERNAL) {
            int k = call_kind(g, src, callee, c, err);
            if (k < 0)
                goto out;
            if (!k)
                continue;
            pk_frames fs;
            if (pk_symbolize(g->sym, src, &fs, err))
                goto out;
            if (fs.count && fs.frames[fs.count - 1].func) {
                pk_fprof *p = leaf_profile(g, fs.frames, fs.count, 0, err);
                if (!p)
                    goto out;
                uint32_t d = fs.frames[0].discriminator;
                if (pk_fprof_add_call(p, line_off(&fs.frames[0]), base_disc(g, d), cid, c, err))
                    goto out;
            }
        } else {
            g->st->external_entries += c;
        }
        pk_fprof *cp = pk_profset_get_func(g->ps, cid, err);
        if (!cp)
            goto out;
        cp->head = pk_sat_add(cp->head, c);
    }
    rc = 0;
out:
    free(v);
    return rc;
}

/* Shared by both generators: symbolizer, DWARF functions, FS detection,
 * the decoded function ranges and the name cache. */
static int gen_open(gen *g, pk_binary *bin, pk_profset *out, const pk_profgen_opts *opts,
                    pk_profgen_stats *stats, pk_err *err)
{
    memset(stats, 0, sizeof *stats);
    *g = (gen){.bin = bin, .ps = out, .o = opts, .st = stats};
    pk_vec_init(&g->frs, sizeof(fn_range));
    pk_vec_init(&g->key, sizeof(pk_ctx_frame));
    if (pk_binary_symbolizer(bin, &g->sym, err))
        return -1;
    const pk_dwarf_func *funcs;
    size_t nfuncs;
    if (pk_dwarf_funcs(g->sym, &funcs, &nfuncs, err))
        return -1;
    pk_elf_symbol fsym;
    g->fs = pk_elf_find_symbol(pk_binary_elf(bin), "__llvm_fs_discriminator__", &fsym) == 1;
    stats->fs_discriminators = g->fs;
    if (g->fs)
        out->kind |= PK_PROF_FS;
    if (pk_u64map_init(&g->fr_of, 256) || pk_u64map_init(&g->name_of, 256)) {
        pk_u64map_free(&g->fr_of);
        return pk_err_set(err, "out of memory");
    }
    return 0;
}

static void gen_close(gen *g)
{
    for (size_t i = 0; i < g->frs.len; i++)
        fr_free(&PK_VEC_AT(&g->frs, fn_range, i));
    pk_vec_free(&g->frs);
    pk_vec_free(&g->key);
    pk_u64map_free(&g->fr_of);
    pk_u64map_free(&g->name_of);
}

int pk_profgen_line(pk_binary *bin, const pk_rawprof *raw, const pk_profgen_opts *opts,
                    pk_profset *out, pk_profgen_stats *stats, pk_err *err)
{
    gen g;
    if (gen_open(&g, bin, out, opts, stats, err))
        return -1;
    int rc = -1;
    if (add_ranges(&g, raw, err) || emit_bodies(&g, err) || add_calls(&g, raw, err))
        goto out;
    for (size_t i = 0; i < out->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&out->top, pk_fprof *, i);
        if (f->removed)
            continue;
        if (pk_name_is_ambiguous_init(pk_profset_name(out, f->name))) {
            pk_profset_remove(out, f);
            continue;
        }
        /* range counts and branch counts are sampled separately */
        if (pk_fprof_raise_to_calls(out, f, true, err))
            goto out;
        if (opts->total_mode == PK_TOTAL_SUM)
            pk_fprof_recompute_total(f);
        stats->profiles++;
        stats->total_samples = pk_sat_add(stats->total_samples, f->total);
        stats->body_samples = pk_sat_add(stats->body_samples, pk_fprof_body_sum(f));
    }
    rc = 0;
out:
    gen_close(&g);
    return rc;
}

/* ---- context-sensitive, DWARF contexts (binaries without pseudo-probes) ----
 * llvm-profgen.md §4.3. A context is the call sites of the unwinder's
 * context, each expanded into its inline frames, followed by the inline
 * frames of the instruction; every frame carries the location of the call
 * it makes (the leaf's is 0). Per context, each executed instruction's
 * location gets MAX(count × duplication factor) and the count is added to
 * the total; branches into entries give call targets and head samples of
 * the callee's context; inlined callees, which no branch enters, give their
 * caller's call site an estimated count afterwards. */

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
        if (intern_canon(g, fs.frames[k].func, &f->name, err))
            return -1;
        if (k > 0 || !leaf) {
            f->line = line_off(&fs.frames[k]);
            f->disc = base_disc(g, fs.frames[k].discriminator);
        }
    }
    if (depth)
        *depth = (uint32_t)fs.count;
    return 0;
}

/* The call sites of a csraw context as frames (the last element of the
 * context is the leaf's entry, not a call site). A site without debug
 * information cuts the context there. */
static int cs_prefix(gen *g, const pk_csraw *raw, uint32_t ctx, pk_vec *out, pk_err *err)
{
    uint32_t n;
    const uint64_t *sites = pk_csraw_ctx(raw, ctx, &n);
    out->len = 0;
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

/* The profile of a context of inline-expanded frames (the last one the
 * leaf's): recursion is compressed on these frames, as the compiler sees
 * them, not only on call addresses (two calls of one line, or a recursion
 * through inlined code, repeat the same frames at other addresses). */
static pk_fprof *cs_profile(gen *g, const pk_vec *frames, pk_err *err)
{
    pk_ctx_id id;
    size_t n = frames->len;
    if (!n)
        return NULL;
    if (pk_vec_reserve(&g->key, n)) {
        pk_err_set(err, "out of memory");
        return NULL;
    }
    pk_ctx_frame *k = g->key.data;
    memcpy(k, frames->data, n * sizeof *k);
    size_t callers = n - 1;
    size_t first = pk_profgen_shape_context(g->o, k, &callers, sizeof *k);
    k[callers] = k[n - 1];
    if (pk_profset_intern_ctx(g->ps, k + first, callers + 1 - first, &id, err))
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
        touched.len = 0;
        for (; i < n && (uint32_t)(v[i].a >> 32) == ctx; i++) {
            uint32_t c;
            uint64_t b, e;
            pk_csraw_key(raw, &v[i], &c, &b, &e);
            fn_range *r;
            int a = add_range(g, b, e, v[i].n, &r, err);
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
            int64_t c = 0;
            for (size_t k = 0; k < r->n; k++) {
                c += r->delta[k];
                const pk_insn *in = &r->insns[k];
                if (c <= 0 || in->cls == PK_INSN_INVALID)
                    continue; /* contexts carry what ran: no zero lines */
                frames->len = nprefix;
                uint32_t depth = 0;
                int pf = push_frames(g, frames, in->addr, true, &depth, err);
                if (pf < 0)
                    goto out;
                g->st->insns_symbolized++;
                if (pf > 0) {
                    g->st->insns_no_debug++;
                    continue;
                }
                pk_frames fs; /* the innermost frame again, for its location */
                if (pk_symbolize(g->sym, in->addr, &fs, err))
                    goto out;
                uint32_t d = fs.frames[0].discriminator;
                uint64_t dup = g->fs || g->o->no_dup_factor ? 1 : pk_discr_dup_factor(d);
                pk_fprof *p = cs_profile(g, frames, err);
                if (!p || pk_fprof_max_body(p, line_off(&fs.frames[0]), base_disc(g, d),
                                            pk_sat_mul((uint64_t)c, dup ? dup : 1), err))
                    goto out;
                p->total = pk_sat_add(p->total, (uint64_t)c);
                if (depth > 1)
                    p->attrs |= PK_ATTR_WAS_INLINED;
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
        if (!callee || callee->entry_pc != dst)
            continue;
        pk_name_id cid;
        if (intern_canon(g, callee->name, &cid, err))
            goto out;
        if (ctx != have) {
            if (cs_prefix(g, raw, ctx, frames, err))
                goto out;
            nprefix = frames->len;
            have = ctx;
        }
        frames->len = nprefix;
        if (src != PK_AGG_EXTERNAL) {
            int k = call_kind(g, src, callee, c, err);
            if (k < 0)
                goto out;
            if (!k)
                continue;
            int pf = push_frames(g, frames, src, false, NULL, err);
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

int pk_profgen_line_cs(pk_binary *bin, const pk_csraw *raw, const pk_profgen_opts *opts,
                       pk_profset *out, pk_profgen_stats *stats, pk_err *err)
{
    gen g;
    if (gen_open(&g, bin, out, opts, stats, err))
        return -1;
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
        stats->profiles++;
        stats->total_samples = pk_sat_add(stats->total_samples, f->total);
        stats->body_samples = pk_sat_add(stats->body_samples, pk_fprof_body_sum(f));
    }
    rc = 0;
out:
    if (trie_ok)
        pk_ctx_trie_free(&trie);
    pk_vec_free(&frames);
    gen_close(&g);
    return rc;
}
