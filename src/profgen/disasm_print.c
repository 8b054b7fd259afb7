/* disasm_print.c — llvm-profgen's `--show-disassembly-only` (see
 * disasm_print.h). What it prints, in llvm-profgen 19's order:
 *   - with --show-pseudo-probe and both probe sections: the descriptors;
 *   - "\nDisassembly of PATH:\n";
 *   - per executable section of non-zero size, in section-header order:
 *     "\nDisassembly of section NAME [0xSTART, 0xEND]:\n\n" (.plt: the
 *     header only);
 *   - per .symtab symbol of the section, sorted by (address, name): its
 *     "<name>:" line, the instructions from its address to the next
 *     symbol's (or the section's end), one per line ("%8x:" then the text
 *     LLVM's printer gives, see pk_x86_print; undecodable bytes one at a
 *     time as "\t<unknown>"), the probes at an address on lines just before
 *     its instruction, and a blank line. Symbols at one address all get a
 *     header; all but the last have no instructions.
 * The source-location column starts at character 40 of the instruction
 * text: the inline frames outermost-last, "name:offset[.discriminator]",
 * offset = line - the function's first line (or, with probes, the probe
 * index the discriminator carries). */
#include "profgen/disasm_print.h"

#include "binary/probe_loader.h"
#include "profgen/line_int.h"
#include "profgen/profgen.h"

#include <elf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct printer {
    FILE *out;
    pk_binary *bin;
    const pk_disasm_opts *o;
    pk_symbolizer *sym;   /* NULL: no DWARF, the location column stays empty */
    pk_probe_info probes;
    bool have_probes;
} printer;

/* (address, name) order, stable: symbols at one address keep table order
 * only when their names are equal. */
static int by_addr_name(const void *a, const void *b, void *arg)
{
    const size_t x = *(const size_t *)a, y = *(const size_t *)b;
    const pk_elf_section_sym *syms = arg, *p = &syms[x], *q = &syms[y];
    if (p->addr != q->addr)
        return p->addr < q->addr ? -1 : 1;
    int c = strcmp(p->name, q->name);
    if (c)
        return c;
    return x < y ? -1 : x > y;
}

static size_t name_len(const printer *p, const char *name)
{
    return p->o->canonical_names ? pk_profgen_canonical_len(name) : strlen(name);
}

static bool wanted(const printer *p, const char *name, size_t len)
{
    if (!p->o->funcs || !p->o->nfuncs)
        return true;
    for (size_t i = 0; i < p->o->nfuncs; i++)
        if (strlen(p->o->funcs[i]) == len && !memcmp(p->o->funcs[i], name, len))
            return true;
    return false;
}

/* The inline context of an instruction as llvm-profgen prints it: frames
 * from the outermost in, stopping at the first without a function name,
 * then printed innermost first. */
static int print_location(printer *p, uint64_t addr, pk_err *err)
{
    if (!p->sym)
        return 0;
    pk_frames fr;
    if (pk_symbolize(p->sym, addr, &fr, err))
        return -1;
    size_t first = fr.count; /* frames [first, count) are shown */
    while (first > 0 && fr.frames[first - 1].func && fr.frames[first - 1].func[0])
        first--;
    for (size_t i = first; i < fr.count; i++) {
        const pk_frame *f = &fr.frames[i];
        uint32_t off = pk_lg_line_off(f), disc = f->discriminator;
        if (p->o->pseudo_probes) {
            off = (disc >> 3) & 0xffff;
            disc = 0;
        }
        fprintf(p->out, "%s%.*s:%" PRIu32, i > first ? " @ " : "", (int)name_len(p, f->func), f->func, off);
        if (disc)
            fprintf(p->out, ".%" PRIu32, disc);
    }
    return 0;
}

static int print_symbol(printer *p, const pk_elf_section *sec, const uint8_t *bytes, uint64_t nbytes,
                        const char *name, uint64_t start, uint64_t end, pk_err *err)
{
    size_t len = name_len(p, name);
    if (!wanted(p, name, len))
        return 0;
    fprintf(p->out, "<%.*s>:\n", (int)len, name);
    uint64_t addr = start;
    while (addr < end) {
        uint64_t off = addr - sec->addr;
        if (addr < sec->addr || off >= nbytes)
            break;
        if (p->have_probes) {
            size_t n;
            const pk_probe *pr = pk_probe_table_at(&p->probes.table, addr, &n);
            for (size_t i = 0; pr && i < n; i++) {
                fputc(' ', p->out);
                pk_probe_fprint(p->out, &p->probes, &pr[i]);
            }
        }
        char text[256];
        size_t ilen;
        if (pk_x86_print(bytes + off, nbytes - off, addr, p->o->intel, text, sizeof text, &ilen)) {
            snprintf(text, sizeof text, "\t<unknown>");
            ilen = 1;
        }
        fprintf(p->out, "%8" PRIx64 ":%s", addr, text);
        if (p->o->source_locations) {
            size_t w = strlen(text);
            fprintf(p->out, "%*s", w < 40 ? (int)(40 - w) : 0, "");
            if (print_location(p, addr, err))
                return -1;
        }
        fputc('\n', p->out);
        addr += ilen;
    }
    fputc('\n', p->out);
    return 0;
}

static int print_section(printer *p, const pk_elf_section *sec, const pk_elf_section_sym *syms, const size_t *order,
                         size_t nsyms, pk_err *err)
{
    fprintf(p->out, "\nDisassembly of section %s [0x%" PRIx64 ", 0x%" PRIx64 "]:\n\n", sec->name, sec->addr,
            sec->addr + sec->size);
    if (!strcmp(sec->name, ".plt"))
        return 0;
    const uint8_t *bytes = NULL;
    size_t nbytes = 0;
    if (sec->type != SHT_NOBITS && pk_elf_section_data(pk_binary_elf(p->bin), sec, &bytes, &nbytes, err))
        return -1;
    for (size_t k = 0; k < nsyms; k++) {
        const pk_elf_section_sym *s = &syms[order[k]];
        uint64_t end = k + 1 < nsyms ? syms[order[k + 1]].addr : sec->addr + sec->size;
        if (print_symbol(p, sec, bytes, nbytes, s->name, s->addr, end, err))
            return -1;
    }
    return 0;
}

static int load_probes(printer *p, pk_err *err)
{
    pk_elf *elf = pk_binary_elf(p->bin);
    /* llvm-profgen uses probes only when both sections are there */
    if (!pk_elf_section_by_name(elf, ".pseudo_probe_desc") || !pk_elf_section_by_name(elf, ".pseudo_probe"))
        return 0;
    if (pk_probe_info_load(&p->probes, elf, NULL, err))
        return -1;
    p->have_probes = true;
    return pk_probe_fprint_descs(p->out, &p->probes.descs, err);
}

int pk_disasm_print(FILE *out, pk_binary *bin, const char *shown_path, const pk_disasm_opts *opts, pk_err *err)
{
    pk_elf *elf = pk_binary_elf(bin);
    if (pk_elf_machine(elf) != EM_X86_64)
        return pk_err_set(err, "%s: disassembly is printed for x86-64 binaries only (this one is %s)",
                          pk_elf_path(elf), pk_binary_arch(bin) ? pk_binary_arch(bin)->name : "of another machine");
    printer p = {.out = out, .bin = bin, .o = opts};
    int rc = -1;
    pk_elf_section_sym *syms = NULL;
    size_t *order = NULL, nsyms = 0;
    /* the DWARF read up front, so that corrupt units are reported before
     * any listing is printed */
    if (opts->source_locations && pk_binary_debug_elf(bin) &&
        (pk_binary_symbolizer(bin, &p.sym, err) || pk_symbolizer_prepare(p.sym, err)))
        goto done;
    if (pk_elf_section_symbols(elf, &syms, &nsyms, err))
        goto done;
    if (opts->pseudo_probes && load_probes(&p, err))
        goto done;
    order = malloc((nsyms + 1) * sizeof *order);
    size_t *in_sec = malloc((nsyms + 1) * sizeof *in_sec);
    if (!order || !in_sec) {
        free(in_sec);
        pk_err_set(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nsyms; i++)
        order[i] = i;
    qsort_r(order, nsyms, sizeof *order, by_addr_name, syms);
    fprintf(out, "\nDisassembly of %s:\n", shown_path);
    for (size_t si = 1; si < pk_elf_num_sections(elf); si++) {
        const pk_elf_section *sec = pk_elf_section_at(elf, si);
        if (!(sec->flags & SHF_EXECINSTR) || !sec->size)
            continue;
        size_t n = 0;
        for (size_t k = 0; k < nsyms; k++)
            if (syms[order[k]].shndx == sec->index)
                in_sec[n++] = order[k];
        if (print_section(&p, sec, syms, in_sec, n, err)) {
            free(in_sec);
            goto done;
        }
    }
    free(in_sec);
    rc = ferror(out) ? pk_err_set(err, "write error") : 0;
done:
    free(order);
    free(syms);
    if (p.have_probes)
        pk_probe_info_free(&p.probes);
    return rc;
}
