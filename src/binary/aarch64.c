/* aarch64.c — A64 instruction length, branch class and direct target.
 *
 * A64 is fixed-width: every instruction is one little-endian 32-bit word at
 * a 4-aligned address, so the length is always 4 and only branches need
 * recognising. Every control transfer sits in the "branches, exception
 * generation and system" group, whose words share their top six bits with
 * few others: a 64-entry table on bits [31:26] picks a handful of
 * (mask, value) patterns and the first match wins (the exact forms are
 * listed before the register-operand forms they overlap).
 *
 * Encodings from the Arm ARM (DDI 0487), section C4.1.65 "Branches,
 * exception generating and system instructions"; the pointer-authenticated
 * forms are FEAT_PAuth (Armv8.3), BC.cond is FEAT_HBC (Armv8.8), RETAASPPC
 * and friends FEAT_PAuth_LR (Armv9.5). BTI, PACIASP, AUTIASP, XPACLRI... are
 * HINT-space system instructions: not branches.
 */
#include "binary/binary.h"

enum { IMM_NONE, IMM26, IMM19, IMM14 };

typedef struct a64_pat {
    uint32_t mask, value;
    uint8_t cls;   /* enum pk_insn_class */
    uint8_t imm;   /* where the word-scaled PC-relative offset is */
} a64_pat;

/* Grouped by bits [31:26]; within a group, specific before general. */
static const a64_pat pats[] = {
    /* 0x05: 000101 */
    {0xFC000000, 0x14000000, PK_INSN_JMP, IMM26},   /* B */
    /* 0x25: 100101 */
    {0xFC000000, 0x94000000, PK_INSN_CALL, IMM26},  /* BL */
    /* 0x15: 010101 */
    {0xFF000010, 0x54000000, PK_INSN_CJMP, IMM19},  /* B.cond */
    {0xFF000010, 0x54000010, PK_INSN_CJMP, IMM19},  /* BC.cond */
    {0xFFE0001F, 0x5500001F, PK_INSN_RET, IMM_NONE},/* RETAASPPC <label> (the label feeds the
                                                       authentication, not the return) */
    {0xFFE0001F, 0x5520001F, PK_INSN_RET, IMM_NONE},/* RETABSPPC <label> */
    /* 0x0D: 001101 and 0x2D: 101101 (sf in bit 31 / b5 for TBZ) */
    {0x7E000000, 0x34000000, PK_INSN_CJMP, IMM19},  /* CBZ, CBNZ */
    {0x7E000000, 0x36000000, PK_INSN_CJMP, IMM14},  /* TBZ, TBNZ */
    /* 0x35: 110101 — unconditional branch (register) */
    {0xFFFFFFFF, 0xD65F0BFF, PK_INSN_RET, IMM_NONE},   /* RETAA */
    {0xFFFFFFFF, 0xD65F0FFF, PK_INSN_RET, IMM_NONE},   /* RETAB */
    {0xFFFFFFE0, 0xD65F0BE0, PK_INSN_RET, IMM_NONE},   /* RETAASPPCR Xm */
    {0xFFFFFFE0, 0xD65F0FE0, PK_INSN_RET, IMM_NONE},   /* RETABSPPCR Xm */
    {0xFFFFFC1F, 0xD65F0000, PK_INSN_RET, IMM_NONE},   /* RET Xn */
    {0xFFFFFC1F, 0xD61F0000, PK_INSN_IJMP, IMM_NONE},  /* BR Xn */
    {0xFFFFFC1F, 0xD61F081F, PK_INSN_IJMP, IMM_NONE},  /* BRAAZ Xn */
    {0xFFFFFC1F, 0xD61F0C1F, PK_INSN_IJMP, IMM_NONE},  /* BRABZ Xn */
    {0xFFFFFC00, 0xD71F0800, PK_INSN_IJMP, IMM_NONE},  /* BRAA Xn, Xm|SP */
    {0xFFFFFC00, 0xD71F0C00, PK_INSN_IJMP, IMM_NONE},  /* BRAB Xn, Xm|SP */
    {0xFFFFFC1F, 0xD63F0000, PK_INSN_ICALL, IMM_NONE}, /* BLR Xn */
    {0xFFFFFC1F, 0xD63F081F, PK_INSN_ICALL, IMM_NONE}, /* BLRAAZ Xn */
    {0xFFFFFC1F, 0xD63F0C1F, PK_INSN_ICALL, IMM_NONE}, /* BLRABZ Xn */
    {0xFFFFFC00, 0xD73F0800, PK_INSN_ICALL, IMM_NONE}, /* BLRAA Xn, Xm|SP */
    {0xFFFFFC00, 0xD73F0C00, PK_INSN_ICALL, IMM_NONE}, /* BLRAB Xn, Xm|SP */
    /* Exception returns: never in user code, but they end a block like RET */
    {0xFFFFFFFF, 0xD69F03E0, PK_INSN_RET, IMM_NONE},   /* ERET */
    {0xFFFFFFFF, 0xD69F0BFF, PK_INSN_RET, IMM_NONE},   /* ERETAA */
    {0xFFFFFFFF, 0xD69F0FFF, PK_INSN_RET, IMM_NONE},   /* ERETAB */
    {0xFFFFFFFF, 0xD6BF03E0, PK_INSN_RET, IMM_NONE},   /* DRPS */
};

typedef struct a64_group { uint8_t first, count; } a64_group;

/* bits [31:26] → the patterns above (count 0: no branch has these bits) */
static const a64_group groups[64] = {
    [0x05] = {0, 1},
    [0x25] = {1, 1},
    [0x15] = {2, 4},
    [0x0D] = {6, 2},
    [0x2D] = {6, 2},
    [0x35] = {8, 19},
};

_Static_assert(sizeof pats / sizeof pats[0] == 27, "groups[] indexes pats[]");

static int64_t sext(uint32_t v, unsigned bits)
{
    return (int64_t)((uint64_t)v << (64 - bits)) >> (64 - bits);
}

size_t pk_a64_decode(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out)
{
    out->addr = addr;
    out->target = 0;
    if (len < 4 || (addr & 3)) {
        out->len = 1;
        out->cls = PK_INSN_INVALID;
        return 0;
    }
    uint32_t w = pk_ld32(code);
    out->len = 4;
    out->cls = PK_INSN_OTHER;
    const a64_group g = groups[w >> 26];
    for (const a64_pat *p = pats + g.first, *end = p + g.count; p < end; p++) {
        if ((w & p->mask) != p->value)
            continue;
        out->cls = p->cls;
        int64_t off;
        switch (p->imm) {
        case IMM26: off = sext(w & 0x3FFFFFF, 26); break;
        case IMM19: off = sext((w >> 5) & 0x7FFFF, 19); break;
        case IMM14: off = sext((w >> 5) & 0x3FFF, 14); break;
        default: return 4;
        }
        out->target = addr + (uint64_t)(off * 4);
        return 4;
    }
    return 4;
}
