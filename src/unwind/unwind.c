/* unwind.c — the virtual unwinder (see unwind.h) and the context store. */
#include "unwind/unwind.h"
#include "binary/binary.h"

#include <stdlib.h>

/* ---- the CS raw profile ---- */

int pk_csraw_init(pk_csraw *r, uint64_t base, pk_err *err)
{
    memset(r, 0, sizeof *r);
    r->base = base;
    pk_vec_init(&r->frames, sizeof(uint64_t));
    pk_vec_init(&r->ctxs, sizeof(pk_cs_ctx));
    if (pk_u64map_init(&r->ctx_by_hash, 1024) || pk_pairmap_init(&r->ranges, 1 << 12) ||
        pk_pairmap_init(&r->branches, 1 << 12)) {
        pk_csraw_free(r);
        return pk_err_set(err, "out of memory");
    }
    return 0;
}

void pk_csraw_free(pk_csraw *r)
{
    pk_vec_free(&r->frames);
    pk_vec_free(&r->ctxs);
    pk_u64map_free(&r->ctx_by_hash);
    pk_pairmap_free(&r->ranges);
    pk_pairmap_free(&r->branches);
}

int pk_csraw_intern(pk_csraw *r, const uint64_t *sites, uint32_t n, uint32_t *ctx, pk_err *err)
{
    uint64_t h = pk_hash_bytes(sites, n * sizeof *sites) ^ n;
    /* Collisions of the 64-bit hash are resolved by probing h+1, h+2, ...:
     * each probe either finds the same list or an empty slot. */
    for (;; h++) {
        uint64_t *slot = pk_u64map_slot(&r->ctx_by_hash, h);
        if (!slot)
            return pk_err_set(err, "out of memory");
        if (*slot) {
            uint32_t id = (uint32_t)(*slot - 1), len;
            const uint64_t *have = pk_csraw_ctx(r, id, &len);
            if (len == n && (n == 0 || !memcmp(have, sites, n * sizeof *sites))) {
                *ctx = id;
                return 0;
            }
            continue;
        }
        if (r->ctxs.len >= UINT32_MAX - 1 || pk_vec_reserve(&r->frames, r->frames.len + n))
            return pk_err_set(err, "out of memory (contexts)");
        pk_cs_ctx *c = pk_vec_push(&r->ctxs);
        if (!c)
            return pk_err_set(err, "out of memory");
        c->first = (uint32_t)r->frames.len;
        c->len = n;
        if (n)
            memcpy((uint64_t *)r->frames.data + r->frames.len, sites, n * sizeof *sites);
        r->frames.len += n;
        *slot = r->ctxs.len; /* id + 1 */
        *ctx = (uint32_t)(r->ctxs.len - 1);
        return 0;
    }
}

void pk_csraw_key(const pk_csraw *r, const pk_pair_count *e, uint32_t *ctx, uint64_t *a, uint64_t *b)
{
    *ctx = (uint32_t)(e->a >> 32);
    uint32_t oa = (uint32_t)e->a;
    *a = oa == PK_CS_EXTERNAL_OFF ? PK_AGG_EXTERNAL : r->base + oa;
    *b = r->base + e->b;
}

/* ---- the unwinder ---- */

struct pk_unwinder {
    pk_unwind_code code;
    pk_unwind_opts o;
    pk_csraw *out;
    pk_unwind_stats st;
    uint64_t *stack;      /* call sites, outermost first */
    size_t depth, cap;
    uint64_t *key;        /* compressed/trimmed copy of the stack */
    uint32_t cur_ctx;
    uint64_t cur_leaf;    /* leaf entry of cur_ctx */
    bool ctx_dirty;
    /* direct-mapped caches of the code queries: LBR addresses repeat a lot */
    struct { uint64_t addr; int cls; } cls_cache[4096];
    struct { uint64_t addr, entry; } entry_cache[4096];
    /* translation scratch for pk_unwind_perf_sample */
    uint64_t *tstack;
    pk_branch *tlbr;
    size_t tcap;
};

pk_unwinder *pk_unwinder_new(const pk_unwind_code *code, const pk_unwind_opts *opts,
                             pk_csraw *out, pk_err *err)
{
    pk_unwinder *u = calloc(1, sizeof *u);
    if (!u) {
        pk_err_set(err, "out of memory");
        return NULL;
    }
    u->code = *code;
    if (opts)
        u->o = *opts;
    else
        u->o.max_depth = u->o.compress_recursion = -1;
    if (!u->o.max_range_len)
        u->o.max_range_len = 1 << 20;
    u->out = out;
    u->ctx_dirty = true;
    return u;
}

void pk_unwinder_free(pk_unwinder *u)
{
    if (!u)
        return;
    free(u->stack);
    free(u->key);
    free(u->tstack);
    free(u->tlbr);
    free(u);
}

const pk_unwind_stats *pk_unwinder_stats(const pk_unwinder *u) { return &u->st; }

static int ensure_stack(pk_unwinder *u, size_t n, pk_err *err)
{
    if (n <= u->cap)
        return 0;
    size_t cap = u->cap ? u->cap * 2 : 64;
    while (cap < n)
        cap *= 2;
    uint64_t *s = realloc(u->stack, cap * sizeof *s), *k = realloc(u->key, (cap + 1) * sizeof *k);
    if (s)
        u->stack = s;
    if (k)
        u->key = k;
    if (!s || !k)
        return pk_err_set(err, "out of memory");
    u->cap = cap;
    return 0;
}

/* Removes adjacent repetitions of windows of 1..max_len sites in place
 * (a → b → a → b → c becomes a → b → c): recursion would otherwise make
 * the number of contexts grow with the recursion depth. */
static size_t compress_recursion(uint64_t *s, size_t n, int max_len)
{
    size_t limit = max_len < 0 ? n / 2 : (size_t)max_len;
    for (size_t k = 1; k <= limit && k <= n / 2; k++) {
        size_t out = 0;
        for (size_t i = 0; i < n;) {
            if (out >= k && i + k <= n && !memcmp(s + out - k, s + i, k * sizeof *s)) {
                i += k;
                continue;
            }
            s[out++] = s[i++];
        }
        n = out;
    }
    return n;
}

static int insn_class(pk_unwinder *u, uint64_t addr)
{
    size_t i = pk_hash64(addr) & 4095;
    if (u->cls_cache[i].addr != addr + 1) {
        u->cls_cache[i].addr = addr + 1; /* +1: address 0 must not hit the empty slot */
        u->cls_cache[i].cls = u->code.insn_class(u->code.ctx, addr);
    }
    return u->cls_cache[i].cls;
}

static uint64_t func_entry(pk_unwinder *u, uint64_t addr)
{
    if (!u->code.func_entry)
        return 0;
    size_t i = pk_hash64(addr) & 4095;
    if (u->entry_cache[i].addr != addr + 1) {
        u->entry_cache[i].addr = addr + 1;
        u->entry_cache[i].entry = u->code.func_entry(u->code.ctx, addr);
    }
    return u->entry_cache[i].entry;
}

/* The context id of the current stack with the function containing
 * `addr` as the leaf. */
static int current_ctx(pk_unwinder *u, uint64_t addr, uint32_t *ctx, pk_err *err)
{
    uint64_t leaf = func_entry(u, addr);
    if (!u->ctx_dirty && leaf == u->cur_leaf) {
        *ctx = u->cur_ctx;
        return 0;
    }
    size_t n = u->depth;
    if (n)
        memcpy(u->key, u->stack, n * sizeof *u->key);
    if (u->o.compress_recursion != 0) {
        size_t c = compress_recursion(u->key, n, u->o.compress_recursion);
        u->st.recursion_compressed += n - c;
        n = c;
    }
    uint64_t *k = u->key;
    if (u->o.max_depth >= 0 && n > (size_t)u->o.max_depth) {
        u->st.depth_trimmed += n - (size_t)u->o.max_depth;
        k += n - (size_t)u->o.max_depth;
        n = (size_t)u->o.max_depth;
    }
    k[n] = leaf; /* key has room: it is sized like the stack, plus one */
    if (pk_csraw_intern(u->out, k, (uint32_t)n + 1, &u->cur_ctx, err))
        return -1;
    u->cur_leaf = leaf;
    u->ctx_dirty = false;
    *ctx = u->cur_ctx;
    return 0;
}

static bool fits(const pk_csraw *r, uint64_t a)
{
    return a >= r->base && a - r->base < PK_CS_EXTERNAL_OFF;
}

static int record_range(pk_unwinder *u, uint64_t begin, uint64_t end, uint64_t w, pk_err *err)
{
    if (begin == PK_AGG_EXTERNAL && end == PK_AGG_EXTERNAL)
        return 0; /* code of another object: not ours to count */
    if (begin == PK_AGG_EXTERNAL || end == PK_AGG_EXTERNAL || begin > end ||
        end - begin >= u->o.max_range_len || !fits(u->out, begin) || !fits(u->out, end)) {
        u->st.ranges_dropped++;
        return 0;
    }
    uint32_t ctx;
    if (current_ctx(u, begin, &ctx, err))
        return -1;
    uint64_t base = u->out->base;
    if (pk_pairmap_add(&u->out->ranges, (uint64_t)ctx << 32 | (begin - base), end - base, w))
        return pk_err_set(err, "out of memory");
    u->st.ranges++;
    return 0;
}

static int record_branch(pk_unwinder *u, uint64_t from, uint64_t to, uint64_t w, pk_err *err)
{
    if (!fits(u->out, to) || (from != PK_AGG_EXTERNAL && !fits(u->out, from)))
        return 0;
    uint32_t ctx;
    if (current_ctx(u, from == PK_AGG_EXTERNAL ? to : from, &ctx, err))
        return -1;
    uint64_t base = u->out->base;
    uint64_t src = from == PK_AGG_EXTERNAL ? PK_CS_EXTERNAL_OFF : from - base;
    if (pk_pairmap_add(&u->out->branches, (uint64_t)ctx << 32 | src, to - base, w))
        return pk_err_set(err, "out of memory");
    u->st.branches++;
    return 0;
}

int pk_unwind_sample(pk_unwinder *u, const uint64_t *stack, size_t nstack,
                     const pk_branch *lbr, size_t nlbr, uint64_t weight, pk_err *err)
{
    u->st.samples++;
    if (!nlbr) {
        u->st.samples_no_lbr++;
        return 0;
    }
    if (!nstack) {
        u->st.samples_no_stack++;
        return 0;
    }
    /* The callers' call sites from the return addresses, innermost first,
     * up to the first frame outside the binary or not after a call. */
    if (ensure_stack(u, nstack + nlbr + 1, err))
        return -1;
    size_t n = 0;
    for (size_t i = 1; i < nstack; i++) {
        uint64_t site;
        if (stack[i] == PK_AGG_EXTERNAL) {
            u->st.stack_truncated_external++;
            break;
        }
        if (u->code.call_before(u->code.ctx, stack[i], &site) != 0) {
            u->st.stack_truncated_not_call++;
            break;
        }
        u->key[n++] = site;
    }
    for (size_t i = 0; i < n; i++) /* outermost first */
        u->stack[i] = u->key[n - 1 - i];
    u->depth = n;
    u->ctx_dirty = true;

    uint64_t ip = 0;
    for (size_t i = 0; i < nlbr; i++) {
        uint64_t from = pk_ld64(&lbr[i].from), to = pk_ld64(&lbr[i].to);
        if (i > 0 && record_range(u, to, ip, weight, err))
            return -1;
        /* Code outside the binary's functions (other objects, PLT stubs)
         * is walked through, not into: its ranges are dropped, and the
         * calls and returns that enter and leave it keep the stack right. */
        int cls = from == PK_AGG_EXTERNAL ? -1 : insn_class(u, from);
        uint64_t site;
        switch (cls) {
        case PK_INSN_CALL:
        case PK_INSN_ICALL:
            /* Back across a call: from the callee's entry to its caller. */
            if (u->depth > 0 && u->stack[u->depth - 1] == from) {
                u->depth--;
                u->ctx_dirty = true;
            } else if (u->depth > 0) {
                u->st.call_mismatch++; /* a frame missing from the stack: stay */
            }
            break;
        case PK_INSN_RET:
            /* Back across a return: from the return site into the callee. */
            if (to == PK_AGG_EXTERNAL) {
                /* returning to an outside caller (a callback): the frames
                 * above are not ours, the callee becomes the root */
                if (u->depth) {
                    u->depth = 0;
                    u->ctx_dirty = true;
                }
                break;
            }
            if (u->code.call_before(u->code.ctx, to, &site) != 0) {
                u->st.return_not_after_call++;
                u->depth = 0;
                u->ctx_dirty = true;
                break;
            }
            if (ensure_stack(u, u->depth + 1, err))
                return -1;
            u->stack[u->depth++] = site;
            u->ctx_dirty = true;
            break;
        case -1:
            /* From outside: a return from an outside callee lands right
             * after one of our calls (push it: the call entering that
             * callee, older in the LBR, pops it again); anything else (a
             * callback entry, a PLT jump) leaves the stack as it is. */
            u->st.outside_entries++;
            if (to != PK_AGG_EXTERNAL && u->code.call_before(u->code.ctx, to, &site) == 0) {
                if (ensure_stack(u, u->depth + 1, err))
                    return -1;
                u->stack[u->depth++] = site;
                u->ctx_dirty = true;
            }
            break;
        default: /* jumps stay in the frame (tail calls too) */
            break;
        }
        if (record_branch(u, from, to, weight, err))
            return -1;
        ip = from;
    }
    u->st.samples_unwound++;
    return 0;
}

int pk_unwind_perf_sample(pk_unwinder *u, pk_agg *agg, const pk_sample *s, pk_err *err)
{
    size_t need = s->callchain_nr + s->branch_nr + 1;
    if (need > u->tcap) {
        uint64_t *ts = realloc(u->tstack, need * sizeof *ts);
        if (ts)
            u->tstack = ts;
        pk_branch *tl = realloc(u->tlbr, need * sizeof *tl);
        if (tl)
            u->tlbr = tl;
        if (!ts || !tl)
            return pk_err_set(err, "out of memory");
        u->tcap = need;
    }
    /* User frames only: the entries after PERF_CONTEXT_USER (or all of them
     * when there is no marker). */
    size_t ns = 0;
    bool user = true;
    const uint8_t *cc = (const uint8_t *)s->callchain;
    for (uint64_t i = 0; i < s->callchain_nr; i++) {
        uint64_t a = pk_ld64(cc + 8 * i);
        if (a >= PK_CONTEXT_MAX) {
            user = a == PK_CONTEXT_USER;
            continue;
        }
        if (user)
            u->tstack[ns++] = pk_agg_translate(agg, s->pid, a);
    }
    size_t nl = 0;
    const uint8_t *b = (const uint8_t *)s->branches;
    for (uint64_t i = 0; i < s->branch_nr; i++, b += sizeof(pk_branch)) {
        uint64_t f = pk_ld64(b), t = pk_ld64(b + 8);
        if (!f && !t)
            break; /* unused LBR slot */
        u->tlbr[nl].from = pk_agg_translate(agg, s->pid, f);
        u->tlbr[nl].to = pk_agg_translate(agg, s->pid, t);
        u->tlbr[nl].flags = 0;
        nl++;
    }
    return pk_unwind_sample(u, u->tstack, ns, u->tlbr, nl, 1, err);
}

/* ---- pk_unwind_code over a pk_binary ---- */

static int bin_insn_class(void *ctx, uint64_t vaddr)
{
    pk_err err;
    const pk_insn *in = pk_binary_insn_at(ctx, vaddr, &err);
    return in ? in->cls : -1;
}

static int bin_call_before(void *ctx, uint64_t vaddr, uint64_t *call_addr)
{
    pk_binary *bin = ctx;
    const pk_elf_symbol *f = pk_elf_func_at(pk_binary_elf(bin), vaddr - 1);
    if (!f)
        return -1;
    const pk_insn *insns;
    size_t n;
    pk_err err;
    if (pk_binary_func_insns(bin, f, &insns, &n, &err))
        return -1;
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the last instruction starting before vaddr */
        size_t mid = lo + (hi - lo) / 2;
        if (insns[mid].addr < vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const pk_insn *in = &insns[lo - 1];
    if (in->addr + in->len != vaddr || (in->cls != PK_INSN_CALL && in->cls != PK_INSN_ICALL))
        return -1;
    *call_addr = in->addr;
    return 0;
}

static uint64_t bin_func_entry(void *ctx, uint64_t vaddr)
{
    const pk_elf_symbol *f = pk_elf_func_at(pk_binary_elf(ctx), vaddr);
    return f ? f->addr : 0;
}

void pk_unwind_code_from_binary(pk_unwind_code *code, struct pk_binary *bin)
{
    code->ctx = bin;
    code->insn_class = bin_insn_class;
    code->call_before = bin_call_before;
    code->func_entry = bin_func_entry;
}
