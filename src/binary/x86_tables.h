/* x86_tables.h — opcode tables of the fast x86-64 decoder (x86.c), generated
 * into x86_tables.c and x86_tables_evex.c by bench/x86_gen_tables.c
 * (`bench/x86_decode.sh gen`) from what Zydis decodes: a (mod==3, reg) of an
 * opcode is claimed only where every probed ModRM/SIB/REX/VEX/EVEX variant
 * was answered alike and matched the length model of x86.c exactly, so the
 * fast path agrees with Zydis (checked by tests/unit/test_binary_x86.c). */
#ifndef PK_X86_TABLES_H
#define PK_X86_TABLES_H

#include <stddef.h>
#include <stdint.h>

enum {
    PK_X86_MODRM = 1,  /* a ModRM byte (and SIB / displacement) follows the opcode */
    PK_X86_V1111 = 2,  /* VEX: only valid with the (inverted) vvvv field = 1111 */
};

typedef struct pk_x86_ent {
    /* [W][VEX.L]: bit reg = valid with a memory operand, bit 8+reg = valid
     * with a register operand (mod = 3); bit 0 = valid, without ModRM. */
    uint16_t mask[2][2];
    uint32_t imm[2];   /* [W]: immediate bytes, a nibble per ModRM.reg */
    uint32_t cls;      /* enum pk_insn_class, 3 bits per ModRM.reg */
    uint32_t flags;
} pk_x86_ent;

typedef struct pk_x86_evex_ent {
    /* [W][L'L:b:aaa!=0:z], bits as in pk_x86_ent.mask */
    uint16_t mask[2][32];
    uint32_t imm[2];   /* [W]: immediate bytes, a nibble per ModRM.reg */
    uint32_t flags;    /* PK_X86_V1111: vvvv = 1111 and V' = 1 required */
} pk_x86_evex_ent;

/* Hidden: one RIP-relative load instead of a GOT indirection under -fPIC. */
#pragma GCC visibility push(hidden)
/* Index 0 of each map means "not handled: ask Zydis". */
extern const pk_x86_ent pk_x86_ents[];
/* [LOCK][map: 0 = one byte, 1 = 0F, 2 = 0F38, 3 = 0F3A][prefix: none, 66, F3, F2][opcode] */
extern const uint16_t pk_x86_legacy[2][4][4][256];
/* [map - 1][VEX.pp][opcode] */
extern const uint16_t pk_x86_vex[3][4][256];
extern const pk_x86_evex_ent pk_x86_evex_ents[];
/* [EVEX.mmm][EVEX.pp][opcode] */
extern const uint16_t pk_x86_evex[8][4][256];
#pragma GCC visibility pop

/* Bytes after a ModRM byte taken by its SIB byte and displacement; `sib` is
 * the byte after the ModRM, looked at only when a SIB is present (mod != 3,
 * rm == 4). Shared by the decoder and the table generator. */
static inline size_t pk_x86_modrm_tail(unsigned modrm, unsigned sib)
{
    unsigned mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3)
        return 0;
    size_t n = rm == 4; /* the SIB byte */
    if (rm == 4 && mod == 0 && (sib & 7) == 5)
        return n + 4; /* no base: disp32 */
    if (mod == 1)
        return n + 1;
    if (mod == 2 || (mod == 0 && rm == 5))
        return n + 4;
    return n;
}

/* The fast path alone (x86.c): the length, or 0 when Zydis must decide
 * (then *out is unspecified). Exposed for tests and benchmarks. */
struct pk_insn;
size_t pk_x86_decode_fast(const uint8_t *code, size_t len, uint64_t addr, struct pk_insn *out);

#endif
