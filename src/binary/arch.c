/* arch.c — the instruction sets pgokit decodes, chosen from e_machine. */
#include "binary/binary.h"

#include <elf.h>
#include <strings.h>

/* ud2 (0f 0b), hlt (f4), int3 (cc) */
static bool x86_is_trap(const uint8_t *p, size_t len)
{
    return (len == 2 && p[0] == 0x0f && p[1] == 0x0b) || (len == 1 && (p[0] == 0xf4 || p[0] == 0xcc));
}

/* udf #imm16, brk #imm16, hlt #imm16 */
static bool a64_is_trap(const uint8_t *p, size_t len)
{
    if (len != 4)
        return false;
    uint32_t w = pk_ld32(p);
    return (w & 0xFFFF0000) == 0 || (w & 0xFFE0001F) == 0xD4200000 || (w & 0xFFE0001F) == 0xD4400000;
}

static size_t x86_frame_setup(const uint8_t *b)
{
    size_t i = 0;
    if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) /* endbr64 */
        i = 4;
    if (b[i] != 0x55) /* push %rbp */
        return 0;
    const uint8_t *m = b + i + 1; /* mov %rsp,%rbp (either encoding) */
    if ((m[0] == 0x48 && m[1] == 0x89 && m[2] == 0xe5) || (m[0] == 0x48 && m[1] == 0x8b && m[2] == 0xec))
        return i + 4;
    return 0;
}

/* A64 prologues, as clang and gcc write them: [bti c | paciasp | pacibsp]...,
 * [sub sp, sp, #N], stp x29, x30, [sp, #-N]! (or [sp, #N] after the sub),
 * then within the window `mov x29, sp` or `add x29, sp, #N` (gcc schedules
 * other instructions in between; clang's large frames address the pair
 * above the locals). */
static size_t a64_frame_setup(const uint8_t *b)
{
    enum { WORDS = 8 }; /* prologue_len / 4 */
    size_t i = 0;
    uint32_t w = pk_ld32(b);
    /* landing pads and return-address signing come first */
    while (i < 2 && (w == 0xD503245F || w == 0xD503233F || w == 0xD503237F)) /* bti c, paciasp, pacibsp */
        w = pk_ld32(b + 4 * ++i);
    bool sub_sp = (w & 0xFF8003FF) == 0xD10003FF; /* sub sp, sp, #imm{, lsl 12} */
    if (sub_sp)
        w = pk_ld32(b + 4 * ++i);
    /* stp x29, x30, [sp, #imm]! (pre-index), or [sp, #imm] (offset) after a sub */
    if ((w & 0xFFC07FFF) != 0xA9807BFD && !(sub_sp && (w & 0xFFC07FFF) == 0xA9007BFD))
        return 0;
    for (i++; i < WORDS; i++) {
        w = pk_ld32(b + 4 * i);
        if ((w & 0xFFC003FF) == 0x910003FD) /* add x29, sp, #imm (mov x29, sp: #0) */
            return 4 * (i + 1);
    }
    return 0;
}

/* pop %rbp (5d), leave (c9) */
static bool x86_frame_restore(const uint8_t *p, size_t len)
{
    return len == 1 && (p[0] == 0x5d || p[0] == 0xc9);
}

/* ldp x29, x30, [sp], #imm (post-index) or [sp, #imm] (offset) */
static bool a64_frame_restore(const uint8_t *p, size_t len)
{
    if (len != 4)
        return false;
    uint32_t w = pk_ld32(p);
    return ((w & 0xFFC00000) == 0xA8C00000 || (w & 0xFFC00000) == 0xA9400000) && (w & 0x7FFF) == 0x7BFD;
}

static int x86_plt_slot(const uint8_t *p, uint64_t addr, uint64_t *slot)
{
    size_t o = 0;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        o = 4;
    if (p[o] == 0xf2)
        o++;
    if (p[o] != 0xff || p[o + 1] != 0x25)
        return 0;
    *slot = addr + o + 6 + (uint64_t)(int64_t)(int32_t)pk_ld32(p + o + 2);
    return 1;
}

static int a64_plt_slot(const uint8_t *p, uint64_t addr, uint64_t *slot)
{
    uint32_t w = pk_ld32(p);
    if (w == 0xD503245F) { /* bti c (lld's BTI PLT) */
        p += 4;
        addr += 4;
        w = pk_ld32(p);
    }
    uint32_t l = pk_ld32(p + 4);
    if ((w & 0x9F00001F) != 0x90000010 || (l & 0xFFC003FF) != 0xF9400211) /* adrp x16; ldr x17, [x16, #] */
        return 0;
    int64_t pages = (int64_t)((uint64_t)((((w >> 5) & 0x7FFFF) << 2) | ((w >> 29) & 3)) << 43) >> 43;
    *slot = (addr & ~(uint64_t)0xFFF) + (uint64_t)(pages * 4096) + ((l >> 10) & 0xFFF) * 8;
    return 1;
}

const pk_arch pk_arch_x86_64 = {
    .name = "x86-64",
    .perf_arch = "x86_64",
    .machine = EM_X86_64,
    .min_len = 1,
    .max_len = 15,
    .align = 1,
    .decode = pk_x86_decode,
    .is_trap = x86_is_trap,
    .trap_max_len = 2,
    .frame_setup = x86_frame_setup,
    .prologue_len = 8,
    .frame_restore = x86_frame_restore,
    .plt_slot = x86_plt_slot,
    .plt_len = 11,
    .reloc_jump_slot = R_X86_64_JUMP_SLOT,
    .reloc_glob_dat = R_X86_64_GLOB_DAT,
    .reloc_relative = R_X86_64_RELATIVE,
};

const pk_arch pk_arch_aarch64 = {
    .name = "aarch64",
    .perf_arch = "aarch64",
    .machine = EM_AARCH64,
    .min_len = 4,
    .max_len = 4,
    .align = 4,
    .decode = pk_a64_decode,
    .is_trap = a64_is_trap,
    .trap_max_len = 4,
    .frame_setup = a64_frame_setup,
    .prologue_len = 32,
    .frame_restore = a64_frame_restore,
    .plt_slot = a64_plt_slot,
    .plt_len = 12,
    .reloc_jump_slot = R_AARCH64_JUMP_SLOT,
    .reloc_glob_dat = R_AARCH64_GLOB_DAT,
    .reloc_relative = R_AARCH64_RELATIVE,
    .call_probes_in_dwarf = true,
};

const pk_arch *pk_arch_for_machine(uint16_t machine)
{
    switch (machine) {
    case EM_X86_64: return &pk_arch_x86_64;
    case EM_AARCH64: return &pk_arch_aarch64;
    default: return NULL;
    }
}

const pk_arch *pk_arch_by_name(const char *name)
{
    if (!strcasecmp(name, "x86-64") || !strcasecmp(name, "x86_64") || !strcasecmp(name, "amd64"))
        return &pk_arch_x86_64;
    if (!strcasecmp(name, "aarch64") || !strcasecmp(name, "arm64"))
        return &pk_arch_aarch64;
    return NULL;
}

const char *pk_insn_class_name(int cls)
{
    static const char *const names[] = {"other", "call", "icall", "ret", "jmp", "ijmp", "cjmp", "invalid"};
    return cls >= 0 && cls <= PK_INSN_INVALID ? names[cls] : "?";
}
