/* tailcall.c — missing-frame inference for tail calls (see unwind.h). */
#include "unwind/unwind.h"
#include "binary/binary.h"

#include <stdlib.h>
#include <string.h>

#define MANY 2 /* path counts saturate here: 0, 1 (unique), 2 (ambiguous) */

struct tc_edge {
    uint64_t site, to;            /* tail-call jump address, entry of the target (0: an
                                     indirect jump, to any function) */
    bool sampled;                 /* seen in an LBR (else only decoded) */
};

struct tc_memo {
    uint8_t paths;                /* 0, 1, MANY */
    uint8_t done;
    struct tc_edge first;         /* first hop of the unique path */
};

struct tc {
    pk_binary *bin;
    pk_elf *elf;
    pk_symbolizer *sym;           /* NULL: no DWARF (or not asked yet: sym_tried) */
    bool sym_tried;
    pk_listmap edges_of;          /* function entry → struct tc_edge */
    pk_u64map seen_edge;          /* hash(site, to) → 1 */
    pk_u64map decoded;            /* function entry → 1 once its static tail calls are in */
    pk_u64map memo_of;            /* hash(from, to, sampled_only) → index into memo + 1 */
    pk_vec memo;                  /* struct tc_memo */
    pk_listmap icall_targets;     /* indirect call site → uint64_t target entries seen */
    pk_tailcall_stats *st;
    pk_u64map *added_sites;       /* call sites of the spliced frames (may be NULL) */
    uint32_t max_depth;
    bool sampled_only;            /* chains of sampled tail calls only */
    bool use_any;                 /* indirect jumps may lead to any function */
    bool indirect_allowed;        /* ... the caller allows that last resort */
    pk_err *err;
};

static uint64_t memo_key(const struct tc *t, uint64_t from, uint64_t to)
{
    return pk_hash64(from * 31 + 7 + t->sampled_only + 2 * t->use_any) ^ to;
}

static uint64_t func_entry(struct tc *t, uint64_t addr)
{
    const pk_elf_symbol *f = pk_elf_func_at(t->elf, addr);
    return f ? f->addr : 0;
}

/* A jump between two parts of one DWARF function (into its cold part, or
 * back) is no tail call, though each part has a symbol of its own. */
static bool same_function(struct tc *t, uint64_t a, uint64_t b)
{
    if (!t->sym_tried) {
        pk_err ignored;
        t->sym_tried = true;
        if (pk_binary_symbolizer(t->bin, &t->sym, &ignored))
            t->sym = NULL;
    }
    const pk_dwarf_func *fa = t->sym ? pk_dwarf_func_at(t->sym, a) : NULL;
    const pk_dwarf_func *fb = t->sym ? pk_dwarf_func_at(t->sym, b) : NULL;
    return fa && fb && (fa == fb || !strcmp(fa->name, fb->name));
}

static int add_edge(struct tc *t, uint64_t from, uint64_t site, uint64_t to, bool sampled)
{
    if (to && same_function(t, site, to))
        return 0;
    uint64_t *seen = pk_u64map_slot(&t->seen_edge, pk_hash64(site) ^ to);
    if (!seen)
        return pk_err_set(t->err, "out of memory");
    if (*seen)
        return 0; /* (the sampled ones come first) */
    *seen = 1;
    struct tc_edge *e = pk_listmap_push(&t->edges_of, from);
    if (!e)
        return pk_err_set(t->err, "out of memory");
    e->site = site;
    e->to = to;
    e->sampled = sampled;
    t->st->tail_call_edges += to != 0;
    return 0;
}

/* An indirect jump that leaves the function: the frame pointer was restored
 * shortly before it, with no branch in between (an epilogue). A jump-table
 * jump (a switch, a computed goto) runs with the frame still set up. So
 * this finds tail calls through a pointer in functions that have a frame,
 * which is every function of the frame-pointer builds IP contexts need
 * (not those that omit it: -momit-leaf-frame-pointer and the like). */
static bool leaves_frame(struct tc *t, const pk_insn *in, size_t i)
{
    const pk_arch *arch = pk_elf_arch(t->elf);
    for (size_t back = 1; arch && arch->frame_restore && back <= 8 && back <= i; back++) {
        const pk_insn *p = &in[i - back];
        if (pk_insn_is_branch(p->cls) || p->addr + p->len != in[i - back + 1].addr)
            return false;
        const uint8_t *code = pk_elf_vaddr_bytes(t->elf, p->addr, p->len);
        if (code && arch->frame_restore(code, p->len))
            return true;
    }
    return false;
}

/* Static tail calls of a function: direct jumps to another function's
 * entry, and indirect jumps after its epilogue as edges to any function
 * (used only when t->use_any). */
static int decode_static(struct tc *t, uint64_t entry)
{
    uint64_t *d = pk_u64map_slot(&t->decoded, entry);
    if (!d)
        return pk_err_set(t->err, "out of memory");
    if (*d)
        return 0;
    *d = 1;
    const pk_elf_symbol *f = pk_elf_func_at(t->elf, entry);
    const pk_insn *in;
    size_t n;
    pk_err ignored;
    if (!f || pk_binary_func_insns(t->bin, f, &in, &n, &ignored))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i].cls == PK_INSN_IJMP && t->indirect_allowed && leaves_frame(t, in, i) &&
            add_edge(t, entry, in[i].addr, 0, false))
            return -1;
        if (!pk_insn_tailcall_candidate(in[i].cls) || !in[i].target) /* (direct ones) */
            continue;
        uint64_t to = func_entry(t, in[i].target);
        if (to == in[i].target && to != entry && add_edge(t, entry, in[i].addr, to, false))
            return -1;
    }
    return 0;
}

/* Number of tail-call chains from function `from` to function `to` (0, 1,
 * MANY), memoized; `depth` bounds the search and cycles are cut. */
static int count_paths(struct tc *t, uint64_t from, uint64_t to, uint32_t depth, uint8_t *out)
{
    if (from == to) {
        *out = 1;
        return 0;
    }
    if (depth >= t->max_depth) {
        *out = 0;
        return 0;
    }
    uint64_t key = memo_key(t, from, to);
    uint64_t *mi = pk_u64map_slot(&t->memo_of, key);
    if (!mi)
        return pk_err_set(t->err, "out of memory");
    if (*mi) {
        struct tc_memo *m = &PK_VEC_AT(&t->memo, struct tc_memo, *mi - 1);
        *out = m->done ? m->paths : 0; /* on the stack: a cycle, no path through it */
        return 0;
    }
    if (!pk_vec_push(&t->memo))
        return pk_err_set(t->err, "out of memory");
    uint64_t my = t->memo.len;
    *pk_u64map_get(&t->memo_of, key) = my;
    if (decode_static(t, from))
        return -1;
    uint8_t total = 0;
    struct tc_edge first = {0};
    /* recursion adds edges of other functions: the map and the lists may
     * move, so keep the index, not pointers */
    const pk_vec *edges = pk_listmap_get(&t->edges_of, from);
    size_t nedges = edges ? edges->len : 0;
    for (size_t i = 0; i < nedges && total < MANY; i++) {
        struct tc_edge e = PK_VEC_AT(pk_listmap_get(&t->edges_of, from), struct tc_edge, i);
        uint8_t n;
        if ((t->sampled_only && !e.sampled) || (!e.to && !t->use_any))
            continue;
        if (!e.to) {
            n = 1; /* straight to the callee (through another function too: not counted) */
            e.to = to;
        } else if (count_paths(t, e.to, to, depth + 1, &n)) {
            return -1;
        }
        if (n && !total)
            first = e;
        total = total + n > MANY ? MANY : total + n;
    }
    struct tc_memo *m = &PK_VEC_AT(&t->memo, struct tc_memo, my - 1);
    m->paths = total;
    m->first = first;
    m->done = 1;
    *out = total;
    return 0;
}

/* Appends the tail-call sites of the unique chain from `from` to `to`. */
static int append_chain(struct tc *t, uint64_t from, uint64_t to, pk_vec *out)
{
    for (uint32_t guard = 0; from != to && guard < t->max_depth; guard++) {
        uint64_t *mi = pk_u64map_get(&t->memo_of, memo_key(t, from, to));
        if (!mi)
            break;
        struct tc_memo *m = &PK_VEC_AT(&t->memo, struct tc_memo, *mi - 1);
        uint64_t *slot = pk_vec_push(out);
        if (!slot)
            return pk_err_set(t->err, "out of memory");
        *slot = m->first.site;
        t->st->frames_added++;
        uint64_t *a = t->added_sites ? pk_u64map_slot(t->added_sites, m->first.site) : NULL;
        if (t->added_sites && !a)
            return pk_err_set(t->err, "out of memory");
        if (a)
            *a = 1;
        from = m->first.to;
    }
    return 0;
}

/* Targets of the call at `site`: the direct target, or every target seen
 * for an indirect call (*n = 0 when none is known). */
static const uint64_t *call_targets(struct tc *t, uint64_t site, uint64_t *direct, size_t *n)
{
    pk_insn in; /* a call site starts an instruction: decode just that one */
    *n = 0;
    if (pk_binary_decode_one(t->bin, site, &in))
        return NULL;
    if (in.cls == PK_INSN_CALL) {
        *direct = in.target;
        *n = in.target != 0;
        return direct;
    }
    const pk_vec *v = pk_listmap_get(&t->icall_targets, site);
    if (!v)
        return NULL;
    *n = v->len;
    return v->data;
}

/* Number of chains (0, 1, MANY) from the call's targets to the callee, in
 * the graph of t->sampled_only; *from: the target the only chain starts at. */
static int count_all(struct tc *t, const uint64_t *targets, size_t ntargets, uint64_t callee,
                     uint8_t *total, uint64_t *from)
{
    *total = 0;
    for (size_t k = 0; k < ntargets && *total < MANY; k++) {
        uint8_t n;
        if (count_paths(t, targets[k], callee, 0, &n))
            return -1;
        if (n && !*total)
            *from = targets[k];
        *total = *total + n > MANY ? MANY : *total + n;
    }
    return 0;
}

/* The tail-call chain between a call site and the function found called
 * from it: one chain over all the call's targets, as llvm-profgen's
 * inferMissingFrames counts (an indirect call with several targets is
 * spliced when exactly one of them leads to the callee, and through one
 * chain only). Chains of tail calls seen in the LBR are tried first, then
 * with the jumps decoded from the code as well: a function with two tail
 * calls to the same callee (Lua's luaH_resizearray jumps to luaH_resize
 * from two places) has two chains through the code, but the LBR may have
 * seen one of them only; llvm-profgen, which knows sampled tail calls
 * only, splices that one. 0 none, 1 spliced, MANY ambiguous; -1 error. */
static int splice(struct tc *t, const uint64_t *targets, size_t ntargets, uint64_t callee, pk_vec *ctx)
{
    uint8_t total;
    uint64_t from = 0;
    t->sampled_only = true;
    t->use_any = false;
    if (count_all(t, targets, ntargets, callee, &total, &from))
        return -1;
    if (total != 1) {
        t->sampled_only = false;
        if (count_all(t, targets, ntargets, callee, &total, &from))
            return -1;
    }
    if (total == 0 && t->indirect_allowed) {
        t->use_any = true;
        if (count_all(t, targets, ntargets, callee, &total, &from))
            return -1;
        t->st->through_indirect += total == 1;
    }
    if (total == 1 && append_chain(t, from, callee, ctx))
        return -1;
    return total;
}

int pk_infer_tail_frames(pk_csraw *raw, struct pk_binary *bin, uint32_t max_depth, unsigned flags,
                         pk_tailcall_stats *st, pk_u64map *added_sites, pk_err *err)
{
    memset(st, 0, sizeof *st);
    struct tc t = {.bin = bin, .elf = pk_binary_elf(bin), .st = st, .added_sites = added_sites,
                   .max_depth = max_depth ? max_depth : 64,
                   .indirect_allowed = flags & PK_TAILCALL_INDIRECT_JUMPS, .err = err};
    pk_listmap_init(&t.edges_of, sizeof(struct tc_edge));
    pk_listmap_init(&t.icall_targets, sizeof(uint64_t));
    pk_vec_init(&t.memo, sizeof(struct tc_memo));
    pk_csraw out;
    pk_vec ctx;
    pk_vec_init(&ctx, sizeof(uint64_t));
    uint32_t *remap = NULL, *canon = NULL;
    int rc = -1;
    bool out_ok = false, sorted_ok = false;
    pk_csraw sorted;
    if (pk_u64map_init(&t.seen_edge, 1024) ||
        pk_u64map_init(&t.decoded, 256) || pk_u64map_init(&t.memo_of, 1024)) {
        pk_err_set(err, "out of memory");
        goto done;
    }
    /* tail calls and indirect call targets seen in the branches */
    for (size_t i = 0; i < raw->branches.cap; i++) {
        const pk_pair_count *e = &raw->branches.e[i];
        if (!e->n)
            continue;
        uint32_t c;
        uint64_t src, dst;
        pk_csraw_key(raw, e, &c, &src, &dst);
        if (src == PK_AGG_EXTERNAL)
            continue;
        pk_insn insn; /* an LBR source starts an instruction */
        if (pk_binary_decode_one(bin, src, &insn))
            continue;
        const pk_insn *in = &insn;
        uint64_t to = func_entry(&t, dst), from = func_entry(&t, src);
        if (to != dst || !from)
            continue;
        if (in->cls == PK_INSN_ICALL) {
            const pk_vec *v = pk_listmap_get(&t.icall_targets, src);
            bool known = false; /* (a call site has a handful of targets) */
            for (size_t k = 0; v && k < v->len && !known; k++)
                known = PK_VEC_AT(v, uint64_t, k) == to;
            uint64_t *slot = known ? NULL : pk_listmap_push(&t.icall_targets, src);
            if (!known && !slot)
                goto oom;
            if (slot)
                *slot = to;
        } else if (pk_insn_tailcall_candidate(in->cls) && from != to && add_edge(&t, from, src, to, true)) {
            goto done;
        }
    }

    size_t nctx = pk_csraw_num_ctxs(raw);
    remap = malloc((nctx + 1) * sizeof *remap);
    if (!remap || pk_csraw_init(&out, raw->base, err))
        goto oom;
    out_ok = true;
    for (size_t c = 0; c < nctx; c++) {
        uint32_t n;
        const uint64_t *sites = pk_csraw_ctx(raw, (uint32_t)c, &n);
        ctx.len = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t *slot = pk_vec_push(&ctx);
            if (!slot)
                goto oom;
            *slot = sites[i];
            if (i + 1 == n)
                break;
            st->pairs++;
            uint64_t direct = 0, callee = func_entry(&t, sites[i + 1]);
            size_t ntargets;
            const uint64_t *targets = call_targets(&t, sites[i], &direct, &ntargets);
            bool called = false;
            for (size_t k = 0; k < ntargets && !called; k++)
                called = targets[k] == callee;
            if (!ntargets || !callee || called)
                continue;
            st->mismatched++;
            int paths = splice(&t, targets, ntargets, callee, &ctx);
            if (paths < 0)
                goto done;
            if (paths == 1) {
                st->recovered++;
            } else if (paths) {
                st->ambiguous++;
            } else {
                st->unreachable++;
            }
            sites = pk_csraw_ctx(raw, (uint32_t)c, &n);
        }
        if (pk_csraw_intern(&out, (const uint64_t *)ctx.data, (uint32_t)ctx.len, &remap[c], err))
            goto done;
    }
    /* the new contexts in canonical order (callers need not canonicalize
     * again), and the counts moved once, under the composed ids */
    if (pk_csraw_init(&sorted, raw->base, err))
        goto done;
    sorted_ok = true;
    size_t nout = pk_csraw_num_ctxs(&out);
    canon = malloc((nout + 1) * sizeof *canon);
    if (!canon)
        goto oom;
    if (pk_csraw_intern_sorted(&out, &sorted, canon, err))
        goto done;
    for (size_t c = 0; c < nctx; c++)
        remap[c] = canon[remap[c]];
    if (pk_csraw_move_counts(raw, &sorted, remap, err))
        goto done;
    sorted_ok = false;
    rc = 0;
    goto done;
oom:
    pk_err_set(err, "out of memory");
done:
    if (out_ok)
        pk_csraw_free(&out);
    if (sorted_ok)
        pk_csraw_free(&sorted);
    free(canon);
    free(remap);
    pk_vec_free(&ctx);
    pk_listmap_free(&t.edges_of);
    pk_vec_free(&t.memo);
    pk_u64map_free(&t.seen_edge);
    pk_u64map_free(&t.decoded);
    pk_u64map_free(&t.memo_of);
    pk_listmap_free(&t.icall_targets);
    return rc;
}
