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

static bool is_uncond(int cls)
{
    return cls == PK_INSN_JMP || cls == PK_INSN_IJMP || cls == PK_INSN_RET ||
           cls == PK_INSN_CALL || cls == PK_INSN_ICALL;
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
        r.uncond[i + 1] = r.uncond[i] + is_uncond(r.insns[i].cls);
    *dst = r;
    *slot = g->frs.len;
    g->last = g->frs.len;
    g->st->insns_decoded += r.n;
    return dst;
}

/* Index of the instruction starting exactly at addr, or SIZE_MAX. */
static size_t insn_index(const fn_range *r, uint64_t addr)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->insns[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n && r->insns[lo].addr == addr ? lo : SIZE_MAX;
}

static int add_ranges(gen *g, const pk_rawprof *raw, pk_err *err)
{
    size_t n;
    pk_pair_count *v = pk_pairmap_sorted(&raw->ranges, &n);
    if (!v && raw->ranges.len)
        return pk_err_set(err, "out of memory");
    g->st->ranges_in = n;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = v[i].a, e = v[i].b, c = v[i].n;
        int failed;
        fn_range *r = range_for(g, b, err, &failed);
        if (failed) {
            free(v);
            return -1;
        }
        if (!r) {
            g->st->range_drop[PK_RANGE_DROP_NO_FUNC] += c;
            continue;
        }
        size_t ib = insn_index(r, b);
        if (ib == SIZE_MAX) {
            g->st->range_drop[PK_RANGE_DROP_NOT_CODE] += c;
            continue;
        }
        if (e >= r->end) {
            g->st->range_drop[PK_RANGE_DROP_CROSS_FUNC] += c;
            continue;
        }
        size_t ie = insn_index(r, e);
        if (ie == SIZE_MAX) {
            g->st->range_drop[PK_RANGE_DROP_NOT_CODE] += c;
            continue;
        }
        if (r->uncond[ie] != r->uncond[ib]) {
            g->st->range_drop[PK_RANGE_DROP_CROSS_UNCOND] += c;
            continue;
        }
        r->delta[ib] += (int64_t)c;
        r->delta[ie + 1] -= (int64_t)c;
        r->sampled = true;
        g->st->ranges_used++;
        g->st->range_samples_used += c;
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
            uint64_t dup = g->fs || g->o->no_dup_factor ? 1 : pk_discr_dup_factor(d);
            if (pk_fprof_max_body(p, line_off(&fs.frames[0]), base_disc(g, d), pk_sat_mul(count, dup ? dup : 1), err))
                return -1;
        }
    }
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
            int failed;
            fn_range *r = range_for(g, src, err, &failed);
            if (failed)
                goto out;
            size_t is = r ? insn_index(r, src) : SIZE_MAX;
            int cls = is != SIZE_MAX ? r->insns[is].cls : PK_INSN_CALL;
            if (cls == PK_INSN_CALL || cls == PK_INSN_ICALL) {
                g->st->calls += c;
            } else if ((cls == PK_INSN_JMP || cls == PK_INSN_IJMP) && r && r->func != callee) {
                g->st->tail_calls += c;
            } else {
                g->st->branches_not_call += c;
                continue;
            }
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

/* A line that calls out must have at least as many samples as its calls
 * (range counts and branch counts are sampled separately). */
static int raise_to_calls(gen *g, pk_fprof *f, pk_err *err)
{
    pk_fprof_view v;
    if (pk_fprof_view_build(g->ps, f, &v, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; i < v.nbody && !rc; i++) {
        uint64_t sum = 0;
        for (uint32_t k = 0; k < v.body[i].ncalls; k++)
            sum = pk_sat_add(sum, v.body[i].calls[k].count);
        if (sum > v.body[i].count)
            rc = pk_fprof_set_body(f, v.body[i].line, v.body[i].disc, sum, err);
    }
    for (size_t i = 0; i < v.nsites && !rc; i++)
        rc = raise_to_calls(g, v.sites[i].callee, err);
    pk_fprof_view_free(&v);
    return rc;
}

static bool ambiguous_name(const char *s)
{
    return !strncmp(s, "__cxx_global_var_init", 21) || !strncmp(s, "__tls_init", 10);
}

int pk_profgen_line(pk_binary *bin, const pk_rawprof *raw, const pk_profgen_opts *opts,
                    pk_profset *out, pk_profgen_stats *stats, pk_err *err)
{
    memset(stats, 0, sizeof *stats);
    gen g = {.bin = bin, .ps = out, .o = opts, .st = stats};
    if (pk_binary_symbolizer(bin, &g.sym, err))
        return -1;
    const pk_dwarf_func *funcs;
    size_t nfuncs;
    if (pk_dwarf_funcs(g.sym, &funcs, &nfuncs, err))
        return -1;
    pk_elf_symbol fsym;
    g.fs = pk_elf_find_symbol(pk_binary_elf(bin), "__llvm_fs_discriminator__", &fsym) == 1;
    stats->fs_discriminators = g.fs;
    if (g.fs)
        out->kind |= PK_PROF_FS;
    pk_vec_init(&g.frs, sizeof(fn_range));
    if (pk_u64map_init(&g.fr_of, 256) || pk_u64map_init(&g.name_of, 256)) {
        pk_u64map_free(&g.fr_of);
        return pk_err_set(err, "out of memory");
    }
    int rc = -1;
    if (add_ranges(&g, raw, err) || emit_bodies(&g, err) || add_calls(&g, raw, err))
        goto out;
    for (size_t i = 0; i < out->top.len; i++) {
        pk_fprof *f = PK_VEC_AT(&out->top, pk_fprof *, i);
        if (f->removed)
            continue;
        if (ambiguous_name(pk_profset_name(out, f->name))) {
            pk_profset_remove(out, f);
            continue;
        }
        if (raise_to_calls(&g, f, err))
            goto out;
        if (opts->total_mode == PK_TOTAL_SUM)
            pk_fprof_recompute_total(f);
        stats->profiles++;
        stats->total_samples = pk_sat_add(stats->total_samples, f->total);
        stats->body_samples = pk_sat_add(stats->body_samples, pk_fprof_body_sum(f));
    }
    rc = 0;
out:
    for (size_t i = 0; i < g.frs.len; i++)
        fr_free(&PK_VEC_AT(&g.frs, fn_range, i));
    pk_vec_free(&g.frs);
    pk_u64map_free(&g.fr_of);
    pk_u64map_free(&g.name_of);
    return rc;
}
