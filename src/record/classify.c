/* classify.c — what kind of control transfer ends a translation block.
 * Called once per translated block by the plugin (never per execution). */
#include "record/record.h"

#include <Zydis/Zydis.h>

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
