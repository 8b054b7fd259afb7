/* .eh_frame rows (binary/cfi.c) and unwinding a stack copy with them
 * (unwind/stack_cfi.c), on call-frame information assembled by hand into an
 * ELF in memory, so that every rule and every stop is known:
 *   leaf  [0x1000, 0x1010): CFA = rsp+8, return address at CFA-8
 *   frame [0x1010, 0x1040): push %rbp (CFA rsp+16, rbp at CFA-16), then
 *                           mov %rsp,%rbp (CFA rbp+16); remember/restore
 *                           around an epilogue at 0x1038
 *   main  [0x1040, 0x1080): CFA rsp+8, then rsp+32 from 0x1044
 *   _start[0x1080, 0x1090): return address undefined (the outermost frame)
 * pcrel sdata4 pointers, as compilers write them. The real compilers' rows
 * are compared with readelf's in tests/e2e/unwind_cfi.sh. */
#include "test.h"
#include "binary/binary.h"
#include "binary/cfi.h"
#include "unwind/stack_cfi.h"

#include <stdlib.h>

#define EH_ADDR 0x2000

typedef struct buf {
    uint8_t b[4096];
    size_t n;
} buf;

static void put(buf *o, const void *p, size_t n) { memcpy(o->b + o->n, p, n); o->n += n; }
static void u8(buf *o, uint8_t v) { put(o, &v, 1); }
static void u16(buf *o, uint16_t v) { put(o, &v, 2); }
static void u32(buf *o, uint32_t v) { put(o, &v, 4); }
static void uleb(buf *o, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        u8(o, c | (v ? 0x80 : 0));
    } while (v);
}
static void sleb(buf *o, int64_t v)
{
    for (;;) {
        uint8_t c = v & 0x7f;
        v >>= 7;
        if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
            u8(o, c);
            return;
        }
        u8(o, c | 0x80);
    }
}

/* One entry: length, then the body in `body` padded to 4 with DW_CFA_nop. */
static void entry(buf *eh, const buf *body)
{
    uint32_t len = (uint32_t)((body->n + 3) & ~3u);
    u32(eh, len);
    put(eh, body->b, body->n);
    for (size_t i = body->n; i < len; i++)
        u8(eh, 0);
}

/* An FDE with a CIE at offset cie_off; pc-relative begin. */
static void fde(buf *eh, uint32_t cie_off, uint64_t begin, uint32_t range, const buf *insns)
{
    buf b = {.n = 0};
    uint32_t here = (uint32_t)eh->n + 4; /* the CIE pointer's offset */
    u32(&b, here - cie_off);
    int32_t rel = (int32_t)(begin - (EH_ADDR + here + 4)); /* pc_begin's field follows */
    u32(&b, (uint32_t)rel);
    u32(&b, range);
    uleb(&b, 0); /* augmentation data length */
    put(&b, insns->b, insns->n);
    entry(eh, &b);
}

/* The .eh_frame above, and an ELF64 x86-64 file holding it (machine 62)
 * or the same bytes for AArch64 (183). */
static size_t make_elf(uint8_t *out, uint16_t machine, const buf *eh)
{
    static const char shstr[] = "\0.eh_frame\0.shstrtab";
    size_t eh_off = 64, str_off = eh_off + eh->n, sh_off = (str_off + sizeof shstr + 7) & ~(size_t)7;
    memset(out, 0, sh_off + 3 * 64);
    memcpy(out, "\x7f" "ELF\x02\x01\x01", 7);
    uint16_t h16[] = {2 /*ET_EXEC*/, machine};
    memcpy(out + 16, h16, 4);
    uint32_t version = 1;
    memcpy(out + 20, &version, 4);
    uint64_t shoff = sh_off;
    memcpy(out + 40, &shoff, 8);
    uint16_t sizes[] = {64, 0, 0, 64, 3, 2}; /* ehsize, phentsize, phnum, shentsize, shnum, shstrndx */
    memcpy(out + 52, sizes, sizeof sizes);
    memcpy(out + eh_off, eh->b, eh->n);
    memcpy(out + str_off, shstr, sizeof shstr);
    uint8_t *sh = out + sh_off + 64; /* [1] .eh_frame */
    uint32_t name = 1, type = 1 /*PROGBITS*/;
    uint64_t flags = 2 /*ALLOC*/, addr = EH_ADDR, off = eh_off, size = eh->n;
    memcpy(sh, &name, 4), memcpy(sh + 4, &type, 4), memcpy(sh + 8, &flags, 8), memcpy(sh + 16, &addr, 8);
    memcpy(sh + 24, &off, 8), memcpy(sh + 32, &size, 8);
    sh += 64; /* [2] .shstrtab */
    name = 11, type = 3 /*STRTAB*/, flags = 0, addr = 0, off = str_off, size = sizeof shstr;
    memcpy(sh, &name, 4), memcpy(sh + 4, &type, 4), memcpy(sh + 8, &flags, 8), memcpy(sh + 16, &addr, 8);
    memcpy(sh + 24, &off, 8), memcpy(sh + 32, &size, 8);
    return sh_off + 3 * 64;
}

static void x86_eh_frame(buf *eh)
{
    eh->n = 0;
    buf cie = {.n = 0}, in = {.n = 0};
    u32(&cie, 0);          /* CIE id */
    u8(&cie, 1);           /* version */
    put(&cie, "zR", 3);
    uleb(&cie, 1);         /* code alignment */
    sleb(&cie, -8);        /* data alignment */
    u8(&cie, 16);          /* return address column */
    uleb(&cie, 1);         /* augmentation data: */
    u8(&cie, 0x1b);        /*   FDE pointers pcrel sdata4 */
    u8(&cie, 0x0c), uleb(&cie, 7), uleb(&cie, 8);  /* def_cfa rsp+8 */
    u8(&cie, 0x80 | 16), uleb(&cie, 1);            /* offset ra at CFA-8 */
    entry(eh, &cie);
    fde(eh, 0, 0x1000, 0x10, &in); /* leaf: the CIE's row */
    in.n = 0;
    u8(&in, 0x40 | 1);                              /* advance 1 (push %rbp) */
    u8(&in, 0x0e), uleb(&in, 16);                   /* def_cfa_offset 16 */
    u8(&in, 0x80 | 6), uleb(&in, 2);                /* rbp at CFA-16 */
    u8(&in, 0x40 | 3);                              /* advance 3 (mov %rsp,%rbp) */
    u8(&in, 0x0d), uleb(&in, 6);                    /* def_cfa_register rbp */
    u8(&in, 0x02), u8(&in, 0x24);                   /* advance_loc1 0x24: 0x1038 */
    u8(&in, 0x0a);                                  /* remember_state */
    u8(&in, 0x0c), uleb(&in, 7), uleb(&in, 8);      /* def_cfa rsp+8 (after pop %rbp) */
    u8(&in, 0xc0 | 6);                              /* restore rbp */
    u8(&in, 0x03), u16(&in, 2);                     /* advance_loc2 2: 0x103a */
    u8(&in, 0x0b);                                  /* restore_state */
    fde(eh, 0, 0x1010, 0x30, &in);
    in.n = 0;
    u8(&in, 0x40 | 4);                              /* advance 4 */
    u8(&in, 0x0e), uleb(&in, 32);                   /* def_cfa_offset 32 */
    fde(eh, 0, 0x1040, 0x40, &in);
    in.n = 0;
    u8(&in, 0x07), uleb(&in, 16);                   /* undefined ra */
    fde(eh, 0, 0x1080, 0x10, &in);
    u32(eh, 0); /* terminator */
}

static uint8_t elf_bytes[8192];

static pk_cfi *open_cfi(uint16_t machine, const buf *eh, pk_elf **elf)
{
    size_t n = make_elf(elf_bytes, machine, eh);
    pk_err err;
    *elf = NULL;
    if (pk_elf_open_mem(elf, elf_bytes, n, "synthetic.elf", &err)) {
        fprintf(stderr, "open: %s\n", err.msg);
        pk_test_failed_checks++;
        return NULL;
    }
    pk_cfi *c = NULL;
    if (pk_cfi_open(&c, *elf, &err)) {
        fprintf(stderr, "cfi: %s\n", err.msg);
        pk_test_failed_checks++;
    }
    return c;
}

TEST(rows)
{
    buf eh;
    x86_eh_frame(&eh);
    pk_elf *elf;
    pk_cfi *c = open_cfi(62, &eh, &elf);
    if (!c)
        return;
    CHECK_EQ_U64(pk_cfi_num_fdes(c), 4);
    pk_cfi_row r;
    pk_err err;
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x0fff, &r, &err), 1); /* before every FDE */
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x1090, &r, &err), 1); /* after */
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x1005, &r, &err), 0);
    CHECK_EQ_U64(r.cfa_reg, 7);
    CHECK_EQ_U64(r.cfa_offset, 8);
    CHECK_EQ_U64(r.ra_reg, 16);
    CHECK_EQ_U64(r.regs[16].kind, PK_CFI_OFFSET);
    CHECK_EQ_U64(r.regs[16].offset, -8);
    CHECK_EQ_U64(r.regs[6].kind, PK_CFI_SAME);
    CHECK_EQ_U64(r.start, 0x1000);
    CHECK_EQ_U64(r.end, 0x1010);
    /* frame: before the push, after it, after mov, in the epilogue, after */
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x1010, &r, &err), 0);
    CHECK_EQ_U64(r.cfa_offset, 8);
    CHECK_EQ_U64(r.end, 0x1011);
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x1012, &r, &err), 0);
    CHECK_EQ_U64(r.cfa_reg, 7);
    CHECK_EQ_U64(r.cfa_offset, 16);
    CHECK_EQ_U64(r.regs[6].kind, PK_CFI_OFFSET);
    CHECK_EQ_U64(r.regs[6].offset, -16);
    CHECK_EQ_U64(r.start, 0x1011);
    CHECK_EQ_U64(r.end, 0x1014);
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x1020, &r, &err), 0);
    CHECK_EQ_U64(r.cfa_reg, 6);
    CHECK_EQ_U64(r.cfa_offset, 16);
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x1039, &r, &err), 0);
    CHECK_EQ_U64(r.cfa_reg, 7);
    CHECK_EQ_U64(r.cfa_offset, 8);
    CHECK_EQ_U64(r.regs[6].kind, PK_CFI_SAME); /* DW_CFA_restore: the CIE's rule */
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x103c, &r, &err), 0);
    CHECK_EQ_U64(r.cfa_reg, 6); /* restore_state: the CFA rule comes back too */
    CHECK_EQ_U64(r.regs[6].kind, PK_CFI_OFFSET);
    CHECK_EQ_U64(r.end, 0x1040);
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x1085, &r, &err), 0);
    CHECK_EQ_U64(r.regs[16].kind, PK_CFI_UNDEFINED);
    pk_cfi_free(c);
    pk_elf_close(elf);
}

/* to_link for the tests: identity, except addresses >= 0x9000 (other code) */
static uint64_t ident(void *ctx, uint64_t a)
{
    (void)ctx;
    return a >= 0x9000 ? UINT64_MAX : a;
}

#define SP 0x7ff0000

static void set64(uint8_t *stack, uint64_t addr, uint64_t v) { memcpy(stack + (addr - SP), &v, 8); }

TEST(unwind_x86)
{
    buf eh;
    x86_eh_frame(&eh);
    pk_elf *elf;
    pk_cfi *c = open_cfi(62, &eh, &elf);
    if (!c)
        return;
    /* leaf at 0x1005 (sp = SP): [SP] = 0x1025, a return into frame's body,
     * whose rbp = SP+48: [SP+48] saved rbp, [SP+56] = 0x1050 into main;
     * main's CFA = SP+64+32: [SP+88] = 0x1085 into _start, whose return
     * address is undefined: the end */
    uint8_t stack[256] = {0};
    set64(stack, SP, 0x1025);
    set64(stack, SP + 48, 0xdead);
    set64(stack, SP + 56, 0x1050);
    set64(stack, SP + 88, 0x1085);
    pk_user_regs regs = {.pc = 0x1005};
    regs.reg[7] = SP, regs.reg[6] = SP + 48;
    regs.known = 1u << 7 | 1u << 6;
    uint64_t out[16];
    pk_stack_stop stop;
    pk_err err;
    size_t n = pk_stack_unwind(c, ident, NULL, &regs, stack, sizeof stack, out, 16, &stop, &err);
    CHECK_EQ_U64(n, 4);
    CHECK_EQ_U64(out[0], 0x1005);
    CHECK_EQ_U64(out[1], 0x1025);
    CHECK_EQ_U64(out[2], 0x1050);
    CHECK_EQ_U64(out[3], 0x1085);
    CHECK_EQ_U64(stop, PK_STACK_END);
    /* the copy ends before main's return address: unreadable */
    n = pk_stack_unwind(c, ident, NULL, &regs, stack, 88, out, 16, &stop, &err);
    CHECK_EQ_U64(n, 3);
    CHECK_EQ_U64(stop, PK_STACK_UNREADABLE);
    /* a frame in other code stops the chain after listing it */
    set64(stack, SP + 56, 0x9050);
    n = pk_stack_unwind(c, ident, NULL, &regs, stack, sizeof stack, out, 16, &stop, &err);
    CHECK_EQ_U64(n, 3);
    CHECK_EQ_U64(out[2], 0x9050);
    CHECK_EQ_U64(stop, PK_STACK_EXTERNAL);
    /* an address no FDE covers */
    set64(stack, SP + 56, 0x2050);
    n = pk_stack_unwind(c, ident, NULL, &regs, stack, sizeof stack, out, 16, &stop, &err);
    CHECK_EQ_U64(n, 3);
    CHECK_EQ_U64(stop, PK_STACK_NO_FDE);
    /* the frame pointer points below the stack pointer: the CFA would not
     * move up, and unwinding stops instead of looping */
    set64(stack, SP + 56, 0x1050);
    regs.reg[6] = SP - 16;
    n = pk_stack_unwind(c, ident, NULL, &regs, stack, sizeof stack, out, 16, &stop, &err);
    CHECK_EQ_U64(n, 2);
    CHECK_EQ_U64(stop, PK_STACK_NO_PROGRESS);
    /* room for two frames */
    regs.reg[6] = SP + 48;
    n = pk_stack_unwind(c, ident, NULL, &regs, stack, sizeof stack, out, 2, &stop, &err);
    CHECK_EQ_U64(n, 2);
    CHECK_EQ_U64(stop, PK_STACK_FULL);
    /* a leaf sampled at frame's push (0x1010): its own return address is
     * at [SP] and the chain is whole (a frame-pointer chain would skip frame's caller) */
    regs.pc = 0x1010;
    set64(stack, SP, 0x1050);
    set64(stack, SP + 8 + 24, 0x1085); /* main: CFA = (SP+8)+32, ra at CFA-8 */
    n = pk_stack_unwind(c, ident, NULL, &regs, stack, sizeof stack, out, 16, &stop, &err);
    CHECK_EQ_U64(n, 3);
    CHECK_EQ_U64(out[1], 0x1050);
    CHECK_EQ_U64(out[2], 0x1085);
    CHECK_EQ_U64(stop, PK_STACK_END);
    pk_cfi_free(c);
    pk_elf_close(elf);
}

TEST(perf_regs)
{
    /* x86-64: perf's order ax bx cx dx si di bp sp ip ...; DWARF numbers bp 6, sp 7 */
    uint64_t vals[9] = {1, 2, 3, 4, 5, 6, 0x60, 0x70, 0x80};
    pk_user_regs r;
    CHECK(pk_user_regs_from_perf(&r, 62, 2, 0x1ff, vals));
    CHECK_EQ_U64(r.pc, 0x80);
    CHECK_EQ_U64(r.reg[6], 0x60);
    CHECK_EQ_U64(r.reg[7], 0x70);
    CHECK_EQ_U64(r.reg[3], 2); /* rbx: perf 1, DWARF 3 */
    CHECK_EQ_U64(r.reg[1], 4); /* rdx: perf 3, DWARF 1 */
    /* only bp, sp, ip (the mask pgokit asks for) */
    uint64_t three[3] = {0x60, 0x70, 0x80};
    CHECK(pk_user_regs_from_perf(&r, 62, 2, pk_user_regs_mask(62), three));
    CHECK_EQ_U64(r.reg[7], 0x70);
    CHECK_EQ_U64(r.pc, 0x80);
    CHECK(!pk_user_regs_from_perf(&r, 62, 0, 0x1ff, vals)); /* abi none: no registers */
    CHECK(!pk_user_regs_from_perf(&r, 62, 2, 0x13f, vals)); /* no sp */
    /* AArch64: x29, x30 (lr), sp, pc */
    uint64_t a64[4] = {0x290, 0x300, 0x310, 0x320};
    CHECK(pk_user_regs_from_perf(&r, 183, 2, pk_user_regs_mask(183), a64));
    CHECK_EQ_U64(r.reg[29], 0x290);
    CHECK_EQ_U64(r.reg[30], 0x300);
    CHECK_EQ_U64(r.reg[31], 0x310);
    CHECK_EQ_U64(r.pc, 0x320);
}

TEST(unwind_a64_leaf_in_lr)
{
    /* AArch64: a leaf keeps its return address in x30 (CIE: CFA = sp+0, no
     * rule for x30: "same"); its caller saved x29/x30 at CFA-16/-8 with
     * CFA = sp+16 */
    buf eh = {.n = 0}, cie = {.n = 0}, in = {.n = 0};
    u32(&cie, 0), u8(&cie, 1), put(&cie, "zR", 3), uleb(&cie, 4), sleb(&cie, -8), u8(&cie, 30);
    uleb(&cie, 1), u8(&cie, 0x1b);
    u8(&cie, 0x0c), uleb(&cie, 31), uleb(&cie, 0); /* def_cfa sp+0 */
    entry(&eh, &cie);
    fde(&eh, 0, 0x1000, 0x10, &in);                 /* the leaf */
    u8(&in, 0x40 | 1);                              /* advance 1 x 4 bytes */
    u8(&in, 0x0e), uleb(&in, 16);                   /* CFA sp+16 */
    u8(&in, 0x80 | 29), uleb(&in, 2);               /* x29 at CFA-16 */
    u8(&in, 0x80 | 30), uleb(&in, 1);               /* x30 at CFA-8 */
    fde(&eh, 0, 0x1010, 0x30, &in);
    u32(&eh, 0);
    pk_elf *elf;
    pk_cfi *c = open_cfi(183, &eh, &elf);
    if (!c)
        return;
    uint8_t stack[64] = {0};
    set64(stack, SP + 8, 0x9000); /* the caller's return: other code */
    pk_user_regs regs = {.pc = 0x1008};
    regs.reg[31] = SP, regs.reg[30] = 0x1020, regs.reg[29] = SP + 32;
    regs.known = 1u << 31 | 1u << 30 | 1u << 29;
    uint64_t out[8];
    pk_stack_stop stop;
    pk_err err;
    size_t n = pk_stack_unwind(c, ident, NULL, &regs, stack, sizeof stack, out, 8, &stop, &err);
    CHECK_EQ_U64(n, 3);
    CHECK_EQ_U64(out[1], 0x1020); /* from the link register */
    CHECK_EQ_U64(out[2], 0x9000); /* from the caller's save slot */
    CHECK_EQ_U64(stop, PK_STACK_EXTERNAL);
    pk_cfi_free(c);
    pk_elf_close(elf);
}

/* Malformed sections: an error that names the file and the offset. */
static void expect_error(const buf *eh, const char *what)
{
    size_t n = make_elf(elf_bytes, 62, eh);
    pk_err err;
    pk_elf *elf;
    if (pk_elf_open_mem(&elf, elf_bytes, n, "bad.elf", &err)) {
        pk_test_failed_checks++;
        return;
    }
    pk_cfi *c = NULL;
    int rc = pk_cfi_open(&c, elf, &err);
    if (!rc) { /* the rows fail instead (instructions are read on demand) */
        pk_cfi_row r;
        rc = pk_cfi_row_at(c, 0x1000, &r, &err) < 0 ? -1 : 0;
        pk_cfi_free(c);
    }
    CHECK(rc != 0);
    if (rc) {
        CHECK(strstr(err.msg, "bad.elf: .eh_frame offset ") != NULL);
        if (!strstr(err.msg, what)) {
            fprintf(stderr, "expected '%s' in: %s\n", what, err.msg);
            pk_test_failed_checks++;
        }
    }
    pk_elf_close(elf);
}

TEST(malformed)
{
    buf eh, good;
    x86_eh_frame(&good);
    /* an entry longer than the section */
    eh = good;
    eh.n = 20;
    expect_error(&eh, "runs past the end");
    /* CIE version 9 */
    eh = good;
    eh.b[8] = 9;
    expect_error(&eh, "CIE version");
    /* an FDE whose CIE pointer names no CIE */
    eh = good;
    uint32_t cie_len;
    memcpy(&cie_len, eh.b, 4);
    uint32_t bogus = 8;
    memcpy(eh.b + 4 + cie_len + 4, &bogus, 4);
    expect_error(&eh, "names no CIE");
    /* an unknown call-frame instruction in the first FDE (0x3f) */
    buf bad = {.n = 0}, cie = {.n = 0}, in = {.n = 0};
    u32(&cie, 0), u8(&cie, 1), put(&cie, "zR", 3), uleb(&cie, 1), sleb(&cie, -8), u8(&cie, 16);
    uleb(&cie, 1), u8(&cie, 0x1b);
    entry(&bad, &cie);
    u8(&in, 0x3f);
    fde(&bad, 0, 0x1000, 0x10, &in);
    u32(&bad, 0);
    expect_error(&bad, "unknown call-frame instruction");
    /* restore_state with nothing remembered */
    bad.n = 0, in.n = 0;
    entry(&bad, &cie);
    u8(&in, 0x0b);
    fde(&bad, 0, 0x1000, 0x10, &in);
    u32(&bad, 0);
    expect_error(&bad, "without a remembered state");
    /* factored offsets whose product with the data alignment (-8) is past
     * int64: offset (uleb 2^62), offset_extended_sf (sleb 2^61),
     * def_cfa_offset_sf (sleb -2^61), GNU_negative_offset_extended (uleb
     * 2^62) */
    for (int k = 0; k < 4; k++) {
        bad.n = 0, in.n = 0;
        entry(&bad, &cie);
        if (k == 0)
            u8(&in, 0x80 | 16), uleb(&in, 1ull << 62);
        else if (k == 1)
            u8(&in, 0x11), uleb(&in, 16), sleb(&in, (int64_t)1 << 61);
        else if (k == 2)
            u8(&in, 0x13), sleb(&in, -((int64_t)1 << 61));
        else
            u8(&in, 0x2f), uleb(&in, 16), uleb(&in, 1ull << 62);
        fde(&bad, 0, 0x1000, 0x10, &in);
        u32(&bad, 0);
        expect_error(&bad, "call-frame offset out of range");
    }
}

TEST(empty_eh_frame)
{
    /* an .eh_frame without entries: an empty table, every lookup "none" */
    buf eh = {.n = 0};
    size_t n = make_elf(elf_bytes, 62, &eh);
    pk_err err;
    pk_elf *elf;
    CHECK_OK(pk_elf_open_mem(&elf, elf_bytes, n, "empty.elf", &err), &err);
    pk_cfi *c;
    CHECK_OK(pk_cfi_open(&c, elf, &err), &err);
    CHECK_EQ_U64(pk_cfi_num_fdes(c), 0);
    pk_cfi_row r;
    CHECK_EQ_U64(pk_cfi_row_at(c, 0x1000, &r, &err), 1);
    pk_cfi_free(c);
    pk_elf_close(elf);
}

/* pk_cfi_frame_pointers of an .eh_frame in an ELF file of `machine` */
static pk_cfi_frames frames_of(uint16_t machine, const buf *eh)
{
    pk_cfi_frames fr = {0};
    pk_elf *elf;
    pk_cfi *c = open_cfi(machine, eh, &elf);
    pk_err err;
    if (c && pk_cfi_frame_pointers(c, elf, &fr, &err)) {
        fprintf(stderr, "frame pointers: %s\n", err.msg);
        pk_test_failed_checks++;
    }
    pk_cfi_free(c);
    pk_elf_close(elf);
    return fr;
}

TEST(frame_pointers)
{
    /* the four functions above: one moves its CFA onto rbp (a frame
     * pointer), one keeps it on rsp, the leaf and the outermost frame have
     * one row each (no frame); no code bytes here, so only the CFI speaks
     * (the prologue path is tests/e2e/record_chains.sh's) */
    buf eh;
    x86_eh_frame(&eh);
    pk_cfi_frames fr = frames_of(62, &eh);
    CHECK_EQ_U64(fr.functions, 4);
    CHECK_EQ_U64(fr.framed, 2);
    CHECK_EQ_U64(fr.with_fp, 1);
    CHECK_EQ_U64(fr.bytes, 0x90);
    CHECK_EQ_U64(fr.framed_bytes, 0x70);
    CHECK_EQ_U64(fr.with_fp_bytes, 0x30);
    /* the same rows on AArch64: register 6 is x6 there, not the frame
     * pointer (x29) */
    fr = frames_of(183, &eh);
    CHECK_EQ_U64(fr.framed, 2);
    CHECK_EQ_U64(fr.with_fp, 0);
    CHECK_EQ_U64(fr.with_fp_bytes, 0);
    /* no FDE: nothing counted */
    buf none = {.n = 0};
    fr = frames_of(62, &none);
    CHECK_EQ_U64(fr.functions, 0);
    CHECK_EQ_U64(fr.bytes, 0);
}

int main(void) { return pk_test_main(); }
