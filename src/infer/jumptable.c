/* jumptable.c — resolving the indirect jumps of switch statements (forms
 * and rules in infer.h, pk_jtable_resolve). pk_insn carries only the
 * branch class and direct target, so the few instructions before an
 * indirect jmp are decoded again with Zydis, operands included. */
#include "infer/infer_int.h"

#include <Zydis/Zydis.h>

#define JT_SCAN 64               /* instructions walked back at most */
#define JT_SCAN_BASE 1024        /* for the table's base: a callee-saved register
                                    may be set once at the top of a large function */
#define JT_MAX_ENTRIES (1u << 16)
#define JT_MAX_GUESSED 4096      /* entries of a table without a bound check */

typedef struct jt_insn {
    ZydisDecodedInstruction in;
    ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
} jt_insn;

typedef struct jt_ctx {
    ZydisDecoder dec;
    const pk_elf *elf;
    const pk_insn *insns;
    size_t n;
} jt_ctx;

static bool decode(jt_ctx *c, size_t i, jt_insn *out)
{
    const pk_insn *pi = &c->insns[i];
    const uint8_t *p = pk_elf_vaddr_bytes(c->elf, pi->addr, pi->len);
    return p && ZYAN_SUCCESS(ZydisDecoderDecodeFull(&c->dec, p, pi->len, &out->in, out->op));
}

static ZydisRegister wide(ZydisRegister r)
{
    return r == ZYDIS_REGISTER_NONE ? r : ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
}

/* Caller-saved registers of the SysV ABI: a call between a definition and
 * its use means the definition we would find is not the one used. */
static bool caller_saved(ZydisRegister r)
{
    switch (r) {
    case ZYDIS_REGISTER_RAX: case ZYDIS_REGISTER_RCX: case ZYDIS_REGISTER_RDX: case ZYDIS_REGISTER_RSI:
    case ZYDIS_REGISTER_RDI: case ZYDIS_REGISTER_R8: case ZYDIS_REGISTER_R9: case ZYDIS_REGISTER_R10:
    case ZYDIS_REGISTER_R11:
        return true;
    default:
        return false;
    }
}

static bool writes(const jt_insn *d, ZydisRegister r)
{
    for (unsigned k = 0; k < d->in.operand_count; k++) {
        const ZydisDecodedOperand *o = &d->op[k];
        if (o->type == ZYDIS_OPERAND_TYPE_REGISTER && (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
            wide(o->reg.value) == r)
            return true;
    }
    return false;
}

/* The nearest instruction before insns[from] (walking back in address
 * order) that writes r; SIZE_MAX when none within the window, or when a
 * call clobbers r first. */
static size_t find_def(jt_ctx *c, size_t from, ZydisRegister r, jt_insn *d, size_t limit)
{
    for (size_t k = 0; k < limit && from > 0; k++) {
        size_t i = --from;
        int cls = c->insns[i].cls;
        if ((cls == PK_INSN_CALL || cls == PK_INSN_ICALL) && caller_saved(r))
            return SIZE_MAX;
        if (!decode(c, i, d))
            return SIZE_MAX;
        if (writes(d, r))
            return i;
    }
    return SIZE_MAX;
}

static bool is_reg(const ZydisDecodedOperand *o)
{
    return o->type == ZYDIS_OPERAND_TYPE_REGISTER;
}

/* A memory location as the bound check and the index load name it:
 * registers, scale, displacement (RIP-relative: the absolute address). */
typedef struct mem_loc {
    ZydisRegister base, index, seg;
    uint8_t scale;
    uint16_t size;
    int64_t disp;
} mem_loc;

static mem_loc loc_of(const jt_ctx *c, size_t i, const ZydisDecodedOperand *o)
{
    mem_loc m = {o->mem.base, o->mem.index, o->mem.segment, o->mem.scale, o->size, o->mem.disp.value};
    if (m.base == ZYDIS_REGISTER_RIP) {
        m.disp += (int64_t)(c->insns[i].addr + c->insns[i].len);
        m.base = ZYDIS_REGISTER_NONE;
    }
    return m;
}

static bool same_loc(const mem_loc *a, const mem_loc *b)
{
    /* (not the segment: Zydis names SS for rbp-based addresses, DS for the
     * others, the same flat memory; FS and GS are never tracked) */
    return a->base == b->base && a->index == b->index && a->scale == b->scale && a->size == b->size &&
           a->disp == b->disp;
}

static bool writes_memory(const jt_insn *d)
{
    for (unsigned k = 0; k < d->in.operand_count_visible; k++)
        if (d->op[k].type == ZYDIS_OPERAND_TYPE_MEMORY && (d->op[k].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
            return true;
    return false;
}

/* The entry count implied by `cmp $bound` followed by insns[i + 1]. */
static uint32_t bound_of(jt_ctx *c, size_t i, const ZydisDecodedOperand *imm)
{
    jt_insn j;
    /* The bound check is the cmp and its unsigned branch, usually next to
     * it (a fused pair), sometimes after a few moves that leave the flags. */
    size_t b = i + 1;
    for (; b < c->n && b <= i + 4 && c->insns[b].cls == PK_INSN_OTHER; b++) {
        if (!decode(c, b, &j) || !j.in.cpu_flags ||
            (j.in.cpu_flags->modified | j.in.cpu_flags->set_0 | j.in.cpu_flags->set_1 | j.in.cpu_flags->undefined))
            return 0;
    }
    if (b >= c->n || c->insns[b].cls != PK_INSN_CJMP || !decode(c, b, &j))
        return 0;
    uint64_t bound = imm->imm.value.u;
    if (imm->size < 64)
        bound &= (UINT64_C(1) << imm->size) - 1;
    switch (j.in.mnemonic) {
    case ZYDIS_MNEMONIC_JNBE: /* ja default */
    case ZYDIS_MNEMONIC_JBE:  /* jbe table */
        bound += 1;
        break;
    case ZYDIS_MNEMONIC_JNB:  /* jae default */
    case ZYDIS_MNEMONIC_JB:   /* jb table */
        break;
    default:
        return 0;
    }
    return bound == 0 || bound > JT_MAX_ENTRIES ? 0 : (uint32_t)bound;
}

/* The number of table entries: the bound check on the index register idx,
 * looked for before insns[from]. Register copies (mov, movzx, a 32-bit mov
 * onto itself) move the search to the copied register; a load from memory
 * moves it to that memory (`cmpb $8,0x19(%rbx); ja; movzbl 0x19(%rbx),%eax`),
 * as long as nothing writes the address registers or memory in between.
 * 0 if not found. */
static uint32_t find_bound(jt_ctx *c, size_t from, ZydisRegister idx)
{
    jt_insn d;
    bool in_mem = false;
    mem_loc loc = {0};
    /* Bound checks on other registers seen on the way back, still valid
     * (nothing wrote their register since): the index may be a copy of
     * one of them made before the check (`movzbl %r12b,%eax;
     * cmpb $0xc,%r12b; ja`). */
    struct { ZydisRegister reg; uint16_t size; uint32_t bound; } cand[4];
    unsigned ncand = 0;
    for (size_t k = 0; k < JT_SCAN && from > 0; k++) {
        size_t i = --from;
        int cls = c->insns[i].cls;
        if (cls == PK_INSN_CALL || cls == PK_INSN_ICALL) {
            if (in_mem || caller_saved(idx))
                return 0;
            continue;
        }
        if (!decode(c, i, &d))
            return 0;
        ZydisMnemonic m = d.in.mnemonic;
        const ZydisDecodedOperand *o0 = &d.op[0], *o1 = &d.op[1];
        if (in_mem) {
            if (m == ZYDIS_MNEMONIC_CMP && o0->type == ZYDIS_OPERAND_TYPE_MEMORY &&
                o1->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
                mem_loc l = loc_of(c, i, o0);
                if (same_loc(&l, &loc))
                    return bound_of(c, i, o1);
            }
            if (writes_memory(&d) || (loc.index != ZYDIS_REGISTER_NONE && writes(&d, wide(loc.index))))
                return 0;
            if (loc.base != ZYDIS_REGISTER_NONE && writes(&d, wide(loc.base))) {
                /* the address register set from another: `lea 4(%r10),%rcx;
                 * ...; movl -4(%rcx),%esi` reads what `cmpl $12,(%r10)` checked */
                if (m == ZYDIS_MNEMONIC_LEA && is_reg(o0) && wide(o0->reg.value) == wide(loc.base) &&
                    o0->size == 64 && o1->mem.index == ZYDIS_REGISTER_NONE && o1->mem.base != ZYDIS_REGISTER_RIP &&
                    o1->mem.segment != ZYDIS_REGISTER_FS && o1->mem.segment != ZYDIS_REGISTER_GS) {
                    loc.base = o1->mem.base;
                    loc.disp += o1->mem.disp.value;
                    continue;
                }
                if (m == ZYDIS_MNEMONIC_MOV && is_reg(o0) && is_reg(o1) && o0->size == 64) {
                    loc.base = o1->reg.value;
                    continue;
                }
                return 0;
            }
            continue;
        }
        if (m == ZYDIS_MNEMONIC_CMP && is_reg(o0) && wide(o0->reg.value) == idx &&
            o1->type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
            return bound_of(c, i, o1);
        if (m == ZYDIS_MNEMONIC_CMP && is_reg(o0) && o1->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ncand < 4) {
            uint32_t bd = bound_of(c, i, o1);
            if (bd) {
                cand[ncand].reg = wide(o0->reg.value);
                cand[ncand].size = o0->size;
                cand[ncand++].bound = bd;
            }
            continue;
        }
        for (unsigned q = 0; q < ncand; q++)
            if (!(m == ZYDIS_MNEMONIC_MOV || m == ZYDIS_MNEMONIC_MOVZX) || !is_reg(o1) || !writes(&d, idx) ||
                wide(o1->reg.value) != cand[q].reg || o1->size != cand[q].size) {
                if (writes(&d, cand[q].reg))
                    cand[q--] = cand[--ncand];   /* overwritten before its check */
            } else {
                return cand[q].bound;             /* idx is a copy of a checked register */
            }
        if (!writes(&d, idx))
            continue;
        if (m == ZYDIS_MNEMONIC_AND && is_reg(o0) && o1->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
            uint64_t mask = o1->imm.value.u;
            if (mask < JT_MAX_ENTRIES && (mask & (mask + 1)) == 0)
                return (uint32_t)mask + 1;
            return 0;
        }
        if ((m == ZYDIS_MNEMONIC_MOV || m == ZYDIS_MNEMONIC_MOVZX) && is_reg(o0) && is_reg(o1)) {
            idx = wide(o1->reg.value);
            continue;
        }
        if ((m == ZYDIS_MNEMONIC_MOV || m == ZYDIS_MNEMONIC_MOVZX) && is_reg(o0) &&
            o1->type == ZYDIS_OPERAND_TYPE_MEMORY && o1->mem.segment != ZYDIS_REGISTER_FS &&
            o1->mem.segment != ZYDIS_REGISTER_GS) {
            in_mem = true;
            loc = loc_of(c, i, o1);
            continue;
        }
        return 0;
    }
    return 0;
}

/* A memory operand [base + idx*scale + disp]. */
static bool mem_form(const ZydisDecodedOperand *o, unsigned scale)
{
    return o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.index != ZYDIS_REGISTER_NONE && o->mem.scale == scale &&
           o->mem.segment != ZYDIS_REGISTER_FS && o->mem.segment != ZYDIS_REGISTER_GS;
}

static bool is_rip_lea(const jt_insn *d)
{
    return d->in.mnemonic == ZYDIS_MNEMONIC_LEA && d->op[1].type == ZYDIS_OPERAND_TYPE_MEMORY &&
           d->op[1].mem.base == ZYDIS_REGISTER_RIP && d->op[1].mem.index == ZYDIS_REGISTER_NONE;
}

enum { LEA_NONE, LEA_NEAREST, LEA_PAST_OTHERS };

/* The address a `lea T(%rip), reg` defining reg before insns[from] loads.
 * LEA_NEAREST: it is the nearest definition in address order.
 * LEA_PAST_OTHERS: other definitions lie between in address order, on
 * other paths as far as this scan can tell: a loop's table base is set once
 * before the loop, and code placed between (a case that returns, an
 * inlined callee's other use of the register) may write the register too.
 * The caller then asks more of the table (pk_jtable_resolve). */
static int rip_lea(jt_ctx *c, size_t from, ZydisRegister reg, uint64_t *addr)
{
    jt_insn d;
    int found = LEA_NEAREST;
    for (size_t left = JT_SCAN_BASE; left > 0;) {
        size_t i = find_def(c, from, reg, &d, left);
        if (i == SIZE_MAX)
            return LEA_NONE;
        if (is_rip_lea(&d)) {
            *addr = c->insns[i].addr + c->insns[i].len + (uint64_t)d.op[1].mem.disp.value;
            return found;
        }
        found = LEA_PAST_OTHERS;
        left -= from - i < left ? from - i : left;
        from = i;
    }
    return LEA_NONE;
}

static bool is_insn(const pk_insn *insns, size_t n, uint64_t addr)
{
    return pk_insn_index(insns, n, addr) != SIZE_MAX;
}

/* A table entry must be an instruction of the function, or outside its
 * ranges in executable code (a case in a .cold part that was not given). */
static bool valid_target(const pk_elf *elf, const pk_insn *insns, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (insns[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && addr < insns[lo - 1].addr + insns[lo - 1].len)
        return insns[lo - 1].addr == addr;
    size_t ns;
    const pk_elf_segment *seg = pk_elf_segments(elf, &ns);
    for (size_t i = 0; i < ns; i++)
        if ((seg[i].flags & 1) && addr >= seg[i].vaddr && addr - seg[i].vaddr < seg[i].filesz)
            return true;
    return false;
}

enum { ABS8, REL32 };

/* x86-64 tables: absolute 8-byte addresses, or 4-byte offsets from the
 * table itself */
typedef struct x86_form {
    int form;
    uint64_t table;
} x86_form;

static uint64_t x86_entry(const uint8_t *q, const void *form)
{
    const x86_form *f = form;
    return f->form == ABS8 ? pk_ld64(q) : f->table + (uint64_t)(int64_t)(int32_t)pk_ld32(q);
}

int pk_jtable_resolve(const pk_elf *elf, const pk_insn *insns, size_t n, size_t k, pk_vec *targets, pk_err *err)
{
    jt_ctx c = {.elf = elf, .insns = insns, .n = n};
    ZydisDecoderInit(&c.dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    jt_insn j, d;
    if (k >= n || insns[k].cls != PK_INSN_IJMP || !decode(&c, k, &j) || j.in.mnemonic != ZYDIS_MNEMONIC_JMP)
        return 0;
    const ZydisDecodedOperand *o = &j.op[0];
    int form;
    bool strict = false;
    uint64_t table;
    ZydisRegister idx;
    size_t load;   /* the instruction reading the table */
    if (mem_form(o, 8) && o->mem.base == ZYDIS_REGISTER_NONE) {
        /* jmp *T(,%idx,8) */
        form = ABS8;
        table = (uint64_t)o->mem.disp.value;
        idx = wide(o->mem.index);
        load = k;
    } else if (is_reg(o)) {
        ZydisRegister r = wide(o->reg.value);
        size_t i = find_def(&c, k, r, &d, JT_SCAN);
        if (i == SIZE_MAX)
            return 0;
        if (d.in.mnemonic == ZYDIS_MNEMONIC_MOV && mem_form(&d.op[1], 8) && d.op[1].mem.base == ZYDIS_REGISTER_NONE) {
            /* mov T(,%idx,8),%r; jmp *%r */
            form = ABS8;
            table = (uint64_t)d.op[1].mem.disp.value;
            idx = wide(d.op[1].mem.index);
            load = i;
        } else if (d.in.mnemonic == ZYDIS_MNEMONIC_ADD && is_reg(&d.op[0]) && is_reg(&d.op[1])) {
            /* movslq (%b,%idx,4),%x; add %b,%x (or add %x,%b); jmp *%r:
             * one operand of the add holds the entry, the other the base. */
            ZydisRegister a = wide(d.op[0].reg.value), b = wide(d.op[1].reg.value);
            jt_insn m;
            size_t mi = SIZE_MAX;
            ZydisRegister base = ZYDIS_REGISTER_NONE;
            for (int side = 0; side < 2 && mi == SIZE_MAX; side++) {
                ZydisRegister ent = side ? b : a, other = side ? a : b;
                size_t t = find_def(&c, i, ent, &m, JT_SCAN);
                if (t != SIZE_MAX && m.in.mnemonic == ZYDIS_MNEMONIC_MOVSXD && mem_form(&m.op[1], 4) &&
                    wide(m.op[1].mem.base) == other && m.op[1].mem.disp.value == 0) {
                    mi = t;
                    base = other;
                }
            }
            int how = mi == SIZE_MAX ? LEA_NONE : rip_lea(&c, mi, base, &table);
            if (how == LEA_NONE)
                return 0;
            /* The base must not change between the load and the add. */
            uint64_t t2;
            if (rip_lea(&c, i, base, &t2) == LEA_NONE || t2 != table)
                return 0;
            /* a base found past other definitions: only a table with a
             * bound check whose every entry is an instruction of this
             * function (entries read from another table's base land
             * elsewhere) */
            strict = how == LEA_PAST_OTHERS;
            form = REL32;
            idx = wide(m.op[1].mem.index);
            load = mi;
        } else {
            return 0;
        }
    } else {
        return 0;
    }
    /* No bound check (count 0): clang drops it when the cases cover every
     * value the index can take (an enum switch with an unreachable
     * default); the table then ends where its entries stop being
     * instructions of the function (pk_jt_read): the next table's offsets
     * are relative to another base, and other data rarely lands on
     * instruction starts. */
    x86_form f = {form, table};
    uint32_t bound = find_bound(&c, load, idx);
    if (strict && bound == 0)
        return 0;
    return pk_jt_read(elf, insns, n, table, form == ABS8 ? 8 : 4, bound, !strict, x86_entry, &f, targets, err);
}

static bool indexed_load(const jt_insn *d)
{
    for (unsigned k = 0; k < d->in.operand_count_visible; k++)
        if (d->op[k].type == ZYDIS_OPERAND_TYPE_MEMORY && d->op[k].mem.index != ZYDIS_REGISTER_NONE &&
            (d->op[k].actions & ZYDIS_OPERAND_ACTION_MASK_READ))
            return true;
    return false;
}

bool pk_jtable_form(const pk_elf *elf, const pk_insn *insns, size_t n, size_t k)
{
    jt_ctx c = {.elf = elf, .insns = insns, .n = n};
    ZydisDecoderInit(&c.dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    jt_insn j, d, m;
    if (k >= n || insns[k].cls != PK_INSN_IJMP || !decode(&c, k, &j))
        return false;
    const ZydisDecodedOperand *o = &j.op[0];
    if (o->type == ZYDIS_OPERAND_TYPE_MEMORY)
        return o->mem.index != ZYDIS_REGISTER_NONE;
    if (!is_reg(o))
        return false;
    size_t i = find_def(&c, k, wide(o->reg.value), &d, JT_SCAN);
    if (i == SIZE_MAX)
        return false;
    if (indexed_load(&d))
        return true;
    if (d.in.mnemonic != ZYDIS_MNEMONIC_ADD || !is_reg(&d.op[0]) || !is_reg(&d.op[1]))
        return false;
    for (int side = 0; side < 2; side++) {
        size_t t = find_def(&c, i, wide(d.op[side].reg.value), &m, JT_SCAN);
        if (t != SIZE_MAX && indexed_load(&m))
            return true;
    }
    return false;
}

int pk_jt_read(const pk_elf *elf, const pk_insn *insns, size_t n, uint64_t table, size_t esize, uint32_t count,
               bool cold_ok, pk_jt_entry_fn entry, const void *form, pk_vec *targets, pk_err *err)
{
    size_t before = targets->len;
    if (count == 0) {
        for (uint32_t e = 0; e < JT_MAX_GUESSED; e++) {
            const uint8_t *q = pk_elf_vaddr_bytes(elf, table + e * esize, esize);
            if (!q)
                break;
            uint64_t t = entry(q, form);
            if (!is_insn(insns, n, t))
                break;
            uint64_t *slot = pk_vec_push(targets);
            if (!slot)
                return pk_err_set(err, "out of memory");
            *slot = t;
        }
        if (targets->len - before >= 2)
            return 2;
        targets->len = before;
        return 0;
    }
    const uint8_t *p = pk_elf_vaddr_bytes(elf, table, (size_t)count * esize);
    if (!p)
        return 0;
    if (pk_vec_reserve(targets, before + count) != 0)
        return pk_err_set(err, "out of memory");
    uint64_t *out = (uint64_t *)targets->data + before;
    for (uint32_t e = 0; e < count; e++) {
        uint64_t t = entry(p + e * esize, form);
        if (cold_ok ? !valid_target(elf, insns, n, t) : !is_insn(insns, n, t))
            return 0;
        out[e] = t;
    }
    targets->len = before + count;
    return 1;
}
