/* cmd_decode.c — `pgokit decode --binary B`: every instruction of a section
 * as the architecture interface sees it (length, branch class, direct
 * target), for inspection and for comparing the decoders with
 * `llvm-objdump -d` (tests/e2e/binary_decode_a64.sh). */
#include "binary/binary.h"
#include "binary/cfi.h"
#include "cli/cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

const char pk_cmd_decode_summary[] = "list the instructions of a section: length, branch class, direct target";

/* One rule as readelf --debug-dump=frames-interp writes it. */
static const char *rule_text(const pk_cfi *cfi, const pk_cfi_rule *r, char *buf, size_t cap)
{
    char reg[16];
    switch (r->kind) {
    case PK_CFI_OFFSET: snprintf(buf, cap, "c%+lld", (long long)r->offset); break;
    case PK_CFI_VAL_OFFSET: snprintf(buf, cap, "v%+lld", (long long)r->offset); break;
    case PK_CFI_REGISTER: snprintf(buf, cap, "%s", pk_cfi_reg_name(cfi, r->reg, reg, sizeof reg)); break;
    case PK_CFI_EXPRESSION: snprintf(buf, cap, "exp"); break;
    case PK_CFI_UNDEFINED: snprintf(buf, cap, "undef"); break;
    default: snprintf(buf, cap, "same"); break;
    }
    return buf;
}

/* --cfi: every FDE's rows: "FDE BEGIN..END", then "LOC CFA REG=RULE..." for
 * the registers whose rule is not "same" (ra: the return-address column). */
static int print_cfi(pk_binary *bin, pk_err *err)
{
    const pk_cfi *cfi;
    if (pk_binary_cfi(bin, &cfi, err))
        return -1;
    for (size_t i = 0; i < pk_cfi_num_fdes(cfi); i++) {
        uint64_t begin, end;
        pk_cfi_fde_range(cfi, i, &begin, &end);
        printf("FDE 0x%" PRIx64 "..0x%" PRIx64 "\n", begin, end);
        for (uint64_t at = begin; at < end;) {
            pk_cfi_row row;
            if (pk_cfi_row_at(cfi, at, &row, err) < 0)
                return -1;
            char reg[16], rule[32];
            if (row.cfa_expression)
                printf("0x%" PRIx64 " exp", at);
            else
                printf("0x%" PRIx64 " %s%+lld", at, pk_cfi_reg_name(cfi, row.cfa_reg, reg, sizeof reg),
                       (long long)row.cfa_offset);
            for (unsigned k = 0; k < PK_CFI_NREGS; k++) {
                if (row.regs[k].kind == PK_CFI_SAME && k != row.ra_reg)
                    continue;
                printf(" %s=%s", k == row.ra_reg ? "ra" : pk_cfi_reg_name(cfi, k, reg, sizeof reg),
                       rule_text(cfi, &row.regs[k], rule, sizeof rule));
            }
            printf("\n");
            at = row.end > at ? row.end : end;
        }
    }
    return 0;
}

/* --cfi --stats: how many functions (FDEs) set up a frame pointer, what
 * `pgokit record --ip` chooses its call chains from. */
static int print_cfi_frames(pk_binary *bin, pk_err *err)
{
    const pk_cfi *cfi;
    pk_cfi_frames fr;
    if (pk_binary_cfi(bin, &cfi, err) || pk_cfi_frame_pointers(cfi, pk_binary_elf(bin), &fr, err))
        return -1;
    printf("fdes %zu framed %zu with-frame-pointer %zu bytes %" PRIu64 " framed-bytes %" PRIu64
           " with-frame-pointer-bytes %" PRIu64 "\n",
           fr.functions, fr.framed, fr.with_fp, fr.bytes, fr.framed_bytes, fr.with_fp_bytes);
    return 0;
}

static void help(void)
{
    printf("usage: pgokit decode --binary BIN [--section NAME] [--stats] [--time N] [--cfi]\n"
           "Decodes a section from its start to its end, one instruction after the\n"
           "other (x86-64 or AArch64, chosen from the ELF header), and prints\n"
           "  ADDR LEN CLASS TARGET\n"
           "with CLASS one of other, call, icall, ret, jmp, ijmp, cjmp, invalid and\n"
           "TARGET the direct target of call, jmp and cjmp (0x0 otherwise).\n"
           "  --binary BIN     the ELF file\n"
           "  --section NAME   the section to decode (default .text)\n"
           "  --stats          print the architecture and counts per class instead\n"
           "  --time N         decode the section N times; print instructions/s to stderr\n"
           "  --cfi            print the call-frame table of .eh_frame instead, FDE by FDE:\n"
           "                   \"FDE BEGIN..END\", then a line per row: LOC, the CFA (register\n"
           "                   +offset, or exp), and REG=RULE for each register whose rule is not\n"
           "                   \"same\" (c-8: saved at CFA-8; ra: the return-address column), the\n"
           "                   rows readelf --debug-dump=frames-interp prints. With --stats: one line,\n"
           "                   \"fdes N framed M with-frame-pointer F bytes B framed-bytes MB\n"
           "                   with-frame-pointer-bytes FB\": the functions with a frame (more than one\n"
           "                   row) and those that set up a frame pointer (a frame-pointer prologue at\n"
           "                   the entry, or a CFA on rbp/x29 in the first 8 rows): pgokit record --ip\n"
           "                   records frame-pointer chains when FB is at least half of MB\n"
           "  -q, --quiet      accepted (decode prints no progress)\n");
}

int pk_cmd_decode(int argc, char **argv)
{
    const char *binary = NULL, *section = ".text";
    bool stats = false, cfi = false;
    long reps = 0;
    static const struct option opts[] = {
        {"binary", required_argument, 0, 'b'}, {"section", required_argument, 0, 's'},
        {"stats", no_argument, 0, 'S'},        {"time", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},         {"quiet", no_argument, 0, 'q'},
        {"cfi", no_argument, 0, 'C'},
        {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "b:s:hq", opts, NULL)) != -1) {
        switch (c) {
        case 'b': binary = optarg; break;
        case 's': section = optarg; break;
        case 'S': stats = true; break;
        case 't':
            reps = strtol(optarg, NULL, 10);
            if (reps <= 0)
                return pk_cli_usage("decode", "--time wants a positive count");
            break;
        case 'q': break;
        case 'C': cfi = true; break;
        case 'h': help(); return 0;
        default: return pk_cli_usage("decode", "unknown option");
        }
    }
    if (!binary)
        return pk_cli_usage("decode", "--binary is required");

    pk_err err;
    pk_binary *bin;
    if (pk_binary_open(&bin, binary, NULL, &err))
        return pk_cli_fail("decode", &err);
    int rc = 1;
    pk_insn *insns = NULL;
    size_t n = 0;
    if (cfi) {
        rc = (stats ? print_cfi_frames(bin, &err) : print_cfi(bin, &err)) ? 1 : 0;
        goto out;
    }
    const pk_elf_section *sec = pk_elf_section_by_name(pk_binary_elf(bin), section);
    if (!sec) {
        pk_err_set(&err, "%s: no section %s", binary, section);
        goto out;
    }
    if (pk_binary_decode_range(bin, sec->addr, sec->addr + sec->size, &insns, &n, &err))
        goto out;
    if (reps) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long r = 0; r < reps; r++) {
            free(insns);
            if (pk_binary_decode_range(bin, sec->addr, sec->addr + sec->size, &insns, &n, &err))
                goto out;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        fprintf(stderr, "%s: %s: %zu instructions x %ld in %.3f s: %.1f M insn/s\n", binary,
                pk_binary_arch(bin)->name, n, reps, s, s > 0 ? (double)n * (double)reps / s / 1e6 : 0.0);
    }
    if (stats) {
        uint64_t per[PK_INSN_INVALID + 1] = {0};
        for (size_t i = 0; i < n; i++)
            per[insns[i].cls]++;
        printf("arch %s\ninstructions %zu\n", pk_binary_arch(bin)->name, n);
        for (int k = 0; k <= PK_INSN_INVALID; k++)
            printf("%s %" PRIu64 "\n", pk_insn_class_name(k), per[k]);
    } else if (!reps) {
        for (size_t i = 0; i < n; i++)
            printf("0x%" PRIx64 " %u %s 0x%" PRIx64 "\n", insns[i].addr, insns[i].len,
                   pk_insn_class_name(insns[i].cls), insns[i].target);
    }
    rc = 0;
out:
    free(insns);
    pk_binary_close(bin);
    return rc ? pk_cli_fail("decode", &err) : 0;
}
