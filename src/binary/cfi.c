/* cfi.c — .eh_frame: the FDE index and the row of one address (see cfi.h). */
#include "binary/cfi.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DW_EH_PE pointer encodings: the low nibble is the format, bits 4-6 what
 * the value is relative to, bit 7 an indirection. */
enum {
    PE_ABSPTR = 0x00, PE_ULEB = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03, PE_UDATA8 = 0x04,
    PE_SLEB = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
    PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80, PE_OMIT = 0xff,
};

/* What an FDE needs of its CIE, parsed once per CIE. */
typedef struct cie {
    uint64_t offset;          /* in .eh_frame */
    uint64_t code_align;
    int64_t data_align;
    uint16_t ra_reg;
    uint8_t fde_enc;          /* 'R' */
    bool has_aug_data;        /* 'z': FDEs carry an augmentation length */
    uint64_t insns, insns_end;/* initial instructions, section offsets */
} cie;

typedef struct fde {
    uint64_t begin, end;      /* code range, link-time addresses */
    uint64_t insns, insns_end;
    uint32_t cie;             /* index in pk_cfi.cies */
} fde;

struct pk_cfi {
    const char *path;
    uint16_t machine;
    const uint8_t *data;      /* .eh_frame bytes */
    size_t size;
    uint64_t vaddr;           /* .eh_frame's sh_addr: pc-relative pointers */
    pk_vec cies;              /* cie, in section order */
    pk_vec fdes;              /* fde, sorted by begin once all are read */
};

#define CIE(c, i) PK_VEC_AT(&(c)->cies, cie, i)
#define FDE(c, i) PK_VEC_AT(&(c)->fdes, fde, i)

size_t pk_cfi_num_fdes(const pk_cfi *c) { return c ? c->fdes.len : 0; }
uint16_t pk_cfi_machine(const pk_cfi *c) { return c ? c->machine : 0; }

bool pk_cfi_abi_regs(uint16_t machine, uint16_t *sp, uint16_t *fp)
{
    uint16_t s, f;
    if (machine == EM_X86_64)
        s = 7, f = 6;
    else if (machine == EM_AARCH64)
        s = 31, f = 29;
    else
        return false;
    if (sp)
        *sp = s;
    if (fp)
        *fp = f;
    return true;
}

void pk_cfi_fde_range(const pk_cfi *c, size_t i, uint64_t *begin, uint64_t *end)
{
    *begin = FDE(c, i).begin;
    *end = FDE(c, i).end;
}

const char *pk_cfi_reg_name(const pk_cfi *c, unsigned reg, char *buf, size_t cap)
{
    static const char *const x86[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
                                      "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};
    if (c->machine == EM_X86_64 && reg < sizeof x86 / sizeof x86[0])
        snprintf(buf, cap, "%s", x86[reg]);
    else if (c->machine == EM_AARCH64 && reg <= 31)
        snprintf(buf, cap, reg == 31 ? "sp" : "x%u", reg);
    else
        snprintf(buf, cap, "r%u", reg);
    return buf;
}

void pk_cfi_free(pk_cfi *c)
{
    if (!c)
        return;
    pk_vec_free(&c->cies);
    pk_vec_free(&c->fdes);
    free(c);
}

static int bad(const pk_cfi *c, uint64_t off, pk_err *err, const char *what)
{
    return pk_err_set(err, "%s: .eh_frame offset %llu: %s", c->path, (unsigned long long)off, what);
}

/* A DW_EH_PE-encoded pointer at the cursor. pcrel is relative to the
 * field's own address. Returns false on an encoding this reader does not
 * take (datarel, indirect) or a short read. */
static bool read_pointer(const pk_cfi *c, pk_cursor *cur, uint8_t enc, uint64_t *out)
{
    uint64_t field = c->vaddr + (uint64_t)(cur->pos - c->data);
    uint64_t v;
    switch (enc & 0x0f) {
    case PE_ABSPTR: v = pk_cursor_u64(cur); break;
    case PE_ULEB: v = pk_cursor_uleb(cur); break;
    case PE_UDATA2: v = pk_cursor_u16(cur); break;
    case PE_UDATA4: v = pk_cursor_u32(cur); break;
    case PE_UDATA8: v = pk_cursor_u64(cur); break;
    case PE_SLEB: v = (uint64_t)pk_cursor_sleb(cur); break;
    case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)pk_cursor_u16(cur); break;
    case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)pk_cursor_u32(cur); break;
    case PE_SDATA8: v = pk_cursor_u64(cur); break;
    default: return false;
    }
    if (cur->bad)
        return false;
    switch (enc & 0x70) {
    case 0: break;
    case PE_PCREL: v += field; break;
    default: return false;
    }
    if (enc & PE_INDIRECT)
        return false;
    *out = v;
    return true;
}

/* The pointer size of a format, for skipping a value (the personality). */
static bool skip_pointer(const pk_cfi *c, pk_cursor *cur, uint8_t enc)
{
    uint64_t v;
    return read_pointer(c, cur, (uint8_t)(enc & 0x7f & ~0x70), &v);
}

static int parse_cie(pk_cfi *c, uint64_t off, pk_cursor *cur, uint64_t end, pk_err *err)
{
    cie *e = pk_vec_push(&c->cies);
    if (!e)
        return pk_err_set(err, "out of memory");
    e->offset = off;
    e->fde_enc = PE_ABSPTR;
    uint8_t version = pk_cursor_u8(cur);
    if (version != 1 && version != 3 && version != 4)
        return bad(c, off, err, "CIE version is not 1, 3 or 4");
    const uint8_t *aug = cur->pos;
    size_t aug_len = 0;
    while (cur->pos + aug_len < cur->end && aug[aug_len])
        aug_len++;
    if (!pk_cursor_bytes(cur, aug_len + 1))
        return bad(c, off, err, "CIE augmentation string runs past the entry");
    if (version == 4) { /* address and segment selector sizes */
        pk_cursor_u8(cur);
        pk_cursor_u8(cur);
    }
    if (aug_len >= 2 && aug[0] == 'e' && aug[1] == 'h') /* old GCC: eh_data pointer */
        pk_cursor_u64(cur);
    e->code_align = pk_cursor_uleb(cur);
    e->data_align = pk_cursor_sleb(cur);
    e->ra_reg = (uint16_t)(version == 1 ? pk_cursor_u8(cur) : pk_cursor_uleb(cur));
    if (cur->bad)
        return bad(c, off, err, "CIE header runs past the entry");
    if (aug_len && aug[0] == 'z') {
        e->has_aug_data = true;
        uint64_t n = pk_cursor_uleb(cur);
        if (cur->bad || n > pk_cursor_left(cur))
            return bad(c, off, err, "CIE augmentation data runs past the entry");
        pk_cursor data;
        pk_cursor_init(&data, cur->pos, (size_t)n);
        data.start = c->data; /* offsets for pcrel stay section offsets */
        cur->pos += n;
        for (size_t i = 1; i < aug_len; i++) {
            switch (aug[i]) {
            case 'R': e->fde_enc = pk_cursor_u8(&data); break;
            case 'L': pk_cursor_u8(&data); break;
            case 'P': {
                uint8_t enc = pk_cursor_u8(&data);
                if (!skip_pointer(c, &data, enc))
                    return bad(c, off, err, "CIE personality pointer does not decode");
                break;
            }
            case 'S': case 'B': case 'G': break; /* signal frame, AArch64 BTI / MTE marks: no data */
            default:
                return bad(c, off, err, "CIE augmentation has an unknown letter");
            }
            if (data.bad)
                return bad(c, off, err, "CIE augmentation data is short");
        }
    } else if (aug_len && !(aug_len == 2 && aug[0] == 'e' && aug[1] == 'h')) {
        return bad(c, off, err, "CIE augmentation without 'z' (its data cannot be skipped)");
    }
    e->insns = (uint64_t)(cur->pos - c->data);
    e->insns_end = end;
    return 0;
}

static int cie_at(const pk_cfi *c, uint64_t off, uint32_t *out)
{
    size_t lo = 0, hi = c->cies.len;
    while (lo < hi) { /* CIEs are parsed in section order */
        size_t mid = (lo + hi) / 2;
        if (CIE(c, mid).offset < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->cies.len && CIE(c, lo).offset == off) {
        *out = (uint32_t)lo;
        return 0;
    }
    return -1;
}

/* An FDE whose CIE comes later in the section: parsed on a second pass. */
static int parse_fde(pk_cfi *c, uint64_t off, uint64_t cie_off, pk_cursor *cur, uint64_t end, pk_err *err)
{
    uint32_t ci;
    if (cie_at(c, cie_off, &ci))
        return bad(c, off, err, "FDE's CIE pointer names no CIE");
    const cie *e = &CIE(c, ci);
    uint64_t begin, range;
    if (!read_pointer(c, cur, e->fde_enc, &begin) || !read_pointer(c, cur, (uint8_t)(e->fde_enc & 0x0f), &range))
        return bad(c, off, err, "FDE address range does not decode (pointer encoding)");
    if (e->has_aug_data) {
        uint64_t n = pk_cursor_uleb(cur);
        if (cur->bad || n > pk_cursor_left(cur))
            return bad(c, off, err, "FDE augmentation data runs past the entry");
        cur->pos += n;
    }
    if (range == 0)
        return 0; /* an empty range (discarded code) */
    fde *f = pk_vec_push(&c->fdes);
    if (!f)
        return pk_err_set(err, "out of memory");
    *f = (fde){begin, begin + range, (uint64_t)(cur->pos - c->data), end, ci};
    return 0;
}

static int by_begin(const void *a, const void *b)
{
    const fde *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* One pass over the entries: CIEs (pass 0) or FDEs (pass 1). */
static int walk(pk_cfi *c, int pass, pk_err *err)
{
    uint64_t off = 0;
    while (off < c->size) {
        pk_cursor cur;
        pk_cursor_init(&cur, c->data, c->size);
        cur.pos += off;
        uint64_t len = pk_cursor_u32(&cur);
        if (cur.bad)
            return bad(c, off, err, "entry length runs past the section");
        if (len == 0)
            break; /* the terminator */
        if (len == 0xffffffffu) {
            len = pk_cursor_u64(&cur);
            if (cur.bad)
                return bad(c, off, err, "64-bit entry length runs past the section");
        }
        uint64_t body = (uint64_t)(cur.pos - c->data);
        if (len > c->size - body)
            return bad(c, off, err, "entry runs past the end of the section");
        uint64_t end = body + len;
        cur.end = c->data + end;
        uint64_t id_field = body;
        uint32_t id = pk_cursor_u32(&cur);
        if (cur.bad)
            return bad(c, off, err, "entry too short for its CIE id");
        if (id == 0) {
            if (pass == 0 && parse_cie(c, off, &cur, end, err))
                return -1;
        } else if (pass == 1) {
            if (id > id_field)
                return bad(c, off, err, "FDE's CIE pointer points before the section");
            if (parse_fde(c, off, id_field - id, &cur, end, err))
                return -1;
        }
        off = end;
    }
    return 0;
}

int pk_cfi_open(pk_cfi **out, pk_elf *elf, pk_err *err)
{
    *out = NULL;
    pk_cfi *c = calloc(1, sizeof *c);
    if (!c)
        return pk_err_set(err, "out of memory");
    pk_vec_init(&c->cies, sizeof(cie));
    pk_vec_init(&c->fdes, sizeof(fde));
    c->path = pk_elf_path(elf);
    c->machine = pk_elf_machine(elf);
    const pk_elf_section *sec = pk_elf_section_by_name(elf, ".eh_frame");
    if (sec) {
        if (pk_elf_section_data(elf, sec, &c->data, &c->size, err)) {
            pk_cfi_free(c);
            return -1;
        }
        c->vaddr = sec->addr;
        if (walk(c, 0, err) || walk(c, 1, err)) {
            pk_cfi_free(c);
            return -1;
        }
        if (c->fdes.len)
            qsort(c->fdes.data, c->fdes.len, sizeof(fde), by_begin);
    }
    *out = c;
    return 0;
}

/* ---- rows ---- */

#define STATE_DEPTH 16 /* DW_CFA_remember_state nesting */

typedef struct state {
    uint16_t cfa_reg;
    int64_t cfa_offset;
    bool cfa_expression;
    pk_cfi_rule regs[PK_CFI_NREGS];
} state;

typedef struct runner {
    const pk_cfi *c;
    const cie *e;
    uint64_t target;          /* the address whose row is wanted */
    uint64_t loc;             /* the current row's start */
    uint64_t next;            /* the next row's start (end of the current) */
    state cur, init;          /* init: after the CIE's instructions (DW_CFA_restore) */
    state stack[STATE_DEPTH];
    int depth;
    bool done;                /* loc passed target */
} runner;

static void set_rule(state *s, uint64_t reg, uint8_t kind, int64_t offset, uint64_t other)
{
    if (reg >= PK_CFI_NREGS)
        return; /* a register no unwinding here reads */
    s->regs[reg] = (pk_cfi_rule){kind, (uint16_t)(other < PK_CFI_NREGS ? other : 0), offset};
    if (kind == PK_CFI_REGISTER && other >= PK_CFI_NREGS)
        s->regs[reg].kind = PK_CFI_UNDEFINED;
}

static void advance(runner *r, uint64_t delta)
{
    uint64_t to = r->loc + delta * r->e->code_align;
    if (to > r->target) {
        r->next = to;
        r->done = true;
        return;
    }
    r->loc = to;
}

/* A factored offset times the CIE's data alignment; a product past int64
 * (only a corrupt entry has one) sets *overflow. */
static int64_t scaled(bool *overflow, int64_t factored, int64_t data_align)
{
    int64_t v;
    if (__builtin_mul_overflow(factored, data_align, &v)) {
        *overflow = true;
        return 0;
    }
    return v;
}

/* Runs instructions [from, to) of the section. */
static int run(runner *r, uint64_t from, uint64_t to, pk_err *err)
{
    const pk_cfi *c = r->c;
    pk_cursor cur;
    pk_cursor_init(&cur, c->data, (size_t)to);
    cur.pos += from;
    while (cur.pos < cur.end && !r->done) {
        uint64_t at = (uint64_t)(cur.pos - c->data);
        uint8_t op = pk_cursor_u8(&cur);
        uint8_t hi = op >> 6, low = op & 0x3f;
        int64_t da = r->e->data_align;
        bool overflow = false;
        if (hi == 1) {
            advance(r, low);
            continue;
        }
        if (hi == 2) {
            set_rule(&r->cur, low, PK_CFI_OFFSET, scaled(&overflow, (int64_t)pk_cursor_uleb(&cur), da), 0);
        } else if (hi == 3) {
            if (low < PK_CFI_NREGS)
                r->cur.regs[low] = r->init.regs[low];
        } else {
            uint64_t a, b;
            switch (low) {
            case 0x00: break; /* nop */
            case 0x01: { /* set_loc */
                uint64_t v;
                if (!read_pointer(c, &cur, r->e->fde_enc, &v))
                    return bad(c, at, err, "DW_CFA_set_loc operand does not decode");
                if (v > r->target) {
                    r->next = v;
                    r->done = true;
                } else {
                    r->loc = v;
                }
                break;
            }
            case 0x02: advance(r, pk_cursor_u8(&cur)); break;
            case 0x03: advance(r, pk_cursor_u16(&cur)); break;
            case 0x04: advance(r, pk_cursor_u32(&cur)); break;
            case 0x05: a = pk_cursor_uleb(&cur); set_rule(&r->cur, a, PK_CFI_OFFSET, scaled(&overflow, (int64_t)pk_cursor_uleb(&cur), da), 0); break;
            case 0x06: a = pk_cursor_uleb(&cur); if (a < PK_CFI_NREGS) r->cur.regs[a] = r->init.regs[a]; break;
            case 0x07: set_rule(&r->cur, pk_cursor_uleb(&cur), PK_CFI_UNDEFINED, 0, 0); break;
            case 0x08: set_rule(&r->cur, pk_cursor_uleb(&cur), PK_CFI_SAME, 0, 0); break;
            case 0x09: a = pk_cursor_uleb(&cur); b = pk_cursor_uleb(&cur); set_rule(&r->cur, a, PK_CFI_REGISTER, 0, b); break;
            case 0x0a:
                if (r->depth == STATE_DEPTH)
                    return bad(c, at, err, "DW_CFA_remember_state nested too deep");
                r->stack[r->depth++] = r->cur;
                break;
            case 0x0b:
                if (r->depth == 0)
                    return bad(c, at, err, "DW_CFA_restore_state without a remembered state");
                {
                    /* the CFA rule is restored too (DWARF 5 §6.4.2.4) */
                    r->cur = r->stack[--r->depth];
                }
                break;
            case 0x0c: r->cur.cfa_reg = (uint16_t)pk_cursor_uleb(&cur); r->cur.cfa_offset = (int64_t)pk_cursor_uleb(&cur); r->cur.cfa_expression = false; break;
            case 0x0d: r->cur.cfa_reg = (uint16_t)pk_cursor_uleb(&cur); r->cur.cfa_expression = false; break;
            case 0x0e: r->cur.cfa_offset = (int64_t)pk_cursor_uleb(&cur); break;
            case 0x0f: { /* def_cfa_expression */
                uint64_t n = pk_cursor_uleb(&cur);
                if (cur.bad || !pk_cursor_bytes(&cur, (size_t)n))
                    return bad(c, at, err, "DW_CFA_def_cfa_expression runs past the entry");
                r->cur.cfa_expression = true;
                break;
            }
            case 0x10: case 0x16: { /* expression, val_expression */
                a = pk_cursor_uleb(&cur);
                uint64_t n = pk_cursor_uleb(&cur);
                if (cur.bad || !pk_cursor_bytes(&cur, (size_t)n))
                    return bad(c, at, err, "DW_CFA_expression runs past the entry");
                set_rule(&r->cur, a, PK_CFI_EXPRESSION, 0, 0);
                break;
            }
            case 0x11: a = pk_cursor_uleb(&cur); set_rule(&r->cur, a, PK_CFI_OFFSET, scaled(&overflow, pk_cursor_sleb(&cur), da), 0); break;
            case 0x12: r->cur.cfa_reg = (uint16_t)pk_cursor_uleb(&cur); r->cur.cfa_offset = scaled(&overflow, pk_cursor_sleb(&cur), da); r->cur.cfa_expression = false; break;
            case 0x13: r->cur.cfa_offset = scaled(&overflow, pk_cursor_sleb(&cur), da); break;
            case 0x14: a = pk_cursor_uleb(&cur); set_rule(&r->cur, a, PK_CFI_VAL_OFFSET, scaled(&overflow, (int64_t)pk_cursor_uleb(&cur), da), 0); break;
            case 0x15: a = pk_cursor_uleb(&cur); set_rule(&r->cur, a, PK_CFI_VAL_OFFSET, scaled(&overflow, pk_cursor_sleb(&cur), da), 0); break;
            case 0x2d: break; /* GNU_window_save / AArch64 negate_ra_state: pointer authentication */
            case 0x2e: pk_cursor_uleb(&cur); break; /* GNU_args_size */
            case 0x2f: /* GNU_negative_offset_extended: minus the factored offset */
                a = pk_cursor_uleb(&cur); set_rule(&r->cur, a, PK_CFI_OFFSET, scaled(&overflow, scaled(&overflow, (int64_t)pk_cursor_uleb(&cur), da), -1), 0); break;
            default:
                return bad(c, at, err, "unknown call-frame instruction");
            }
        }
        if (cur.bad)
            return bad(c, at, err, "call-frame instruction runs past the entry");
        if (overflow)
            return bad(c, at, err, "call-frame offset out of range (factored offset times the data alignment)");
    }
    return 0;
}

int pk_cfi_row_at(const pk_cfi *c, uint64_t vaddr, pk_cfi_row *row, pk_err *err)
{
    size_t lo = 0, hi = c ? c->fdes.len : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (FDE(c, mid).begin <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || vaddr >= FDE(c, lo - 1).end)
        return 1;
    const fde *f = &FDE(c, lo - 1);
    const cie *e = &CIE(c, f->cie);
    runner r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.e = e;
    r.target = vaddr;
    r.loc = f->begin;
    r.next = f->end;
    for (size_t i = 0; i < PK_CFI_NREGS; i++)
        r.cur.regs[i].kind = PK_CFI_SAME;
    /* the CIE's instructions describe the function's first instruction */
    r.target = UINT64_MAX;
    if (run(&r, e->insns, e->insns_end, err))
        return -1;
    r.init = r.cur;
    r.depth = 0;
    r.target = vaddr;
    r.loc = f->begin;
    if (run(&r, f->insns, f->insns_end, err))
        return -1;
    memset(row, 0, sizeof *row);
    row->start = r.loc;
    row->end = r.done ? r.next : f->end;
    row->cfa_reg = r.cur.cfa_reg;
    row->cfa_offset = r.cur.cfa_offset;
    row->cfa_expression = r.cur.cfa_expression;
    row->ra_reg = e->ra_reg;
    memcpy(row->regs, r.cur.regs, sizeof row->regs);
    return 0;
}
