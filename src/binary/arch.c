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
    .reloc_jump_slot = R_X86_64_JUMP_SLOT,
    .reloc_glob_dat = R_X86_64_GLOB_DAT,
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
    .reloc_jump_slot = R_AARCH64_JUMP_SLOT,
    .reloc_glob_dat = R_AARCH64_GLOB_DAT,
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
