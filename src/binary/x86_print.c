/* x86_print.c — one x86-64 instruction as text, the way LLVM 19's
 * MCInstPrinter prints it from its disassembler (AT&T or Intel syntax, with
 * branch targets as addresses): what `llvm-profgen --show-disassembly-only`
 * and `llvm-objdump --no-show-raw-insn --no-print-imm-hex` show.
 *
 * Why not Zydis' own formatters: they differ from LLVM in nearly every
 * field LLVM prints (no AT&T size suffixes, hexadecimal immediates and
 * displacements, "[rip+0x..]" without spaces, size casts only when
 * ambiguous, jz/jnb/cmovnz mnemonics), so hooking every formatter
 * function would leave little of them. Zydis decodes (operands, sizes,
 * prefixes, ISA extension); the few LLVM printing rules are written out
 * here directly. */
#include "binary/binary.h"

#include <pthread.h>
#include <Zydis/Zydis.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct out_buf {
    char *s;
    size_t cap, len;
} out_buf;

static void put(out_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->len < b->cap ? b->cap - b->len : 0;
    int n = vsnprintf(b->s + (room ? b->len : 0), room ? room : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->len += (size_t)n;
}

/* LLVM spells condition codes e/ne/ae/a/ge/g where Zydis has z/nz/nb/nbe/nl/nle. */
static const char *llvm_cc(const char *cc)
{
    static const char *const map[][2] = {
        {"z", "e"}, {"nz", "ne"}, {"nb", "ae"}, {"nbe", "a"}, {"nl", "ge"}, {"nle", "g"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(cc, map[i][0]))
            return map[i][1];
    return cc;
}

static bool is_cc(const char *cc)
{
    static const char *const all[] = {"o", "no", "b", "nb", "z", "nz", "be", "nbe", "s",
                                      "ns", "p", "np", "l", "nl", "le", "nle"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!strcmp(cc, all[i]))
            return true;
    return false;
}

static bool is_gpr(ZydisRegister r)
{
    ZydisRegisterClass c = ZydisRegisterGetClass(r);
    return c == ZYDIS_REGCLASS_GPR8 || c == ZYDIS_REGCLASS_GPR16 || c == ZYDIS_REGCLASS_GPR32 ||
           c == ZYDIS_REGCLASS_GPR64;
}

static char size_suffix(unsigned bits)
{
    return bits == 8 ? 'b' : bits == 16 ? 'w' : bits == 32 ? 'l' : bits == 64 ? 'q' : 0;
}

/* Instruction sets whose AT&T mnemonics carry an operand-size suffix in
 * LLVM (integer instructions; SSE/AVX/x87 ones are spelt differently). */
static bool integer_isa(ZydisISAExt e)
{
    switch (e) {
    case ZYDIS_ISA_EXT_BASE: case ZYDIS_ISA_EXT_LONGMODE: case ZYDIS_ISA_EXT_BMI1: case ZYDIS_ISA_EXT_BMI2:
    case ZYDIS_ISA_EXT_LZCNT: case ZYDIS_ISA_EXT_MOVBE: case ZYDIS_ISA_EXT_ADOX_ADCX: case ZYDIS_ISA_EXT_TBM:
    case ZYDIS_ISA_EXT_RDRAND: case ZYDIS_ISA_EXT_RDSEED:
        return true;
    default:
        return false;
    }
}

static bool visible(const ZydisDecodedOperand *op)
{
    return op->visibility != ZYDIS_OPERAND_VISIBILITY_HIDDEN;
}

static const char *intel_size(unsigned bits);

/* String instructions: LLVM shows the operands Zydis keeps hidden. */
static bool string_operands(out_buf *b, const ZydisDecodedInstruction *in, bool att)
{
    if (in->meta.category != ZYDIS_CATEGORY_STRINGOP)
        return false;
    const char *m = ZydisMnemonicGetString(in->mnemonic);
    unsigned w = in->operand_width;
    const char *acc = w == 8 ? "al" : w == 16 ? "ax" : w == 32 ? "eax" : "rax";
    const char *sz = intel_size(w);
    const char *pct = att ? "%" : "";
    char dst[32], src[32], a[8];
    if (att) {
        snprintf(dst, sizeof dst, "%%es:(%%rdi)");
        snprintf(src, sizeof src, "(%%rsi)");
    } else {
        snprintf(dst, sizeof dst, "%ses:[rdi]", sz);
        snprintf(src, sizeof src, "%s[rsi]", sz);
    }
    snprintf(a, sizeof a, "%s%s", pct, acc);
    const char *x, *y; /* in AT&T order */
    if (!strncmp(m, "stos", 4))
        x = a, y = dst;
    else if (!strncmp(m, "movs", 4))
        x = src, y = dst;
    else if (!strncmp(m, "lods", 4))
        x = src, y = a;
    else if (!strncmp(m, "scas", 4))
        x = dst, y = a;
    else if (!strncmp(m, "cmps", 4))
        x = dst, y = src;
    else
        return false;
    put(b, "\t%s, %s", att ? x : y, att ? y : x);
    return true;
}

/* Compares with a predicate LLVM names: "cmpltss" for "cmpss $1",
 * "vcmpnle_uqps", "vpcmpleud" for "vpcmpud $2". Returns the predicate and
 * sets the mnemonic's head ("cmp", "vcmp", "vpcmp") and tail ("ss", "ud"). */
static const char *cmp_predicate(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops, const char **head,
                                 const char **tail)
{
    static const char *const pred[32] = {
        "eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord", "eq_uq", "nge", "ngt", "false", "neq_oq", "ge",
        "gt", "true", "eq_os", "lt_oq", "le_oq", "unord_s", "neq_us", "nlt_uq", "nle_uq", "ord_s", "eq_us",
        "nge_uq", "ngt_uq", "false_os", "neq_os", "ge_oq", "gt_oq", "true_us"};
    static const char *const ipred[8] = {"eq", "lt", "le", "false", "neq", "nlt", "nle", "true"};
    if (in->meta.category == ZYDIS_CATEGORY_STRINGOP || in->operand_count_visible == 0)
        return NULL;
    const ZydisDecodedOperand *imm = &ops[in->operand_count_visible - 1];
    if (imm->type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
        return NULL;
    uint64_t v = imm->imm.value.u;
    const char *m = ZydisMnemonicGetString(in->mnemonic);
    if (!strncmp(m, "vpcmp", 5) && in->encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX) {
        const char *t = m + 5;
        if (strcmp(t, "b") && strcmp(t, "w") && strcmp(t, "d") && strcmp(t, "q") && strcmp(t, "ub") &&
            strcmp(t, "uw") && strcmp(t, "ud") && strcmp(t, "uq"))
            return NULL;
        if (v >= 8)
            return NULL;
        *head = "vpcmp", *tail = t;
        return ipred[v];
    }
    bool vex = m[0] == 'v';
    const char *r = m + vex;
    if (strcmp(r, "cmpps") && strcmp(r, "cmppd") && strcmp(r, "cmpss") && strcmp(r, "cmpsd"))
        return NULL;
    if (v >= (vex ? 32u : 8u))
        return NULL;
    *head = vex ? "vcmp" : "cmp", *tail = r + 3;
    return pred[v];
}

/* The mnemonic as LLVM spells it. */
static void mnemonic(out_buf *b, const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops, bool att)
{
    const char *m = ZydisMnemonicGetString(in->mnemonic);
    bool direct = in->raw.imm[0].size && in->raw.imm[0].is_relative;
    switch (in->mnemonic) {
    case ZYDIS_MNEMONIC_CBW: put(b, "%s", att ? "cbtw" : m); return;
    case ZYDIS_MNEMONIC_CWDE: put(b, "%s", att ? "cwtl" : m); return;
    case ZYDIS_MNEMONIC_CDQE: put(b, "%s", att ? "cltq" : m); return;
    case ZYDIS_MNEMONIC_CWD: put(b, "%s", att ? "cwtd" : m); return;
    case ZYDIS_MNEMONIC_CDQ: put(b, "%s", att ? "cltd" : m); return;
    case ZYDIS_MNEMONIC_CQO: put(b, "%s", att ? "cqto" : m); return;
    case ZYDIS_MNEMONIC_MOVZX:
    case ZYDIS_MNEMONIC_MOVSX:
    case ZYDIS_MNEMONIC_MOVSXD:
        if (att) {
            put(b, "mov%c%c%c", in->mnemonic == ZYDIS_MNEMONIC_MOVZX ? 'z' : 's', size_suffix(ops[1].size),
                size_suffix(ops[0].size));
            return;
        }
        break;
    case ZYDIS_MNEMONIC_MOV:
        if (in->raw.imm[0].size == 64) {
            put(b, "%s", att ? "movabsq" : "movabs");
            return;
        }
        break;
    case ZYDIS_MNEMONIC_FSUB: case ZYDIS_MNEMONIC_FSUBR: case ZYDIS_MNEMONIC_FSUBP: case ZYDIS_MNEMONIC_FSUBRP:
    case ZYDIS_MNEMONIC_FDIV: case ZYDIS_MNEMONIC_FDIVR: case ZYDIS_MNEMONIC_FDIVP: case ZYDIS_MNEMONIC_FDIVRP:
        /* AT&T (as gas and LLVM spell it) swaps sub/subr and div/divr in
         * the forms whose destination is st(i): DC and DE with registers */
        if (att && in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && (in->opcode == 0xDC || in->opcode == 0xDE) &&
            in->raw.modrm.mod == 3) {
            bool r = strchr(m + 4, 'r') != NULL, p = m[strlen(m) - 1] == 'p';
            put(b, "%.4s%s%s", m, r ? "" : "r", p ? "p" : "");
            return;
        }
        break;
    case ZYDIS_MNEMONIC_MOVSD: case ZYDIS_MNEMONIC_STOSD: case ZYDIS_MNEMONIC_LODSD: case ZYDIS_MNEMONIC_SCASD:
    case ZYDIS_MNEMONIC_CMPSD:
        /* the 32-bit string instructions are movsl, stosl... in AT&T */
        if (att && in->meta.category == ZYDIS_CATEGORY_STRINGOP) {
            put(b, "%.4sl", m);
            return;
        }
        break;
    case ZYDIS_MNEMONIC_FCOMIP: put(b, "fcompi"); return;
    case ZYDIS_MNEMONIC_FUCOMIP: put(b, "fucompi"); return;
    case ZYDIS_MNEMONIC_JMP:
        if (direct) {
            put(b, "jmp");
            return;
        }
        break;
    default:
        break;
    }
    const char *cc = NULL;
    if (m[0] == 'j' && is_cc(m + 1))
        cc = m + 1, put(b, "j");
    else if (!strncmp(m, "set", 3) && is_cc(m + 3))
        cc = m + 3, put(b, "set");
    else if (!strncmp(m, "cmov", 4) && is_cc(m + 4))
        cc = m + 4, put(b, "cmov");
    if (cc)
        put(b, "%s", llvm_cc(cc));
    else
        put(b, "%s", m);
    if (att && in->meta.isa_ext == ZYDIS_ISA_EXT_X87) {
        /* memory operands: float sizes s/l/t, integer (fi*) sizes s/l/ll */
        for (unsigned i = 0; i < in->operand_count_visible; i++)
            if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY && visible(&ops[i])) {
                bool integer = m[1] == 'i' && strcmp(m, "fincstp");
                unsigned sz = ops[i].size;
                const char *sfx = integer ? (sz == 16 ? "s" : sz == 32 ? "l" : sz == 64 ? "ll" : "")
                                          : (sz == 32 ? "s" : sz == 64 ? "l" : sz == 80 ? "t" : "");
                put(b, "%s", sfx);
            }
        return;
    }
    if (!att || !(integer_isa(in->meta.isa_ext) || in->mnemonic == ZYDIS_MNEMONIC_POPCNT) ||
        in->meta.category == ZYDIS_CATEGORY_COND_BR ||
        in->meta.category == ZYDIS_CATEGORY_SETCC)
        return;
    /* AT&T: the operand size of an integer instruction with a register or
     * memory operand (or one that pushes or pops). */
    bool sized = in->meta.category == ZYDIS_CATEGORY_CALL || in->meta.category == ZYDIS_CATEGORY_RET ||
                 in->meta.category == ZYDIS_CATEGORY_PUSH || in->meta.category == ZYDIS_CATEGORY_POP;
    for (unsigned i = 0; i < in->operand_count_visible; i++)
        if (visible(&ops[i]) && (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY ||
                                 (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER && is_gpr(ops[i].reg.value))))
            sized = true;
    char s = size_suffix(in->operand_width);
    if (sized && s)
        put(b, "%c", s);
}

/* cvtsi2sd/ss from memory: the integer's size is in the mnemonic. */
static void cvt_suffix(out_buf *b, const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
    if (in->mnemonic != ZYDIS_MNEMONIC_CVTSI2SD && in->mnemonic != ZYDIS_MNEMONIC_CVTSI2SS &&
        in->mnemonic != ZYDIS_MNEMONIC_VCVTSI2SD && in->mnemonic != ZYDIS_MNEMONIC_VCVTSI2SS &&
        in->mnemonic != ZYDIS_MNEMONIC_VCVTUSI2SD && in->mnemonic != ZYDIS_MNEMONIC_VCVTUSI2SS)
        return;
    char s = 0;
    for (unsigned i = 0; i < in->operand_count_visible; i++)
        if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY)
            s = size_suffix(ops[i].size);
    if (s)
        put(b, "%c", s);
}

static void reg(out_buf *b, ZydisRegister r, bool att)
{
    if (r >= ZYDIS_REGISTER_ST0 && r <= ZYDIS_REGISTER_ST7)
        put(b, "%sst(%d)", att ? "%" : "", (int)(r - ZYDIS_REGISTER_ST0));
    else
        put(b, "%s%s", att ? "%" : "", ZydisRegisterGetString(r));
}

/* The segment register of the last segment prefix, even one 64-bit mode
 * ignores (LLVM prints those: "nopw %cs:(%rax,%rax)"). */
static ZydisRegister segment_prefix(const ZydisDecodedInstruction *in)
{
    ZydisRegister r = ZYDIS_REGISTER_NONE;
    for (unsigned i = 0; i < in->raw.prefix_count; i++)
        switch (in->raw.prefixes[i].value) {
        case 0x2E: r = ZYDIS_REGISTER_CS; break;
        case 0x36: r = ZYDIS_REGISTER_SS; break;
        case 0x3E: r = ZYDIS_REGISTER_DS; break;
        case 0x26: r = ZYDIS_REGISTER_ES; break;
        case 0x64: r = ZYDIS_REGISTER_FS; break;
        case 0x65: r = ZYDIS_REGISTER_GS; break;
        default: break;
        }
    return r;
}

static const char *intel_size(unsigned bits)
{
    switch (bits) {
    case 8: return "byte ptr ";
    case 16: return "word ptr ";
    case 32: return "dword ptr ";
    case 64: return "qword ptr ";
    case 80: return "tbyte ptr ";
    case 128: return "xmmword ptr ";
    case 256: return "ymmword ptr ";
    case 512: return "zmmword ptr ";
    default: return "";
    }
}

/* "{1toN}" after an AVX-512 memory operand that is broadcast. */
static void broadcast(out_buf *b, const ZydisDecodedInstruction *in)
{
    static const struct { ZydisBroadcastMode mode; int n; } bc[] = {
        {ZYDIS_BROADCAST_MODE_1_TO_2, 2}, {ZYDIS_BROADCAST_MODE_1_TO_4, 4}, {ZYDIS_BROADCAST_MODE_1_TO_8, 8},
        {ZYDIS_BROADCAST_MODE_1_TO_16, 16}, {ZYDIS_BROADCAST_MODE_1_TO_32, 32}, {ZYDIS_BROADCAST_MODE_1_TO_64, 64},
    };
    if (in->avx.broadcast.is_static)
        return;
    for (size_t i = 0; i < sizeof bc / sizeof *bc; i++)
        if (in->avx.broadcast.mode == bc[i].mode)
            put(b, "{1to%d}", bc[i].n);
}

/* The size Intel syntax names: a gather or scatter (vector index) moves
 * as many bytes as its data register holds; Zydis gives one element's. */
static unsigned intel_mem_bits(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
                               const ZydisDecodedOperand *op)
{
    ZydisRegisterClass ic = ZydisRegisterGetClass(op->mem.index);
    if (ic != ZYDIS_REGCLASS_XMM && ic != ZYDIS_REGCLASS_YMM && ic != ZYDIS_REGCLASS_ZMM)
        return op->size;
    for (unsigned i = 0; i < in->operand_count_visible; i++) {
        ZydisRegisterClass c = ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER ? ZydisRegisterGetClass(ops[i].reg.value)
                                                                          : ZYDIS_REGCLASS_INVALID;
        if (c == ZYDIS_REGCLASS_XMM || c == ZYDIS_REGCLASS_YMM || c == ZYDIS_REGCLASS_ZMM)
            return ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, ops[i].reg.value);
    }
    return op->size;
}

static void memory(out_buf *b, const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
                   const ZydisDecodedOperand *op, bool att)
{
    const ZydisDecodedOperandMem *m = &op->mem;
    ZydisRegister seg = segment_prefix(in);
    int64_t disp = m->disp.has_displacement ? m->disp.value : 0;
    bool base = m->base != ZYDIS_REGISTER_NONE, index = m->index != ZYDIS_REGISTER_NONE;
    if (att) {
        if (seg)
            reg(b, seg, true), put(b, ":");
        if (disp || (!base && !index))
            put(b, "%" PRId64, disp);
        if (base || index) {
            put(b, "(");
            if (base)
                reg(b, m->base, true);
            if (index) {
                put(b, ",");
                reg(b, m->index, true);
                if (m->scale > 1)
                    put(b, ",%u", m->scale);
            }
            put(b, ")");
        }
        broadcast(b, in);
        return;
    }
    if (m->type != ZYDIS_MEMOP_TYPE_AGEN)
        put(b, "%s", intel_size(intel_mem_bits(in, ops, op)));
    if (seg)
        reg(b, seg, false), put(b, ":");
    put(b, "[");
    bool plus = false;
    if (base)
        reg(b, m->base, false), plus = true;
    if (index) {
        if (plus)
            put(b, " + ");
        if (m->scale > 1 || !base)
            put(b, "%u*", m->scale ? m->scale : 1);
        reg(b, m->index, false);
        plus = true;
    }
    if (disp || (!base && !index)) {
        if (plus)
            put(b, disp > 0 ? " + %" PRId64 : " - %" PRIu64, disp > 0 ? disp : (int64_t)(0 - (uint64_t)disp));
        else
            put(b, "%" PRId64, disp);
    }
    put(b, "]");
    broadcast(b, in);
}

/* LLVM's disassembler sign-extends an immediate by its encoding: an imm8
 * of an integer instruction, and an imm16/imm32 narrower than the operand
 * (push imm32, REX.W ops), print negative; an immediate as wide as the
 * operand (movl $0xaaaaaaab) prints unsigned. */
static void immediate(out_buf *b, const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, unsigned bits,
                      bool att)
{
    uint64_t u = op->imm.value.u;
    int64_t v;
    if (bits == 8)
        v = integer_isa(in->meta.isa_ext) ? (int64_t)(int8_t)u : (int64_t)(uint8_t)u;
    else if (bits == 16)
        v = in->operand_width > 16 ? (int64_t)(int16_t)u : (int64_t)(uint16_t)u;
    else if (bits == 32)
        v = in->operand_width > 32 ? (int64_t)(int32_t)u : (int64_t)(uint32_t)u;
    else
        v = (int64_t)u;
    put(b, "%s%" PRId64, att ? "$" : "", v);
}

static ZydisDecoder x86_decoder;

static void init_decoder(void) { ZydisDecoderInit(&x86_decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64); }

int pk_x86_print(const uint8_t *code, size_t len, uint64_t addr, bool intel, char *text, size_t cap, size_t *insn_len)
{
    /* (the decoder holds only its mode: set up once, read-only after) */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_decoder);
    ZydisDecodedInstruction in;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    *insn_len = 0;
    if (cap)
        text[0] = 0;
    if (!len || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&x86_decoder, code, len, &in, ops)))
        return -1;
    bool att = !intel;
    out_buf b = {text, cap, 0};
    put(&b, "\t");
    /* LLVM's disassembler takes a leading lock prefix for an instruction
     * of its own */
    if (code[0] == 0xF0) {
        *insn_len = 1;
        put(&b, "lock");
        return b.len < cap ? 0 : -1;
    }
    *insn_len = in.length;
    if (in.attributes & ZYDIS_ATTRIB_HAS_LOCK)
        put(&b, "lock\t\t"); /* after another prefix (66 f0): one instruction */
    if (in.attributes & ZYDIS_ATTRIB_HAS_REPNE)
        put(&b, "repne\t\t");
    else if (in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE))
        put(&b, "rep\t\t");
    if (in.attributes & ZYDIS_ATTRIB_HAS_NOTRACK)
        put(&b, "notrack\t");
    const char *cmp_head = NULL, *cmp_tail = NULL, *cmp = cmp_predicate(&in, ops, &cmp_head, &cmp_tail);
    if (cmp)
        put(&b, "%s%s%s", cmp_head, cmp, cmp_tail);
    else
        mnemonic(&b, &in, ops, att);
    if (att)
        cvt_suffix(&b, &in, ops);
    if (string_operands(&b, &in, att))
        return b.len < cap ? 0 : -1;
    /* The operands LLVM shows: Zydis' explicit ones, less the constant 1
     * of the shift-by-one forms (D0/D1). */
    const ZydisDecodedOperand *shown[ZYDIS_MAX_OPERAND_COUNT];
    unsigned n = 0;
    for (unsigned i = 0; i < in.operand_count_visible; i++) {
        const ZydisDecodedOperand *op = &ops[i];
        if (!visible(op))
            continue;
        /* the reg field of the multi-byte nop is not an operand to LLVM */
        if (in.mnemonic == ZYDIS_MNEMONIC_NOP && op->type == ZYDIS_OPERAND_TYPE_REGISTER)
            continue;
        if (cmp && i == in.operand_count_visible - 1u)
            continue;
        /* the AVX-512 write mask is a decoration of the destination */
        if (op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->encoding == ZYDIS_OPERAND_ENCODING_MASK)
            continue;
        if (op->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && in.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
            (in.opcode == 0xD0 || in.opcode == 0xD1))
            continue;
        shown[n++] = op;
    }
    /* SSE4.1 blendv* and sha256rnds2 read xmm0 implicitly; LLVM shows it
     * last (Intel order) */
    if (in.encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY &&
        (in.mnemonic == ZYDIS_MNEMONIC_BLENDVPS || in.mnemonic == ZYDIS_MNEMONIC_BLENDVPD ||
         in.mnemonic == ZYDIS_MNEMONIC_PBLENDVB || in.mnemonic == ZYDIS_MNEMONIC_SHA256RNDS2))
        for (unsigned i = in.operand_count_visible; i < in.operand_count && n < ZYDIS_MAX_OPERAND_COUNT; i++)
            if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[i].reg.value == ZYDIS_REGISTER_XMM0) {
                shown[n++] = &ops[i];
                break;
            }
    /* xchg between two registers: LLVM names the ModRM.reg one first (Intel) */
    if (in.mnemonic == ZYDIS_MNEMONIC_XCHG && n == 2 && (in.opcode == 0x86 || in.opcode == 0x87) &&
        in.raw.modrm.mod == 3) {
        const ZydisDecodedOperand *t = shown[0];
        shown[0] = shown[1];
        shown[1] = t;
    }
    bool indirect = (in.meta.category == ZYDIS_CATEGORY_CALL || in.meta.category == ZYDIS_CATEGORY_UNCOND_BR) &&
                    !(in.raw.imm[0].size && in.raw.imm[0].is_relative);
    /* the n-th immediate operand is the n-th raw immediate */
    unsigned imm_bits[ZYDIS_MAX_OPERAND_COUNT] = {0}, nimm = 0;
    for (unsigned k = 0; k < n; k++)
        if (shown[k]->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && nimm < 2)
            imm_bits[k] = in.raw.imm[nimm++].size;
    for (unsigned j = 0; j < n; j++) {
        unsigned k = att ? n - 1 - j : j;
        const ZydisDecodedOperand *op = shown[k];
        put(&b, j ? ", " : "\t");
        switch (op->type) {
        case ZYDIS_OPERAND_TYPE_REGISTER:
            if (att && indirect)
                put(&b, "*");
            if (op->reg.value == ZYDIS_REGISTER_ST0 && op->visibility == ZYDIS_OPERAND_VISIBILITY_IMPLICIT)
                put(&b, "%sst", att ? "%" : ""); /* x87 stack top named by the mnemonic */
            else
                reg(&b, op->reg.value, att);
            break;
        case ZYDIS_OPERAND_TYPE_MEMORY:
            if (att && indirect)
                put(&b, "*");
            memory(&b, &in, ops, op, att);
            break;
        case ZYDIS_OPERAND_TYPE_IMMEDIATE:
            if (op->imm.is_relative) {
                uint64_t target = 0;
                ZydisCalcAbsoluteAddress(&in, op, addr, &target);
                put(&b, "0x%" PRIx64, target);
            } else {
                immediate(&b, &in, op, imm_bits[k] ? imm_bits[k] : op->size, att);
            }
            break;
        default:
            put(&b, "?");
            break;
        }
        if (k == 0 && in.avx.mask.reg != ZYDIS_REGISTER_NONE && in.avx.mask.reg != ZYDIS_REGISTER_K0) {
            put(&b, " {");
            reg(&b, in.avx.mask.reg, att);
            put(&b, "}");
            if (in.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX && in.raw.evex.z)
                put(&b, " {z}");
        }
    }
    if (b.len >= cap)
        return -1;
    return 0;
}
