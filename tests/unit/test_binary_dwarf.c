/* DWARF reader: LEB128 and form decoding edge cases on synthetic bytes,
 * discriminator decoding, DWARF function ranges (gcc .cold split), and
 * corrupt / truncated DWARF sections (garbage bytes, sections cut at many
 * offsets): an error naming the file and offset, never a crash. */
#include "binary/dwarf_internal.h"
#include "test.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>

static const char *build(const char *name, const char *cc, const char *flags)
{
    return pk_test_build(name, cc, flags, "binary_inline.c");
}

TEST(leb128)
{
    const uint8_t a[] = {0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x40};
    pk_cursor c;
    pk_cursor_init(&c, a, sizeof a);
    CHECK_EQ_U64(dw_uleb(&c), 127);
    CHECK_EQ_U64(dw_uleb(&c), 128);
    CHECK_EQ_U64(dw_uleb(&c), UINT64_MAX);
    CHECK_EQ_U64((uint64_t)dw_sleb(&c), (uint64_t)-64);
    CHECK(!c.bad);
    CHECK_EQ_U64(pk_cursor_left(&c), 0);
    /* truncated: continuation bit on the last byte */
    const uint8_t t[] = {0x80, 0x80};
    pk_cursor_init(&c, t, sizeof t);
    dw_uleb(&c);
    CHECK(c.bad);
    pk_cursor_init(&c, t, sizeof t);
    dw_sleb(&c);
    CHECK(c.bad);
    /* sleb of -1 and of 63 / -65 */
    const uint8_t s[] = {0x7f, 0x3f, 0xbf, 0x7f};
    pk_cursor_init(&c, s, sizeof s);
    CHECK_EQ_U64((uint64_t)dw_sleb(&c), (uint64_t)-1);
    CHECK_EQ_U64((uint64_t)dw_sleb(&c), 63);
    CHECK_EQ_U64((uint64_t)dw_sleb(&c), (uint64_t)-65);
    /* 3-byte little-endian */
    const uint8_t three[] = {1, 2, 3};
    pk_cursor_init(&c, three, 3);
    CHECK_EQ_U64(dw_uN(&c, 3), 0x030201);
}

/* Every form decodes to the right class and consumes the right number of
 * bytes, for 32-bit DWARF 5 and 64-bit DWARF 4 units. */
TEST(forms)
{
    static const uint8_t str[] = "\0hello\0world";
    uint8_t info[512];
    memset(info, 0xaa, sizeof info);
    pk_symbolizer s;
    memset(&s, 0, sizeof s);
    s.path = "synthetic";
    s.info = (dw_sect){info, sizeof info, ".debug_info"};
    s.str = (dw_sect){str, sizeof str, ".debug_str"};
    struct { uint16_t form; size_t len4, len8; int cls; } cases[] = {
        {DW_FORM_addr, 8, 8, DV_ADDR}, {DW_FORM_data1, 1, 1, DV_CONST}, {DW_FORM_data2, 2, 2, DV_CONST},
        {DW_FORM_data4, 4, 4, DV_CONST}, {DW_FORM_data8, 8, 8, DV_CONST}, {DW_FORM_data16, 16, 16, DV_BLOCK},
        {DW_FORM_strp, 4, 8, DV_STR}, {DW_FORM_line_strp, 4, 8, DV_STR}, {DW_FORM_sec_offset, 4, 8, DV_SECOFF},
        {DW_FORM_ref_addr, 4, 8, DV_REF}, {DW_FORM_ref1, 1, 1, DV_REF}, {DW_FORM_ref2, 2, 2, DV_REF},
        {DW_FORM_ref4, 4, 4, DV_REF}, {DW_FORM_ref8, 8, 8, DV_REF}, {DW_FORM_ref_sig8, 8, 8, DV_UNSUPPORTED},
        {DW_FORM_flag, 1, 1, DV_FLAG}, {DW_FORM_flag_present, 0, 0, DV_FLAG},
        {DW_FORM_implicit_const, 0, 0, DV_CONST}, {DW_FORM_strx1, 1, 1, DV_STRX}, {DW_FORM_strx2, 2, 2, DV_STRX},
        {DW_FORM_strx3, 3, 3, DV_STRX}, {DW_FORM_strx4, 4, 4, DV_STRX}, {DW_FORM_addrx1, 1, 1, DV_ADDRX},
        {DW_FORM_addrx2, 2, 2, DV_ADDRX}, {DW_FORM_addrx3, 3, 3, DV_ADDRX}, {DW_FORM_addrx4, 4, 4, DV_ADDRX},
        /* the dwz supplementary file's strings and DIEs (no file here: no string) */
        {DW_FORM_strp_sup, 4, 8, DV_STR}, {DW_FORM_GNU_strp_alt, 4, 8, DV_STR},
        {DW_FORM_GNU_ref_alt, 4, 8, DV_REF}, {DW_FORM_ref_sup4, 4, 4, DV_REF},
        {DW_FORM_ref_sup8, 8, 8, DV_REF},
    };
    for (int w = 0; w < 2; w++) {
        dw_cu cu;
        memset(&cu, 0, sizeof cu);
        cu.addr_size = 8;
        cu.offset_size = w ? 8 : 4;
        cu.version = w ? 4 : 5;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            memset(info, 0, 64);
            pk_cursor c;
            pk_cursor_init(&c, info, sizeof info);
            dw_val v;
            pk_err err;
            CHECK_OK(dw_read_form(&s, &cu, &s.info, &c, cases[i].form, 42, &v, &err), &err);
            CHECK_EQ_U64(pk_cursor_offset(&c), w ? cases[i].len8 : cases[i].len4);
            CHECK_EQ_U64(v.cls, (uint64_t)cases[i].cls);
            bool alt_form = cases[i].form == DW_FORM_GNU_ref_alt || cases[i].form == DW_FORM_ref_sup4 ||
                            cases[i].form == DW_FORM_ref_sup8;
            CHECK_EQ_U64(v.alt, alt_form);
            if (cases[i].form == DW_FORM_strp_sup || cases[i].form == DW_FORM_GNU_strp_alt)
                CHECK(v.str == NULL);
        }
        /* variable-length forms */
        pk_cursor c;
        dw_val v;
        pk_err err;
        const uint8_t blk[] = {0x83, 0x01}; /* uleb 131 */
        memcpy(info, blk, 2);
        pk_cursor_init(&c, info, sizeof info);
        CHECK_OK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_exprloc, 0, &v, &err), &err);
        CHECK_EQ_U64(pk_cursor_offset(&c), 133);
        info[0] = 3;
        pk_cursor_init(&c, info, sizeof info);
        CHECK_OK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_block1, 0, &v, &err), &err);
        CHECK_EQ_U64(pk_cursor_offset(&c), 4);
        memcpy(info, "abc\0", 4);
        pk_cursor_init(&c, info, sizeof info);
        CHECK_OK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_string, 0, &v, &err), &err);
        CHECK_EQ_U64(pk_cursor_offset(&c), 4);
        CHECK_STR(v.str, "abc");
        /* strp resolves into .debug_str */
        memset(info, 0, 8);
        info[0] = 7;
        pk_cursor_init(&c, info, sizeof info);
        CHECK_OK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_strp, 0, &v, &err), &err);
        CHECK_STR(dw_val_string(&s, &cu, &v), "world");
        /* strp beyond the section: no string, no crash */
        info[0] = 200;
        pk_cursor_init(&c, info, sizeof info);
        CHECK_OK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_strp, 0, &v, &err), &err);
        CHECK(dw_val_string(&s, &cu, &v) == NULL);
        /* indirect → udata */
        info[0] = DW_FORM_udata;
        info[1] = 0x85;
        info[2] = 0x01;
        pk_cursor_init(&c, info, sizeof info);
        CHECK_OK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_indirect, 0, &v, &err), &err);
        CHECK_EQ_U64(v.u, 133);
        CHECK_EQ_U64(pk_cursor_offset(&c), 3);
        /* indirect → indirect, an unknown form, a block longer than the data */
        info[0] = DW_FORM_indirect;
        pk_cursor_init(&c, info, sizeof info);
        CHECK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_indirect, 0, &v, &err) < 0);
        pk_cursor_init(&c, info, sizeof info);
        CHECK(dw_read_form(&s, &cu, &s.info, &c, 0x7f, 0, &v, &err) < 0);
        CHECK(strstr(err.msg, "synthetic: .debug_info offset 0") != NULL);
        info[0] = 0xff;
        info[1] = 0xff;
        pk_cursor_init(&c, info, 4);
        CHECK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_block2, 0, &v, &err) < 0);
        pk_cursor_init(&c, info, 5);
        CHECK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_data8, 0, &v, &err) < 0);
        /* sdata is not an unsigned constant for LLVM (decl_line as sdata → 0) */
        info[0] = 0x05;
        pk_cursor_init(&c, info, sizeof info);
        CHECK_OK(dw_read_form(&s, &cu, &s.info, &c, DW_FORM_sdata, 0, &v, &err), &err);
        uint64_t u;
        CHECK(dw_val_unsigned(&v, &u) < 0);
    }
}

TEST(discriminators)
{
    /* llvm-profgen.md §3.6: 17 / 1026 / 1028 → (base 0 / 1 / 2, dup 4) */
    CHECK_EQ_U64(pk_discr_base(17), 0);
    CHECK_EQ_U64(pk_discr_dup_factor(17), 4);
    CHECK_EQ_U64(pk_discr_base(1026), 1);
    CHECK_EQ_U64(pk_discr_dup_factor(1026), 4);
    CHECK_EQ_U64(pk_discr_base(1028), 2);
    CHECK_EQ_U64(pk_discr_dup_factor(1028), 4);
    CHECK_EQ_U64(pk_discr_base(0), 0);
    CHECK_EQ_U64(pk_discr_dup_factor(0), 1);
    CHECK_EQ_U64(pk_discr_base(6), 3);
    /* 14-bit component: value 0x40 → bits 1-5 = 0, bit 6 set, bits 7.. = 0x40 >> 5 */
    uint32_t enc = ((0x40 & 0x1f) << 1) | 0x40 | ((0x40 >> 5) << 7);
    CHECK_EQ_U64(pk_discr_base(enc), 0x40);
    /* pseudo-probe discriminators (low bits 0b111) of call instructions, as
     * clang-14 writes them (probe index 7 in bits 3-18: base 7, factor 1)
     * and clang-19 (bit 28: a DWARF base discriminator 2 in bits 16-18) */
    uint32_t old_probe = 7 | 7u << 3 | 2u << 26 | 100u << 19;
    CHECK_EQ_U64(pk_discr_base(old_probe), 7);
    CHECK_EQ_U64(pk_discr_dup_factor(old_probe), 1);
    CHECK_EQ_U64(pk_discr_base(0x1b200057), 0); /* clang-19, probe 10, base 0 */
    CHECK_EQ_U64(pk_discr_base(0x1b200057 | 2u << 16), 2);
}

TEST(dwarf_funcs_cold_split)
{
    const char *bin = build("cold-gcc", "gcc-12", "-O2 -g");
    pk_elf *e = pk_test_open_elf(bin);
    if (!e)
        return;
    pk_err err;
    pk_symbolizer *s;
    CHECK_OK(pk_symbolizer_open(&s, e, &err), &err);
    const pk_dwarf_func *f;
    size_t n;
    CHECK_OK(pk_dwarf_funcs(s, &f, &n, &err), &err);
    const pk_elf_symbol *cold = pk_elf_func_by_name(e, "checked_div.cold");
    const pk_elf_symbol *hot = pk_elf_func_by_name(e, "checked_div");
    CHECK(hot != NULL);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        if (!f[i].name || strcmp(f[i].name, "checked_div"))
            continue;
        found = 1;
        CHECK(hot && f[i].entry_pc == hot->addr);
        if (cold) { /* gcc split it: two ranges, one of them the .cold symbol */
            CHECK_EQ_U64(f[i].nranges, 2);
            int has_cold = 0;
            for (uint32_t r = 0; r < f[i].nranges; r++)
                has_cold |= f[i].ranges[r].begin == cold->addr;
            CHECK(has_cold);
            CHECK(pk_dwarf_func_at(s, cold->addr) == &f[i]);
        }
        CHECK(f[i].start_line > 0);
    }
    CHECK(found);
    if (hot)
        CHECK(pk_dwarf_func_at(s, hot->addr) != NULL);
    pk_symbolizer_close(s);
    pk_elf_close(e);
}

/* Writes a copy of `src` with `patch` applied, returns 0. */
static int write_copy(const char *dst, const uint8_t *data, size_t size)
{
    FILE *o = fopen(dst, "wb");
    if (!o)
        return -1;
    size_t w = fwrite(data, 1, size, o);
    fclose(o);
    return w == size ? 0 : -1;
}

/* Opens, symbolizes every 3rd byte of .text and lists DWARF functions:
 * returns 0 on success, -1 on a reported error (which must name the file). */
static int exercise(const char *path, uint64_t text_lo, uint64_t text_hi, const char *tag)
{
    pk_err err;
    pk_elf *e;
    int rc = -1;
    if (pk_elf_open(&e, path, &err) < 0)
        goto out;
    pk_symbolizer *s;
    if (pk_symbolizer_open(&s, e, &err) < 0) {
        pk_elf_close(e);
        goto out;
    }
    rc = 0;
    for (uint64_t a = text_lo; a < text_hi; a += 3) {
        pk_frames fr;
        if (pk_symbolize(s, a, &fr, &err) < 0) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < fr.count; i++)
            if (fr.frames[i].func)
                (void)strlen(fr.frames[i].func);
    }
    const pk_dwarf_func *f;
    size_t n;
    if (rc == 0 && pk_dwarf_funcs(s, &f, &n, &err) < 0)
        rc = -1;
    pk_symbolizer_close(s);
    pk_elf_close(e);
out:
    if (rc < 0 && !strstr(err.msg, tag)) {
        fprintf(stderr, "error without the file name: %s\n", err.msg);
        pk_test_failed_checks++;
    }
    return rc;
}

static void fuzz_sections(const char *bin)
{
    pk_mapped_file f;
    pk_err err;
    CHECK_OK(pk_file_map(&f, bin, &err), &err);
    pk_elf *e;
    CHECK_OK(pk_elf_open(&e, bin, &err), &err);
    const pk_elf_section *text = pk_elf_section_by_name(e, ".text");
    uint64_t lo = text->addr, hi = text->addr + text->size;
    uint64_t shoff = pk_ld64(f.data + 0x28);
    char dst[600];
    snprintf(dst, sizeof dst, "%s/fuzz.elf", pk_test_tmpdir());
    uint8_t *buf = malloc(f.size);
    const char *names[] = {".debug_info", ".debug_abbrev", ".debug_line", ".debug_rnglists", ".debug_ranges",
                           ".debug_str_offsets", ".debug_addr", ".debug_aranges", ".debug_line_str", ".debug_str"};
    uint32_t seed = 99;
    int errors = 0, runs = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const pk_elf_section *sec = pk_elf_section_by_name(e, names[k]);
        if (!sec || sec->size == 0)
            continue;
        /* (a) the section cut short at many offsets (sh_size patched) */
        for (int i = 0; i < 24; i++) {
            memcpy(buf, f.data, f.size);
            uint64_t cut = sec->size * (uint64_t)i / 24;
            pk_st64(buf + shoff + (uint64_t)sec->index * 64 + 0x20, cut);
            write_copy(dst, buf, f.size);
            errors += exercise(dst, lo, hi, "fuzz.elf") < 0;
            runs++;
        }
        /* (b) garbage bytes */
        for (int i = 0; i < 40; i++) {
            memcpy(buf, f.data, f.size);
            for (int j = 0; j < 1 + i % 4; j++) {
                seed = seed * 1103515245u + 12345u;
                uint64_t at = sec->offset + (seed >> 4) % sec->size;
                seed = seed * 1103515245u + 12345u;
                buf[at] = (uint8_t)(seed >> 16);
            }
            write_copy(dst, buf, f.size);
            errors += exercise(dst, lo, hi, "fuzz.elf") < 0;
            runs++;
        }
    }
    fprintf(stderr, "%s: %d corrupted copies, %d reported errors, no crash\n", bin, runs, errors);
    CHECK(runs > 100);
    CHECK(errors > 10);
    free(buf);
    pk_elf_close(e);
    pk_file_unmap(&f);
}

/* Split DWARF: the .dwo corrupted in place (the skeleton names its path). */
static void fuzz_dwo(const char *bin, const char *dwo, const char *tag)
{
    pk_mapped_file f;
    pk_err err;
    CHECK_OK(pk_file_map(&f, dwo, &err), &err);
    uint8_t *orig = malloc(f.size), *buf = malloc(f.size);
    memcpy(orig, f.data, f.size);
    size_t size = f.size;
    pk_file_unmap(&f);
    pk_elf *e, *b;
    CHECK_OK(pk_elf_open(&b, bin, &err), &err);
    const pk_elf_section *text = pk_elf_section_by_name(b, ".text");
    uint64_t lo = text->addr, hi = text->addr + text->size;
    pk_elf_close(b);
    /* sanity: the intact pair symbolizes */
    CHECK(exercise(bin, lo, hi, tag) == 0);
    CHECK_OK(pk_elf_open(&e, dwo, &err), &err);
    uint64_t shoff = pk_ld64(orig + 0x28);
    const char *names[] = {".debug_info.dwo", ".debug_abbrev.dwo", ".debug_str_offsets.dwo", ".debug_rnglists.dwo",
                           ".debug_str.dwo"};
    uint32_t seed = 5;
    int runs = 0, errors = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const pk_elf_section *sec = pk_elf_section_by_name(e, names[k]);
        if (!sec || sec->size == 0)
            continue;
        for (int i = 0; i < 40; i++) {
            memcpy(buf, orig, size);
            if (i < 16) {
                pk_st64(buf + shoff + (uint64_t)sec->index * 64 + 0x20, sec->size * (uint64_t)i / 16);
            } else {
                seed = seed * 1103515245u + 12345u;
                buf[sec->offset + (seed >> 4) % sec->size] = (uint8_t)(seed >> 20);
            }
            write_copy(dwo, buf, size);
            errors += exercise(bin, lo, hi, tag) < 0;
            runs++;
        }
    }
    write_copy(dwo, orig, size);
    fprintf(stderr, "%s: %d corrupted .dwo copies, %d reported errors, no crash\n", dwo, runs, errors);
    CHECK(runs > 60);
    CHECK(errors > 5);
    pk_elf_close(e);
    free(orig);
    free(buf);
}

/* Spans (code sizes per inline stack) of one function: the same with the
 * index restricted to it (pk_symbolizer_want) as with the whole unit, and
 * for every address of the spans what pk_symbolize gives (frames and call
 * lines); a function left out of the restriction is still answered in full
 * (the unit's index is widened). */
struct span_rec {
    uint64_t begin, end;
    size_t nframes;
    char leaf[64], outer[64];
    uint32_t call_line;
};
struct span_list {
    struct span_rec r[512];
    size_t n;
};

static int collect_span(void *arg, uint64_t begin, uint64_t end, const pk_frames *fr, pk_err *err)
{
    (void)err;
    struct span_list *l = arg;
    if (l->n == 512)
        return 0;
    struct span_rec *r = &l->r[l->n++];
    r->begin = begin;
    r->end = end;
    r->nframes = fr->count;
    snprintf(r->leaf, sizeof r->leaf, "%s", fr->count && fr->frames[0].func ? fr->frames[0].func : "?");
    snprintf(r->outer, sizeof r->outer, "%s",
             fr->count && fr->frames[fr->count - 1].func ? fr->frames[fr->count - 1].func : "?");
    r->call_line = fr->count > 1 ? fr->frames[1].line : 0;
    return 0;
}

TEST(spans_restricted_index)
{
    const char *bin = build("spans-clang", "clang-19", "-O2 -g");
    pk_elf *e = pk_test_open_elf(bin);
    if (!e)
        return;
    pk_err err;
    const pk_elf_symbol *f = pk_elf_func_by_name(e, "sum_poly"), *other = pk_elf_func_by_name(e, "loops");
    CHECK(f != NULL && other != NULL && f->size > 0);
    if (!f || !other) {
        pk_elf_close(e);
        return;
    }
    static struct span_list whole, cut, left_out, left_out_whole;
    pk_symbolizer *a, *b;
    CHECK_OK(pk_symbolizer_open(&a, e, &err), &err);
    CHECK_OK(pk_symbolizer_open(&b, e, &err), &err);
    CHECK_OK(pk_symbolize_spans(a, f->addr, f->addr + f->size, collect_span, &whole, &err), &err);
    CHECK_OK(pk_symbolize_spans(a, other->addr, other->addr + other->size, collect_span, &left_out_whole, &err), &err);
    pk_addr_range want = {f->addr, f->addr + f->size};
    CHECK_OK(pk_symbolizer_want(b, &want, 1, &err), &err);
    CHECK_OK(pk_symbolize_spans(b, f->addr, f->addr + f->size, collect_span, &cut, &err), &err);
    CHECK_OK(pk_symbolize_spans(b, other->addr, other->addr + other->size, collect_span, &left_out, &err), &err);
    CHECK(whole.n > 1); /* sum_poly inlines poly, cube and sq */
    CHECK_EQ_U64(cut.n, whole.n);
    uint64_t bytes = 0;
    int inlined = 0;
    for (size_t i = 0; i < whole.n && i < cut.n; i++) {
        CHECK_EQ_U64(cut.r[i].begin, whole.r[i].begin);
        CHECK_EQ_U64(cut.r[i].end, whole.r[i].end);
        CHECK_EQ_U64(cut.r[i].nframes, whole.r[i].nframes);
        CHECK(!strcmp(cut.r[i].leaf, whole.r[i].leaf));
        CHECK_EQ_U64(cut.r[i].call_line, whole.r[i].call_line);
        CHECK(!strcmp(whole.r[i].outer, "sum_poly"));
        inlined |= whole.r[i].nframes > 1;
        bytes += whole.r[i].end - whole.r[i].begin;
        /* the first address of a span symbolizes to the span's frames */
        pk_frames fr;
        CHECK_OK(pk_symbolize(a, whole.r[i].begin, &fr, &err), &err);
        CHECK_EQ_U64(fr.count, whole.r[i].nframes);
        if (fr.count)
            CHECK(!strcmp(fr.frames[0].func ? fr.frames[0].func : "?", whole.r[i].leaf));
        if (fr.count > 1)
            CHECK_EQ_U64(fr.frames[1].line, whole.r[i].call_line);
    }
    CHECK(inlined);
    CHECK(bytes <= f->size && bytes + 16 >= f->size); /* all of it but alignment padding */
    CHECK(left_out_whole.n > 0);
    CHECK_EQ_U64(left_out.n, left_out_whole.n);
    for (size_t i = 0; i < left_out.n && i < left_out_whole.n; i++) {
        CHECK_EQ_U64(left_out.r[i].begin, left_out_whole.r[i].begin);
        CHECK_EQ_U64(left_out.r[i].end, left_out_whole.r[i].end);
        CHECK(!strcmp(left_out.r[i].leaf, left_out_whole.r[i].leaf));
    }
    /* and the first function's spans are still right after the widening */
    static struct span_list again;
    CHECK_OK(pk_symbolize_spans(b, f->addr, f->addr + f->size, collect_span, &again, &err), &err);
    CHECK_EQ_U64(again.n, whole.n);
    pk_symbolizer_close(a);
    pk_symbolizer_close(b);
    pk_elf_close(e);
}

/* A subprogram nested in another (GNU C nested function, gcc): asked about
 * alone, the restricted index must still read it, though its enclosing
 * subprogram is not asked about and is skipped. */
TEST(spans_restricted_index_nested_subprogram)
{
    const char *bin = pk_test_build("nested-gcc", "gcc-12", "-O2 -g", "binary_nested.c");
    pk_elf *e = pk_test_open_elf(bin);
    if (!e)
        return;
    pk_err err;
    const pk_elf_symbol *in = pk_elf_func_by_name(e, "nest_inner.0"), *out = pk_elf_func_by_name(e, "nest_outer");
    CHECK(in != NULL && out != NULL && in->size > 0);
    CHECK(in && out && (in->addr + in->size <= out->addr || in->addr >= out->addr + out->size));
    if (!in || !out) {
        pk_elf_close(e);
        return;
    }
    static struct span_list whole, cut;
    pk_symbolizer *a, *b;
    CHECK_OK(pk_symbolizer_open(&a, e, &err), &err);
    CHECK_OK(pk_symbolizer_open(&b, e, &err), &err);
    CHECK_OK(pk_symbolize_spans(a, in->addr, in->addr + in->size, collect_span, &whole, &err), &err);
    pk_addr_range want = {in->addr, in->addr + in->size};
    CHECK_OK(pk_symbolizer_index(b, &want, 1, &err), &err);
    CHECK_OK(pk_symbolize_spans(b, in->addr, in->addr + in->size, collect_span, &cut, &err), &err);
    CHECK(whole.n > 0);
    CHECK_EQ_U64(cut.n, whole.n);
    for (size_t i = 0; i < whole.n && i < cut.n; i++) {
        CHECK_EQ_U64(cut.r[i].begin, whole.r[i].begin);
        CHECK_EQ_U64(cut.r[i].end, whole.r[i].end);
        CHECK(!strcmp(whole.r[i].leaf, "nest_inner"));
        CHECK(!strcmp(cut.r[i].leaf, whole.r[i].leaf));
    }
    pk_symbolizer_close(a);
    pk_symbolizer_close(b);
    pk_elf_close(e);
}

/* The unit's address → DIE map answers as LLVM's AddrDieMap would: a
 * reference of updateAddressDieMap (a plain ordered array) against
 * dw_build_die_map, on nested preorder ranges (the sweep) and on ranges that
 * overlap any which way (LLVM's procedure replayed). */
struct ref_ent {
    uint64_t key, end;
    int32_t sub;
};

static size_t ref_find(const struct ref_ent *e, size_t n, uint64_t key) /* first key > key */
{
    size_t i = 0;
    while (i < n && e[i].key <= key)
        i++;
    return i;
}

static void ref_set(struct ref_ent *e, size_t *n, uint64_t key, uint64_t end, int32_t sub)
{
    size_t i = ref_find(e, *n, key);
    if (i && e[i - 1].key == key) {
        e[i - 1].end = end;
        e[i - 1].sub = sub;
        return;
    }
    memmove(e + i + 1, e + i, (*n - i) * sizeof *e);
    e[i] = (struct ref_ent){key, end, sub};
    (*n)++;
}

static int32_t ref_lookup(const struct ref_ent *e, size_t n, uint64_t addr)
{
    size_t i = ref_find(e, n, addr);
    return i && addr < e[i - 1].end ? e[i - 1].sub : -1;
}

TEST(die_map_answers_like_llvm)
{
    uint64_t rng = 12345;
#define RND(m) (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, rng % (m))
    for (int round = 0; round < 300; round++) {
        enum { N = 40 };
        dw_die_range r[N], orig[N];
        size_t n = 0;
        int32_t sub = 0;
        if (round % 2 == 0) {
            /* a preorder tree: children inside their parent */
            uint64_t stack_lo[16], stack_hi[16];
            size_t depth = 0;
            uint64_t base = RND(100) * 1000;
            while (n < N) {
                if (depth && (RND(3) == 0 || depth == 16)) {
                    depth--;
                    continue;
                }
                uint64_t plo = depth ? stack_lo[depth - 1] : base, phi = depth ? stack_hi[depth - 1] : base + 1000;
                if (phi - plo < 2) {
                    if (!depth)
                        break;
                    depth--;
                    continue;
                }
                uint64_t lo = plo + RND(phi - plo - 1), hi = lo + 1 + RND(phi - lo);
                if (hi > phi)
                    hi = phi;
                r[n] = (dw_die_range){lo, hi, n, sub++};
                n++;
                stack_lo[depth] = lo;
                stack_hi[depth] = hi;
                depth++;
                if (RND(4) == 0) { /* a sibling subtree elsewhere */
                    depth = 0;
                    base = RND(100) * 1000;
                }
            }
        } else {
            /* anything: overlapping, sticking out, equal, inserted in any order */
            n = 2 + RND(N - 1);
            for (size_t i = 0; i < n; i++) {
                uint64_t lo = RND(60), hi = lo + 1 + RND(30);
                r[i] = (dw_die_range){lo, hi, i, sub};
                if (RND(4))
                    sub++; /* else: a second range of the same DIE */
            }
        }
        memcpy(orig, r, n * sizeof *r);
        struct ref_ent e[2 * N + 1];
        size_t ne = 0;
        for (size_t i = 0; i < n; i++) {
            size_t b = ref_find(e, ne, orig[i].lo);
            if (b && orig[i].lo < e[b - 1].end) {
                struct ref_ent p = e[b - 1];
                if (orig[i].hi < p.end)
                    ref_set(e, &ne, orig[i].hi, p.end, p.sub);
                if (orig[i].lo > p.key)
                    e[ref_find(e, ne, p.key) - 1].end = orig[i].lo;
            }
            ref_set(e, &ne, orig[i].lo, orig[i].hi, orig[i].sub);
        }
        dw_cu cu;
        memset(&cu, 0, sizeof cu);
        CHECK(dw_build_die_map(&cu, r, n) == 0);
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t pts[] = {orig[i].lo, orig[i].lo + 1, orig[i].hi - 1, orig[i].hi, orig[i].lo ? orig[i].lo - 1 : 0};
            for (size_t k = 0; k < 5; k++)
                bad += dw_cu_sub_at(&cu, pts[k]) != ref_lookup(e, ne, pts[k]);
        }
        for (size_t k = 1; k < cu.nmap; k++)
            bad += cu.map_lo[k] < cu.map_hi[k - 1] || cu.map_lo[k] >= cu.map_hi[k]; /* disjoint, sorted, non-empty */
        CHECK_EQ_U64(bad, 0);
        free(cu.map_lo);
        free(cu.map_hi);
        free(cu.map_sub);
    }
#undef RND
}

TEST(corrupt_split_dwarf)
{
    char cmd[2048];
    const char *cfgs[][2] = {{"clang-19", "-gdwarf-5"}, {"gcc-12", "-gdwarf-4"}};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "cd %s && %s -O2 -g %s -gsplit-dwarf %s/programs/binary_inline.c -o split%d",
                 pk_test_tmpdir(), cfgs[i][0], cfgs[i][1], pk_test_srcdir(), i);
        CHECK(system(cmd) == 0);
        char bin[600], dwo[600];
        snprintf(bin, sizeof bin, "%s/split%d", pk_test_tmpdir(), i);
        snprintf(dwo, sizeof dwo, "%s/split%d-binary_inline.dwo", pk_test_tmpdir(), i);
        fuzz_dwo(bin, dwo, ".dwo");
    }
}

TEST(corrupt_dwarf_clang5)
{
    const char *bin = build("fz-clang", "clang-19", "-O2 -g");
    CHECK(bin != NULL);
    if (bin)
        fuzz_sections(bin);
}

TEST(corrupt_dwarf_gcc4)
{
    const char *bin = build("fz-gcc4", "gcc-12", "-O2 -gdwarf-4");
    CHECK(bin != NULL);
    if (bin)
        fuzz_sections(bin);
}

int main(void) { return pk_test_main(); }
