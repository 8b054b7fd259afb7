/* a64_decode.c — driver of bench/a64_decode.sh: the A64 decoder
 * (pk_a64_decode) against Debian's capstone (4.0.2, libcapstone-dev) on the
 * .text of the given AArch64 ELF files.
 *   a64_decode diff FILE...              class/target agreement, capstone's gaps
 *   a64_decode ours|capstone REPS FILE... instructions/s (best of the caller's runs)
 * Capstone needs CS_OPT_DETAIL for the branch kind (groups) and the target
 * (operands): timed with it on, as a profiler would use it, and with it off
 * (id only: no kind for BR vs RET... beyond the instruction id). */
#include "binary/binary.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Capstone's answer in our classes: by instruction id (4.0.2 predates
 * FEAT_PAuth branches, BTI and BC.cond: those words do not decode). */
static int cs_class(const cs_insn *in, uint64_t *target)
{
    *target = 0;
    const cs_arm64 *d = &in->detail->arm64;
    int cls;
    switch (in->id) {
    case ARM64_INS_B: cls = d->cc != ARM64_CC_INVALID && d->cc != ARM64_CC_AL ? PK_INSN_CJMP : PK_INSN_JMP; break;
    case ARM64_INS_BL: cls = PK_INSN_CALL; break;
    case ARM64_INS_CBZ: case ARM64_INS_CBNZ: case ARM64_INS_TBZ: case ARM64_INS_TBNZ: cls = PK_INSN_CJMP; break;
    case ARM64_INS_BR: return PK_INSN_IJMP;
    case ARM64_INS_BLR: return PK_INSN_ICALL;
    case ARM64_INS_RET: case ARM64_INS_ERET: case ARM64_INS_DRPS: return PK_INSN_RET;
    default: return PK_INSN_OTHER;
    }
    if (d->op_count && d->operands[d->op_count - 1].type == ARM64_OP_IMM)
        *target = (uint64_t)d->operands[d->op_count - 1].imm;
    return cls;
}

static const uint8_t *text(pk_elf **e, const char *path, uint64_t *addr, size_t *size)
{
    pk_err err;
    if (pk_elf_open(e, path, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    const pk_elf_section *s = pk_elf_section_by_name(*e, ".text");
    const uint8_t *d;
    if (!s || pk_elf_section_data(*e, s, &d, size, &err)) {
        fprintf(stderr, "%s: no .text\n", path);
        return NULL;
    }
    *addr = s->addr;
    return d;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[1];
    int diff = !strcmp(mode, "diff"), reps = diff ? 1 : atoi(argv[2]);
    csh h;
    if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &h) != CS_ERR_OK)
        return 1;
    int detail = strcmp(mode, "capstone-nodetail") != 0, ours = !strcmp(mode, "ours");
    cs_option(h, CS_OPT_DETAIL, detail ? CS_OPT_ON : CS_OPT_OFF);
    cs_insn *ci = cs_malloc(h);
    for (int fi = diff ? 2 : 3; fi < argc; fi++) {
        pk_elf *e;
        uint64_t base;
        size_t size;
        const uint8_t *code = text(&e, argv[fi], &base, &size);
        if (!code)
            return 1;
        size_t n = 0, branches = 0, gaps = 0, gap_branches = 0, bad = 0;
        uint64_t sink = 0;
        double t0 = now();
        for (int r = 0; r < reps; r++) {
            n = 0;
            for (size_t o = 0; o + 4 <= size; o += 4, n++) {
                pk_insn in;
                if (ours) {
                    pk_a64_decode(code + o, 4, base + o, &in);
                    sink += in.cls + in.target;
                    continue;
                }
                const uint8_t *p = code + o;
                size_t left = 4;
                uint64_t a = base + o;
                bool ok = cs_disasm_iter(h, &p, &left, &a, ci);
                if (!diff) {
                    sink += ok ? ci->id : 0;
                    continue;
                }
                pk_a64_decode(code + o, 4, base + o, &in);
                branches += pk_insn_is_branch(in.cls);
                if (!ok) {
                    gaps++;
                    gap_branches += pk_insn_is_branch(in.cls);
                    continue;
                }
                uint64_t t;
                int c = cs_class(ci, &t);
                if (c != in.cls || t != in.target) {
                    if (bad++ < 5)
                        fprintf(stderr, "%s: 0x%llx %s %s: capstone %s 0x%llx, ours %s 0x%llx\n", argv[fi],
                                (unsigned long long)(base + o), ci->mnemonic, ci->op_str, pk_insn_class_name(c),
                                (unsigned long long)t, pk_insn_class_name(in.cls), (unsigned long long)in.target);
                }
            }
        }
        double s = now() - t0;
        if (diff)
            printf("%s: %zu words, %zu branches (ours); capstone: %zu words undecoded (%zu of them branches), "
                   "%zu class/target disagreements\n",
                   argv[fi], n, branches, gaps, gap_branches, bad);
        else
            printf("%s: %s: %zu instructions x %d in %.3f s: %.1f M insn/s (%llu)\n", argv[fi], mode, n, reps, s,
                   (double)n * reps / s / 1e6, (unsigned long long)(sink & 1));
        pk_elf_close(e);
    }
    cs_free(ci, 1);
    cs_close(&h);
    return 0;
}
