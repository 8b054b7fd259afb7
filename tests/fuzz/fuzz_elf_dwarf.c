/* fuzz_elf_dwarf.c — a binary opened from memory (pk_elf_open_mem) and used
 * the way profgen uses it: sections (decompressed: zlib, zstd, .zdebug),
 * function symbols and llvm-symbolizer's names, segments and address
 * translation, build-id and debuglink, x86-64 decoding of the functions;
 * DWARF: the symbolizer (units, abbreviations, line tables, ranges, inline
 * trees), the inline frames of addresses in every function, the code-size
 * walk (pk_symbolize_spans) and the DWARF function list; the pseudo-probes
 * of the binary when it has some (probe_loader.c); the call-frame table of
 * .eh_frame and its rows (cfi.c). Errors must name the
 * input and an offset. Work per input is capped (functions, addresses and
 * span widths), so a slow input shows as a timeout of the reader, not of
 * the harness. */
#include "fuzz_util.h"
#include "binary/binary.h"
#include "binary/probe_loader.h"
#include "binary/cfi.h"

#include <stdlib.h>

#define MAX_FUNCS 48
#define MAX_SPAN 4096

static int on_span(void *arg, uint64_t begin, uint64_t end, const pk_frames *f, pk_err *err)
{
    pk_fuzz_digest *d = arg;
    pk_fuzz_digest_u64(d, begin ^ end << 1);
    for (size_t i = 0; i < f->count; i++) {
        const pk_frame *fr = &f->frames[i];
        pk_fuzz_digest_u64(d, (uint64_t)fr->line << 32 | fr->discriminator);
        if (fr->func)
            pk_fuzz_digest_bytes(d, fr->func, strlen(fr->func));
    }
    return 0;
}

static void frames_digest(pk_fuzz_digest *d, const pk_frames *f)
{
    for (size_t i = 0; i < f->count; i++) {
        const pk_frame *fr = &f->frames[i];
        pk_fuzz_digest_u64(d, (uint64_t)fr->line << 32 | fr->column);
        pk_fuzz_digest_u64(d, (uint64_t)fr->start_line << 32 | fr->discriminator);
        if (fr->func)
            pk_fuzz_digest_bytes(d, fr->func, strlen(fr->func));
        if (fr->file)
            pk_fuzz_digest_bytes(d, fr->file, strlen(fr->file));
        if (fr->start_file)
            pk_fuzz_digest_bytes(d, fr->start_file, strlen(fr->start_file));
    }
}

static void dwarf(pk_elf *elf, pk_fuzz_digest *d)
{
    pk_err err = {{0}};
    pk_symbolizer *sym;
    if (pk_symbolizer_open(&sym, elf, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return;
    }
    /* a split-DWARF package's unit index, when the input has one: split
     * units are then looked up in it */
    if (pk_elf_section_by_name(elf, ".debug_cu_index") && pk_symbolizer_set_dwp(sym, elf, &err))
        pk_fuzz_check_error(&err, NULL);
    size_t nf;
    const pk_elf_symbol *funcs = pk_elf_funcs(elf, &nf);
    for (size_t i = 0; i < nf && i < MAX_FUNCS; i++) {
        const pk_elf_symbol *f = &funcs[i];
        uint64_t size = f->size < MAX_SPAN ? f->size : MAX_SPAN;
        uint64_t probe[] = {f->addr, f->addr + 1, f->addr + size / 2, f->addr + (size ? size - 1 : 0)};
        for (size_t k = 0; k < 4; k++) {
            pk_frames fr;
            if (pk_symbolize(sym, probe[k], &fr, &err)) {
                pk_fuzz_check_error(&err, NULL);
                goto out;
            }
            frames_digest(d, &fr);
        }
        if (pk_symbolize_spans(sym, f->addr, f->addr + size, on_span, d, &err)) {
            pk_fuzz_check_error(&err, NULL);
            goto out;
        }
    }
    /* a few fixed addresses: units without symbols (split-DWARF skeletons,
     * whose .dwo the first query opens) */
    static const uint64_t fixed[] = {0x1000, 0x1010, 0x401000, 0x401100};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
        pk_frames fr;
        if (pk_symbolize(sym, fixed[k], &fr, &err)) {
            pk_fuzz_check_error(&err, NULL);
            goto out;
        }
        frames_digest(d, &fr);
    }
    const pk_dwarf_func *df;
    size_t ndf;
    if (pk_dwarf_funcs(sym, &df, &ndf, &err)) {
        pk_fuzz_check_error(&err, NULL);
        goto out;
    }
    for (size_t i = 0; i < ndf && i < MAX_FUNCS; i++) {
        pk_fuzz_digest_u64(d, df[i].entry_pc);
        if (df[i].nranges)
            pk_fuzz_digest_u64(d, df[i].ranges[df[i].nranges - 1].end);
        pk_dwarf_func_at(sym, df[i].entry_pc);
    }
    if (pk_symbolizer_prepare(sym, &err))
        pk_fuzz_check_error(&err, NULL);
out:
    pk_symbolizer_close(sym);
}

static void probes(pk_elf *elf, pk_fuzz_digest *d)
{
    pk_err err = {{0}};
    pk_probe_info info;
    if (pk_probe_info_load(&info, elf, NULL, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return;
    }
    for (size_t i = 0; i < info.table.n; i += 1 + info.table.n / 64) {
        size_t n;
        const pk_probe *p = pk_probe_table_at(&info.table, info.table.probes[i].addr, &n);
        pk_fuzz_digest_u64(d, p ? p->index : 0);
    }
    pk_probe_info_free(&info);
}

/* The call-frame table: indexed, then the rows of a few addresses in every
 * FDE (instructions are read on demand, row by row). */
static void cfi(pk_elf *elf, pk_fuzz_digest *d)
{
    pk_err err = {{0}};
    pk_cfi *c;
    if (pk_cfi_open(&c, elf, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return;
    }
    size_t n = pk_cfi_num_fdes(c);
    for (size_t i = 0; i < n && i < MAX_FUNCS; i++) {
        uint64_t begin, end;
        pk_cfi_fde_range(c, i, &begin, &end);
        for (uint64_t at = begin, k = 0; at < end && k < 16; k++) {
            pk_cfi_row row;
            int r = pk_cfi_row_at(c, at, &row, &err);
            if (r < 0) {
                pk_fuzz_check_error(&err, NULL);
                break;
            }
            if (r > 0)
                break;
            pk_fuzz_digest_u64(d, (uint64_t)row.cfa_offset ^ row.cfa_reg ^ (uint64_t)row.regs[row.ra_reg % PK_CFI_NREGS].offset);
            at = row.end > at ? row.end : end;
        }
    }
    pk_cfi_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pk_err err = {{0}};
    pk_elf *elf;
    if (pk_elf_open_mem(&elf, data, size, PK_FUZZ_NAME, &err)) {
        pk_fuzz_check_error(&err, NULL);
        return 0;
    }
    pk_fuzz_digest d = {0, 0};
    for (size_t i = 1; i < pk_elf_num_sections(elf); i++) {
        const uint8_t *p;
        size_t n;
        if (pk_elf_section_data(elf, pk_elf_section_at(elf, i), &p, &n, &err))
            pk_fuzz_check_error(&err, NULL);
        else
            pk_fuzz_digest_bytes(&d, p, n);
    }
    size_t nf;
    const pk_elf_symbol *funcs = pk_elf_funcs(elf, &nf);
    for (size_t i = 0; i < nf && i < MAX_FUNCS; i++) {
        const pk_elf_symbol *f = &funcs[i];
        const char *name, *file;
        uint64_t start;
        pk_elf_func_at(elf, f->addr);
        pk_elf_func_by_name(elf, f->name);
        if (pk_elf_symbolizer_name(elf, f->addr + 1, &name, &start, &file))
            pk_fuzz_digest_bytes(&d, name, strlen(name));
        uint64_t off, va;
        if (!pk_elf_vaddr_to_offset(elf, f->addr, &off) && !pk_elf_offset_to_vaddr(elf, off, &va))
            pk_fuzz_digest_u64(&d, va);
        /* x86-64 decoding of the function's bytes, as pk_binary does */
        uint64_t len = f->size < MAX_SPAN ? f->size : MAX_SPAN;
        const uint8_t *code = len ? pk_elf_vaddr_bytes(elf, f->addr, (size_t)len) : NULL;
        for (uint64_t at = 0; code && at < len;) {
            pk_insn insn;
            size_t l = pk_x86_decode(code + at, (size_t)(len - at), f->addr + at, &insn);
            pk_fuzz_digest_u64(&d, insn.target ^ insn.cls);
            at += l ? l : 1;
        }
    }
    const uint8_t *bid;
    size_t bid_len;
    pk_elf_build_id(elf, &bid, &bid_len);
    char hex[256];
    pk_elf_build_id_hex(elf, hex, sizeof hex);
    uint32_t crc;
    pk_elf_debuglink(elf, &crc);
    const uint8_t *alt_id;
    size_t alt_id_len;
    const char *alt = pk_elf_altlink(elf, &alt_id, &alt_id_len);
    if (alt)
        pk_fuzz_digest_bytes(&d, alt_id, alt_id_len);
    pk_fuzz_digest_u64(&d, pk_elf_preferred_base(elf) ^ pk_elf_first_exec_vaddr(elf));
    if (pk_elf_has_dwarf(elf))
        dwarf(elf, &d);
    if (pk_elf_has_pseudo_probes(elf))
        probes(elf, &d);
    cfi(elf, &d);
    pk_elf_close(elf);
    return 0;
}
