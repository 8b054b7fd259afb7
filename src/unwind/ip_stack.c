/* ip_stack.c — IP + call-stack samples → hits per context (see ip_stack.h). */
#include "unwind/ip_stack.h"

#include "binary/binary.h"

#include <stdio.h>
#include <stdlib.h>

#define CACHE_BITS 14

struct pk_ip_addr {
    uint64_t addr;               /* + 1; 0: empty */
    uint64_t site;               /* call before addr (0: none) */
    uint64_t entry;              /* function containing addr (0: none) */
    uint64_t frame_ready;        /* (function entries) first address with the frame set up */
    uint64_t target;             /* (return addresses) direct target of the call before, 0: none */
    int16_t cls;                 /* (leaves) PK_INSN_* of the instruction there */
    uint8_t have;
};
enum { HAVE_SITE = 1, HAVE_ENTRY = 2, HAVE_FRAME = 4, HAVE_TARGET = 8, HAVE_CLS = 16 };

typedef struct pk_ip_stack {
    uint32_t leaf_ctx;
    uint64_t weight;
} pk_ip_stack;

int pk_ipraw_init(pk_ipraw *r, const pk_unwind_code *code, uint64_t base, int max_depth, pk_err *err)
{
    memset(r, 0, sizeof *r);
    r->code = *code;
    r->max_depth = max_depth;
    pk_vec_init(&r->stack_info, sizeof(pk_ip_stack));
    if (pk_csraw_init(&r->ctxs, base, err) || pk_csraw_init(&r->stacks, base, err)) {
        pk_ipraw_free(r);
        return -1;
    }
    /* the context stores' own range and branch maps stay unused */
    pk_pairmap_free(&r->ctxs.ranges);
    pk_pairmap_free(&r->ctxs.branches);
    pk_pairmap_free(&r->stacks.ranges);
    pk_pairmap_free(&r->stacks.branches);
    if (pk_pairmap_init(&r->hits, 1 << 12) || pk_pairmap_init(&r->calls, 1 << 10) ||
        pk_pairmap_init(&r->unplaced, 1 << 8) || pk_pairmap_init(&r->repairs, 1 << 6) ||
        !(r->cache = calloc((size_t)1 << CACHE_BITS, sizeof *r->cache))) {
        pk_ipraw_free(r);
        return pk_err_set(err, "out of memory");
    }
    return 0;
}

void pk_ipraw_free(pk_ipraw *r)
{
    pk_csraw_free(&r->ctxs);
    pk_csraw_free(&r->stacks);
    pk_pairmap_free(&r->hits);
    pk_pairmap_free(&r->calls);
    pk_pairmap_free(&r->unplaced);
    pk_pairmap_free(&r->repairs);
    pk_vec_free(&r->stack_info);
    pk_u64map_free(&r->bad_returns);
    free(r->scratch);
    free(r->cache);
    r->scratch = NULL;
    r->cache = NULL;
}

static struct pk_ip_addr *cached(pk_ipraw *r, uint64_t addr)
{
    struct pk_ip_addr *e = &r->cache[(addr * 0x9e3779b97f4a7c15ULL) >> (64 - CACHE_BITS)];
    if (e->addr != addr + 1) {
        e->addr = addr + 1;
        e->have = 0;
    }
    return e;
}

static bool fits(const pk_ipraw *r, uint64_t a)
{
    return a >= r->ctxs.base && a - r->ctxs.base < PK_CS_EXTERNAL_OFF;
}

static uint64_t func_entry(pk_ipraw *r, uint64_t addr)
{
    struct pk_ip_addr *e = cached(r, addr);
    if (!(e->have & HAVE_ENTRY)) {
        uint64_t end;
        uint64_t f = r->code.func_entry(r->code.ctx, addr, &end);
        e->entry = f && fits(r, f) ? f : 0;
        e->have |= HAVE_ENTRY;
    }
    return e->entry;
}

static uint64_t call_before(pk_ipraw *r, uint64_t ret)
{
    struct pk_ip_addr *e = cached(r, ret);
    if (!(e->have & HAVE_SITE)) {
        uint64_t site;
        e->site = !r->code.call_before(r->code.ctx, ret, &site) && fits(r, site) ? site : 0;
        e->have |= HAVE_SITE;
    }
    return e->site;
}

/* Where the frame-pointer prologue of the function at `entry` ends (the
 * architecture's frame_setup: after [endbr64] push %rbp; mov %rsp,%rbp on
 * x86-64). entry when there is none (the chain is then whatever the
 * function's code left in the frame pointer: nothing to correct). */
static uint64_t frame_ready(pk_ipraw *r, uint64_t entry)
{
    struct pk_ip_addr *e = cached(r, entry);
    if (e->have & HAVE_FRAME)
        return e->frame_ready;
    e->have |= HAVE_FRAME;
    e->frame_ready = entry;
    const pk_arch *arch = pk_elf_arch(r->elf);
    const uint8_t *b = arch ? pk_elf_vaddr_bytes(r->elf, entry, arch->prologue_len) : NULL;
    if (!b)
        return entry;
    e->frame_ready = entry + arch->frame_setup(b);
    return e->frame_ready;
}

/* The direct call target of the call instruction ending at `ret`; 0 when
 * ret follows no direct call. */
static uint64_t direct_target(pk_ipraw *r, uint64_t ret)
{
    if (ret == PK_AGG_EXTERNAL || !fits(r, ret))
        return 0;
    uint64_t site = call_before(r, ret);
    struct pk_ip_addr *e = cached(r, ret); /* (after call_before: same slot) */
    if (e->have & HAVE_TARGET)
        return e->target;
    const uint8_t *b = site ? pk_elf_vaddr_bytes(r->elf, site, (size_t)(ret - site)) : NULL;
    const pk_arch *arch = pk_elf_arch(r->elf);
    pk_insn in;
    e->target = b && arch && pk_arch_decode(arch, b, (size_t)(ret - site), site, &in) && in.cls == PK_INSN_CALL
                    ? in.target
                    : 0;
    e->have |= HAVE_TARGET;
    return e->target;
}

/* True when a frame-pointer chain sampled at `leaf` misses the direct
 * caller: in a function that never sets up %rbp (a leaf built without a
 * leaf frame pointer), before the prologue has set it up, or at the ret
 * after the epilogue restored it, the first return address is the caller's
 * own. A chain whose first call site calls the leaf's function directly is
 * right after all (an emulator's shadow stack, a frame set up otherwise). */
static bool caller_skipped(pk_ipraw *r, uint64_t leaf, uint64_t entry, uint64_t ret1)
{
    if (!r->elf)
        return false;
    uint64_t ready = frame_ready(r, entry);
    if (ready != entry && leaf >= ready) {
        struct pk_ip_addr *e = cached(r, leaf);
        if (!(e->have & HAVE_CLS)) {
            e->cls = (int16_t)r->code.insn_class(r->code.ctx, leaf);
            e->have |= HAVE_CLS;
        }
        if (e->cls != PK_INSN_RET)
            return false;
    }
    return direct_target(r, ret1) != entry;
}

/* The one direct call to `callee` inside the function at `caller`: the
 * frame a chain skipped, when the first call site named the caller. 0 when
 * there is none or more than one (cached per pair). */
static uint64_t unique_call_site(pk_ipraw *r, uint64_t caller, uint64_t callee)
{
    uint64_t v = pk_pairmap_get(&r->repairs, caller, callee);
    if (v)
        return v - 1;
    uint64_t found = 0;
    const pk_elf_symbol *f = pk_elf_func_at(r->elf, caller);
    const pk_arch *arch = pk_elf_arch(r->elf);
    const uint8_t *b = f && f->addr == caller && f->size ? pk_elf_vaddr_bytes(r->elf, f->addr, f->size) : NULL;
    for (uint64_t off = 0; b && arch && off < f->size;) {
        pk_insn in;
        size_t len = pk_arch_decode(arch, b + off, (size_t)(f->size - off), f->addr + off, &in);
        if (!len)
            len = 1;
        if (in.cls == PK_INSN_CALL && in.target == callee) {
            if (found) {
                found = 0;
                break;
            }
            found = f->addr + off;
        }
        off += len;
    }
    pk_pairmap_add(&r->repairs, caller, callee, found + 1); /* (a failed cache add only costs a decode) */
    return found;
}

static int room(pk_ipraw *r, size_t n, pk_err *err)
{
    if (n <= r->scratch_cap)
        return 0;
    size_t cap = n < 64 ? 64 : n * 2;
    uint64_t *s = realloc(r->scratch, cap * sizeof *s);
    if (!s)
        return pk_err_set(err, "out of memory");
    r->scratch = s;
    r->scratch_cap = cap;
    return 0;
}

/* Interns the context of `entry` called through `inner_sites` (innermost
 * first, n of them); out uses r->scratch past `used` words. */
static int intern_ctx(pk_ipraw *r, const uint64_t *inner_sites, size_t n, uint64_t entry, uint32_t *ctx,
                      pk_err *err)
{
    size_t keep = r->max_depth < 0 ? n : n < (size_t)r->max_depth ? n : (size_t)r->max_depth;
    uint64_t buf[65];
    uint64_t *k = buf;
    bool heap = false;
    if (n + 1 > sizeof buf / sizeof *buf) {
        if (!(k = malloc((n + 1) * sizeof *k)))
            return pk_err_set(err, "out of memory");
        heap = true;
    }
    /* outermost first */
    for (size_t i = 0; i < n; i++)
        k[i] = inner_sites[n - 1 - i];
    size_t c = n;
    if (keep) {
        c = pk_compress_recursion(k, n, -1);
        r->stats.recursion_compressed += n - c;
    }
    uint64_t *start = k;
    if (c > keep) {
        if (keep)
            r->stats.depth_trimmed += c - keep;
        start = k + (c - keep);
        c = keep;
    }
    start[c] = entry;
    int rc = pk_csraw_intern(&r->ctxs, start, (uint32_t)c + 1, ctx, err);
    if (heap)
        free(k);
    return rc;
}

static int add_chain(pk_ipraw *r, const uint64_t *frames, size_t n, uint64_t weight, bool unwound, pk_err *err);

int pk_ipraw_add(pk_ipraw *r, const uint64_t *frames, size_t n, uint64_t weight, pk_err *err)
{
    return add_chain(r, frames, n, weight, false, err);
}

int pk_ipraw_add_unwound(pk_ipraw *r, const uint64_t *frames, size_t n, uint64_t weight, pk_err *err)
{
    return add_chain(r, frames, n, weight, true, err);
}

static int add_chain(pk_ipraw *r, const uint64_t *frames, size_t n, uint64_t weight, bool unwound, pk_err *err)
{
    r->stats.samples += weight;
    if (!n) {
        r->stats.no_user_frames += weight;
        return 0;
    }
    uint64_t leaf = frames[0];
    if (leaf == PK_AGG_EXTERNAL || !fits(r, leaf)) {
        r->stats.leaf_outside += weight;
        return 0;
    }
    uint64_t entry = func_entry(r, leaf);
    if (!entry) {
        r->stats.leaf_no_func += weight;
        return 0;
    }
    if (room(r, n + 1, err))
        return -1;
    /* the stack key: the leaf entry, then the call sites innermost first */
    uint64_t *key = r->scratch;
    size_t m = 0;
    key[m++] = entry;
    uint64_t repaired = 0;
    /* a chain that ends at a leaf whose function keeps no frame pointer:
     * the unwinder found no frame to follow (its caller is unknown) */
    if (!unwound && n == 1 && r->elf && frame_ready(r, entry) == entry)
        r->stats.no_frame_pointer += weight;
    if (!unwound && n > 1 && caller_skipped(r, leaf, entry, frames[1])) {
        uint64_t t = direct_target(r, frames[1]);
        repaired = t && fits(r, t) ? unique_call_site(r, t, entry) : 0;
    }
    if (repaired) {
        /* the skipped frame put back: its only call to the leaf's function */
        r->stats.frames_repaired += weight;
        if (frame_ready(r, entry) == entry)
            r->stats.no_frame_pointer += weight;
        key[m++] = repaired;
    } else if (!unwound && n > 1 && caller_skipped(r, leaf, entry, frames[1])) {
        r->stats.stack_cut_frame += weight;
        if (frame_ready(r, entry) == entry)
            r->stats.no_frame_pointer += weight;
        r->stats.used += weight;
        /* contexts wanted: placed at the end, in the function's contexts */
        if (r->max_depth != 0) {
            if (pk_pairmap_add(&r->unplaced, entry - r->ctxs.base, leaf - r->ctxs.base, weight))
                return pk_err_set(err, "out of memory");
            return 0;
        }
        r->stats.used -= weight;
        n = 1;
    }
    for (size_t j = 1; j < n; j++) {
        uint64_t ret = frames[j];
        if (ret == PK_AGG_EXTERNAL || !fits(r, ret)) {
            r->stats.stack_cut_external += weight;
            break;
        }
        uint64_t site = call_before(r, ret);
        if (!site && r->allow_minus_one && (site = call_before(r, ret + 1)))
            r->stats.frames_minus_one += weight;
        if (!site) {
            r->stats.stack_cut_not_call += weight;
            if (!pk_u64map_slot(&r->bad_returns, ret))
                return pk_err_set(err, "out of memory");
            break;
        }
        key[m++] = site;
    }
    uint32_t sid;
    size_t before = pk_csraw_num_ctxs(&r->stacks);
    if (pk_csraw_intern(&r->stacks, key, (uint32_t)m, &sid, err))
        return -1;
    pk_ip_stack *st;
    if (pk_csraw_num_ctxs(&r->stacks) > before) {
        if (!(st = pk_vec_push(&r->stack_info)))
            return pk_err_set(err, "out of memory");
        r->stats.distinct_stacks++;
        uint32_t ctx;
        /* (intern_ctx does not touch scratch: key stays valid) */
        if (intern_ctx(r, key + 1, m - 1, entry, &ctx, err))
            return -1;
        st = &PK_VEC_AT(&r->stack_info, pk_ip_stack, sid);
        st->leaf_ctx = ctx;
    }
    st = &PK_VEC_AT(&r->stack_info, pk_ip_stack, sid);
    st->weight += weight;
    r->stats.used += weight;
    uint64_t k = (uint64_t)st->leaf_ctx << 32 | (leaf - r->ctxs.base);
    if (pk_pairmap_add(&r->hits, k, 0, weight))
        return pk_err_set(err, "out of memory");
    return 0;
}

/* The hits of r->unplaced into the contexts of their functions (see
 * pk_ipraw_finish), by largest remainder so that no sample is lost. */
static int place_unplaced(pk_ipraw *r, pk_err *err)
{
    if (!r->unplaced.len)
        return 0;
    size_t nctx = pk_csraw_num_ctxs(&r->ctxs);
    uint64_t *ctx_hits = calloc(nctx + 1, sizeof *ctx_hits);
    pk_u64map first = {0}; /* leaf entry offset → first context id + 1 in the chain */
    uint32_t *next = calloc(nctx + 1, sizeof *next);
    size_t nu = 0;
    pk_pair_count *u = NULL;
    int rc = 0;
    if (!ctx_hits || !next || pk_u64map_init(&first, 64)) {
        rc = pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < r->hits.cap; i++)
        if (r->hits.e[i].n)
            ctx_hits[r->hits.e[i].a >> 32] += r->hits.e[i].n;
    for (uint32_t c = 0; c < nctx; c++) {
        uint32_t len;
        const uint64_t *f = pk_csraw_ctx(&r->ctxs, c, &len);
        uint64_t *v = pk_u64map_slot(&first, f[len - 1] - r->ctxs.base);
        if (!v) {
            rc = pk_err_set(err, "out of memory");
            goto out;
        }
        next[c] = (uint32_t)*v; /* id + 1 of the previous head, 0: end */
        *v = (uint64_t)c + 1;
    }
    if (!(u = pk_pairmap_sorted(&r->unplaced, &nu))) {
        rc = pk_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nu && !rc; i++) {
        uint64_t entry_off = u[i].a, addr_off = u[i].b, w = u[i].n, total = 0;
        uint64_t *head = pk_u64map_get(&first, entry_off);
        for (uint32_t c = head ? (uint32_t)*head : 0; c; c = next[c - 1])
            total += ctx_hits[c - 1];
        if (!total) { /* no context of this function has samples: its own */
            uint32_t ctx;
            uint64_t e = r->ctxs.base + entry_off;
            if (intern_ctx(r, NULL, 0, e, &ctx, err))
                rc = -1;
            else if (pk_pairmap_add(&r->hits, (uint64_t)ctx << 32 | addr_off, 0, w))
                rc = pk_err_set(err, "out of memory");
            continue;
        }
        /* floor shares; the rounding remainder (fewer samples than
         * contexts) to the context with the most hits (ties: lowest id) */
        uint64_t given = 0;
        uint32_t best = 0;
        for (uint32_t c = (uint32_t)*head; c && !rc; c = next[c - 1]) {
            uint64_t share = (uint64_t)((unsigned __int128)w * ctx_hits[c - 1] / total);
            given += share;
            if (!best || ctx_hits[c - 1] > ctx_hits[best - 1] || (ctx_hits[c - 1] == ctx_hits[best - 1] && c < best))
                best = c;
            if (share && pk_pairmap_add(&r->hits, (uint64_t)(c - 1) << 32 | addr_off, 0, share))
                rc = pk_err_set(err, "out of memory");
        }
        if (!rc && w > given && pk_pairmap_add(&r->hits, (uint64_t)(best - 1) << 32 | addr_off, 0, w - given))
            rc = pk_err_set(err, "out of memory");
    }
out:
    free(u);
    free(ctx_hits);
    free(next);
    pk_u64map_free(&first);
    return rc;
}

int pk_ipraw_record_calls(pk_ipraw *r, pk_err *err)
{
    if (r->calls_recorded)
        return 0;
    r->calls_recorded = true;
    size_t ns = pk_csraw_num_ctxs(&r->stacks);
    for (uint32_t sid = 0; sid < ns; sid++) {
        uint32_t m;
        const uint64_t *key = pk_csraw_ctx(&r->stacks, sid, &m);
        uint64_t w = PK_VEC_AT(&r->stack_info, pk_ip_stack, sid).weight;
        /* frame j (1-based) called through key[j]: the callee is the
         * function below it, the caller the one holding the site */
        for (uint32_t j = 1; j < m; j++) {
            uint64_t site = key[j];
            uint64_t callee = j == 1 ? key[0] : func_entry(r, key[j - 1]);
            uint64_t caller = func_entry(r, site);
            if (!callee || !caller)
                continue;
            uint32_t pctx;
            /* key may move if the store grows: copy the sites above first */
            if (room(r, m, err))
                return -1;
            uint32_t above = m - 1 - j;
            memcpy(r->scratch, key + j + 1, above * sizeof *key);
            if (intern_ctx(r, r->scratch, above, caller, &pctx, err))
                return -1;
            key = pk_csraw_ctx(&r->stacks, sid, &m);
            if (pk_pairmap_add(&r->calls, (uint64_t)pctx << 32 | (site - r->ctxs.base), callee - r->ctxs.base, w))
                return pk_err_set(err, "out of memory");
        }
    }
    return 0;
}

/* Renumbers the contexts in the order of their address lists; hits and
 * calls follow. */
static int canonicalize(pk_ipraw *r, pk_err *err)
{
    size_t n = pk_csraw_num_ctxs(&r->ctxs);
    uint32_t *newid = malloc((n + 1) * sizeof *newid);
    pk_csraw out;
    pk_pairmap maps[2] = {{0}};
    if (!newid)
        return pk_err_set(err, "out of memory");
    int rc = -1;
    if (pk_csraw_init(&out, r->ctxs.base, err)) {
        free(newid);
        return -1;
    }
    if (pk_csraw_intern_sorted(&r->ctxs, &out, newid, err))
        goto out;
    for (int w = 0; w < 2; w++) {
        const pk_pairmap *from = w ? &r->calls : &r->hits;
        if (pk_pairmap_init(&maps[w], 16) || pk_pairmap_reserve(&maps[w], from->len)) {
            pk_err_set(err, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < from->cap; i++) {
            const pk_pair_count *e = &from->e[i];
            if (e->n && pk_pairmap_add(&maps[w], (uint64_t)newid[e->a >> 32] << 32 | (uint32_t)e->a, e->b, e->n)) {
                pk_err_set(err, "out of memory");
                goto out;
            }
        }
    }
    pk_pairmap_free(&out.ranges);
    pk_pairmap_free(&out.branches);
    pk_csraw_free(&r->ctxs);
    r->ctxs = out;
    pk_pairmap_free(&r->hits);
    pk_pairmap_free(&r->calls);
    r->hits = maps[0];
    r->calls = maps[1];
    free(newid);
    return 0;
out:
    pk_csraw_free(&out);
    pk_pairmap_free(&maps[0]);
    pk_pairmap_free(&maps[1]);
    free(newid);
    return rc;
}

int pk_ipraw_finish(pk_ipraw *r, pk_err *err)
{
    /* The values do not depend on the order of the steps (sharing out
     * looks at hits only; the call observations add none); the numbering
     * would: it is made canonical before sharing out (ties go to the lowest
     * id) and after (a function's own context may be new). */
    return pk_ipraw_record_calls(r, err) || canonicalize(r, err) || place_unplaced(r, err) || canonicalize(r, err)
               ? -1
               : 0;
}

void pk_ip_stats_add(pk_ip_stats *into, const pk_ip_stats *from)
{
    _Static_assert(sizeof(pk_ip_stats) % sizeof(uint64_t) == 0, "counters only");
    uint64_t *d = (uint64_t *)into;
    const uint64_t *s = (const uint64_t *)from;
    for (size_t i = 0; i < sizeof *into / sizeof(uint64_t); i++)
        d[i] += s[i];
}

int pk_ipraw_flatten(const pk_ipraw *deep, pk_ipraw *flat, pk_err *err)
{
    if (flat->max_depth != 0)
        return pk_err_set(err, "flattening IP observations into a profile with contexts");
    /* deep's contexts with its observations in the maps a recorded profile
     * keeps them in (read only: nothing of deep is freed or changed) */
    pk_csraw view = deep->ctxs;
    view.ranges = deep->hits;
    view.branches = deep->calls;
    pk_pairmap none = {0};
    if (pk_ipraw_add_recorded(flat, &view, &none, &deep->stats, err))
        return -1;
    flat->calls_recorded = true; /* the observations are in calls already */
    return pk_ipraw_finish(flat, err);
}

int pk_ipraw_add_recorded(pk_ipraw *r, const pk_csraw *obs, const pk_pairmap *unplaced, const pk_ip_stats *stats,
                          pk_err *err)
{
    size_t n = pk_csraw_num_ctxs(obs);
    uint32_t *id = malloc((n + 1) * sizeof *id);
    if (!id)
        return pk_err_set(err, "out of memory");
    int rc = -1;
    for (size_t c = 0; c < n; c++) {
        uint32_t len;
        const uint64_t *f = pk_csraw_ctx(obs, (uint32_t)c, &len);
        uint32_t sites = len ? len - 1 : 0;
        uint32_t keep = r->max_depth < 0 || sites < (uint32_t)r->max_depth ? sites : (uint32_t)r->max_depth;
        if (!len) { /* (not written by a recorder: every IP context has its leaf) */
            pk_err_set(err, "an IP observation without a leaf function");
            goto out;
        }
        if (keep < sites)
            r->stats.depth_trimmed += sites - keep;
        if (pk_csraw_intern(&r->ctxs, f + (sites - keep), keep + 1, &id[c], err))
            goto out;
    }
    for (int w = 0; w < 2; w++) {
        const pk_pairmap *from = w ? &obs->branches : &obs->ranges;
        pk_pairmap *to = w ? &r->calls : &r->hits;
        for (size_t i = 0; i < from->cap; i++) {
            const pk_pair_count *e = &from->e[i];
            if (e->n && pk_pairmap_add(to, (uint64_t)id[e->a >> 32] << 32 | (uint32_t)e->a, e->b, e->n)) {
                pk_err_set(err, "out of memory");
                goto out;
            }
        }
    }
    for (size_t i = 0; i < unplaced->cap; i++) {
        const pk_pair_count *e = &unplaced->e[i];
        if (!e->n)
            continue;
        if (r->max_depth != 0) {
            if (pk_pairmap_add(&r->unplaced, e->a, e->b, e->n)) {
                pk_err_set(err, "out of memory");
                goto out;
            }
            continue;
        }
        /* no contexts wanted: the leaf function's own, as pk_ipraw_add does */
        uint64_t entry = r->ctxs.base + e->a;
        uint32_t ctx;
        if (pk_csraw_intern(&r->ctxs, &entry, 1, &ctx, err))
            goto out;
        if (pk_pairmap_add(&r->hits, (uint64_t)ctx << 32 | (uint32_t)e->b, 0, e->n)) {
            pk_err_set(err, "out of memory");
            goto out;
        }
    }
    pk_ip_stats_add(&r->stats, stats);
    rc = 0;
out:
    free(id);
    return rc;
}

int pk_ipraw_child(pk_ipraw *r, uint32_t parent, uint64_t site, uint64_t callee, uint32_t *ctx, pk_err *err)
{
    uint32_t n;
    const uint64_t *f = pk_csraw_ctx(&r->ctxs, parent, &n);
    /* the parent's sites (outermost first, without its leaf entry), then
     * `site`: innermost first for intern_ctx */
    if (room(r, n + 1, err))
        return -1;
    uint64_t *inner = r->scratch;
    inner[0] = site;
    for (uint32_t i = 0; i + 1 < n; i++)
        inner[1 + i] = f[n - 2 - i];
    return intern_ctx(r, inner, n, callee, ctx, err);
}

int pk_ip_frame_pointer_warning(const pk_ip_stats *s, char *buf, size_t cap)
{
    if (cap)
        buf[0] = 0;
    /* prologues and rets alone cost a percent or two even with frame pointers */
    if (!s->used || s->no_frame_pointer * 100 <= s->used * 3)
        return 0;
    /* Counted by the leaf's function, not by the chains actually cut: in a
     * binary built without frame pointers a chain can still look whole
     * (a stale frame pointer that happens to point at a return address). */
    int n = snprintf(buf, cap,
                     "%.1f %% of the samples (%llu of %llu) are in functions that set up no frame pointer: call "
                     "chains through them skip their callers, so contexts and call counts lose them (%llu samples "
                     "with no known caller); record the stacks instead (pgokit record --ip --call-graph dwarf: "
                     "profgen unwinds them with the binary's CFI), rebuild with -fno-omit-frame-pointer "
                     "-mno-omit-leaf-frame-pointer, or record branch stacks (pgokit record --emulate); line-based "
                     "AutoFDO needs the callers only for the targets of calls through pointers (SQLite's from 20 "
                     "runs: 76 %% of LBR's gain without them, 91 %% with)",
                     100.0 * (double)s->no_frame_pointer / (double)s->used, (unsigned long long)s->no_frame_pointer,
                     (unsigned long long)s->used, (unsigned long long)s->stack_cut_frame);
    return pk_snprintf_len(n, cap);
}

int pk_ip_time_weight_note(const pk_ip_stats *s, char *buf, size_t cap)
{
    if (cap)
        buf[0] = 0;
    if (!s->samples || s->time_weighted * 2 <= s->samples)
        return 0;
    /* Measured on SQLite, Lua and bzip2 at the same density: probe-only
     * profiles from instruction samples saved 0.4-1.0 points more than from
     * cpu-clock, and call-site counts were a median 1.26x off the exact ones
     * against 1.72x (bench/results/ip-quality-2026-11-28.md). */
    int n = snprintf(buf, cap,
                     "%.0f %% of the samples (%llu of %llu) come from an event that fires on time (cpu-clock, "
                     "task-clock or cycles): they land on code in proportion to the time it takes, not to how often "
                     "it runs (a load that misses the cache collects the samples of many instructions), and the "
                     "counts inferred from them are off where costs differ; where the PMU counts instructions, "
                     "sample those (pgokit record --ip does: instructions:u at a fixed period)",
                     100.0 * (double)s->time_weighted / (double)s->samples, (unsigned long long)s->time_weighted,
                     (unsigned long long)s->samples);
    return pk_snprintf_len(n, cap);
}

int pk_ip_cfi_warning(const pk_ip_stats *s, char *buf, size_t cap)
{
    if (cap)
        buf[0] = 0;
    /* A chain cut at the end of a copy is what a short copy gives: pgokit
     * record takes 1 KiB ones by itself, which no stack of the scoreboard's
     * programs fits and which 40 % of bzip2's samples leave before their
     * direct caller (frames of several KiB), and yet their profiles
     * equalled those of whole 8 KiB copies; where a lost caller matters (a
     * call through a pointer), pk_ip_icall_warning says so. Code without an
     * FDE is a build choice the user can undo. */
    if (!s->stacks_unwound || s->stacks_unwound_no_fde * 10 <= s->stacks_unwound)
        return 0;
    int n = snprintf(buf, cap,
                     "%.1f %% of the stack copies (%llu of %llu) stopped at code no FDE of the program's .eh_frame "
                     "covers (built with -fno-asynchronous-unwind-tables, or assembly without CFI directives): the "
                     "callers above are lost",
                     100.0 * (double)s->stacks_unwound_no_fde / (double)s->stacks_unwound,
                     (unsigned long long)s->stacks_unwound_no_fde, (unsigned long long)s->stacks_unwound);
    return pk_snprintf_len(n, cap);
}
