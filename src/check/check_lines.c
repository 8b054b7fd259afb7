/* check_lines.c — the line-based staleness check: every location and call
 * the new binary has, per function, from its DWARF; then every key of the
 * profile looked up there.
 *
 * The binary side is computed the way profgen computes profiles, so that
 * a profile and the binary it came from agree exactly: each instruction of
 * each DWARF function is symbolized; every frame of its inline stack gives
 * its function a location (innermost: the row's line and discriminator;
 * outer frames: the call line and discriminator, since the body entry of a
 * call that was not inlined sits there), each outer frame a call to the
 * frame inside it, and direct calls, tail calls and indirect calls of the
 * innermost frame a call there. Offsets are taken from the declaration line
 * of each frame's own function, masked to 16 bits; discriminators are
 * reduced to their base (LLVM's encoding) unless the binary has
 * flow-sensitive discriminators. All instances of a function count: a
 * location is there if any copy (outlined or inlined anywhere) has it.
 *
 * What differs between builds of the same sources is not stale: locations
 * on lines only an optimized build gives code to (pk_optlines: line 0,
 * braces, a caller's lines in an inlined copy), a call target reached from
 * the call there through other calls (sampled chains show a tail call's
 * callee, or skip a frame without frame pointer; -O0 makes ordinary calls of
 * tail calls), an inlined header function that the binary calls through its
 * PLT instead. */
#include "check/check_int.h"
#include "profgen/profgen.h"

#include <stddef.h>
#include <stdlib.h>

#define NO_FUNC UINT32_MAX        /* not a function of the binary */
#define INDIRECT (UINT32_MAX - 1) /* callee of an indirect call: any target matches */
#define EXTERNAL (UINT32_MAX - 2) /* callee outside the binary's DWARF functions (a PLT stub) */
#define NOWHERE UINT64_MAX        /* the location of call-graph edges that are no call site */
#define REACH_DEPTH 16            /* calls followed from a call site's direct callee (reaches) */

typedef struct bloc { uint64_t name, loc; } bloc;  /* (function, location) */
typedef struct bcall { uint64_t key, loc; } bcall; /* key: function << 32 | callee */

typedef struct lines {
    pk_binary *bin;
    pk_symbolizer *sym;
    pk_check_build *b;
    bool fs, ignore_disc;
    pk_profset names;       /* the binary's canonical function names (interning only) */
    pk_u64map name_of;      /* symbolizer string address → id + 1 */
    pk_vec locs, calls;     /* bloc, bcall; sorted and unique after the walk */
    pk_optlines opt;        /* lines only an optimized build gives code to */
} lines;

static int intern(lines *c, const char *name, uint32_t *id, pk_err *err)
{
    if (!name)
        name = "??";
    uint64_t *slot = pk_u64map_slot(&c->name_of, (uint64_t)(uintptr_t)name);
    if (!slot)
        return pk_err_set(err, "out of memory");
    if (!*slot) {
        pk_name_id n;
        if (pk_profset_intern(&c->names, name, pk_profgen_canonical_len(name), &n, err))
            return -1;
        *slot = (uint64_t)n + 1;
    }
    *id = (uint32_t)(*slot - 1);
    return 0;
}

/* The same location arithmetic as profgen's line generator. */
static uint64_t frame_loc(const lines *c, const pk_frame *f)
{
    uint32_t d = f->discriminator;
    return pk_loc((f->line - f->start_line) & 0xffff, c->fs ? d : pk_discr_base(d));
}

static int push_loc(lines *c, uint32_t name, uint64_t loc, pk_err *err)
{
    bloc *l = pk_vec_push(&c->locs);
    if (!l)
        return pk_err_set(err, "out of memory");
    *l = (bloc){name, loc};
    return 0;
}

static int push_call(lines *c, uint32_t name, uint32_t callee, uint64_t loc, pk_err *err)
{
    bcall *l = pk_vec_push(&c->calls);
    if (!l)
        return pk_err_set(err, "out of memory");
    *l = (bcall){(uint64_t)name << 32 | callee, loc};
    return 0;
}

/* The function a direct call or jump enters, as a name id; EXTERNAL when
 * the target lies in no DWARF function (a PLT stub: the call of a function
 * of another file, which an inlined copy of a header's function can stand
 * for); NO_FUNC when target is not a function entry or, for a jump, when it
 * is the function's own entry (a loop, not a tail call). */
static int callee_at(lines *c, const pk_insn *in, const pk_dwarf_func *self, uint32_t *id, pk_err *err)
{
    const pk_dwarf_func *f = pk_dwarf_func_at(c->sym, in->target);
    *id = f ? NO_FUNC : EXTERNAL;
    if (!f || f->entry_pc != in->target || (f == self && in->cls == PK_INSN_JMP))
        return 0;
    return intern(c, f->name, id, err);
}

/* One instruction: its frames' locations and calls. `last` caches the
 * previous instruction's innermost (function, location) to skip repeats. */
static int walk_insn(lines *c, const pk_dwarf_func *self, const pk_insn *in, bloc *last, pk_err *err)
{
    pk_frames fs;
    if (pk_symbolize(c->sym, in->addr, &fs, err))
        return -1;
    c->b->r->bin_insns++;
    if (!fs.count || !fs.frames[fs.count - 1].func)
        return 0;
    uint32_t inner = 0;
    uint64_t inner_loc = 0;
    for (size_t k = 0; k < fs.count; k++) {
        uint32_t id;
        if (intern(c, fs.frames[k].func, &id, err))
            return -1;
        if (pk_optlines_func(&c->opt, id, fs.frames[k].start_file, fs.frames[k].start_line, fs.frames[k].line, err))
            return -1;
        uint64_t loc = frame_loc(c, &fs.frames[k]);
        if (k == 0) {
            inner = id;
            inner_loc = loc;
            if (last->name == id && last->loc == loc && fs.count == 1 && !pk_insn_is_branch(in->cls))
                return 0;
            *last = (bloc){id, loc};
        }
        if (push_loc(c, id, loc, err))
            return -1;
        if (k > 0) {
            uint32_t callee;
            if (intern(c, fs.frames[k - 1].func, &callee, err) || push_call(c, id, callee, loc, err))
                return -1;
        }
    }
    uint32_t callee = NO_FUNC;
    switch (in->cls) {
    case PK_INSN_CALL:
    case PK_INSN_JMP: /* a jump to another function's entry is a tail call */
        if (callee_at(c, in, self, &callee, err))
            return -1;
        break;
    case PK_INSN_ICALL:
    case PK_INSN_IJMP: /* indirect (tail) calls; a jump table too, at worst a missed mismatch */
        callee = INDIRECT;
        break;
    }
    if (callee != NO_FUNC && push_call(c, inner, callee, inner_loc, err))
        return -1;
    if (in->cls == PK_INSN_JMP && callee < EXTERNAL && fs.count > 1) {
        /* a tail call leaves the whole function, whatever was inlined at
         * the jump: an edge of the call graph (reaches) at no location */
        uint32_t from;
        if (intern(c, self->name, &from, err) || push_call(c, from, callee, NOWHERE, err))
            return -1;
    }
    return 0;
}


static int sort_unique(pk_vec *v, pk_err *err)
{
    /* both element kinds are two u64s: sort by the second, then (stably) the first */
    if (pk_sort_by_u64(v->data, v->len, v->elem, sizeof(uint64_t)) || pk_sort_by_u64(v->data, v->len, v->elem, 0))
        return pk_err_set(err, "out of memory");
    uint64_t *e = v->data;
    size_t k = 0;
    for (size_t i = 0; i < v->len; i++)
        if (!k || e[2 * i] != e[2 * (k - 1)] || e[2 * i + 1] != e[2 * (k - 1) + 1]) {
            e[2 * k] = e[2 * i];
            e[2 * k + 1] = e[2 * i + 1];
            k++;
        }
    v->len = k;
    pk_vec_shrink(v);
    return 0;
}

static int walk_binary(lines *c, pk_err *err)
{
    const pk_dwarf_func *funcs;
    size_t n;
    if (pk_dwarf_funcs(c->sym, &funcs, &n, err))
        return -1;
    c->b->r->bin_functions = n;
    for (size_t i = 0; i < n; i++) {
        bloc last = {UINT64_MAX, 0};
        for (uint32_t r = 0; r < funcs[i].nranges; r++) {
            pk_insn *insns;
            size_t ni;
            if (pk_binary_decode_range(c->bin, funcs[i].ranges[r].begin, funcs[i].ranges[r].end, &insns, &ni, err))
                return -1;
            for (size_t k = 0; k < ni; k++)
                if (insns[k].cls != PK_INSN_INVALID && walk_insn(c, &funcs[i], &insns[k], &last, err)) {
                    free(insns);
                    return -1;
                }
            free(insns);
        }
    }
    if (sort_unique(&c->locs, err) || sort_unique(&c->calls, err))
        return -1;
    c->b->r->bin_locations = c->locs.len;
    return 0;
}

/* First index of a sorted array of two-u64 elements not below (a, b). */
static size_t lower(const pk_vec *v, uint64_t a, uint64_t b)
{
    const uint64_t *e = v->data;
    size_t lo = 0, hi = v->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[2 * mid] < a || (e[2 * mid] == a && e[2 * mid + 1] < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether (a, loc) is in v; with ignore_disc any discriminator of loc's line. */
static bool has(const lines *c, const pk_vec *v, uint64_t a, uint32_t line, uint32_t disc)
{
    uint64_t want = pk_loc(line, c->ignore_disc ? 0 : disc);
    size_t i = lower(v, a, want);
    const uint64_t *e = v->data;
    if (i >= v->len || e[2 * i] != a)
        return false;
    return c->ignore_disc ? pk_loc_line(e[2 * i + 1]) == line : e[2 * i + 1] == want;
}

/* Whether entering g leads to callee within REACH_DEPTH calls, none of
 * them a call site of g's caller as the profiled build's sampled call
 * chains may have seen it: the functions between were tail calls there (LBR
 * and stacks both show a tail call's callee as called from the caller) that
 * may be ordinary calls in this build (-O0), or kept no frame pointer (a
 * frame-pointer chain skips them). Breadth first over the call graph. An
 * indirect call of g itself reaches any callee: a sample in the prologue of
 * the function it called, before the frame pointer was pushed, skips g in a
 * frame-pointer chain; deeper indirect calls do not count, or nearly every
 * call would reach everything. */
static bool reaches(const lines *c, uint32_t g, uint32_t callee)
{
    pk_u64map seen;
    pk_vec level, next;
    if (pk_u64map_init(&seen, 64))
        return false;
    pk_vec_init(&level, sizeof(uint32_t));
    pk_vec_init(&next, sizeof(uint32_t));
    bool found = false;
    uint32_t *first = pk_vec_push(&level);
    if (first)
        *first = g;
    const uint64_t *e = c->calls.data;
    for (int depth = 0; depth < REACH_DEPTH && level.len && !found; depth++) {
        next.len = 0;
        for (size_t k = 0; k < level.len && !found; k++) {
            uint32_t f = PK_VEC_AT(&level, uint32_t, k);
            for (size_t i = lower(&c->calls, (uint64_t)f << 32, 0); i < c->calls.len && e[2 * i] >> 32 == f; i++) {
                uint32_t h = (uint32_t)e[2 * i];
                if (h == callee || (h == INDIRECT && depth == 0)) {
                    found = true;
                    break;
                }
                uint64_t *v = h < EXTERNAL ? pk_u64map_slot(&seen, h) : NULL;
                if (!v || *v)
                    continue;
                *v = 1;
                uint32_t *n = pk_vec_push(&next);
                if (n)
                    *n = h;
            }
        }
        pk_vec t = level;
        level = next;
        next = t;
    }
    pk_vec_free(&level);
    pk_vec_free(&next);
    pk_u64map_free(&seen);
    return found;
}

static bool has_call(const lines *c, uint32_t fn, uint32_t callee, uint32_t line, uint32_t disc)
{
    if ((callee != NO_FUNC && has(c, &c->calls, (uint64_t)fn << 32 | callee, line, disc)) ||
        has(c, &c->calls, (uint64_t)fn << 32 | INDIRECT, line, disc))
        return true;
    if (callee == NO_FUNC)
        return false;
    /* the direct callees there, and where they lead */
    const uint64_t *e = c->calls.data;
    uint64_t want = pk_loc(line, c->ignore_disc ? 0 : disc);
    for (size_t i = lower(&c->calls, (uint64_t)fn << 32, 0); i < c->calls.len && e[2 * i] >> 32 == fn; i++) {
        uint32_t g = (uint32_t)e[2 * i];
        bool here = c->ignore_disc ? pk_loc_line(e[2 * i + 1]) == line : e[2 * i + 1] == want;
        if (here && g < EXTERNAL && reaches(c, g, callee))
            return true;
    }
    return false;
}


/* A profile name → the binary's id for it (NO_FUNC: not in the binary). */
static uint32_t bin_name(const lines *c, pk_name_id pn)
{
    const pk_profset *ps = c->b->ps;
    pk_name_id id;
    if (pk_profset_name_is_guid(ps, pn))
        return pk_profset_lookup_guid(&c->names, pk_profset_name_guid(ps, pn), &id) ? NO_FUNC : id;
    const char *s = pk_profset_name(ps, pn);
    return pk_profset_lookup_name(&c->names, s, pk_profgen_canonical_len(s), &id) ? NO_FUNC : id;
}

static int guid_name(void *ctx, uint64_t guid, const char **name, size_t *len)
{
    const pk_profset *names = ctx;
    pk_name_id id;
    if (pk_profset_lookup_guid(names, guid, &id))
        return -1;
    *name = pk_profset_name(names, id);
    *len = pk_profset_name_len(names, id);
    return 0;
}

static pk_check_func *cfunc(lines *c, size_t fi) { return &PK_VEC_AT(&c->b->funcs, pk_check_func, fi); }

/* negative_offset: a line offset with bit 15 set comes from a line before
 * the function's declaration line: line 0 (code no line owns), or a line of
 * another file. It moves with the function, not with edits inside it, and
 * clang's own staleness report skips such offsets too: they are left out
 * of the check (their samples still count in the total). */

/* Checks the keys of f (the top-level profile or one of its inlinees, whose
 * function is `fn` in the binary) into function record fi. */
static int check_fprof(lines *c, const pk_fprof *f, uint32_t fn, size_t fi, pk_err *err)
{
    pk_fprof_view v;
    if (pk_fprof_view_build(c->b->ps, f, &v, err))
        return -1;
    int rc = -1;
    for (size_t i = 0; i < v.nbody; i++) {
        const pk_body_entry *e = &v.body[i];
        if (e->line & 0x8000)
            continue; /* see negative_offset */
        bool present = has(c, &c->locs, fn, e->line, e->disc);
        int excused = -1; /* computed when needed */
        if (!present && (excused = pk_optlines_excused(&c->opt, fn, e->line)))
            continue; /* a line the new build leaves without code, sources unchanged */
        uint64_t stale = present ? 0 : e->count;
        cfunc(c, fi)->locs++;
        if (!present) {
            cfunc(c, fi)->stale_locs++;
            cfunc(c, fi)->flags |= PK_STALE_LINES;
            if (pk_check_build_loc(c->b, fi, f->name, PK_NO_NAME, e->line, e->disc, PK_STALE_LINES, e->count, err))
                goto out;
        }
        for (uint32_t t = 0; t < e->ncalls; t++) {
            const pk_call_target *ct = &e->calls[t];
            if (!ct->count) /* no weight: clang ignores such targets too when others were sampled */
                continue;
            cfunc(c, fi)->calls++;
            if (has_call(c, fn, bin_name(c, ct->name), e->line, e->disc))
                continue;
            if (excused < 0)
                excused = pk_optlines_excused(&c->opt, fn, e->line);
            if (excused) /* a call merged in from elsewhere (see pk_optlines) */
                continue;
            cfunc(c, fi)->stale_calls++;
            cfunc(c, fi)->flags |= PK_STALE_CALLS;
            if (pk_check_build_loc(c->b, fi, f->name, ct->name, e->line, e->disc, PK_STALE_CALLS, ct->count, err))
                goto out;
            if (present) /* a stale line's samples are counted once */
                stale = pk_sat_add(stale, ct->count);
        }
        if (stale > e->count)
            stale = e->count;
        cfunc(c, fi)->stale_samples = pk_sat_add(cfunc(c, fi)->stale_samples, stale);
    }
    for (size_t i = 0; i < v.nsites; i++) {
        const pk_callsite_entry *s = &v.sites[i];
        if (s->line & 0x8000)
            continue;
        uint32_t callee = bin_name(c, s->callee->name);
        cfunc(c, fi)->calls++;
        /* an inlinee the binary does not define (a header's function, atoi)
         * stands for the call of another file's function there at -O0 */
        bool external = callee == NO_FUNC && has(c, &c->calls, (uint64_t)fn << 32 | EXTERNAL, s->line, s->disc);
        if (external || has_call(c, fn, callee, s->line, s->disc) || pk_optlines_excused(&c->opt, fn, s->line)) {
            /* an inlinee the binary has no function of (a header's, called
             * from another file there) has no locations to check */
            if (callee != NO_FUNC && check_fprof(c, s->callee, callee, fi, err))
                goto out;
            continue;
        }
        /* the compiler finds no call there to hang this inlinee's profile on:
         * all of it is lost */
        uint64_t sum = pk_fprof_body_sum(s->callee);
        cfunc(c, fi)->stale_calls++;
        cfunc(c, fi)->flags |= PK_STALE_CALLS;
        cfunc(c, fi)->stale_samples = pk_sat_add(cfunc(c, fi)->stale_samples, sum);
        if (pk_check_build_inlinee(c->b, fi, f->name, s->callee->name, s->line, s->disc, PK_STALE_CALLS, sum, err))
            goto out;
    }
    rc = 0;
out:
    pk_fprof_view_free(&v);
    return rc;
}

/* A missing function whose name differs from one of the binary's only in
 * its .__uniq. suffix: the hash of the source path changed, not the function. */
static int uniq_hint(lines *c, pk_check_func *cf, pk_name_id name, pk_err *err)
{
    const char *s = pk_profset_name(c->b->ps, name);
    size_t len = pk_profset_name_len(c->b->ps, name), base = pk_check_uniq_base(s, len);
    if (base == len)
        return 0;
    for (size_t i = 0; i < pk_profset_num_names(&c->names); i++) {
        const char *t = pk_profset_name(&c->names, (pk_name_id)i);
        size_t tl = pk_profset_name_len(&c->names, (pk_name_id)i);
        if (pk_check_uniq_base(t, tl) == base && !memcmp(t, s, base)) {
            cf->same_but_uniq = pk_check_build_str(c->b, t, tl, err);
            return cf->same_but_uniq ? 0 : -1;
        }
    }
    return 0;
}

static int check_profiles(lines *c, pk_err *err)
{
    const pk_profset *ps = c->b->ps;
    for (size_t i = 0; i < ps->top.len; i++) {
        const pk_fprof *f = PK_VEC_AT(&ps->top, pk_fprof *, i);
        if (f->removed)
            continue;
        size_t fi;
        pk_check_func *cf = pk_check_build_func(c->b, f->name, &fi, err);
        if (!cf)
            return -1;
        uint64_t s = pk_fprof_body_sum(f);
        cf->contexts++;
        cf->samples = pk_sat_add(cf->samples, s);
        uint32_t fn = bin_name(c, f->name);
        if (fn == NO_FUNC) {
            cf->flags |= PK_STALE_MISSING;
            cf->stale_samples = pk_sat_add(cf->stale_samples, s);
            if (pk_check_build_loc(c->b, fi, f->name, PK_NO_NAME, 0, 0, PK_STALE_MISSING, s, err) ||
                (!cf->same_but_uniq && uniq_hint(c, cf, f->name, err)))
                return -1;
            continue;
        }
        if (check_fprof(c, f, fn, fi, err))
            return -1;
    }
    return 0;
}

int pk_check_lines(pk_binary *bin, pk_check_build *b, bool ignore_disc, pk_err *err)
{
    lines c = {.bin = bin, .b = b, .ignore_disc = ignore_disc};
    pk_vec_init(&c.locs, sizeof(bloc));
    pk_vec_init(&c.calls, sizeof(bcall));
    if (pk_binary_symbolizer(bin, &c.sym, err))
        return -1;
    pk_elf_symbol fsym;
    c.fs = pk_elf_find_symbol(pk_binary_elf(bin), "__llvm_fs_discriminator__", &fsym) == 1;
    int rc = -1;
    if (pk_profset_init(&c.names, err))
        return -1;
    if (pk_optlines_init(&c.opt, err))
        goto out;
    if (pk_u64map_init(&c.name_of, 1024)) {
        pk_err_set(err, "out of memory");
        goto out;
    }
    b->guid_name = guid_name;
    b->guid_ctx = &c.names;
    if (walk_binary(&c, err) || check_profiles(&c, err))
        goto out;
    rc = 0;
out:
    b->guid_name = NULL;
    pk_vec_free(&c.locs);
    pk_vec_free(&c.calls);
    pk_u64map_free(&c.name_of);
    pk_optlines_free(&c.opt);
    pk_profset_free(&c.names);
    return rc;
}
