/* stack_cfi.h — a user call chain from a sample's registers and stack copy
 * (`perf record --call-graph dwarf`), unwound with the binary's CFI.
 *
 * perf copies the top of the user stack (8 KiB by default) and the user
 * registers into each sample and leaves the unwinding to the reader. Here
 * the frames of the profiled binary are unwound with its .eh_frame
 * (binary/cfi.h): each row gives the canonical frame address (CFA) from the
 * stack or frame pointer, and where the return address and the caller's
 * frame pointer were saved. The chain stops at the first frame outside the
 * binary (its CFI is not loaded: that frame is still listed, so that callers
 * count it as a cut), at an address no FDE covers, at a return address
 * outside the stack copy, at an undefined return address (the outermost
 * frame) or when the stack pointer would not grow.
 *
 * The chain has the form of a perf call chain: runtime addresses, leaf
 * first, the leaf's instruction pointer then return addresses.
 */
#ifndef PK_STACK_CFI_H
#define PK_STACK_CFI_H

#include "binary/cfi.h"
#include "perf/perf_data.h"

/* A sample's user registers, by DWARF register number. */
typedef struct pk_user_regs {
    uint64_t pc;
    uint64_t reg[PK_CFI_NREGS];
    uint64_t known;              /* bit r: reg[r] holds a value */
} pk_user_regs;

/* perf's REGS_USER block (abi, then one value per bit of mask, in bit
 * order; `values` may be unaligned) to DWARF numbering, for EM_X86_64 and
 * EM_AARCH64. Returns false when the sample has no registers (abi 0), the
 * machine is another, or the mask lacks the instruction or stack pointer. */
bool pk_user_regs_from_perf(pk_user_regs *out, uint16_t machine, uint64_t abi, uint64_t mask, const void *values);

/* The perf_event_attr.sample_regs_user mask that carries what unwinding
 * reads (instruction, stack and frame pointers, link register): for
 * writers and tests. */
uint64_t pk_user_regs_mask(uint16_t machine);

typedef enum pk_stack_stop {
    PK_STACK_END = 0,            /* the outermost frame (undefined return address) */
    PK_STACK_EXTERNAL,           /* a frame outside the binary */
    PK_STACK_NO_FDE,             /* an address no FDE covers */
    PK_STACK_UNREADABLE,         /* a saved value outside the stack copy */
    PK_STACK_NO_PROGRESS,        /* the stack pointer did not grow */
    PK_STACK_UNSUPPORTED,        /* a rule unwinding does not evaluate (an expression) */
    PK_STACK_FULL,               /* `max` frames listed */
    PK_STACK_BAD_CFI,            /* instructions that do not decode (err set) */
} pk_stack_stop;

/* The frames worth room for: a frame takes at least its 8-byte return
 * address, so perf's default 8 KiB copy holds at most 1,024 (a longer
 * chain ends PK_STACK_FULL). */
#define PK_STACK_MAX_FRAMES 1024

/* runtime address -> link-time address in the binary, or UINT64_MAX when
 * the address is in other code */
typedef uint64_t (*pk_to_link_fn)(void *ctx, uint64_t runtime);

/* Unwinds: out[0] = regs->pc, then return addresses. `stack` holds
 * stack_size bytes copied from the address in the stack pointer. Returns
 * the number of frames (>= 1) and sets *stop. */
size_t pk_stack_unwind(const pk_cfi *cfi, pk_to_link_fn to_link, void *ctx, const pk_user_regs *regs,
                       const uint8_t *stack, uint64_t stack_size, uint64_t *out, size_t max, pk_stack_stop *stop,
                       pk_err *err);

/* A perf sample's chain: its registers and stack copy unwound, each frame
 * then in link-time addresses (UINT64_MAX: other code) into link[]; raw[]
 * is scratch. Both hold max entries. 0 frames when the sample carries no
 * stack copy or no usable registers for the binary's machine; -1 (err set)
 * only for CFI instructions that do not decode. */
int pk_stack_unwind_sample(const pk_cfi *cfi, pk_to_link_fn to_link, void *ctx, const pk_sample *s, uint64_t *raw,
                           uint64_t *link, size_t max, size_t *n, pk_stack_stop *stop, pk_err *err);

/* Every sample of a perf.data file that carries registers and a stack copy,
 * unwound against `bin` (its mappings from the file's MMAP records): the
 * chain in link-time addresses of the binary (UINT64_MAX: a frame in other
 * code) to `each`, in file order. Samples without a stack copy are skipped.
 * A nonzero return of `each` stops the reading and is returned. For
 * `pgokit dump --unwind` and its comparison with perf's own unwinder. */
typedef int (*pk_unwound_fn)(void *ctx, const pk_sample *s, const uint64_t *frames, size_t n, pk_stack_stop stop);
int pk_stack_unwind_file(const char *perf_path, pk_binary *bin, const char *bin_path, pk_unwound_fn each, void *ctx,
                         pk_err *err);

/* A stop reason's name ("end", "external", "no-fde", ...). */
const char *pk_stack_stop_name(pk_stack_stop stop);

#endif
