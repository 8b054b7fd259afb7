/* jumptable_a64.c — the switch tables of AArch64 code (pk_jtable_resolve's
 * contract, infer.h). Both compilers emit compressed tables of 1, 2 or 4
 * byte entries, each the distance from a base label in words:
 *
 *   clang-19: adrp x9, T; add x9, x9, :lo12:T; adr x10, B;
 *             ldrb w11, [x9, x8]; add x10, x10, x11, lsl #2; br x10
 *   gcc-12:   adrp x2, T; add x2, x2, :lo12:T; ldrb w2, [x2, w0, uxtw];
 *             adr x0, B; add x2, x0, w2, sxtb #2; br x2
 *
 * (ldrh/ldrsh with lsl #1, ldr w/ldrsw with lsl #2 for wider tables; when
 * clang cannot size the code, inline asm in a case, 4-byte byte offsets
 * added without a shift),
 * bounded by `cmp wI, #N; b.hi default` (or b.hs/b.ls/b.lo) on the index
 * or a register it was copied from. Each step looks for the nearest earlier
 * instruction that may write the register it needs; an instruction that may
 * write it but is not the expected form leaves the jump unresolved, so a
 * table is never read from a misidentified address. Only the few forms
 * above are decoded: pk_insn has no operands. */
#include "infer/infer_int.h"

#define A64_SCAN 64              /* instructions walked back at most */

typedef struct a64_ctx {
    const pk_elf *elf;
    const pk_insn *insns;
    size_t n;
} a64_ctx;

static bool word(const a64_ctx *c, size_t i, uint32_t *w)
{
    const uint8_t *p = pk_elf_vaddr_bytes(c->elf, c->insns[i].addr, 4);
    if (!p || c->insns[i].len != 4)
        return false;
    *w = pk_ld32(p);
    return true;
}

static int64_t sext(uint64_t v, unsigned bits)
{
    return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* May the instruction write general register r (0..30)? Over-approximate:
 * data processing and loads name their destination in bits 0-4 (pairs also
 * in 10-14); stores and branches write none; a call clobbers x0-x18, x30. */
static bool may_write(const pk_insn *in, uint32_t w, unsigned r)
{
    if (in->cls == PK_INSN_CALL || in->cls == PK_INSN_ICALL)
        return r <= 18 || r == 30;
    if (in->cls != PK_INSN_OTHER)
        return false;
    if ((w & 0x0A000000) == 0x08000000) {        /* loads and stores */
        bool vec = (w >> 26) & 1;
        unsigned op = (w >> 27) & 7;
        if (op == 5)                              /* pairs: L is bit 22 */
            return !vec && ((w >> 22) & 1) && ((w & 31) == r || ((w >> 10) & 31) == r);
        if (op == 7)                              /* single register: opc 00 stores */
            return !vec && ((w >> 22) & 3) != 0 && (w & 31) == r;
        if (op == 3)                              /* literal loads */
            return !vec && (w & 31) == r;
        return (w & 31) == r;                     /* exclusives, atomics: assume so */
    }
    if ((w & 0x1C000000) == 0x14000000)          /* branches, system (incl. hints) */
        return (w & 0xFFF00000) == 0xD5300000 && (w & 31) == r;   /* mrs */
    return (w & 31) == r;
}

static bool no_fallthrough(const pk_insn *in)
{
    return in->cls == PK_INSN_RET || in->cls == PK_INSN_JMP || in->cls == PK_INSN_IJMP;
}

/* The nearest instruction before insns[from] that may write r; SIZE_MAX if
 * none within the scan or its bytes are unreadable. */
static size_t find_def(const a64_ctx *c, size_t from, unsigned r, uint32_t *w)
{
    for (size_t i = from, steps = 0; i-- > 0 && steps < A64_SCAN; steps++) {
        if (!word(c, i, w) || no_fallthrough(&c->insns[i]))
            return SIZE_MAX;   /* another path: its definitions are not ours */
        if (may_write(&c->insns[i], *w, r))
            return i;
    }
    return SIZE_MAX;
}

/* `adr xR, L` or `adrp xR, P; add xR, xR, #lo12` defining r before insns[from]. */
static bool address_of(const a64_ctx *c, size_t from, unsigned r, uint64_t *addr)
{
    uint32_t w;
    size_t i = find_def(c, from, r, &w);
    if (i == SIZE_MAX)
        return false;
    uint64_t pc = c->insns[i].addr;
    int64_t imm = sext((uint64_t)((w >> 5) & 0x7FFFF) << 2 | ((w >> 29) & 3), 21);
    if ((w & 0x9F000000) == 0x10000000) {        /* adr */
        *addr = pc + (uint64_t)imm;
        return true;
    }
    /* add xR, xR, #imm12 (unshifted), after an adrp of xR */
    if ((w & 0xFFC00000) != 0x91000000 || ((w >> 5) & 31) != r)
        return false;
    uint64_t lo = (w >> 10) & 0xFFF;
    size_t j = find_def(c, i, r, &w);
    if (j == SIZE_MAX || (w & 0x9F000000) != 0x90000000)
        return false;
    imm = sext((uint64_t)((w >> 5) & 0x7FFFF) << 2 | ((w >> 29) & 3), 21);
    *addr = (c->insns[j].addr & ~(uint64_t)0xFFF) + (uint64_t)(imm * 4096) + lo;
    return true;
}

/* mov rd, rm / and rd, rn, #mask / ubfm (uxtb, uxth): the source register
 * of a copy, or 32 when w is none of them. */
static unsigned copy_source(uint32_t w)
{
    if ((w & 0x7FE0FFE0) == 0x2A0003E0)
        return (w >> 16) & 31;
    if ((w & 0x7F800000) == 0x12000000 || (w & 0x7F800000) == 0x53000000)
        return (w >> 5) & 31;
    return 32;
}

/* Is r, before insns[at], a copy of one of `regs`? */
static bool copy_of(const a64_ctx *c, size_t at, unsigned r, uint32_t regs)
{
    uint32_t w;
    size_t i = find_def(c, at, r, &w);
    unsigned src = i == SIZE_MAX ? 32 : copy_source(w);
    return src < 32 && (regs >> src & 1);
}

/* The table's entry count from a `cmp wI, #N` on the index (or a register
 * it was copied from by mov / and / uxtb) before insns[load], with an
 * unsigned conditional branch between it and the load; 0 when none. */
static uint32_t find_bound(const a64_ctx *c, size_t load, unsigned idx)
{
    uint32_t regs = 1u << idx;   /* the index and its sources */
    int cond = -1;               /* of the nearest b.cond before the load */
    for (size_t i = load, steps = 0; i-- > 0 && steps < A64_SCAN; steps++) {
        uint32_t w;
        if (!word(c, i, &w))
            return 0;
        if (no_fallthrough(&c->insns[i])) {
            /* the code after it is reached by a branch (gcc: `cmp; b.ls
             * table; <default>; ret; table:`): go on from that branch */
            uint64_t start = c->insns[i + 1].addr;
            size_t j = i;
            while (j-- > 0 && i - j < A64_SCAN && !(c->insns[j].cls == PK_INSN_CJMP && c->insns[j].target == start))
                ;
            if (j == SIZE_MAX || i - j >= A64_SCAN || !word(c, j, &w) || (w & 0xFF000010) != 0x54000000)
                return 0;
            if (cond < 0)
                cond = (int)(w & 15);
            i = j;
            continue;
        }
        if ((w & 0xFF000010) == 0x54000000) {    /* b.cond */
            if (cond < 0)
                cond = (int)(w & 15);
            continue;
        }
        unsigned rd = w & 31, rn = (w >> 5) & 31;
        /* cmp wN|xN, #imm (subs zr, rn, #imm12), on the index or on another
         * copy of its source (clang: `and w8, w0, #0xff; cmp w8, #19; b.hi;
         * and x8, x0, #0xff; ldrb w11, [x9, x8]`) */
        if ((w & 0x7FC00000) == 0x71000000 && rd == 31 && rn != 31 && (regs >> rn & 1 || copy_of(c, i, rn, regs))) {
            uint32_t imm = (w >> 10) & 0xFFF;
            if (cond == 8 || cond == 9)          /* hi / ls: index <= imm in range */
                return imm + 1;
            if (cond == 2 || cond == 3)          /* hs / lo: index < imm */
                return imm;
            return 0;
        }
        if (!(regs >> rd & 1) || !may_write(&c->insns[i], w, rd))
            continue;
        unsigned src = copy_source(w);
        if (src == 32)
            return 0;                            /* the index comes from elsewhere */
        regs = (regs & ~(1u << rd)) | 1u << src;
    }
    return 0;
}

/* The register value a table load leaves, then the add's extension. */
static uint64_t entry_value(const uint8_t *p, unsigned size, unsigned opc, int ext)
{
    uint64_t raw = size == 0 ? p[0] : size == 1 ? pk_ld16(p) : pk_ld32(p);
    unsigned bits = 8u << size;
    uint64_t v = raw;
    if (opc == 2)                                /* ldrs* to x */
        v = (uint64_t)sext(raw, bits);
    else if (opc == 3)                           /* ldrs* to w: upper half zero */
        v = (uint32_t)sext(raw, bits);
    switch (ext) {
    case 0: return v & 0xFF;                     /* uxtb */
    case 1: return v & 0xFFFF;                   /* uxth */
    case 2: return v & 0xFFFFFFFF;               /* uxtw */
    case 4: return (uint64_t)sext(v, 8);         /* sxtb */
    case 5: return (uint64_t)sext(v, 16);        /* sxth */
    case 6: return (uint64_t)sext(v, 32);        /* sxtw */
    default: return v;                           /* lsl, uxtx, sxtx */
    }
}

/* An entry's target: the base label plus the loaded, extended and shifted
 * entry (the ldr and add decoded from the code). */
typedef struct a64_form {
    uint64_t base;
    unsigned size, opc;
    int ext;
    unsigned shift;
} a64_form;

static uint64_t a64_entry(const uint8_t *q, const void *form)
{
    const a64_form *f = form;
    return f->base + (entry_value(q, f->size, f->opc, f->ext) << f->shift);
}

int pk_jtable_resolve_a64(const pk_elf *elf, const pk_insn *insns, size_t n, size_t k, pk_vec *targets,
                          pk_err *err)
{
    a64_ctx c = {elf, insns, n};
    uint32_t w;
    if (k >= n || insns[k].cls != PK_INSN_IJMP || !word(&c, k, &w) || (w & 0xFFFFFC1F) != 0xD61F0000)
        return 0;                                /* br xT (not the PAC forms) */
    unsigned t = (w >> 5) & 31;
    /* add xT, xB, xE, lsl #2  |  add xT, xB, wE, (s|u)xt(b|h|w) #2 */
    size_t ai = find_def(&c, k, t, &w);
    if (ai == SIZE_MAX)
        return 0;
    int ext;
    unsigned shift;
    if ((w & 0xFFE00000) == 0x8B000000 && !((w >> 22) & 3) && ((w >> 10) & 63) <= 4) {
        ext = -1;                                /* lsl #0..4 */
        shift = (w >> 10) & 63;
    } else if ((w & 0xFFE00000) == 0x8B200000 && ((w >> 10) & 7) <= 4) {
        ext = (int)((w >> 13) & 7);
        shift = (w >> 10) & 7;
    } else {
        return 0;
    }
    unsigned base_reg = (w >> 5) & 31, ent_reg = (w >> 16) & 31;
    uint64_t base;
    if (!address_of(&c, ai, base_reg, &base))
        return 0;
    /* the load: ldr(b|h|sb|sh|sw) / ldr w, [xT, xI|wI, (lsl|uxtw|sxtw) #s] */
    size_t li = find_def(&c, ai, ent_reg, &w);
    if (li == SIZE_MAX || (w & 0x3B200C00) != 0x38200800 || ((w >> 26) & 1))
        return 0;
    unsigned size = w >> 30, opc = (w >> 22) & 3, opt = (w >> 13) & 7, scaled = (w >> 12) & 1;
    if (opc == 0 || size == 3 || (size == 2 && opc == 3) || (size > 0 && !scaled) || (opt != 2 && opt != 3))
        return 0;                                /* a store, 8-byte, unscaled or sign-extended index */
    unsigned tab_reg = (w >> 5) & 31, idx = (w >> 16) & 31;
    uint64_t table;
    if (!address_of(&c, li, tab_reg, &table))
        return 0;
    /* the base must still be what it was at the add (no redefinition after the load) */
    uint64_t base2;
    if (!address_of(&c, ai, base_reg, &base2) || base2 != base)
        return 0;
    /* every entry is an instruction of the function (A64 tables are
     * relative to a label inside it; a .cold part is not reached so) */
    a64_form f = {base, size, opc, ext, shift};
    return pk_jt_read(elf, insns, n, table, (size_t)1 << size, find_bound(&c, li, idx), false, a64_entry, &f,
                      targets, err);
}
