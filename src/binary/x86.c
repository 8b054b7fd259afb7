/* x86.c — x86-64 instruction length, branch class and direct target.
 *
 * Two decoders with identical answers:
 * - a table-driven fast path (~10x cheaper) for the encodings compilers
 *   emit: legacy prefixes, REX, the 1-byte / 0F / 0F38 / 0F3A maps, VEX
 *   and EVEX.
 *   Its tables (x86_tables.c) are generated from Zydis itself, so an opcode
 *   is only claimed where Zydis' answer fits the length model below;
 * - Zydis 4 in MINIMAL mode, the reference, for everything else: LOCK, 67h,
 *   XOP, 3DNow!, mixed 66/F2/F3, REX before a prefix, invalid or
 *   truncated bytes, and any opcode the generator could not model. */
#include "binary/binary.h"
#include "binary/x86_tables.h"

#include <Zydis/Zydis.h>

size_t pk_x86_decode_zydis(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out)
{
    /* Initialising a decoder is a handful of stores; doing it per call keeps
     * this function reentrant without any global state. */
    ZydisDecoder dec;
    ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    ZydisDecoderEnableMode(&dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
    ZydisDecodedInstruction in;
    out->addr = addr;
    out->target = 0;
    if (len == 0 || !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code, len, &in))) {
        out->len = 1;
        out->cls = PK_INSN_INVALID;
        return 0;
    }
    out->len = in.length;
    /* Direct branches carry a relative immediate; ZYDIS_ATTRIB_IS_RELATIVE
     * alone is also set for RIP-relative memory operands (call *x(%rip)). */
    int rel = in.raw.imm[0].size != 0 && in.raw.imm[0].is_relative;
    switch (in.meta.category) {
    case ZYDIS_CATEGORY_CALL:
        out->cls = rel ? PK_INSN_CALL : PK_INSN_ICALL;
        break;
    case ZYDIS_CATEGORY_RET:
        out->cls = PK_INSN_RET;
        break;
    case ZYDIS_CATEGORY_UNCOND_BR:
        out->cls = rel ? PK_INSN_JMP : PK_INSN_IJMP;
        break;
    case ZYDIS_CATEGORY_COND_BR:
        out->cls = PK_INSN_CJMP;
        break;
    default:
        out->cls = (in.mnemonic == ZYDIS_MNEMONIC_IRET || in.mnemonic == ZYDIS_MNEMONIC_IRETD ||
                    in.mnemonic == ZYDIS_MNEMONIC_IRETQ) ? PK_INSN_RET : PK_INSN_OTHER;
        rel = 0;
        break;
    }
    if (rel) {
        /* The relative displacement is the (only) immediate of a branch. */
        out->target = addr + in.length + (uint64_t)in.raw.imm[0].value.s;
    }
    return in.length;
}

/* Prefix bytes: 1 = REX, 2 = segment (no effect on length), 3 = 67h (ask
 * Zydis: moffs and address-size details), 4 = LOCK (its own tables: it is
 * only valid on some memory forms), 5 = 66, 6 = F3, 7 = F2. */
static const uint8_t pfx_kind[256] = {
    [0x40 ... 0x4F] = 1,
    [0x26] = 2, [0x2E] = 2, [0x36] = 2, [0x3E] = 2, [0x64] = 2, [0x65] = 2,
    [0x67] = 3, [0xF0] = 4, [0x66] = 5, [0xF3] = 6, [0xF2] = 7,
};

/* The fast path: the length, or 0 when Zydis must decide. With `bounded`
 * false the caller guarantees 24 readable bytes: no read goes beyond byte 20
 * (14 prefixes, REX, 2 escapes or VEX/EVEX bytes, opcode, ModRM, SIB) before the final
 * length check, so per-byte checks compile away on the common path. */
static inline __attribute__((always_inline)) size_t x86_fast(const uint8_t *code, size_t len, uint64_t addr,
                                                             pk_insn *out, int bounded)
{
    size_t max = len < 15 ? len : 15, p = 0;
    unsigned mp = 0, lock = 0, b, k;
    for (;;) {
        if (p >= max)
            return 0;
        b = code[p];
        k = pfx_kind[b];
        if (k <= 1)
            break;
        if (k == 3)
            return 0;
        if (k == 4)
            lock = 1;
        /* One kind of 66/F3/F2 (repeats allowed): mixes select the
         * mandatory prefix by rules left to Zydis. */
        else if (k >= 5) {
            if (mp && mp != k - 4)
                return 0;
            mp = k - 4;
        }
        p++;
    }
    unsigned w = 0, l = 0, vvvv = 15, mask, flags;
    uint32_t immw, clsw;
    const pk_x86_ent *e;
    if (k == 1) {
        w = (b >> 3) & 1;
        if (++p, bounded && p >= max)
            return 0;
        b = code[p];
        if (pfx_kind[b])
            return 0; /* a REX not right before the opcode is ignored */
    }
    p++;
    if (b == 0x0F) {
        if (bounded && p >= max)
            return 0;
        b = code[p++];
        unsigned map = 1;
        if (b == 0x38 || b == 0x3A) {
            map = b == 0x38 ? 2 : 3;
            if (bounded && p >= max)
                return 0;
            b = code[p++];
        }
        e = &pk_x86_ents[pk_x86_legacy[lock][map][mp][b]];
    } else if (b == 0xC4 || b == 0xC5) {
        /* VEX after 66/F2/F3/F0/REX is #UD: Zydis reports that */
        if (mp || lock || k == 1)
            return 0;
        unsigned map = 1, v;
        if (b == 0xC4) {
            if (bounded && p + 1 >= max)
                return 0;
            map = code[p] & 0x1F;
            if (map < 1 || map > 3)
                return 0;
            v = code[p + 1];
            w = v >> 7;
            p += 2;
        } else {
            if (bounded && p >= max)
                return 0;
            v = code[p++];
        }
        vvvv = (v >> 3) & 15; /* inverted: 1111 = no register */
        l = (v >> 2) & 1;
        if (bounded && p >= max)
            return 0;
        b = code[p++];
        e = &pk_x86_ents[pk_x86_vex[map - 1][v & 3][b]];
        if ((e->flags & PK_X86_V1111) && vvvv != 15)
            return 0;
    } else if (b == 0x62) {
        /* EVEX: 62 P0 (R X B R' 0 mmm) P1 (W vvvv 1 pp) P2 (z L'L b V' aaa) */
        if (mp || lock || k == 1)
            return 0;
        if (bounded && p + 3 >= max)
            return 0;
        unsigned p0 = code[p], p1 = code[p + 1], p2 = code[p + 2];
        b = code[p + 3];
        p += 4;
        if ((p0 & 8) || !(p1 & 4))
            return 0; /* reserved bits: Zydis decides */
        const pk_x86_evex_ent *x = &pk_x86_evex_ents[pk_x86_evex[p0 & 7][p1 & 3][b]];
        if ((x->flags & PK_X86_V1111) && ((p1 & 0x78) != 0x78 || !(p2 & 8)))
            return 0;
        w = p1 >> 7;
        mask = x->mask[w][(((p2 >> 4) & 7) << 2) | ((p2 & 7) != 0) << 1 | p2 >> 7];
        immw = x->imm[w];
        clsw = 0;
        flags = x->flags | PK_X86_MODRM; /* the generator keeps only ModRM forms */
        goto operands;
    } else {
        e = &pk_x86_ents[pk_x86_legacy[lock][0][mp][b]];
    }
    mask = e->mask[w][l];
    immw = e->imm[w];
    clsw = e->cls;
    flags = e->flags;
operands:;
    unsigned reg = 0;
    size_t disp = 0;
    if (flags & PK_X86_MODRM) {
        if (bounded && p >= max)
            return 0;
        unsigned m = code[p++], mod = m >> 6, rm = m & 7, sib = 0;
        reg = (m >> 3) & 7;
        if (!((mask >> ((mod == 3 ? 8 : 0) + reg)) & 1))
            return 0;
        if (mod != 3 && rm == 4) {
            if (bounded && p >= max)
                return 0;
            sib = code[p];
        }
        disp = pk_x86_modrm_tail(m, sib); /* (SIB byte included) */
    } else if (!(mask & 1)) {
        return 0;
    }
    size_t imm = (immw >> (4 * reg)) & 15, n = p + disp + imm;
    if (n > max)
        return 0;
    unsigned cls = (clsw >> (3 * reg)) & 7;
    out->addr = addr;
    out->target = 0;
    out->len = (uint8_t)n;
    out->cls = (uint8_t)cls;
    if ((1u << cls) & (1u << PK_INSN_CALL | 1u << PK_INSN_JMP | 1u << PK_INSN_CJMP)) {
        const uint8_t *q = code + p + disp;
        int64_t d = imm == 1 ? (int8_t)q[0] : imm == 2 ? (int16_t)(q[0] | q[1] << 8) : (int32_t)pk_ld32(q);
        out->target = addr + n + (uint64_t)d;
    }
    return n;
}

size_t pk_x86_decode_fast(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out)
{
    return len >= 24 ? x86_fast(code, len, addr, out, 0) : x86_fast(code, len, addr, out, 1);
}

size_t pk_x86_decode(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out)
{
    size_t n = len >= 24 ? x86_fast(code, len, addr, out, 0) : x86_fast(code, len, addr, out, 1);
    return __builtin_expect(n != 0, 1) ? n : pk_x86_decode_zydis(code, len, addr, out);
}
