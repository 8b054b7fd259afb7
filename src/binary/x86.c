/* x86.c — x86-64 instruction length, branch class and direct target, through
 * Zydis 4 in MINIMAL mode (no operand decoding: ~4x faster than capstone,
 * and meta.category + raw.imm suffice for control flow). */
#include "binary/binary.h"

#include <Zydis/Zydis.h>

size_t pk_x86_decode(const uint8_t *code, size_t len, uint64_t addr, pk_insn *out)
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

const char *pk_insn_class_name(int cls)
{
    static const char *const names[] = {"other", "call", "icall", "ret", "jmp", "ijmp", "cjmp", "invalid"};
    return cls >= 0 && cls <= PK_INSN_INVALID ? names[cls] : "?";
}
