/* rt_internal.h — state shared by the pieces of libpgokit_rt (hidden symbols).
 *
 * The hot path (rt_hit.c, called from the __fentry__ trampoline in
 * rt_fentry.S) runs before the instrumented function's prologue, so it may
 * clobber only what the trampoline saves: it is compiled with
 * -mgeneral-regs-only, calls no libc function (raw syscalls only) and never
 * allocates. Everything else (dump, fork, signals, module list) is in
 * pgokit_rt.c and runs in ordinary context.
 */
#ifndef PGOKIT_RT_INTERNAL_H
#define PGOKIT_RT_INTERNAL_H

#include <stdint.h>

#define RT_HIDDEN __attribute__((visibility("hidden")))

#ifndef PGOKIT_RT_MAX_FUNCS
#define PGOKIT_RT_MAX_FUNCS (1u << 18)   /* distinct entry sites recorded per process */
/* Defined next to the constructor/atexit code (pgokit_rt.c); referenced from
 * rt_hit.c so that linking the static archive for __fentry__ also pulls the
 * dump machinery in. */
RT_HIDDEN extern const int pk_rt_dump_anchor;

#endif
#define RT_HASH_BITS 19                  /* hash slots = 2 × max records */
#define RT_HASH_SIZE (1u << RT_HASH_BITS)

enum { RT_REC_FREE = 0, RT_REC_LIVE = 1 };
enum { RT_PATCH_NONE = 0, RT_PATCH_DONE = 1, RT_PATCH_NEVER = 2 };

/* One distinct entry site, in first-execution order (index = order). */
struct rt_rec {
    uintptr_t ret;       /* return address of the __fentry__ call = site + length */
    uint64_t count;      /* entries (counting mode) or 1 */
    uint32_t hslot;      /* its hash slot, so a fork child can clear the table fast */
    uint8_t state;       /* RT_REC_* (a record that lost an insertion race stays FREE) */
    uint8_t patch;       /* RT_PATCH_* */
    uint8_t hook_len;    /* 5 or 6 once a direct caller showed where the function starts, else 0 */
    uint8_t pad;
    uint32_t hits;       /* trace mode with caller learning: entries in a row not redirected */
};

RT_HIDDEN extern struct rt_rec pk_rt_recs[PGOKIT_RT_MAX_FUNCS];
RT_HIDDEN extern uint32_t pk_rt_hash[RT_HASH_SIZE];  /* record index + 1, 0 = empty */
RT_HIDDEN extern uint32_t pk_rt_nrec;                /* records allocated (may exceed max) */
RT_HIDDEN extern uint64_t pk_rt_dropped;             /* sites not recorded: table full */
RT_HIDDEN extern uint64_t pk_rt_unpatched;           /* sites that could not be patched */
RT_HIDDEN extern int pk_rt_inited;
RT_HIDDEN extern int pk_rt_count_mode;               /* PGOKIT_RT_MODE=count */
RT_HIDDEN extern int pk_rt_patch_enabled;            /* PGOKIT_RT_PATCH=0 disables */
RT_HIDDEN extern int pk_rt_prefix_enabled;           /* PGOKIT_RT_PREFIX=0: NOPs only */
RT_HIDDEN extern int pk_rt_disabled;                 /* PGOKIT_RT_MODE=off */
RT_HIDDEN extern int pk_rt_patch_lock;               /* serialises mprotect + patch */

#ifndef RT_DEFAULT_LEARN_CALLS
#define RT_DEFAULT_LEARN_CALLS 16u   /* PGOKIT_RT_LEARN_CALLS */
#endif
#define RT_MAX_TEXT 64
RT_HIDDEN extern uint32_t pk_rt_learn_calls;          /* unredirectable hook entries before the NOP */
RT_HIDDEN extern uint64_t pk_rt_redirected;           /* caller call sites retargeted past a hook */
RT_HIDDEN extern uintptr_t pk_rt_text[RT_MAX_TEXT][2]; /* executable ranges, filled once at start-up */
RT_HIDDEN extern uint32_t pk_rt_ntext;
/* Sorted function-start tables of the loaded modules (.eh_frame_hdr, the
 * common encoding only): they tell whether a 0x67 byte before a hook call is
 * the hook's own addr32 prefix. Filled once at start-up. */
#define RT_MAX_EH 16
struct rt_eh { uintptr_t hdr; const int32_t *tab; uint32_t n; };
RT_HIDDEN extern struct rt_eh pk_rt_eh[RT_MAX_EH];
RT_HIDDEN extern uint32_t pk_rt_neh;

/* Called by the trampoline with the return address of the hook call and the
 * instrumented function's own return address (its caller's call site end). */
RT_HIDDEN void pk_rt_hit(uintptr_t ret, uintptr_t cret);
/* Makes the code page left writable by the last patch read-only again
 * (wait = 0: only if no thread is patching, for signal handlers). */
RT_HIDDEN void pk_rt_seal_code(int wait);
/* Reads the mode variables from environ without libc (safe on the hot path). */
RT_HIDDEN void pk_rt_early_init(void);
/* Same address as __fentry__, but never interposed: what patched calls must target. */
RT_HIDDEN extern char pk_rt_fentry_self[];

/* Defined next to the constructor/atexit code (pgokit_rt.c); referenced from
 * rt_hit.c so that linking the static archive for __fentry__ also pulls the
 * dump machinery in. */
RT_HIDDEN extern const int pk_rt_dump_anchor;

#endif
