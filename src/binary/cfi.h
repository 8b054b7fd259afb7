/* cfi.h — a binary's call-frame information (.eh_frame): where each
 * function keeps its caller's registers, at every instruction.
 *
 * Why: `perf record --call-graph dwarf` samples carry the user registers and
 * a copy of the top of the user stack instead of a frame-pointer chain.
 * Unwinding that copy with the binary's CFI gives the whole call chain of
 * code built without frame pointers (the default of -O2 builds), where a
 * frame-pointer chain skips or stops at every function that keeps none.
 * .eh_frame is an allocated section: stripped and -O2 binaries have it (it
 * serves C++ exceptions and backtraces), unlike .debug_frame.
 *
 * Format: DWARF 5 §6.4 (CIE, FDE, call-frame instructions) with the LSB's
 * .eh_frame changes (CIE id 0, the CIE pointer relative to its own field,
 * augmentation "z" data and DW_EH_PE pointer encodings). Only what unwinding
 * needs is kept: the FDE of each code range is indexed once; the row of one
 * address is computed on demand by running its CIE's and FDE's instructions.
 *
 *     pk_cfi *cfi;
 *     if (pk_cfi_open(&cfi, elf, &err)) ...      (no .eh_frame: an empty table)
 *     pk_cfi_row row;
 *     int r = pk_cfi_row_at(cfi, vaddr, &row, &err);   1: no FDE covers vaddr
 *     pk_cfi_free(cfi);
 */
#ifndef PK_CFI_H
#define PK_CFI_H

#include "binary/binary.h"

/* The DWARF register numbers rows track: enough for the stack pointer,
 * frame pointer and return address of x86-64 (7, 6, 16) and AArch64 (31,
 * 29, 30). Rules of higher registers (vector registers) are read and
 * dropped. */
#define PK_CFI_NREGS 33

enum pk_cfi_rule_kind {
    PK_CFI_UNDEFINED = 0, /* not recoverable (also: never mentioned and not "same") */
    PK_CFI_SAME,          /* the caller's value is this frame's */
    PK_CFI_OFFSET,        /* saved in memory at CFA + offset */
    PK_CFI_VAL_OFFSET,    /* the value CFA + offset */
    PK_CFI_REGISTER,      /* held in register `reg` */
    PK_CFI_EXPRESSION,    /* a DWARF expression (not evaluated: unwinding stops) */
};

typedef struct pk_cfi_rule {
    uint8_t kind;         /* enum pk_cfi_rule_kind */
    uint16_t reg;         /* PK_CFI_REGISTER */
    int64_t offset;       /* PK_CFI_OFFSET, PK_CFI_VAL_OFFSET */
} pk_cfi_rule;

typedef struct pk_cfi_row {
    uint64_t start, end;  /* the addresses this row holds for: [start, end) */
    uint16_t cfa_reg;     /* CFA = value of cfa_reg + cfa_offset ... */
    int64_t cfa_offset;
    bool cfa_expression;  /* ... unless given by an expression (PLT entries) */
    uint16_t ra_reg;      /* the CIE's return-address column */
    pk_cfi_rule regs[PK_CFI_NREGS];
} pk_cfi_row;

typedef struct pk_cfi pk_cfi;

/* Indexes the FDEs of elf's .eh_frame. A binary without one gives an empty
 * table (every lookup answers 1). A malformed entry is an error naming the
 * file and the section offset. */
int pk_cfi_open(pk_cfi **out, pk_elf *elf, pk_err *err);
void pk_cfi_free(pk_cfi *cfi);
size_t pk_cfi_num_fdes(const pk_cfi *cfi);
/* The code range [begin, end) of FDE i (0 .. pk_cfi_num_fdes - 1), in
 * address order: with pk_cfi_row_at and each row's end, the whole table. */
void pk_cfi_fde_range(const pk_cfi *cfi, size_t i, uint64_t *begin, uint64_t *end);
/* A DWARF register's name for the binary's machine ("rbp", "x29"; "r%u"
 * for others), into buf. */
const char *pk_cfi_reg_name(const pk_cfi *cfi, unsigned reg, char *buf, size_t cap);
uint16_t pk_cfi_machine(const pk_cfi *cfi);   /* EM_X86_64, EM_AARCH64 ... */
/* The DWARF numbers of `machine`'s stack and frame pointers (x86-64: rsp 7,
 * rbp 6; AArch64: sp 31, x29 29); false for another machine. Either output
 * may be NULL. */
bool pk_cfi_abi_regs(uint16_t machine, uint16_t *sp, uint16_t *fp);

/* The row of `vaddr` (a link-time address): 0 and *row filled; 1 when no FDE
 * covers vaddr; -1 on instructions that do not decode (file and offset in
 * err). A register no instruction mentions is PK_CFI_SAME: what unwinding
 * needs of the ABIs' defaults (the frame pointer is callee-saved; AArch64's
 * return-address column, the link register, holds a leaf's return address
 * until the function saves it). */
int pk_cfi_row_at(const pk_cfi *cfi, uint64_t vaddr, pk_cfi_row *row, pk_err *err);

/* How much of a binary's code keeps a frame pointer, function by function
 * (FDE by FDE). A function has a frame when its CFI has more than one row
 * (it moves the stack pointer or saves a register: a leaf that does
 * neither needs no frame pointer in any build); it sets up a frame pointer
 * when its entry holds the frame-pointer prologue (pk_arch.frame_setup) or
 * when one of its first rows computes the CFA from the frame register (rbp,
 * x29: clang's AArch64 frames that move sp before saving x29). Only the
 * first PK_CFI_PROLOGUE_ROWS rows are run: a frame is set up in the
 * prologue. */
#define PK_CFI_PROLOGUE_ROWS 8
typedef struct pk_cfi_frames {
    size_t functions, framed, with_fp; /* FDEs, those with a frame, those that set up a frame pointer */
    uint64_t bytes, framed_bytes, with_fp_bytes; /* their code, in bytes */
} pk_cfi_frames;
/* 0 and *out filled (all zero without .eh_frame); -1 on CFI that does not
 * decode (file and offset in err). elf is the binary cfi was opened on. */
int pk_cfi_frame_pointers(const pk_cfi *cfi, const pk_elf *elf, pk_cfi_frames *out, pk_err *err);

#endif
