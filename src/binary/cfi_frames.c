/* cfi_frames.c — which functions of a binary keep a frame pointer (see
 * cfi.h).
 *
 * Why: a frame-pointer call chain is exact and small where every function
 * keeps one, and skips or loses callers where they do not (-O2's default);
 * a stack copy unwound with .eh_frame is whole either way but costs bytes
 * in every sample. Recording picks between them from this count, before
 * the program runs. */
#include "binary/cfi.h"

#include <string.h>

/* The function at [begin, end): 2 when it sets up a frame pointer, 1 when
 * it has a frame without one, 0 when it has none; -1: its CFI does not
 * decode. */
static int frame_kind(const pk_cfi *cfi, const pk_elf *elf, const pk_arch *arch, uint64_t begin, uint64_t end,
                      pk_err *err)
{
    /* (the window may run past a short function: its prologue starts at
     * the entry and is as short) */
    const uint8_t *code = arch ? pk_elf_vaddr_bytes(elf, begin, arch->prologue_len) : NULL;
    if (code && arch->frame_setup(code))
        return 2;
    uint16_t sp, fp;
    bool fp_known = pk_cfi_abi_regs(pk_cfi_machine(cfi), &sp, &fp);
    uint64_t at = begin;
    int rows = 0;
    for (; rows < PK_CFI_PROLOGUE_ROWS && at < end; rows++) {
        pk_cfi_row row;
        int r = pk_cfi_row_at(cfi, at, &row, err);
        if (r < 0)
            return -1;
        if (r > 0)
            break;
        if (fp_known && !row.cfa_expression && row.cfa_reg == fp)
            return 2;
        if (row.end <= at)
            break;
        at = row.end;
    }
    return rows > 1 ? 1 : 0;
}

int pk_cfi_frame_pointers(const pk_cfi *cfi, const pk_elf *elf, pk_cfi_frames *out, pk_err *err)
{
    memset(out, 0, sizeof *out);
    const pk_arch *arch = pk_elf_arch(elf);
    size_t n = pk_cfi_num_fdes(cfi);
    for (size_t i = 0; i < n; i++) {
        uint64_t begin, end;
        pk_cfi_fde_range(cfi, i, &begin, &end);
        if (end <= begin)
            continue;
        int kind = frame_kind(cfi, elf, arch, begin, end, err);
        if (kind < 0)
            return -1;
        out->functions++;
        out->bytes += end - begin;
        if (kind) {
            out->framed++;
            out->framed_bytes += end - begin;
        }
        if (kind == 2) {
            out->with_fp++;
            out->with_fp_bytes += end - begin;
        }
    }
    return 0;
}
