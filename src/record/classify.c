/* classify.c — what kind of control transfer ends a translation block.
 * Called once per translated block by the plugin (never per execution). */
#include "record/record.h"

#include "binary/binary.h"

#include <Zydis/Zydis.h>
#include <elf.h>

enum pk_br_kind pk_record_classify(const uint8_t *code, size_t size, unsigned *len)
{
    ZydisDecoder dec;
    ZydisDecodedInstruction in;
    *len = 0;
    if (ZYAN_FAILED(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
        return PK_BR_NONE;
    ZydisDecoderEnableMode(&dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
    if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&dec, NULL, code, size, &in)))
        return PK_BR_NONE;
    *len = in.length;
    /* Relative immediates mark the direct forms; everything else (register,
     * memory, far pointer) is indirect. */
    bool direct = in.raw.imm[0].is_relative;
    switch (in.meta.category) {
    case ZYDIS_CATEGORY_COND_BR:
        return PK_BR_COND;
    case ZYDIS_CATEGORY_UNCOND_BR:
        return direct ? PK_BR_UNCOND : PK_BR_IND;
    case ZYDIS_CATEGORY_CALL:
        return direct ? PK_BR_CALL : PK_BR_IND_CALL;
    case ZYDIS_CATEGORY_RET:
        return PK_BR_RET;
    case ZYDIS_CATEGORY_SYSCALL:
    case ZYDIS_CATEGORY_INTERRUPT:
        return PK_BR_SYSCALL;
    default:
        break;
    }
    /* MINIMAL mode leaves the REP attributes unset: look at the raw prefixes. */
    if (in.meta.category == ZYDIS_CATEGORY_STRINGOP || in.attributes & ZYDIS_ATTRIB_ACCEPTS_REP)
        for (ZyanU8 i = 0; i < in.raw.prefix_count; i++)
            if (in.raw.prefixes[i].value == 0xF3 || in.raw.prefixes[i].value == 0xF2)
                return PK_BR_REP;
    return PK_BR_NONE;
}

/* A64: the shared decoder names the branch (PAC forms included: RETAA is a
 * return, BLRAA an indirect call); SVC ends a block like x86's syscall. No
 * A64 instruction is re-entered the way a rep string op is. */
enum pk_br_kind pk_record_classify_a64(const uint8_t *code, size_t size, unsigned *len)
{
    pk_insn in;
    *len = 0;
    if (size < 4 || pk_a64_decode(code, size, 0, &in) == 0)
        return PK_BR_NONE;
    *len = 4;
    switch (in.cls) {
    case PK_INSN_CJMP: return PK_BR_COND;
    case PK_INSN_JMP: return PK_BR_UNCOND;
    case PK_INSN_IJMP: return PK_BR_IND;
    case PK_INSN_CALL: return PK_BR_CALL;
    case PK_INSN_ICALL: return PK_BR_IND_CALL;
    case PK_INSN_RET: return PK_BR_RET;
    default: break;
    }
    uint32_t w = pk_ld32(code);
    /* svc / hvc / smc #imm16 */
    if ((w & 0xFFE0001C) == 0xD4000000 && (w & 3) != 0)
        return PK_BR_SYSCALL;
    return PK_BR_NONE;
}

enum pk_br_kind pk_record_classify_for(uint16_t machine, const uint8_t *code, size_t size, unsigned *len)
{
    return machine == EM_AARCH64 ? pk_record_classify_a64(code, size, len) : pk_record_classify(code, size, len);
}
