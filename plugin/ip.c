/* ip.c — IP mode of the pgokit plugin (argument ip=N): a sample every N
 * retired guest instructions, N jittered uniformly in [N/2, 3N/2] by the
 * seeded PRNG (seed=) so that sampling does not lock onto loop periods. The
 * ground truth for IP-based profiles: what `perf record -e instructions:u
 * --call-graph fp` would see, with exact addresses and exact call chains.
 *
 * What a sample holds:
 *  - ip: the address of the instruction whose retirement completes the
 *    count. With L instructions left before a block of n >= L instructions,
 *    it is the block's L-th instruction (1-based), a start of an instruction
 *    as QEMU decoded it. The count then restarts after that instruction.
 *  - call chain (callchain=on): PERF_CONTEXT_USER, ip, then the return
 *    addresses of the active frames of the shadow stack, innermost first,
 *    as perf writes user call chains. Every instruction of a block, a final
 *    call included, is sampled in the frame it runs in: a block ending in a
 *    call pushes its end (the return address) after its instructions are
 *    counted, a block ending in a return pops.
 *  - period: the jittered interval that ended at this sample, so the periods
 *    add up to the instructions counted; pid, tid, time.
 * The event is PERF_TYPE_HARDWARE / PERF_COUNT_HW_INSTRUCTIONS (`perf
 * script` names it instructions:u), sample_type IP|TID|TIME|PERIOD and
 * CALLCHAIN with callchain=on, and no branch stack.
 *
 * Counting is per block, not per instruction: the block's instruction count,
 * taken at translation, rides in the callback argument, and executing the
 * block subtracts it from the countdown. Only when the countdown runs out
 * inside a block is the instruction picked, from the offsets of the block's
 * instructions kept in its lbr_tb. Conventions, so that the count is
 * "retired instructions" and agrees with the exact counts:
 *  - a rep-prefixed string instruction counts once, not once per iteration:
 *    QEMU runs each iteration as a one-instruction block at the rep, and a
 *    block entered again from the same rep (PK_TR_REPEAT) counts 0;
 *  - a block is counted when it starts: one cut short by a fault (delivered
 *    to the guest as a signal) still counts all its instructions.
 *
 * With exact= the callback also counts exact ranges and branches, as in LBR
 * mode (lbr_exact_count), and takes the repeat test from them.
 *
 * IP word (the callback argument without exact=):
 *   bits  0-47  the block's lbr_tb (user-space pointers have 47 bits)
 *   bits 48-59  its instruction count (QEMU allows at most 512)
 *   bit  63     IPW_RARE: it ends in a call or a return, or is a lone rep
 *               string instruction (maybe a repeat); the rest takes one
 *               compare and one subtraction. */
#include "lbr.h"

#define IPW_PTR_BITS 48
#define IPW_NMAX 0xfffu
#define IPW_TB(w) ((const lbr_tb *)(uintptr_t)((w) & ((1ull << IPW_PTR_BITS) - 1)))
#define IPW_N(w) (((w) >> IPW_PTR_BITS) & IPW_NMAX)
#define IPW_RARE (1ull << 63)

uint64_t lbr_ip_word(const lbr_tb *t)
{
    uint64_t p = (uint64_t)(uintptr_t)t;
    if (p >> IPW_PTR_BITS || t->ninsns > IPW_NMAX)
        return 0;
    uint64_t w = p | (uint64_t)t->ninsns << IPW_PTR_BITS;
    if (lbr_kind_delta[t->info.kind] || (t->info.kind == PK_BR_REP && t->info.vaddr == t->info.last))
        w |= IPW_RARE;
    return w;
}

/* The countdown ran out at instruction l - 1 of block t (n instructions):
 * sample there, and again while the next intervals end inside the block. */
static __attribute__((cold, noinline)) void ip_sample(lbr_vcpu *v, const lbr_tb *t, uint64_t n, uint64_t l)
{
    uint64_t i = l - 1;
    bool locked = false;
    for (;;) {
        uint64_t period = v->interval;
        if (!g.child) {
            if (!locked)
                pthread_mutex_lock(&g.lock);
            locked = true;
            lbr_emit_locked(v, t->info.vaddr + t->ioff[i], period, NULL, 0);
        }
        uint64_t next = lbr_next_interval(v), rest = n - 1 - i;
        if (next > rest) {
            v->left = next - rest;
            break;
        }
        i += next;
    }
    if (locked)
        pthread_mutex_unlock(&g.lock);
}

static inline __attribute__((always_inline)) void ip_count(lbr_vcpu *v, const lbr_tb *t, uint64_t n)
{
    uint64_t l = v->left;
    if (__builtin_expect(l > n, 1))
        v->left = l - n;
    else
        ip_sample(v, t, n, l);
}

/* After the block's instructions are counted: a call pushes its return
 * address, a return pops one frame (none at depth 0), as in LBR mode. */
static inline void ip_stack(lbr_vcpu *v, const lbr_tb *t)
{
    int64_t d = lbr_kind_delta[t->info.kind];
    if (d > 0)
        v->stack[v->depth++ & (STACK - 1)] = (uint32_t)W_END(t->word);
    else if (d < 0 && v->depth)
        v->depth--;
}

static __attribute__((noinline)) void ip_rare(lbr_vcpu *v, uint64_t w)
{
    uint64_t pw = v->pw;
    v->pw = w;
    const lbr_tb *t = IPW_TB(w);
    uint64_t n = IPW_N(w);
    if (pw && pk_record_transition(&IPW_TB(pw)->info, t->info.vaddr) == PK_TR_REPEAT)
        n = 0;
    ip_count(v, t, n);
    ip_stack(v, t);
}

static inline __attribute__((always_inline)) void ip_step(lbr_vcpu *v, uint64_t w)
{
    if (__builtin_expect((int64_t)w < 0, 0)) {
        ip_rare(v, w);
        return;
    }
    v->pw = w;
    ip_count(v, IPW_TB(w), IPW_N(w));
}

static __attribute__((noinline)) void ip_exec_other(unsigned int idx, uint64_t w)
{
    lbr_vcpu *v = lbr_vcpu_other(idx);
    if (v)
        ip_step(v, w);
}

void lbr_ip_exec(unsigned int idx, void *ud)
{
    uint64_t w = (uint64_t)(uintptr_t)ud;
    if (__builtin_expect(idx == 0, 1))
        ip_step(&lbr_v0, w);
    else
        ip_exec_other(idx, w);
}

void lbr_ip_exec_exact(unsigned int idx, void *ud)
{
    const lbr_tb *t = ud;
    lbr_vcpu *v = idx == 0 ? &lbr_v0 : lbr_vcpu_other(idx);
    if (!v)
        return;
    const pk_tb_info *p = v->prev;
    v->prev = &t->info;
    uint64_t n = t->ninsns;
    if (t->info.vaddr != p->ft && lbr_exact_count(v, p, t->info.vaddr) == PK_TR_REPEAT)
        n = 0;
    ip_count(v, t, n);
    ip_stack(v, t);
}
