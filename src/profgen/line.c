/* line.c — the line-based (AutoFDO) profile generator.
 *
 * Work is per sampled function range only: a DWARF function range is decoded
 * the first time a range or branch lands in it. Range counts are added into a
 * per-instruction difference array (two writes per range, whatever its
 * length) and a prefix count of unconditional transfers makes the "crosses an
 * unconditional branch" check O(1); the prefix sum then gives every
 * instruction its count, and each instruction is symbolized exactly once.
 */
#include "profgen/line_int.h"

#include <stdio.h>
#include <stdlib.h>

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
int pk_lg_intern_canon(gen *g, const char *name, pk_name_id *id, pk_err *err)
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
    free(r->cut);
    free(r->cover);
}


/* The decoded function range containing addr, or NULL (not in any DWARF
 * function). Decodes on first use. */
fn_range *pk_lg_range_for(gen *g, uint64_t addr, pk_err *err, int *failed)
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

void pk_lg_note_insn(gen *g, const pk_frames *fs, uint64_t count)
{
    for (size_t i = 0; i < fs->count; i++)
        if (fs->frames[i].discriminator) {
            g->st->insns_discriminated++;
            break;
        }
    const pk_frame *in = &fs->frames[0];
    if (g->prev_func == in->func && g->prev_line == in->line && g->prev_count != count)
        g->st->insns_line_split++;
    g->prev_func = in->func;
    g->prev_line = in->line;
    g->prev_count = count;
}

int pk_profgen_discriminator_warning(const pk_profgen_stats *s, char *buf, size_t cap)
{
    if (!s->insns_line_split || s->insns_discriminated)
        return 0;
    snprintf(buf, cap,
             "none of the %llu sampled instructions has a DWARF discriminator: the binary was built without "
             "-fdebug-info-for-profiling, so the blocks of a source line share one count (a loop's test and "
             "increment, an 'if' and its body); clang's manual asks for it, with -funique-internal-linkage-names, "
             "in the profiled build and in the build that uses the profile",
             (unsigned long long)(s->insns_symbolized - s->insns_no_debug));
    return 1;
}

/* Index of the instruction starting exactly at addr, or SIZE_MAX. */
size_t pk_lg_insn_index(const fn_range *r, uint64_t addr)
{
    return pk_insn_index(r->insns, r->n, addr);
}

/* Adds one range's count to the instructions it covers (difference array).
 * Returns 0 when used (*hit = its function range), 1 when dropped (counted
 * by reason), -1 on error. */
int pk_lg_range_span(gen *g, uint64_t b, uint64_t e, uint64_t c, fn_range **hit, size_t *ib, size_t *ie, pk_err *err)
{
    int failed;
    fn_range *r = pk_lg_range_for(g, b, err, &failed);
    if (failed)
        return -1;
    int reason = -1;
    *ib = *ie = SIZE_MAX;
    if (!r)
        reason = PK_RANGE_DROP_NO_FUNC;
    else if ((*ib = pk_lg_insn_index(r, b)) == SIZE_MAX)
        reason = PK_RANGE_DROP_NOT_CODE;
    else if (e >= r->end)
        reason = PK_RANGE_DROP_CROSS_FUNC;
    else if ((*ie = pk_lg_insn_index(r, e)) == SIZE_MAX)
        reason = PK_RANGE_DROP_NOT_CODE;
    else if (r->uncond[*ie] != r->uncond[*ib])
        reason = PK_RANGE_DROP_CROSS_UNCOND;
    if (reason >= 0) {
        g->st->range_drop[reason] += c;
        return 1;
    }
    *hit = r;
    return 0;
}

int pk_lg_add_range(gen *g, uint64_t b, uint64_t e, uint64_t c, fn_range **hit, pk_err *err)
{
    size_t ib, ie;
    fn_range *r;
    int k = pk_lg_range_span(g, b, e, c, &r, &ib, &ie, err);
    if (k)
        return k;
    r->delta[ib] += (int64_t)c;
    r->delta[ie + 1] -= (int64_t)c;
    g->st->ranges_used++;
    g->st->range_samples_used += c;
    *hit = r;
    return 0;
}

/* A range counted as given (opts->ranges_as_given): every instruction of
 * the DWARF functions in [b, e], e included. As llvm-profgen, only the
 * function the range starts in counts as sampled (written whole, unsampled
 * lines at 0); of the others only the instructions covered are written.
 * Returns 1 when no instruction is covered. */
static int add_range_as_given(gen *g, uint64_t b, uint64_t e, uint64_t c, pk_err *err)
{
    /* the DWARF function ranges from the last one starting at or before b on */
    bool counted = false;
    uint64_t done = 0;   /* decoded ranges end here: a later DWARF range inside one is the same code */
    size_t nfr = pk_dwarf_func_ranges_count(g->sym);
    for (size_t k = pk_dwarf_func_range_from(g->sym, b); k < nfr; k++) {
        pk_addr_range fr = pk_dwarf_func_range(g->sym, k);
        if (fr.begin > e)
            break;
        if (fr.end <= b || fr.end <= done)
            continue;
        int failed;
        uint64_t from = b > fr.begin ? b : fr.begin;
        if (from < done)
            from = done;
        fn_range *r = pk_lg_range_for(g, from, err, &failed);
        if (failed)
            return -1;
        if (!r)
            continue;
        done = r->end;
        size_t ib = pk_insn_lower_bound(r->insns, r->n, from);
        size_t ie = e == UINT64_MAX ? r->n : pk_insn_lower_bound(r->insns, r->n, e + 1);
        if (ib >= ie)
            continue;
        r->delta[ib] += (int64_t)c;
        r->delta[ie] -= (int64_t)c;
        if (b >= r->begin && b < r->end) {
            r->sampled = true;
        } else {
            if (!r->cover && !(r->cover = calloc(r->n + 1, sizeof *r->cover)))
                return pk_err_set(err, "out of memory");
            r->cover[ib]++;
            r->cover[ie]--;
        }
        counted = true;
    }
    if (!counted)
        return 1;
    g->st->ranges_used++;
    g->st->range_samples_used += c;
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
                fn_range *r = pk_lg_range_for(g, funcs[f].ranges[k].begin, err, &failed);
                if (failed) {
                    free(v);
                    return -1;
                }
                if (r)
                    r->sampled = true;
            }
    }
    const pk_dwarf_func *funcs;
    size_t nfuncs;
    bool as_given = g->o->ranges_as_given && n;
    if (as_given && pk_dwarf_funcs(g->sym, &funcs, &nfuncs, err)) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        fn_range *r;
        int rc = as_given ? add_range_as_given(g, v[i].a, v[i].b, v[i].n, err)
                          : pk_lg_add_range(g, v[i].a, v[i].b, v[i].n, &r, err);
        if (rc < 0) {
            free(v);
            return -1;
        }
        if (rc == 0 && !as_given)
            r->sampled = true;
        if (rc > 0 && as_given)
            g->st->range_drop[PK_RANGE_DROP_NO_FUNC] += v[i].n;
    }
    free(v);
    /* a sampled function is zero-filled whole, as llvm-profgen does: every
     * range of it, and of the other DIEs of its name (a coroutine's funclets) */
    size_t nfr = g->frs.len;
    for (size_t i = 0; i < nfr; i++) {
        const fn_range *r = &PK_VEC_AT(&g->frs, fn_range, i);
        if (!r->sampled)
            continue;
        const pk_dwarf_func *f0 = r->func, *f = f0;
        do {
            for (uint32_t k = 0; k < f->nranges; k++) {
                int failed;
                fn_range *o = pk_lg_range_for(g, f->ranges[k].begin, err, &failed);
                if (failed)
                    return -1;
                if (o)
                    o->sampled = true;
            }
            f = f->next_part;
        } while (f && f != f0);
    }
    return 0;
}

uint32_t pk_lg_line_off(const pk_frame *f)
{
    return (f->line - f->start_line) & 0xffff;
}

uint32_t pk_lg_base_disc(const gen *g, uint32_t d)
{
    return g->fs ? d : pk_discr_base(d);
}

/* Walks the inline stack (innermost first in fr[0..n)) from the outermost
 * function down to the innermost one, creating callsite profiles, adding
 * `total` to every profile on the way. Returns the innermost profile. */
static pk_fprof *leaf_profile(gen *g, const pk_frame *fr, size_t n, uint64_t total, pk_err *err)
{
    pk_name_id id;
    if (pk_lg_intern_canon(g, fr[n - 1].func, &id, err))
        return NULL;
    pk_fprof *p = pk_profset_get_func(g->ps, id, err);
    if (!p)
        return NULL;
    p->total = pk_sat_add(p->total, total);
    for (size_t k = n - 1; k > 0; k--) {
        if (pk_lg_intern_canon(g, fr[k - 1].func, &id, err))
            return NULL;
        p = pk_fprof_callsite(g->ps, p, pk_lg_line_off(&fr[k]), pk_lg_base_disc(g, fr[k].discriminator), id, err);
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
        if (!r->sampled && !r->cover)
            continue;
        g->st->functions_sampled++;
        g->prev_func = NULL;
        int64_t c = 0, covered = 0;
        for (size_t k = 0; k < r->n; k++) {
            c += r->delta[k];
            covered += r->cover ? r->cover[k] : 0;
            const pk_insn *in = &r->insns[k];
            if (in->cls == PK_INSN_INVALID || (!r->sampled && covered <= 0))
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
            pk_lg_note_insn(g, &fs, count);
            uint64_t bytes = g->o->total_mode == PK_TOTAL_PER_BYTE ? pk_sat_mul(count, in->len) : 0;
            pk_fprof *p = leaf_profile(g, fs.frames, fs.count, bytes, err);
            if (!p)
                return -1;
            uint32_t d = fs.frames[0].discriminator;
            if (g->o->sum_lines) {
                if (pk_fprof_add_body(p, pk_lg_line_off(&fs.frames[0]), pk_lg_base_disc(g, d), count, err))
                    return -1;
                continue;
            }
            uint64_t dup = g->fs || g->o->no_dup_factor ? 1 : pk_discr_dup_factor(d);
            if (pk_fprof_max_body(p, pk_lg_line_off(&fs.frames[0]), pk_lg_base_disc(g, d), pk_sat_mul(count, dup ? dup : 1), err))
                return -1;
        }
    }
    return 0;
}

/* Whether a branch from src into callee's entry is a call (or a tail call
 * into another function): 1, counted in the stats; 0 for other branches;
 * -1 on error. */
int pk_lg_call_kind(gen *g, uint64_t src, const pk_dwarf_func *callee, uint64_t c, pk_err *err)
{
    int failed;
    fn_range *r = pk_lg_range_for(g, src, err, &failed);
    if (failed)
        return -1;
    size_t is = r ? pk_lg_insn_index(r, src) : SIZE_MAX;
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
        if (!callee || !pk_dwarf_func_entered_at(callee, dst))
            continue;
        pk_name_id cid;
        if (pk_lg_intern_canon(g, callee->name, &cid, err))
            goto out;
        if (src != PK_AGG_EXTERNAL) {
            int k = pk_lg_call_kind(g, src, callee, c, err);
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
                if (pk_fprof_add_call(p, pk_lg_line_off(&fs.frames[0]), pk_lg_base_disc(g, d), cid, c, err))
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
int pk_lg_gen_open(gen *g, pk_binary *bin, pk_profset *out, const pk_profgen_opts *opts,
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

void pk_lg_gen_close(gen *g)
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
    if (pk_lg_gen_open(&g, bin, out, opts, stats, err))
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
    pk_lg_gen_close(&g);
    return rc;
}

