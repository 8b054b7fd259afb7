/* The architecture interface and the A64 decoder on hand-picked encodings
 * (every branch form, its neighbours in the encoding space, the PAC and BTI
 * hints); tests/e2e/binary_decode_a64.sh checks whole binaries against
 * llvm-objdump-19. Encodings from `llvm-mc-19 -triple=aarch64 -show-encoding`. */
#include "binary/binary.h"
#include "test.h"

#include <elf.h>

static pk_insn dec(uint32_t w, uint64_t addr)
{
    uint8_t b[4];
    pk_st32(b, w);
    pk_insn in;
    size_t n = pk_a64_decode(b, 4, addr, &in);
    CHECK_EQ_U64(n, 4);
    CHECK_EQ_U64(in.len, 4);
    CHECK_EQ_U64(in.addr, addr);
    return in;
}

#define EXPECT(w, addr, cls_, target_)                                          \
    do {                                                                         \
        pk_insn in_ = dec(w, addr);                                              \
        if (in_.cls != (cls_) || in_.target != (uint64_t)(target_))              \
            fprintf(stderr, "word 0x%08x: got %s 0x%llx\n", (unsigned)(w),       \
                    pk_insn_class_name(in_.cls), (unsigned long long)in_.target); \
        CHECK_EQ_U64(in_.cls, cls_);                                             \
        CHECK_EQ_U64(in_.target, target_);                                       \
    } while (0)

TEST(a64_direct_branches)
{
    EXPECT(0x14000004, 0x1000, PK_INSN_JMP, 0x1010);           /* b .+16 */
    EXPECT(0x17FFFFFF, 0x1000, PK_INSN_JMP, 0xFFC);            /* b .-4 */
    EXPECT(0x16000000, 0x10000000, PK_INSN_JMP, 0x8000000);    /* b .-128MiB */
    EXPECT(0x94000010, 0x2000, PK_INSN_CALL, 0x2040);          /* bl .+64 */
    EXPECT(0x97FFFFF0, 0x2000, PK_INSN_CALL, 0x1FC0);          /* bl .-64 */
    EXPECT(0x54000040, 0x3000, PK_INSN_CJMP, 0x3008);          /* b.eq .+8 */
    EXPECT(0x54FFFFE1, 0x3000, PK_INSN_CJMP, 0x2FFC);          /* b.ne .-4 */
    EXPECT(0x54000050, 0x3000, PK_INSN_CJMP, 0x3008);          /* bc.eq .+8 */
    EXPECT(0xB4000041, 0x4000, PK_INSN_CJMP, 0x4008);          /* cbz x1, .+8 */
    EXPECT(0x35FFFFE2, 0x4000, PK_INSN_CJMP, 0x3FFC);          /* cbnz w2, .-4 */
    EXPECT(0x36180040, 0x5000, PK_INSN_CJMP, 0x5008);          /* tbz w0, #3, .+8 */
    EXPECT(0xB747FFE5, 0x5000, PK_INSN_CJMP, 0x4FFC);          /* tbnz x5, #40, .-4 */
}

TEST(a64_register_branches)
{
    EXPECT(0xD61F0220, 0, PK_INSN_IJMP, 0);   /* br x17 */
    EXPECT(0xD63F0100, 0, PK_INSN_ICALL, 0);  /* blr x8 */
    EXPECT(0xD65F03C0, 0, PK_INSN_RET, 0);    /* ret */
    EXPECT(0xD65F0020, 0, PK_INSN_RET, 0);    /* ret x1 */
    EXPECT(0xD65F0BFF, 0, PK_INSN_RET, 0);    /* retaa */
    EXPECT(0xD65F0FFF, 0, PK_INSN_RET, 0);    /* retab */
    EXPECT(0xD71F0822, 0, PK_INSN_IJMP, 0);   /* braa x1, x2 */
    EXPECT(0xD71F0C22, 0, PK_INSN_IJMP, 0);   /* brab x1, x2 */
    EXPECT(0xD61F083F, 0, PK_INSN_IJMP, 0);   /* braaz x1 */
    EXPECT(0xD61F0C3F, 0, PK_INSN_IJMP, 0);   /* brabz x1 */
    EXPECT(0xD73F0822, 0, PK_INSN_ICALL, 0);  /* blraa x1, x2 */
    EXPECT(0xD73F0C22, 0, PK_INSN_ICALL, 0);  /* blrab x1, x2 */
    EXPECT(0xD63F087F, 0, PK_INSN_ICALL, 0);  /* blraaz x3 */
    EXPECT(0xD63F0C7F, 0, PK_INSN_ICALL, 0);  /* blrabz x3 */
    EXPECT(0xD69F03E0, 0, PK_INSN_RET, 0);    /* eret */
    EXPECT(0xD69F0BFF, 0, PK_INSN_RET, 0);    /* eretaa */
    EXPECT(0xD69F0FFF, 0, PK_INSN_RET, 0);    /* eretab */
    EXPECT(0x5500005F, 0, PK_INSN_RET, 0);    /* retaasppc #-8 */
    EXPECT(0xD65F0BE3, 0, PK_INSN_RET, 0);    /* retaasppcr x3 */
    EXPECT(0xD65F0FE3, 0, PK_INSN_RET, 0);    /* retabsppcr x3 */
}

TEST(a64_non_branches)
{
    EXPECT(0xD503201F, 0x10, PK_INSN_OTHER, 0); /* nop */
    EXPECT(0xD503245F, 0x10, PK_INSN_OTHER, 0); /* bti c */
    EXPECT(0xD503249F, 0x10, PK_INSN_OTHER, 0); /* bti j */
    EXPECT(0xD50324DF, 0x10, PK_INSN_OTHER, 0); /* bti jc */
    EXPECT(0xD503233F, 0x10, PK_INSN_OTHER, 0); /* paciasp */
    EXPECT(0xD50323BF, 0x10, PK_INSN_OTHER, 0); /* autiasp */
    EXPECT(0xD503237F, 0x10, PK_INSN_OTHER, 0); /* pacibsp */
    EXPECT(0xD50320FF, 0x10, PK_INSN_OTHER, 0); /* xpaclri */
    EXPECT(0xD4000001, 0x10, PK_INSN_OTHER, 0); /* svc #0 */
    EXPECT(0xD4200020, 0x10, PK_INSN_OTHER, 0); /* brk #1 */
    EXPECT(0x00000000, 0x10, PK_INSN_OTHER, 0); /* udf #0 */
    EXPECT(0x90000010, 0x10, PK_INSN_OTHER, 0); /* adrp x16, ... (PC-relative, not a branch) */
    EXPECT(0x10000040, 0x10, PK_INSN_OTHER, 0); /* adr x0, .+8 */
    EXPECT(0x58000040, 0x10, PK_INSN_OTHER, 0); /* ldr x0, literal */
    EXPECT(0x55000000, 0x10, PK_INSN_OTHER, 0); /* unallocated beside b.cond */
    EXPECT(0xD61F0001, 0x10, PK_INSN_OTHER, 0); /* br with op4 != 0: unallocated */
    EXPECT(0xD5033FDF, 0x10, PK_INSN_OTHER, 0); /* isb */
    EXPECT(0x8B020020, 0x10, PK_INSN_OTHER, 0); /* add x0, x1, x2 */
}

TEST(a64_invalid)
{
    uint8_t b[4] = {0xC0, 0x03, 0x5F, 0xD6}; /* ret */
    pk_insn in;
    CHECK_EQ_U64(pk_a64_decode(b, 3, 0x100, &in), 0);
    CHECK_EQ_U64(in.cls, PK_INSN_INVALID);
    CHECK_EQ_U64(in.len, 1);
    CHECK_EQ_U64(pk_a64_decode(b, 4, 0x102, &in), 0); /* misaligned */
    CHECK_EQ_U64(in.cls, PK_INSN_INVALID);
    CHECK_EQ_U64(pk_a64_decode(b, 4, 0x104, &in), 4);
    CHECK_EQ_U64(in.cls, PK_INSN_RET);
}

TEST(arch_selection)
{
    CHECK(pk_arch_for_machine(EM_X86_64) == &pk_arch_x86_64);
    CHECK(pk_arch_for_machine(EM_AARCH64) == &pk_arch_aarch64);
    CHECK(pk_arch_for_machine(EM_386) == NULL);
    CHECK(pk_arch_for_machine(EM_RISCV) == NULL);
    CHECK(pk_arch_by_name("arm64") == &pk_arch_aarch64);
    CHECK(pk_arch_by_name("x86_64") == &pk_arch_x86_64);
    CHECK(pk_arch_by_name("mips") == NULL);
    CHECK_STR(pk_arch_aarch64.perf_arch, "aarch64");
    /* the same bytes mean different things to the two decoders */
    uint8_t ret[4] = {0xC0, 0x03, 0x5F, 0xD6}; /* A64 ret; x86: rol $0x3,%al... */
    pk_insn in;
    CHECK_EQ_U64(pk_arch_decode(&pk_arch_aarch64, ret, 4, 0, &in), 4);
    CHECK_EQ_U64(in.cls, PK_INSN_RET);
    uint8_t c3[4] = {0xC3, 0x90, 0x90, 0x90};
    CHECK_EQ_U64(pk_arch_decode(&pk_arch_x86_64, c3, 4, 0, &in), 1);
    CHECK_EQ_U64(in.cls, PK_INSN_RET);
    /* traps */
    uint8_t brk[4], udf[4] = {0, 0, 0, 0}, nop[4], ud2[2] = {0x0f, 0x0b};
    pk_st32(brk, 0xD4200020);
    pk_st32(nop, 0xD503201F);
    CHECK(pk_arch_aarch64.is_trap(brk, 4));
    CHECK(pk_arch_aarch64.is_trap(udf, 4));
    CHECK(!pk_arch_aarch64.is_trap(nop, 4));
    CHECK(pk_arch_x86_64.is_trap(ud2, 2));
    CHECK(pk_insn_tailcall_candidate(PK_INSN_JMP) && pk_insn_tailcall_candidate(PK_INSN_IJMP));
    CHECK(!pk_insn_tailcall_candidate(PK_INSN_CALL) && !pk_insn_tailcall_candidate(PK_INSN_RET));
}

static void words(uint8_t *b, const uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pk_st32(b + 4 * i, w[i]);
}

TEST(arch_frame_setup)
{
    uint8_t b[32];
    const uint32_t pac[8] = {0xD503233F, 0xA9BE7BFD, 0x910003FD, 0xD503201F}; /* paciasp; stp x29,x30,[sp,#-32]!; mov x29,sp */
    words(b, pac, 8);
    CHECK_EQ_U64(pk_arch_aarch64.frame_setup(b), 12);
    const uint32_t plain[8] = {0xA9BA7BFD, 0x910003FD}; /* stp x29,x30,[sp,#-96]!; mov x29,sp */
    words(b, plain, 8);
    CHECK_EQ_U64(pk_arch_aarch64.frame_setup(b), 8);
    const uint32_t leaf[8] = {0x8B020020, 0xD65F03C0}; /* add; ret */
    words(b, leaf, 8);
    CHECK_EQ_U64(pk_arch_aarch64.frame_setup(b), 0);
    const uint32_t nomov[8] = {0xD503245F, 0xA9BE7BFD, 0xD503201F}; /* bti c; stp; nop */
    words(b, nomov, 8);
    CHECK_EQ_U64(pk_arch_aarch64.frame_setup(b), 0);
    /* gcc-12: stp x29,x30,[sp,#-288]!; mov w4,w0; adrp x2; add x2; mov x29,sp */
    const uint32_t sched[8] = {0xA9AE7BFD, 0x2A0003E4, 0x90000002, 0x91000042, 0x910003FD};
    words(b, sched, 8);
    CHECK_EQ_U64(pk_arch_aarch64.frame_setup(b), 20);
    /* clang-19, a large frame: sub sp,sp,#0x130; stp x29,x30,[sp,#0x100];
     * str x28,[sp,#0x110]; stp x20,x19,[sp,#0x120]; add x29,sp,#0x100 */
    const uint32_t large[8] = {0xD104C3FF, 0xA9107BFD, 0xF9008BFC, 0xA9124FF4, 0x910403FD};
    words(b, large, 8);
    CHECK_EQ_U64(pk_arch_aarch64.frame_setup(b), 20);
    /* a pair stored at an offset without the sub is not a frame setup */
    const uint32_t nosub[8] = {0xA9107BFD, 0x910403FD};
    words(b, nosub, 8);
    CHECK_EQ_U64(pk_arch_aarch64.frame_setup(b), 0);
    const uint8_t x1[8] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90};
    const uint8_t x2[8] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x8b, 0xec};
    const uint8_t x3[8] = {0x53, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90};
    CHECK_EQ_U64(pk_arch_x86_64.frame_setup(x1), 4);
    CHECK_EQ_U64(pk_arch_x86_64.frame_setup(x2), 8);
    CHECK_EQ_U64(pk_arch_x86_64.frame_setup(x3), 0);
}

TEST(arch_plt_slot)
{
    /* lld's printf@plt at 0x10910: adrp x16, 0x30000; ldr x17, [x16, #0xb40]; add; br x17 */
    uint8_t b[16];
    uint64_t slot = 0;
    const uint32_t plt[4] = {0x90000110, 0xF945A211, 0x912D0210, 0xD61F0220};
    words(b, plt, 4);
    CHECK_EQ_U64(pk_arch_aarch64.plt_slot(b, 0x10910, &slot), 1);
    CHECK_EQ_U64(slot, 0x30b40);
    const uint32_t bti[4] = {0xD503245F, 0x90000110, 0xF945A211, 0x912D0210}; /* BTI PLT one word earlier */
    words(b, bti, 4);
    CHECK_EQ_U64(pk_arch_aarch64.plt_slot(b, 0x1090c, &slot), 1);
    CHECK_EQ_U64(slot, 0x30b40);
    const uint32_t notplt[4] = {0x90000110, 0xF945A200, 0, 0}; /* ldr into x0 */
    words(b, notplt, 4);
    CHECK_EQ_U64(pk_arch_aarch64.plt_slot(b, 0x10910, &slot), 0);
    /* x86-64: endbr64; bnd jmp *0x2fe2(%rip) at 0x1030 */
    const uint8_t x[11] = {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xe2, 0x2f, 0x00, 0x00};
    CHECK_EQ_U64(pk_arch_x86_64.plt_slot(x, 0x1030, &slot), 1);
    CHECK_EQ_U64(slot, 0x1030 + 11 + 0x2fe2);
}

/* A cross-built binary through pk_binary: the interface is picked from its
 * header, function decoding and pk_binary_decode_one work. */
TEST(a64_binary)
{
    const char *bin = pk_test_build("a64-clang", "clang-19 --target=aarch64-linux-gnu -fuse-ld=lld",
                                    "-O2 -g -mbranch-protection=standard", "binary_inline.c");
    if (!bin) {
        fprintf(stderr, "note: no aarch64 cross toolchain, a64_binary skipped\n");
        return;
    }
    pk_err err;
    pk_binary *b;
    CHECK_OK(pk_binary_open(&b, bin, NULL, &err), &err);
    CHECK(pk_binary_arch(b) == &pk_arch_aarch64);
    const pk_elf_symbol *m = pk_elf_func_by_name(pk_binary_elf(b), "main");
    CHECK(m != NULL);
    if (m) {
        const pk_insn *in;
        size_t n;
        CHECK_OK(pk_binary_func_insns(b, m, &in, &n, &err), &err);
        CHECK_EQ_U64(n, m->size / 4);
        size_t calls = 0, rets = 0;
        for (size_t i = 0; i < n; i++) {
            CHECK_EQ_U64(in[i].len, 4);
            calls += in[i].cls == PK_INSN_CALL;
            rets += in[i].cls == PK_INSN_RET;
        }
        CHECK(calls > 0);
        CHECK(rets > 0);
        pk_insn one;
        CHECK_EQ_U64(pk_binary_decode_one(b, m->addr, &one), 0);
        CHECK_EQ_U64(one.len, 4);
        CHECK(pk_binary_insn_at(b, m->addr + 2, &err) == NULL);
        CHECK(pk_binary_insn_at(b, m->addr + 4, &err) != NULL);
    }
    pk_binary_close(b);
}

int main(void) { return pk_test_main(); }
