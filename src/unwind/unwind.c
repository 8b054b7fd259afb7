/* unwind.c — the virtual unwinder (see unwind.h); the contexts it writes are kept in csraw.c. */
#include "unwind/unwind_internal.h"
#include "binary/binary.h"
#include "unwind/ip_stack.h"

#include <pthread.h>
#include <stdlib.h>

/* ---- the unwinder ---- */

/* Range or branch counts waiting to be added, a walk's worth at a time
 * (pk_pairmap_add_batch prefetches their slots); consecutive LBR entries
 * often repeat (a loop), so equal neighbours are summed first. */
#define PENDING_MAX 64
typedef struct pending_counts {
    pk_pair_count e[PENDING_MAX];
    size_t n;
} pending_counts;

#define ADDR_CACHE (1 << 14)
enum { HAVE_CLS = 1, HAVE_ENTRY = 2, HAVE_SITE = 4, HAVE_PE = 8, IS_PE = 16 /* the answer, with HAVE_PE */,
       HAVE_UNCOND = 32 };

struct pk_unwinder {
    pk_unwind_code code;
    pk_unwind_opts o;
    pthread_mutex_t *code_lock; /* taken around code queries when two walkers share the code */
    pk_csraw *out;
    pk_unwind_stats st;
    uint64_t *stack;      /* call sites, outermost first */
    uint32_t *node;       /* node[d]: stack-trie node of stack[0..d) */
    size_t depth, cap;
    uint64_t *key;        /* compressed/trimmed copy of the stack */
    /* The stack trie: every distinct stack seen gets a node, so that a call
     * or return crossed in the LBR moves to the next context with one map
     * lookup instead of re-hashing the whole stack. */
    pk_u64map trie;       /* (parent node << 32 | site offset) → node */
    pk_u64map ctx_of;     /* (node << 32 | leaf offset) → ctx id + 1 */
    uint32_t nodes;
    uint32_t cur_ctx;
    uint64_t cur_leaf;    /* leaf entry of cur_ctx */
    uint64_t cur_span;    /* [cur_leaf, cur_leaf + cur_span) all have that leaf (0: none known) */
    bool ctx_dirty;
    pending_counts prange, pbranch;
    /* a direct-mapped cache of the code queries: LBR addresses repeat a lot */
    struct addr_info {
        uint64_t addr;    /* address + 1 (0: empty) */
        uint64_t entry;   /* its function's entry */
        uint64_t site;    /* the call before it (0: none) */
        uint64_t uncond;  /* the first instruction at or after it that never falls through */
        uint32_t span;    /* addresses from entry on sharing the entry (0: unknown) */
        int16_t cls;      /* the class of the instruction at it */
        uint16_t have;    /* HAVE_* fields filled */
    } info[ADDR_CACHE];   /* 40 bytes each: 640 KiB */
    struct pk_unwind_feed *feed; /* unwind_feed.c: perf samples in */
    pk_u64map bad_returns; /* distinct return addresses not after a call (stack_truncated_not_call) */
};

pk_unwinder *pk_unwinder_new(const pk_unwind_code *code, const pk_unwind_opts *opts,
                             pk_csraw *out, pk_err *err)
{
    pk_unwinder *u = pk_zalloc(1, sizeof *u); /* its address cache is read before written */
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
    u->nodes = 1; /* node 0: the empty stack */
    return u;
}

void pk_unwinder_free(pk_unwinder *u)
{
    if (!u)
        return;
    pk_unwind_feed_free(u->feed);
    pk_u64map_free(&u->trie);
    pk_u64map_free(&u->ctx_of);
    pk_u64map_free(&u->bad_returns);
    free(u->stack);
    free(u->node);
    free(u->key);
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
    uint64_t *s = realloc(u->stack, cap * sizeof *s), *k = s ? realloc(u->key, (cap + 1) * sizeof *k) : NULL;
    uint32_t *nd = k ? realloc(u->node, (cap + 1) * sizeof *nd) : NULL;
    if (s)
        u->stack = s;
    if (k)
        u->key = k;
    if (nd)
        u->node = nd;
    if (!s || !k || !nd)
        return pk_err_set(err, "out of memory");
    u->cap = cap;
    return 0;
}

/* Pushes a call site (a vaddr inside the binary, or PK_AGG_EXTERNAL: a
 * caller outside the binary, which cuts the contexts above it) on the
 * stack. */
static int push_site(pk_unwinder *u, uint64_t site, pk_err *err)
{
    if (ensure_stack(u, u->depth + 1, err))
        return -1;
    uint32_t off = site == PK_AGG_EXTERNAL ? PK_CS_EXTERNAL_OFF : (uint32_t)(site - u->out->base);
    uint64_t *v = pk_u64map_slot(&u->trie, (uint64_t)u->node[u->depth] << 32 | off);
    if (!v)
        return pk_err_set(err, "out of memory");
    if (!*v) {
        if (u->nodes == UINT32_MAX)
            return pk_err_set(err, "too many distinct call stacks");
        *v = u->nodes++;
    }
    u->stack[u->depth++] = site;
    u->node[u->depth] = (uint32_t)*v;
    u->ctx_dirty = true;
    return 0;
}

static void set_depth(pk_unwinder *u, size_t depth)
{
    if (depth != u->depth) {
        u->depth = depth;
        u->ctx_dirty = true;
    }
}

/* (a → b → a → b → c becomes a → b → c) */
size_t pk_compress_recursion(uint64_t *s, size_t n, int max_len)
{
    return pk_compress_repeats(s, n, sizeof *s, max_len);
}

static struct addr_info *info_of(pk_unwinder *u, uint64_t addr)
{
    struct addr_info *e = &u->info[(addr * 0x9e3779b97f4a7c15ULL) >> (64 - 14)];
    if (e->addr != addr + 1) {
        e->addr = addr + 1;
        e->have = 0;
    }
    return e;
}

static int insn_class(pk_unwinder *u, uint64_t addr)
{
    struct addr_info *e = info_of(u, addr);
    if (!(e->have & HAVE_CLS)) {
        if (u->code_lock)
            pthread_mutex_lock(u->code_lock);
        e->cls = (int16_t)u->code.insn_class(u->code.ctx, addr);
        if (u->code_lock)
            pthread_mutex_unlock(u->code_lock);
        e->have |= HAVE_CLS;
    }
    return e->cls;
}

static uint64_t func_entry(pk_unwinder *u, uint64_t addr)
{
    if (!u->code.func_entry)
        return 0;
    struct addr_info *e = info_of(u, addr);
    if (!(e->have & HAVE_ENTRY)) {
        uint64_t end = 0;
        e->entry = u->code.func_entry(u->code.ctx, addr, &end);
        e->span = e->entry && end > e->entry && end - e->entry <= UINT32_MAX ? (uint32_t)(end - e->entry) : 0;
        e->have |= HAVE_ENTRY;
    }
    return e->entry;
}

static bool prolog_epilog(pk_unwinder *u, uint64_t addr)
{
    if (!u->code.prolog_epilog)
        return false;
    struct addr_info *e = info_of(u, addr);
    if (!(e->have & HAVE_PE)) {
        if (u->code_lock)
            pthread_mutex_lock(u->code_lock);
        bool r = u->code.prolog_epilog(u->code.ctx, addr);
        if (u->code_lock)
            pthread_mutex_unlock(u->code_lock);
        e->have |= HAVE_PE | (r ? IS_PE : 0);
    }
    return e->have & IS_PE;
}

/* Whether the code from `begin` to `end` (the target of one LBR entry and
 * the source of the next newer one) can have run straight: begin not after
 * end, and no jump, call or return before end. */
static bool ran_straight(pk_unwinder *u, uint64_t begin, uint64_t end)
{
    /* outside code on both ends: it ran there and came back */
    if (begin == PK_AGG_EXTERNAL && end == PK_AGG_EXTERNAL)
        return true;
    /* one end outside the binary: code cannot go from one object to
     * another without a branch, so an entry is missing between the two */
    if (begin == PK_AGG_EXTERNAL || end == PK_AGG_EXTERNAL)
        return false;
    if (begin > end)
        return false;
    if (!u->code.next_uncond)
        return true;
    struct addr_info *e = info_of(u, begin);
    if (!(e->have & HAVE_UNCOND)) {
        if (u->code_lock)
            pthread_mutex_lock(u->code_lock);
        e->uncond = u->code.next_uncond(u->code.ctx, begin);
        if (u->code_lock)
            pthread_mutex_unlock(u->code_lock);
        e->have |= HAVE_UNCOND;
    }
    return e->uncond >= end;
}

/* The call site before return address `ret`, or 0 when there is none. */
static uint64_t call_before(pk_unwinder *u, uint64_t ret)
{
    struct addr_info *e = info_of(u, ret);
    if (!(e->have & HAVE_SITE)) {
        uint64_t site;
        if (u->code_lock)
            pthread_mutex_lock(u->code_lock);
        int r = u->code.call_before(u->code.ctx, ret, &site);
        if (u->code_lock)
            pthread_mutex_unlock(u->code_lock);
        e->site = r == 0 && pk_csraw_fits(u->out, site) ? site : 0;
        e->have |= HAVE_SITE;
    }
    return e->site;
}

/* The context id of the current stack with the function containing
 * `addr` as the leaf. */
static __attribute__((noinline)) int current_ctx_slow(pk_unwinder *u, uint64_t addr, uint32_t *ctx, pk_err *err)
{
    uint64_t leaf = func_entry(u, addr);
    if (!u->ctx_dirty && leaf == u->cur_leaf) {
        *ctx = u->cur_ctx;
        return 0;
    }
    uint32_t leaf_off = leaf && pk_csraw_fits(u->out, leaf) ? (uint32_t)(leaf - u->out->base) : PK_CS_EXTERNAL_OFF;
    uint64_t *v = pk_u64map_slot(&u->ctx_of, (uint64_t)u->node[u->depth] << 32 | leaf_off);
    if (!v)
        return pk_err_set(err, "out of memory");
    if (!*v) {
        /* the context starts above the innermost caller outside the
         * binary: the compiler never sees a call through other code */
        size_t from = u->depth;
        while (from > 0 && u->stack[from - 1] != PK_AGG_EXTERNAL)
            from--;
        size_t n = u->depth - from;
        if (n)
            memcpy(u->key, u->stack + from, n * sizeof *u->key);
        if (u->o.compress_recursion != 0) {
            size_t c = pk_compress_recursion(u->key, n, u->o.compress_recursion);
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
        uint32_t id;
        if (pk_csraw_intern(u->out, k, (uint32_t)n + 1, &id, err))
            return -1;
        *v = (uint64_t)id + 1;
    }
    u->cur_ctx = (uint32_t)(*v - 1);
    u->cur_leaf = leaf;
    u->cur_span = leaf ? info_of(u, addr)->span : 0;
    u->ctx_dirty = false;
    *ctx = u->cur_ctx;
    return 0;
}

/* Most LBR addresses stay in the function of the previous one: that test
 * inline, the rest out of line. */
static inline int current_ctx(pk_unwinder *u, uint64_t addr, uint32_t *ctx, pk_err *err)
{
    if (!u->ctx_dirty && addr - u->cur_leaf < u->cur_span) {
        *ctx = u->cur_ctx;
        return 0;
    }
    return current_ctx_slow(u, addr, ctx, err);
}

static int flush_pending(pk_pairmap *m, pending_counts *p, pk_err *err)
{
    if (p->n && pk_pairmap_add_batch(m, p->e, p->n))
        return pk_err_set(err, "out of memory");
    p->n = 0;
    return 0;
}

static inline int add_pending(pk_pairmap *m, pending_counts *p, uint64_t a, uint64_t b, uint64_t w, pk_err *err)
{
    if (p->n && p->e[p->n - 1].a == a && p->e[p->n - 1].b == b) {
        p->e[p->n - 1].n += w;
        return 0;
    }
    if (p->n == PENDING_MAX && flush_pending(m, p, err))
        return -1;
    p->e[p->n++] = (pk_pair_count){a, b, w};
    return 0;
}

static int record_range(pk_unwinder *u, uint64_t begin, uint64_t end, uint64_t w, pk_err *err)
{
    if (begin == PK_AGG_EXTERNAL && end == PK_AGG_EXTERNAL)
        return 0; /* code of another object: not ours to count */
    if (begin == PK_AGG_EXTERNAL || end == PK_AGG_EXTERNAL || begin > end ||
        end - begin >= u->o.max_range_len || !pk_csraw_fits(u->out, begin) || !pk_csraw_fits(u->out, end)) {
        u->st.ranges_dropped += w;
        return 0;
    }
    uint32_t ctx;
    if (current_ctx(u, begin, &ctx, err))
        return -1;
    uint64_t base = u->out->base;
    u->st.ranges += w;
    return add_pending(&u->out->ranges, &u->prange, (uint64_t)ctx << 32 | (begin - base), end - base, w, err);
}

static int record_branch(pk_unwinder *u, uint64_t from, uint64_t to, int cls, uint64_t w, pk_err *err)
{
    if (!pk_csraw_fits(u->out, to) || (from != PK_AGG_EXTERNAL && !pk_csraw_fits(u->out, from)))
        return 0;
    /* [cur_leaf, cur_leaf + cur_span) is a function's, no other entry
     * inside: most jumps land there and need no lookup */
    if (u->o.calls_and_entries_only && cls != PK_INSN_CALL && cls != PK_INSN_ICALL &&
        (to - u->cur_leaf < u->cur_span ? to != u->cur_leaf : func_entry(u, to) != to)) {
        u->st.branches += w; /* counted, not kept */
        return 0;
    }
    uint32_t ctx;
    if (current_ctx(u, from == PK_AGG_EXTERNAL ? to : from, &ctx, err))
        return -1;
    uint64_t base = u->out->base;
    uint64_t src = from == PK_AGG_EXTERNAL ? PK_CS_EXTERNAL_OFF : from - base;
    u->st.branches += w;
    return add_pending(&u->out->branches, &u->pbranch, (uint64_t)ctx << 32 | src, to - base, w, err);
}

/* The class of the branch at `from`: from the branch type the LBR entry
 * carries (perf's PERF_BR_* in flags bits 20..23, recorded with save_type and
 * by pgokit record), else from the instruction there. */
static inline int class_of(pk_unwinder *u, uint64_t from, uint64_t flags)
{
    switch ((flags >> 20) & 0xf) {
    case 1: return PK_INSN_CJMP;  /* PERF_BR_COND */
    case 2: return PK_INSN_JMP;   /* PERF_BR_UNCOND */
    case 3: return PK_INSN_IJMP;  /* PERF_BR_IND */
    case 4: return PK_INSN_CALL;  /* PERF_BR_CALL */
    case 5: return PK_INSN_ICALL; /* PERF_BR_IND_CALL */
    case 6: return PK_INSN_RET;   /* PERF_BR_RET */
    default: return insn_class(u, from);
    }
}

static int unwind_lbr(pk_unwinder *u, const pk_branch *lbr, size_t nlbr, uint64_t weight, pk_err *err)
{
    uint64_t ip = 0, site;
    /* Set at the first range that cannot have run (a duplicated entry, or
     * entries missing between two): the LBR is not one trace there, and the
     * branches it does not show may be calls or returns, so the stack the
     * walk derives for the older entries is a guess. They are counted
     * without calling context (their function is known from the addresses),
     * as llvm-profgen does: a wrong context would steer inlining, a missing
     * one only leaves the counts in the function's base profile. */
    bool broken = false;
    for (size_t i = 0; i < nlbr; i++) {
        uint64_t from = pk_ld64(&lbr[i].from), to = pk_ld64(&lbr[i].to);
        if (i > 0) {
            bool straight = ran_straight(u, to, ip);
            if (!straight && !broken) {
                broken = true;
                set_depth(u, 0);
            }
            if (!straight)
                u->st.ranges_dropped += weight;
            else if (record_range(u, to, ip, weight, err))
                return -1;
        }
        if (broken) {
            u->st.entries_after_break += weight;
            if (record_branch(u, from, to, from == PK_AGG_EXTERNAL ? -1 : class_of(u, from, pk_ld64(&lbr[i].flags)),
                              weight, err))
                return -1;
            ip = from;
            continue;
        }
        /* Code outside the binary's functions (other objects, PLT stubs)
         * is walked through, not into: its ranges are dropped, and the
         * calls and returns that enter and leave it keep the stack right. */
        int cls = from == PK_AGG_EXTERNAL ? -1 : class_of(u, from, pk_ld64(&lbr[i].flags));
        bool callback_entry = false;
        switch (cls) {
        case PK_INSN_CALL:
        case PK_INSN_ICALL:
            /* Back across a call: from the callee's entry to its caller. */
            if (u->depth > 0 && u->stack[u->depth - 1] == from)
                set_depth(u, u->depth - 1);
            else if (u->depth > 0)
                u->st.call_mismatch += weight; /* a frame missing from the stack: stay */
            break;
        case PK_INSN_RET:
            /* Back across a return: from the return site into the callee. */
            if (to == PK_AGG_EXTERNAL) {
                /* returning to an outside caller (a callback): the callee's
                 * contexts start there, but the frames below the outside
                 * code are still the stack once the call into it (older
                 * in the LBR) is crossed */
                if (push_site(u, PK_AGG_EXTERNAL, err))
                    return -1;
                break;
            }
            if (!(site = call_before(u, to))) {
                u->st.return_not_after_call += weight;
                set_depth(u, 0);
                break;
            }
            if (push_site(u, site, err))
                return -1;
            break;
        case -1:
            /* From outside: a return from an outside callee lands right
             * after one of our calls (push it: the call entering that
             * callee, older in the LBR, pops it again); anything else (a
             * callback entry, a PLT jump) leaves the stack as it is. */
            u->st.outside_entries += weight;
            if (to == PK_AGG_EXTERNAL)
                break;
            if ((site = call_before(u, to))) {
                if (push_site(u, site, err))
                    return -1;
            } else if (u->depth > 0 && u->stack[u->depth - 1] == PK_AGG_EXTERNAL) {
                callback_entry = true; /* back into the outside caller, once the entry is counted */
            }
            break;
        default: /* jumps stay in the frame (tail calls too) */
            break;
        }
        /* (a callback's entry counts in the callback's own contexts) */
        if (record_branch(u, from, to, cls, weight, err))
            return -1;
        if (callback_entry)
            set_depth(u, u->depth - 1);
        ip = from;
    }
    return flush_pending(&u->out->ranges, &u->prange, err) || flush_pending(&u->out->branches, &u->pbranch, err);
}

/* Whether code outside the binary enters it other than by returning (a
 * callback: the entry is not just after a call) in this branch stack. */
static bool lbr_calls_back(pk_unwinder *u, const pk_branch *lbr, size_t nlbr)
{
    for (size_t i = 0; i < nlbr; i++) {
        uint64_t from = pk_ld64(&lbr[i].from), to = pk_ld64(&lbr[i].to);
        if (from == PK_AGG_EXTERNAL && to != PK_AGG_EXTERNAL && !call_before(u, to))
            return true;
    }
    return false;
}

int pk_unwind_sample(pk_unwinder *u, const uint64_t *stack, size_t nstack,
                     const pk_branch *lbr, size_t nlbr, uint64_t weight, pk_err *err)
{
    u->st.samples += weight;
    if (!nlbr) {
        u->st.samples_no_lbr += weight;
        return 0;
    }
    if (!nstack) {
        u->st.samples_no_stack += weight;
        return 0;
    }
    if (u->o.drop_prolog_epilog_leaf && stack[0] != PK_AGG_EXTERNAL && prolog_epilog(u, stack[0])) {
        u->st.samples_prolog_epilog += weight;
        return 0;
    }
    /* The callers' call sites from the return addresses, innermost first,
     * up to the first frame outside the binary or not after a call. */
    if (ensure_stack(u, nstack + 1, err))
        return -1;
    /* Frames outside the binary become one PK_AGG_EXTERNAL caller (a run
     * of them, one): the contexts start above it, and the frames below it
     * are the stack again once the LBR crosses the call into that code
     * (a callback from a library). The outermost run is dropped.
     * A sample whose leaf is outside the binary keeps the binary's frames
     * below that code only when its branch stack shows the code calling
     * back into the binary (qsort's comparator): otherwise the stack is
     * that library's own work (malloc, memcpy), and giving the few binary
     * ranges in it their full contexts, as llvm-profgen does, made
     * interpreters slower (emulated recordings, instructions against -O2,
     * same recordings: Lua -5.64 % against -8.21 %, Duktape -18.87 %
     * against -19.76 %; SQLite -13.01 % against -12.67 %; see
     * bench/results/cs-generalize-2026-11-27.md): such a sample's contexts
     * end at its first caller outside, as before. */
    size_t n = 0;
    bool leaf_outside = stack[0] == PK_AGG_EXTERNAL;
    bool cut_at_outside = leaf_outside && !u->o.outside_leaf_full_context && !lbr_calls_back(u, lbr, nlbr);
    for (size_t i = 1; i < nstack; i++) {
        if (stack[i] == PK_AGG_EXTERNAL) {
            if (cut_at_outside) {
                u->st.stack_truncated_external += weight;
                break;
            }
            if (n == 0 && leaf_outside)
                continue;
            if (n == 0 || u->key[n - 1] != PK_AGG_EXTERNAL) {
                u->st.stack_truncated_external += weight;
                u->key[n++] = PK_AGG_EXTERNAL;
            }
            continue;
        }
        uint64_t site = call_before(u, stack[i]);
        if (!site) {
            u->st.stack_truncated_not_call += weight;
            if (!pk_u64map_slot(&u->bad_returns, stack[i]))
                return pk_err_set(err, "out of memory");
            break;
        }
        u->key[n++] = site;
    }
    if (n && u->key[n - 1] == PK_AGG_EXTERNAL)
        n--;
    u->depth = 0;
    u->node[0] = 0;
    u->ctx_dirty = true;
    for (size_t i = n; i-- > 0;) /* outermost first */
        if (push_site(u, u->key[i], err))
            return -1;
    if (unwind_lbr(u, lbr, nlbr, weight, err))
        return -1;
    u->st.walks++;
    u->st.samples_unwound += weight;
    return 0;
}

struct pk_unwind_feed **pk_unwinder_feed(pk_unwinder *u) { return &u->feed; }

void pk_unwinder_add_counted(pk_unwinder *u, uint64_t samples, uint64_t no_lbr, uint64_t no_stack)
{
    u->st.samples += samples;
    u->st.samples_no_lbr += no_lbr;
    u->st.samples_no_stack += no_stack;
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
    size_t lo = pk_insn_lower_bound(insns, n, vaddr); /* the last instruction before vaddr is lo - 1 */
    if (lo == 0)
        return -1;
    const pk_insn *in = &insns[lo - 1];
    if (in->addr + in->len != vaddr || (in->cls != PK_INSN_CALL && in->cls != PK_INSN_ICALL))
        return -1;
    *call_addr = in->addr;
    return 0;
}

static bool bin_prolog_epilog(void *ctx, uint64_t vaddr)
{
    pk_binary *bin = ctx;
    const pk_elf_symbol *f = pk_elf_func_at(pk_binary_elf(bin), vaddr);
    if (!f)
        return false;
    const pk_insn *insns;
    size_t n;
    pk_err err;
    if (pk_binary_func_insns(bin, f, &insns, &n, &err))
        return false;
    size_t i = pk_insn_lower_bound(insns, n, vaddr);
    if (i >= n || insns[i].addr != vaddr)
        return false;
    return i < 2 || insns[i].cls == PK_INSN_RET || (i + 1 < n && insns[i + 1].cls == PK_INSN_RET);
}

static uint64_t bin_next_uncond(void *ctx, uint64_t vaddr)
{
    pk_binary *bin = ctx;
    const pk_elf_symbol *f = pk_elf_func_at(pk_binary_elf(bin), vaddr);
    const pk_insn *insns;
    size_t n;
    pk_err err;
    if (!f || pk_binary_func_insns(bin, f, &insns, &n, &err))
        return UINT64_MAX;
    for (size_t i = pk_insn_lower_bound(insns, n, vaddr); i < n; i++)
        if (pk_insn_is_uncond(insns[i].cls))
            return insns[i].addr;
    return UINT64_MAX;
}

static uint64_t bin_func_entry(void *ctx, uint64_t vaddr, uint64_t *end)
{
    const pk_elf *elf = pk_binary_elf(ctx);
    const pk_elf_symbol *f = pk_elf_func_at(elf, vaddr);
    if (!f) {
        *end = 0;
        return 0;
    }
    /* up to the next symbol: a nested one would own the addresses there */
    size_t n;
    const pk_elf_symbol *all = pk_elf_funcs(elf, &n), *g = f + 1;
    while (g < all + n && g->addr == f->addr)
        g++;
    *end = f->size ? f->addr + f->size : f->addr + 1;
    if (g < all + n && g->addr < *end)
        *end = g->addr;
    if (vaddr >= *end)
        *end = f->addr + 1; /* vaddr sits past the next symbol: no span known */
    return f->addr;
}

void pk_unwind_code_from_binary(pk_unwind_code *code, struct pk_binary *bin)
{
    code->ctx = bin;
    code->insn_class = bin_insn_class;
    code->call_before = bin_call_before;
    code->func_entry = bin_func_entry;
    code->prolog_epilog = bin_prolog_epilog;
    code->next_uncond = bin_next_uncond;
}

/* ---- a second walker (unwind_feed.c) ---- */

pk_unwinder *pk_unwinder_clone(const pk_unwinder *u, pk_csraw *out, pk_err *err)
{
    pk_unwind_opts o = u->o;
    o.worker = false;
    pk_unwinder *c = pk_unwinder_new(&u->code, &o, out, err);
    if (c)
        c->code_lock = u->code_lock;
    return c;
}

void pk_unwinder_set_code_lock(pk_unwinder *u, pthread_mutex_t *lock) { u->code_lock = lock; }

pk_csraw *pk_unwinder_out(pk_unwinder *u) { return u->out; }
const pk_unwind_opts *pk_unwinder_opts(const pk_unwinder *u) { return &u->o; }
void pk_unwinder_count_walk_here(pk_unwinder *u) { u->st.walks_here++; }

void pk_unwind_stats_add(pk_unwind_stats *into, const pk_unwind_stats *from)
{
    /* every field is a counter */
    _Static_assert(sizeof(pk_unwind_stats) % sizeof(uint64_t) == 0, "counters only");
    uint64_t *d = (uint64_t *)into;
    const uint64_t *s = (const uint64_t *)from;
    for (size_t i = 0; i < sizeof *into / sizeof(uint64_t); i++)
        d[i] += s[i];
}

int pk_unwinder_add_stats(pk_unwinder *u, const pk_unwinder *other, pk_err *err)
{
    pk_unwind_stats_add(&u->st, &other->st);
    const pk_u64map *b = &other->bad_returns;
    for (size_t i = 0; i < pk_u64map_end(b); i++)
        if (pk_u64map_used(b, i) && !pk_u64map_slot(&u->bad_returns, pk_u64map_key(b, i)))
            return pk_err_set(err, "out of memory");
    return 0;
}

int pk_unwinder_bad_returns(const pk_unwinder *u, pk_vec *out, pk_err *err)
{
    return pk_unwind_addr_list(&u->bad_returns, out, err);
}

int pk_unwind_addr_list(const pk_u64map *b, pk_vec *out, pk_err *err)
{
    size_t first = out->len;
    for (size_t i = 0; i < pk_u64map_end(b); i++) {
        if (!pk_u64map_used(b, i))
            continue;
        uint64_t *v = pk_vec_push(out);
        if (!v)
            return pk_err_set(err, "out of memory");
        *v = pk_u64map_key(b, i);
    }
    /* (map keys: no repeats to drop) */
    pk_u64_sort_unique((uint64_t *)out->data + first, out->len - first);
    return 0;
}
