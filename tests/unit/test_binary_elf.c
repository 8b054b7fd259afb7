/* ELF reading on binaries built at test time: sections, symbols (vs nm),
 * segments and bases, build-id, compressed debug sections (vs objcopy's
 * decompression), separate debug files, and truncated/corrupt files. */
#include "binary/binary.h"
#include "test.h"

#include <elf.h>
#include <stdlib.h>
#include <unistd.h>

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
    return rc;
}

/* Builds tests/programs/binary_inline.c with `flags` into tmpdir/name once. */
static const char *fixture(const char *name, const char *cc, const char *flags)
{
    return pk_test_build(name, cc, flags, "binary_inline.c");
}

TEST(elf_basics)
{
    const char *bin = fixture("pie", "clang-19", "-O2 -g -Wl,--build-id");
    pk_elf *e = pk_test_open_elf(bin);
    if (!e)
        return;
    CHECK_EQ_U64(pk_elf_type(e), ET_DYN);
    CHECK_EQ_U64(pk_elf_machine(e), EM_X86_64);
    const pk_elf_section *text = pk_elf_section_by_name(e, ".text");
    CHECK(text != NULL);
    CHECK(pk_elf_has_dwarf(e));
    CHECK_EQ_U64(pk_elf_preferred_base(e), 0);
    /* every function symbol of nm is found by name at its address */
    char out[600];
    snprintf(out, sizeof out, "%s/nm.txt", pk_test_tmpdir());
    CHECK(run("readelf -sW %s | awk '$4 == \"FUNC\" && $7 != \"UND\" {print $2, $8}' > %s", bin, out) == 0);
    FILE *f = fopen(out, "r");
    CHECK(f != NULL);
    unsigned long long addr;
    char name[256];
    int nsyms = 0;
    while (f && fscanf(f, "%llx %255s", &addr, name) == 2) {
        const pk_elf_symbol *s = pk_elf_func_by_name(e, name);
        if (!s)
            fprintf(stderr, "not found: %s\n", name);
        CHECK(s != NULL);
        if (s)
            CHECK_EQ_U64(s->addr, addr);
        const pk_elf_symbol *at = pk_elf_func_at(e, addr);
        CHECK(at != NULL);
        if (at)
            CHECK_EQ_U64(at->addr, addr);
        nsyms++;
    }
    if (f)
        fclose(f);
    CHECK(nsyms > 8);
    const pk_elf_symbol *m = pk_elf_func_by_name(e, "main");
    CHECK(m != NULL);
    if (m) {
        CHECK(pk_elf_func_at(e, m->addr + m->size - 1) == m);
        CHECK(pk_elf_func_at(e, m->addr + m->size) != m);
        /* file offset ↔ vaddr round trip inside main */
        uint64_t off, va;
        CHECK(pk_elf_vaddr_to_offset(e, m->addr + 3, &off) == 0);
        CHECK(pk_elf_offset_to_vaddr(e, off, &va) == 0);
        CHECK_EQ_U64(va, m->addr + 3);
        CHECK(pk_elf_vaddr_bytes(e, m->addr, m->size) != NULL);
    }
    size_t nseg;
    const pk_elf_segment *seg = pk_elf_segments(e, &nseg);
    CHECK(nseg >= 2);
    int has_x = 0;
    for (size_t i = 0; i < nseg; i++)
        has_x |= (seg[i].flags & PF_X) != 0;
    CHECK(has_x);
    CHECK(pk_elf_first_exec_vaddr(e) % 4096 == 0);
    /* build-id equals readelf's */
    char hex[128];
    pk_elf_build_id_hex(e, hex, sizeof hex);
    CHECK(strlen(hex) == 40);
    snprintf(out, sizeof out, "readelf -n %s | grep -q 'Build ID: %s'", bin, hex);
    CHECK(system(out) == 0);
    pk_elf_close(e);
}

TEST(elf_non_pie_base)
{
    const char *bin = fixture("nopie", "gcc-12", "-O2 -g -no-pie");
    pk_elf *e = pk_test_open_elf(bin);
    if (!e)
        return;
    CHECK_EQ_U64(pk_elf_type(e), ET_EXEC);
    CHECK_EQ_U64(pk_elf_preferred_base(e), 0x400000);
    CHECK_EQ_U64(pk_elf_first_exec_vaddr(e), 0x401000);
    pk_elf_close(e);
}

static void check_compressed(const char *cc, const char *gz)
{
    char flags[128], name[64];
    snprintf(flags, sizeof flags, "-O2 -g -gz=%s", gz);
    snprintf(name, sizeof name, "gz-%s-%s", gz, cc);
    const char *bin = fixture(name, cc, flags);
    if (!bin) {
        fprintf(stderr, "note: %s %s not supported here, skipped\n", cc, flags);
        return;
    }
    char plain[600];
    snprintf(plain, sizeof plain, "%s.plain", bin);
    CHECK(run("objcopy --decompress-debug-sections %s %s", bin, plain) == 0);
    pk_err err;
    pk_elf *z, *p;
    CHECK_OK(pk_elf_open(&z, bin, &err), &err);
    CHECK_OK(pk_elf_open(&p, plain, &err), &err);
    const pk_elf_section *zi = pk_elf_section_by_name(z, ".debug_info");
    CHECK(zi && (zi->flags & SHF_COMPRESSED));
    const char *names[] = {".debug_info", ".debug_line", ".debug_abbrev", ".debug_str"};
    for (int i = 0; i < 4; i++) {
        const uint8_t *a, *b;
        size_t na, nb;
        CHECK_OK(pk_elf_debug_section(z, names[i], &a, &na, &err), &err);
        CHECK_OK(pk_elf_debug_section(p, names[i], &b, &nb, &err), &err);
        CHECK_EQ_U64(na, nb);
        CHECK(na == nb && na > 0 && !memcmp(a, b, na));
    }
    pk_elf_close(z);
    pk_elf_close(p);
}

TEST(elf_compressed_sections)
{
    check_compressed("clang-19", "zlib");
    check_compressed("gcc-12", "zlib");
    /* (clang spins when told to write an object to /dev/null: use a file) */
    char probe[600];
    snprintf(probe, sizeof probe, "echo 'int x;' | clang-19 -gz=zstd -c -x c - -o %s/zstd-probe.o 2>/dev/null",
             pk_test_tmpdir());
    if (system(probe) == 0)
        check_compressed("clang-19", "zstd");
}

TEST(elf_debuglink)
{
    const char *bin = fixture("dl", "clang-19", "-O2 -g -Wl,--build-id");
    if (!bin)
        return;
    char dbg[600], stripped[600];
    snprintf(dbg, sizeof dbg, "%s/dl.debug", pk_test_tmpdir());
    snprintf(stripped, sizeof stripped, "%s/dl.stripped", pk_test_tmpdir());
    CHECK(run("objcopy --only-keep-debug %s %s && objcopy --strip-debug --add-gnu-debuglink=%s %s %s", bin,
              dbg, dbg, bin, stripped) == 0);
    pk_err err;
    pk_elf *e;
    CHECK_OK(pk_elf_open(&e, stripped, &err), &err);
    CHECK(!pk_elf_has_dwarf(e));
    uint32_t crc;
    CHECK_STR(pk_elf_debuglink(e, &crc), "dl.debug");
    char *found = NULL;
    CHECK_OK(pk_elf_find_debug_file(e, &found, &err), &err);
    CHECK(found && strstr(found, "dl.debug"));
    free(found);
    pk_elf_close(e);
    pk_binary *b;
    CHECK_OK(pk_binary_open(&b, stripped, NULL, &err), &err);
    CHECK(pk_binary_debug_elf(b) != NULL && pk_binary_debug_elf(b) != pk_binary_elf(b));
    pk_symbolizer *sym;
    CHECK_OK(pk_binary_symbolizer(b, &sym, &err), &err);
    const pk_elf_symbol *m = pk_elf_func_by_name(pk_binary_elf(b), "main");
    pk_frames fr;
    CHECK(m != NULL);
    if (m) {
        CHECK_OK(pk_symbolize(sym, m->addr, &fr, &err), &err);
        CHECK(fr.count >= 1);
        if (fr.count)
            CHECK_STR(fr.frames[fr.count - 1].func, "main");
    }
    pk_binary_close(b);
}

/* Truncations at many offsets and garbage in the headers: an error naming
 * the file, or a usable object — never a crash (this runs under ASan too). */
TEST(elf_corrupt)
{
    const char *bin = fixture("pie", "clang-19", "-O2 -g -Wl,--build-id");
    if (!bin)
        return;
    pk_mapped_file f;
    pk_err err;
    CHECK_OK(pk_file_map(&f, bin, &err), &err);
    char cut[600];
    snprintf(cut, sizeof cut, "%s/cut.elf", pk_test_tmpdir());
    size_t step = f.size / 97 + 1;
    int errors = 0, opened = 0;
    for (size_t len = 0; len < f.size; len += step) {
        FILE *o = fopen(cut, "wb");
        fwrite(f.data, 1, len, o);
        fclose(o);
        pk_elf *e;
        if (pk_elf_open(&e, cut, &err) == 0) {
            opened++;
            pk_symbolizer *s;
            if (pk_symbolizer_open(&s, e, &err) == 0)
                pk_symbolizer_close(s);
            pk_elf_close(e);
        } else {
            errors++;
            CHECK(strstr(err.msg, "cut.elf") != NULL);
        }
    }
    CHECK(errors > 0);
    /* garbage over the ELF header and the section headers */
    uint8_t *buf = malloc(f.size);
    uint32_t seed = 7;
    for (int round = 0; round < 200; round++) {
        memcpy(buf, f.data, f.size);
        for (int k = 0; k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = round % 2 ? (seed >> 8) % 64 : (size_t)(pk_ld64(f.data + 0x28) + (seed >> 8) % (f.size - pk_ld64(f.data + 0x28)));
            if (at < f.size)
                buf[at] = (uint8_t)(seed >> 3);
        }
        FILE *o = fopen(cut, "wb");
        fwrite(buf, 1, f.size, o);
        fclose(o);
        pk_elf *e;
        if (pk_elf_open(&e, cut, &err) == 0) {
            size_t n;
            const pk_elf_symbol *fs = pk_elf_funcs(e, &n);
            for (size_t i = 0; i < n; i++)
                (void)pk_elf_func_at(e, fs[i].addr);
            pk_elf_close(e);
        }
    }
    free(buf);
    pk_file_unmap(&f);
    (void)opened;
}

int main(void) { return pk_test_main(); }
