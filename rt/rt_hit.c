/* rt_hit.c — the hot path of libpgokit_rt: record a function's first entry
 * (or count every entry) and patch the hook call out.
 *
 * Compiled with -mgeneral-regs-only; no libc calls (the trampoline saves only
 * integer registers, and this may run before libc is fully set up).
 *
 * Recording is lock-free: a record index is claimed with an atomic fetch-add
 * (that index is the first-execution order), filled, then published in an
 * open-addressed hash keyed by the call site with a compare-and-swap. A thread
 * that loses the race for a slot leaves a FREE hole behind (skipped by the
 * dump) and re-examines the winner, so concurrent first entries of the same
 * function are recorded once and, in counting mode, every entry is counted.
 *
 * Caller learning (default, PGOKIT_RT_LEARN_CALLS=N, 16): on every entry
 * through the hook, the direct `call f` that brought us here (found from the
 * function's own return address) is retargeted past the hook, so that call
 * site then executes no hook instruction at all; after N entries in a row
 * that could not be redirected (indirect calls, tail calls, call sites that
 * cannot be patched atomically) the hook is removed (see remove_hook).
 * This takes the steady-state cost from one NOP per entry to a fraction of it.
 *
 * Patching: the 5-byte `call rel32` (clang; gcc's linker-relaxed `addr32 call`
 * keeps its 0x67 prefix, which with the 5-byte NOP is still a valid 6-byte NOP)
 * or gcc's 6-byte `call *GOT(%rip)` is replaced by as many ignored CS prefixes
 * of the function's first instruction (no instruction left at all, see
 * remove_hook) or else by a NOP of the same length,
 * with a single locked 8- or 16-byte compare-and-swap on an aligned window
 * holding the whole instruction, so another thread fetching it sees either the
 * old call (which returns here and finds the site recorded) or the NOP, never
 * a torn instruction. Sites whose instruction straddles a 16-byte boundary,
 * whose call target is not our hook, or whose page cannot be made writable
 * are left alone (they keep costing a call and a hash probe).
 */
#include "rt_internal.h"

#include <stddef.h>

RT_HIDDEN struct rt_rec pk_rt_recs[PGOKIT_RT_MAX_FUNCS];
RT_HIDDEN uint32_t pk_rt_hash[RT_HASH_SIZE];
RT_HIDDEN uint32_t pk_rt_nrec;
RT_HIDDEN uint64_t pk_rt_dropped;
RT_HIDDEN uint64_t pk_rt_unpatched;
RT_HIDDEN int pk_rt_inited;
RT_HIDDEN int pk_rt_count_mode;
RT_HIDDEN int pk_rt_patch_enabled = 1;
RT_HIDDEN int pk_rt_prefix_enabled = 1;
RT_HIDDEN int pk_rt_disabled;
RT_HIDDEN uint32_t pk_rt_learn_calls;
RT_HIDDEN uint64_t pk_rt_redirected;
RT_HIDDEN uintptr_t pk_rt_text[RT_MAX_TEXT][2];
RT_HIDDEN uint32_t pk_rt_ntext;
RT_HIDDEN struct rt_eh pk_rt_eh[RT_MAX_EH];
RT_HIDDEN uint32_t pk_rt_neh;

RT_HIDDEN int pk_rt_patch_lock;
__attribute__((used)) static const int *const link_dump_code = &pk_rt_dump_anchor;

extern char **environ;

/* ---- tiny libc-free helpers ---- */

static int env_is(const char *e, const char *name, const char **val)
{
    while (*name && *e == *name) { e++; name++; }
    if (*name || *e != '=') return 0;
    *val = e + 1;
    return 1;
}

static int str_eq(const char *a, const char *b)
{
    while (*a && *a == *b) { a++; b++; }
    return *a == *b;
}

void pk_rt_early_init(void)
{
    char **env = environ;
    int count = 0, patch = 1, off = 0, prefix = 1;
    uint32_t learn = RT_DEFAULT_LEARN_CALLS;
    for (; env && *env; env++) {
        const char *v;
        if (env_is(*env, "PGOKIT_RT_MODE", &v)) {
            count = str_eq(v, "count");
            off = str_eq(v, "off");
        } else if (env_is(*env, "PGOKIT_RT_PATCH", &v)) {
            patch = !str_eq(v, "0");
        } else if (env_is(*env, "PGOKIT_RT_PREFIX", &v)) {
            prefix = !str_eq(v, "0");
        } else if (env_is(*env, "PGOKIT_RT_LEARN_CALLS", &v)) {
            learn = 0;
            for (; *v >= '0' && *v <= '9' && learn < 100000000u; v++) learn = learn * 10 + (uint32_t)(*v - '0');
        }
    }
    pk_rt_count_mode = count;
    pk_rt_patch_enabled = patch;
    pk_rt_prefix_enabled = prefix;
    pk_rt_disabled = off;
    pk_rt_learn_calls = learn;
    __atomic_store_n(&pk_rt_inited, 1, __ATOMIC_RELEASE);
}

static long rt_syscall3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

#define RT_SYS_MPROTECT 10
#define RT_PROT_RX 5   /* PROT_READ | PROT_EXEC */
#define RT_PROT_RWX 7

static int32_t ld_s32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static uint64_t ld_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Does a direct call to `target` end up in our hook? Directly (static link)
 * or through a PLT stub `[endbr64] [bnd] jmp *GOT(%rip)` (shared runtime). */
static int reaches_hook(uintptr_t target)
{
    const uintptr_t self = (uintptr_t)pk_rt_fentry_self;
    if (target == self) return 1;
    const uint8_t *p = (const uint8_t *)target;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) p += 4;
    if (p[0] == 0xf2) p++;
    if (p[0] != 0xff || p[1] != 0x25) return 0;
    const uint8_t *got = p + 6 + ld_s32(p + 2);
    return ld_u64(got) == self;
}

static int cas16(uint64_t *w, uint64_t o0, uint64_t o1, uint64_t n0, uint64_t n1)
{
    unsigned char ok;
    __asm__ volatile("lock cmpxchg16b %1\n\tsete %0"
                     : "=q"(ok), "+m"(*(volatile uint64_t(*)[2])w), "+a"(o0), "+d"(o1)
                     : "b"(n0), "c"(n1)
                     : "memory", "cc");
    return ok;
}

/* The one code page left writable after a write (0: none), so that the next
 * write to the same page (a caller patching its call sites one after another
 * at start-up) costs no mprotect pair; it is made read-only again as soon as
 * another page is written, and before every dump (pk_rt_seal_code).
 * Guarded by pk_rt_patch_lock. */
static uintptr_t open_code_page;

static int open_page(uintptr_t page)
{
    if (open_code_page == page) return 1;
    /* Cleared before the page is sealed and set only once it is writable, so
     * that a child forked in between never believes a sealed page is open. */
    uintptr_t old = open_code_page;
    __atomic_store_n(&open_code_page, 0, __ATOMIC_SEQ_CST);
    if (old) rt_syscall3(RT_SYS_MPROTECT, (long)old, 4096, RT_PROT_RX);
    if (rt_syscall3(RT_SYS_MPROTECT, (long)page, 4096, RT_PROT_RWX) != 0) return 0;
    __atomic_store_n(&open_code_page, page, __ATOMIC_SEQ_CST);
    return 1;
}

void pk_rt_seal_code(int wait)
{
    /* A signal handler must not wait: the thread it interrupted may hold the lock. */
    while (__atomic_exchange_n(&pk_rt_patch_lock, 1, __ATOMIC_ACQUIRE))
        if (!wait) return;
    uintptr_t old = open_code_page;
    __atomic_store_n(&open_code_page, 0, __ATOMIC_SEQ_CST);
    if (old) rt_syscall3(RT_SYS_MPROTECT, (long)old, 4096, RT_PROT_RX);
    __atomic_store_n(&pk_rt_patch_lock, 0, __ATOMIC_RELEASE);
}

/* Writes len bytes at start with one locked compare-and-swap on the aligned
 * 8- or 16-byte window holding them (so a thread fetching the instruction
 * never sees it torn). Caller holds pk_rt_patch_lock. Returns 1 on success. */
static int write_code(uintptr_t start, const uint8_t *bytes, unsigned len)
{
    /* Only the bytes that change need the atomic window: retargeting a call
     * by a few bytes usually changes just the low byte of its rel32, which
     * fits in a window even when the whole rel32 straddles 16 bytes. */
    const uint8_t *cur = (const uint8_t *)start;
    while (len && cur[0] == bytes[0]) { start++; cur++; bytes++; len--; }
    while (len && cur[len - 1] == bytes[len - 1]) len--;
    if (!len) return 1;
    uintptr_t last = start + len - 1, win;
    unsigned wsize;
    if ((start & ~(uintptr_t)7) == (last & ~(uintptr_t)7)) { win = start & ~(uintptr_t)7; wsize = 8; }
    else if ((start & ~(uintptr_t)15) == (last & ~(uintptr_t)15)) { win = start & ~(uintptr_t)15; wsize = 16; }
    else return 0;
    if (!open_page(win & ~(uintptr_t)4095)) return 0;
    uint64_t old[2], neu[2];
    const uint8_t *wp = (const uint8_t *)win;
    old[0] = ld_u64(wp);
    old[1] = wsize == 16 ? ld_u64(wp + 8) : 0;
    neu[0] = old[0]; neu[1] = old[1];
    uint8_t *nb = (uint8_t *)neu;
    for (unsigned i = 0; i < len; i++) nb[start - win + i] = bytes[i];
    int ok;
    if (wsize == 8) {
        uint64_t expect = old[0];
        ok = __atomic_compare_exchange_n((uint64_t *)win, &expect, neu[0], 0,
                                         __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    } else {
        ok = cas16((uint64_t *)win, old[0], old[1], neu[0], neu[1]);
    }
    return ok;
}

/* Length of a ModRM operand (ModRM, SIB, displacement) at p. */
static unsigned modrm_len(const uint8_t *p)
{
    unsigned mod = p[0] >> 6, rm = p[0] & 7, n = 1;
    if (mod == 3) return 1;
    if (rm == 4) {
        n++;
        if (mod == 0 && (p[1] & 7) == 5) n += 4;
    } else if (mod == 0 && rm == 5) {
        n += 4;
    }
    return n + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/* Length of the instruction at p if it is one of the few that open most
 * functions (push, mov, lea, sub/add/cmp/test/xor on 32/64-bit registers or
 * memory, mov imm), none of them a branch and none with a legacy prefix;
 * 0 for anything else. */
static unsigned first_insn_len(const uint8_t *p)
{
    unsigned n = 0, rexw = 0;
    if ((p[0] & 0xf0) == 0x40) { rexw = p[0] & 8; p++; n++; }
    uint8_t op = p[0];
    if (op >= 0x50 && op <= 0x57) return n + 1;
    if (op >= 0xb8 && op <= 0xbf) return n + 1 + (rexw ? 8 : 4);
    switch (op) {
    case 0x01: case 0x03: case 0x09: case 0x0b: case 0x21: case 0x23: case 0x29: case 0x2b:
    case 0x31: case 0x33: case 0x39: case 0x3b: case 0x85: case 0x89: case 0x8b: case 0x8d:
        return n + 1 + modrm_len(p + 1);
    case 0x38: case 0x3a: case 0x84: case 0x88: case 0x8a:
        return n + 1 + modrm_len(p + 1);
    case 0x80: return n + 2 + modrm_len(p + 1);
    case 0x83: return n + 2 + modrm_len(p + 1);
    case 0x81: return n + 5 + modrm_len(p + 1);
    }
    /* groups: only the members with no branch (ff /0 inc, /1 dec; c6, c7 /0
     * mov imm; f6 /0 test imm8) */
    unsigned reg = (p[1] >> 3) & 7;
    if (op == 0xff && reg <= 1) return n + 1 + modrm_len(p + 1);
    if (op == 0xc6 && reg == 0) return n + 2 + modrm_len(p + 1);
    if (op == 0xc7 && reg == 0) return n + 5 + modrm_len(p + 1);
    if (op == 0xf6 && reg == 0) return n + 2 + modrm_len(p + 1);
    return 0;
}

/* How a hook of len bytes ending at ret is removed. Preferably it becomes
 * len CS segment-override prefixes of the function's first instruction, which
 * the CPU ignores in 64-bit mode: the entry then costs no instruction at all,
 * where a NOP costs one per call (CPython enters hot functions through
 * function pointers and tail calls millions of times: those entries cannot be
 * redirected). The instruction's own bytes stay where they were, so a branch
 * to it (a loop back to the top of the body) still decodes it unprefixed.
 * Only for known, non-branch instructions short enough for the 15-byte limit
 * (binutils itself pads with up to 5 such prefixes for the JCC erratum);
 * otherwise a NOP of the same length. */
static int remove_hook(uintptr_t ret, unsigned len)
{
    static const uint8_t nop[6] = {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00};
    static const uint8_t cs[6] = {0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e};
    unsigned il = pk_rt_prefix_enabled ? first_insn_len((const uint8_t *)ret) : 0;
    const uint8_t *bytes = il && len + il <= 15 ? cs : nop + 6 - len;
    return write_code(ret - len, bytes, len) ? RT_PATCH_DONE : RT_PATCH_NEVER;
}

/* Does a function (an FDE) start exactly at a? Binary search in the
 * .eh_frame_hdr tables: entries are {start, fde} relative to the header. */
static int function_starts_at(uintptr_t a)
{
    uint32_t n = __atomic_load_n(&pk_rt_neh, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        int64_t rel = (int64_t)(a - pk_rt_eh[i].hdr);
        if (rel != (int32_t)rel) continue;
        uint32_t lo = 0, hi = pk_rt_eh[i].n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            int32_t v = pk_rt_eh[i].tab[2 * mid];
            if (v == rel) return 1;
            if (v < rel) lo = mid + 1; else hi = mid;
        }
    }
    return 0;
}

/* Returns RT_PATCH_DONE or RT_PATCH_NEVER. hook_len: 5 or 6 when a direct
 * caller showed where the function starts, else 0. */
static int patch_site(uintptr_t ret, unsigned hook_len)
{
    const uint8_t *r = (const uint8_t *)ret;
    if (r[-5] == 0xe8 && reaches_hook(ret + ld_s32(r - 4))) {
        /* gcc's linker-relaxed `addr32 call` is 6 bytes, but a 0x67 before a
         * 5-byte call may just as well end the previous function: prefixes
         * replace it only when it is known to be part of the hook (after
         * endbr64, seen from a direct caller, or the function's unwind table
         * entry starts at it); otherwise the 5-byte NOP
         * leaves it in place as the prefix of a 6-byte NOP. */
        if (r[-6] != 0x67) return remove_hook(ret, 5);
        if (hook_len == 6 || (r[-10] == 0xf3 && r[-9] == 0x0f && r[-8] == 0x1e && r[-7] == 0xfa) ||
            function_starts_at(ret - 6))
            return remove_hook(ret, 6);
        if (hook_len == 5 || function_starts_at(ret - 5)) return remove_hook(ret, 5);
        return write_code(ret - 5, (const uint8_t[5]){0x0f, 0x1f, 0x44, 0x00, 0x00}, 5) ? RT_PATCH_DONE
                                                                                       : RT_PATCH_NEVER;
    }
    if (r[-5] == 0x15 && r[-6] == 0xff &&
        ld_u64((const uint8_t *)(ret + ld_s32(r - 4))) == (uintptr_t)pk_rt_fentry_self)
        return remove_hook(ret, 6);
    return RT_PATCH_NEVER;
}

static int take_patch_lock(void)
{
    /* Try-lock only: a signal handler interrupting a patching thread must not
     * deadlock; the work is simply retried on a later entry. */
    return !__atomic_exchange_n(&pk_rt_patch_lock, 1, __ATOMIC_ACQUIRE);
}

static void drop_patch_lock(void) { __atomic_store_n(&pk_rt_patch_lock, 0, __ATOMIC_RELEASE); }

static void try_patch(struct rt_rec *r)
{
    if (!pk_rt_patch_enabled) {
        __atomic_store_n(&r->patch, RT_PATCH_NEVER, __ATOMIC_RELAXED);
        return;
    }
    if (!take_patch_lock()) return;
    if (__atomic_load_n(&r->patch, __ATOMIC_RELAXED) == RT_PATCH_NONE) {
        int st = patch_site(r->ret, r->hook_len);
        if (st == RT_PATCH_NEVER) __atomic_fetch_add(&pk_rt_unpatched, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&r->patch, (uint8_t)st, __ATOMIC_RELAXED);
    }
    drop_patch_lock();
}

/* Caller redirection (learning mode): a direct `call f` whose return address
 * is cret is retargeted past f's hook (and its endbr64, needed only by
 * indirect branches), so that caller then pays nothing, not even the NOP.
 * Safe whatever the stack looked like: the call's bytes are checked to be a
 * `call rel32` to exactly this function's start before anything is written. */
static int redirect_caller(struct rt_rec *r, uintptr_t cret)
{
    uintptr_t ret = r->ret;
    int in_text = 0;
    uint32_t n = __atomic_load_n(&pk_rt_ntext, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        if (cret - 5 >= pk_rt_text[i][0] && cret <= pk_rt_text[i][1]) { in_text = 1; break; }
    if (!in_text) return 0;
    const uint8_t *c = (const uint8_t *)cret;
    if (c[-5] != 0xe8) return 0;
    uintptr_t target = cret + ld_s32(c - 4);
    if (target == ret) return 1;  /* already redirected (by another thread) */
    uintptr_t d = ret - target;
    if (d != 5 && d != 6 && d != 9 && d != 10) return 0;
    const uint8_t *p = (const uint8_t *)target;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) p += 4;
    unsigned hl;
    if (p[0] == 0x67 && p[1] == 0xe8) hl = 6;
    else if (p[0] == 0xe8) hl = 5;
    else if (p[0] == 0xff && p[1] == 0x15) hl = 6;
    else return 0;
    if ((uintptr_t)p + hl != ret) return 0;
    __atomic_store_n(&r->hook_len, (uint8_t)hl, __ATOMIC_RELAXED);
    int64_t rel = (int64_t)ret - (int64_t)cret;
    if (rel != (int32_t)rel) return 0;
    uint8_t nb[4] = {(uint8_t)rel, (uint8_t)(rel >> 8), (uint8_t)(rel >> 16), (uint8_t)(rel >> 24)};
    if (!take_patch_lock()) return 0;
    int ok = write_code(cret - 4, nb, 4);
    drop_patch_lock();
    if (ok) __atomic_fetch_add(&pk_rt_redirected, 1, __ATOMIC_RELAXED);
    return ok;
}

/* Trace mode, a recorded site entered through its hook. The hook stays live
 * while it keeps finding direct callers to redirect; after `learn` entries in
 * a row that could not be redirected (indirect or tail calls, unpatchable
 * call sites) it becomes a NOP. */
static void trace_entry(struct rt_rec *r, uintptr_t cret)
{
    if (__atomic_load_n(&r->patch, __ATOMIC_RELAXED) != RT_PATCH_NONE) return;
    uint32_t learn = pk_rt_learn_calls;
    if (!learn || !pk_rt_patch_enabled) { try_patch(r); return; }
    if (redirect_caller(r, cret)) {
        __atomic_store_n(&r->hits, 0, __ATOMIC_RELAXED);
        return;
    }
    if (__atomic_add_fetch(&r->hits, 1, __ATOMIC_RELAXED) >= learn) try_patch(r);
}

void pk_rt_hit(uintptr_t ret, uintptr_t cret)
{
    if (__builtin_expect(!__atomic_load_n(&pk_rt_inited, __ATOMIC_ACQUIRE), 0))
        pk_rt_early_init();
    if (pk_rt_disabled) return;
    /* The slot follows the address (16 bytes of code per slot), offset by a
     * hash of its 8 MiB region so that modules do not pile up on the same
     * slots: functions run close together in time and space share the
     * table's pages. A multiplicative hash spread python's 1 500 start-up
     * functions over ~500 pages of the 2 MiB table, each a page fault. */
    uint32_t h = (uint32_t)((ret >> 4) + ((uint64_t)(ret >> 23) * 0x9E3779B97F4A7C15ull >> 40)) &
                 (RT_HASH_SIZE - 1);
    for (uint32_t n = 0; n < RT_HASH_SIZE; n++, h = (h + 1) & (RT_HASH_SIZE - 1)) {
        uint32_t v = __atomic_load_n(&pk_rt_hash[h], __ATOMIC_ACQUIRE);
        if (v == 0) {
            uint32_t idx = __atomic_fetch_add(&pk_rt_nrec, 1, __ATOMIC_RELAXED);
            if (idx >= PGOKIT_RT_MAX_FUNCS) {
                __atomic_fetch_add(&pk_rt_dropped, 1, __ATOMIC_RELAXED);
                return;
            }
            struct rt_rec *r = &pk_rt_recs[idx];
            r->ret = ret;
            r->count = 1;
            r->hslot = h;
            r->patch = RT_PATCH_NONE;
            r->hook_len = 0;
            r->hits = 0;
            uint32_t expect = 0;
            if (__atomic_compare_exchange_n(&pk_rt_hash[h], &expect, idx + 1, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                __atomic_store_n(&r->state, RT_REC_LIVE, __ATOMIC_RELEASE);
                if (!pk_rt_count_mode) trace_entry(r, cret);
                return;
            }
            v = expect; /* lost the race: our record stays a FREE hole */
        }
        struct rt_rec *w = &pk_rt_recs[v - 1];
        if (w->ret == ret) {
            if (pk_rt_count_mode)
                __atomic_fetch_add(&w->count, 1, __ATOMIC_RELAXED);
            else
                trace_entry(w, cret);
            return;
        }
    }
    __atomic_fetch_add(&pk_rt_dropped, 1, __ATOMIC_RELAXED);
}
